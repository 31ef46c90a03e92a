// The value types renderers need (colors, sizes, metadata) come from IconrCore.
@_exported import IconrCore
@_exported import struct IconrRender.RenderLimits
@_exported import enum IconrRender.RenderError
@_exported import class IconrRender.IsolatedRenderer
