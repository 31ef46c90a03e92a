import IconrSystem

// What a renderer needs besides this module's own types, and nothing else: colors, sizes
// and metadata of icons and sprites, and the style engine (IconrStyle). iconr's own plumbing
// (files, hashing, locks, the packer) stays in IconrCore, which its own targets import directly.
@_exported import struct IconrCore.Color
@_exported import struct IconrCore.ContentBox
@_exported import struct IconrCore.IconParameters
@_exported import struct IconrCore.JSONSyntaxError
@_exported import enum IconrCore.JSONValue
@_exported import struct IconrCore.ParameterError
@_exported import struct IconrCore.PixelRect
@_exported import struct IconrCore.PixelSize
@_exported import struct IconrCore.RasterImage
@_exported import struct IconrCore.ResolvedParameters
@_exported import struct IconrCore.SVGTemplate
@_exported import struct IconrCore.SpriteIndexEntry
@_exported import struct IconrCore.StretchArea
@_exported import struct IconrCore.StyleColor
@_exported import struct IconrCore.TemplateError
@_exported import struct IconrCore.TemplateParameter
@_exported import struct IconrCore.TemplateWarning
@_exported import struct IconrCore.VariantKey
@_exported import struct IconrRender.ImageFormat
@_exported import class IconrRender.IsolatedRenderer
@_exported import enum IconrRender.RenderError
@_exported import struct IconrRender.RenderLimits
@_exported import struct IconrStyle.CompiledExpression
@_exported import struct IconrStyle.EmittedStyle
@_exported import struct IconrStyle.EvaluationContext
@_exported import struct IconrStyle.ExpressionCompileError
@_exported import struct IconrStyle.ExpressionEvaluationError
@_exported import struct IconrStyle.ExpressionFeature
@_exported import struct IconrStyle.ExpressionParsingError
@_exported import struct IconrStyle.FormattedText
@_exported import enum IconrStyle.GeoJSONGeometry
@_exported import struct IconrStyle.ImageReference
@_exported import struct IconrStyle.NeededIcons
@_exported import struct IconrStyle.PropertySpecification
@_exported import struct IconrStyle.ResolvedImage
@_exported import struct IconrStyle.StyleCollator
@_exported import struct IconrStyle.StyleDocument
@_exported import struct IconrStyle.StyleError
@_exported import struct IconrStyle.StyleFeature
@_exported import struct IconrStyle.StyleLayer
@_exported import enum IconrStyle.StyleType
@_exported import enum IconrStyle.StyleValue
@_exported import struct IconrSystem.FileReadError
@_exported import struct IconrSystem.FileWriteError
@_exported import struct IconrSystem.SystemError
