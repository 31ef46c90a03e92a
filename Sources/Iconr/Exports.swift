import IconrSystem

// What a renderer needs besides this module's own types, and nothing else: colors, sizes
// and metadata of icons and sprites, errors, limits. The style engine is a product of its
// own (`import IconrStyle`); iconr's own plumbing (files, hashing, locks, the packer) stays
// in IconrCore, which its own targets import directly.
@_exported import struct IconrCore.Color
@_exported import struct IconrCore.ContentBox
@_exported import struct IconrCore.IconParameters
@_exported import struct IconrCore.ParameterError
@_exported import struct IconrCore.PixelRect
@_exported import struct IconrCore.PixelSize
@_exported import struct IconrCore.RasterImage
@_exported import struct IconrCore.ResolvedParameters
@_exported import struct IconrCore.SVGTemplate
@_exported import struct IconrCore.SpriteIndexEntry
@_exported import struct IconrCore.StretchArea
@_exported import struct IconrCore.TemplateError
@_exported import struct IconrCore.TemplateParameter
@_exported import struct IconrCore.TemplateWarning
@_exported import struct IconrCore.Theme
@_exported import struct IconrCore.ThemeError
@_exported import struct IconrCore.UnknownParameterError
@_exported import struct IconrCore.VariantKey
@_exported import struct IconrRender.ImageFormat
@_exported import class IconrRender.IsolatedRenderer
@_exported import enum IconrRender.RenderError
@_exported import struct IconrRender.RenderLimits
@_exported import struct IconrSystem.FileReadError
@_exported import struct IconrSystem.FileWriteError
@_exported import struct IconrSystem.SystemError
