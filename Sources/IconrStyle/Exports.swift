// What a user of the style engine needs besides this module's own types: JSON (styles are
// JSON documents) and the style specification's colors.
@_exported import struct IconrCore.JSONSyntaxError
@_exported import enum IconrCore.JSONValue
@_exported import struct IconrCore.StyleColor
