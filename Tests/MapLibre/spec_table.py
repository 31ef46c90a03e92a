"""Prints the layout and paint properties of the style specification that MapLibre GL JS (the
PyPI package `maplibre`'s maplibre-gl.js) carries, one line per property, in the form of
IconrStyle's MapLibreProperties table:

    <layer type> <layout|paint> <name> <type>[/<item type>[/<length>]] <property-type> <parameters|-> [interpolated] [tokens] [values=a|b] [default=JSON]

(the default as minified JSON, its spaces written %20)

With --document it prints instead, as one JSON object with sorted keys, the rest of the
specification that a style document is validated by (the root, sources by type, the layer, light,
sky, terrain, projection, transition), each property with what validation reads: its type, item
type, length, values, whether it is required, its default, minimum and maximum, and (for light,
sky and projection) its expression parameters: IconrStyle's MapLibreDocument.specification.

Usage: python3 spec_table.py [--document]. Used by Tests/IconrCLITests/MapLibrePropertiesTests.swift.
"""
import json
import re
import sys

import gljs

TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|(!0|!1)|([A-Za-z_$][\w$]*)|(-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)|(.))', re.S)


def parse_literal(source, start):
    """The JavaScript object literal at source[start] (minified: bare keys, !0, !1) as a value."""
    position = start

    def token():
        nonlocal position
        match = TOKEN.match(source, position)
        position = match.end()
        return match

    def value(match):
        string, boolean, name, number, punct = match.groups()
        if string is not None:
            return json.loads(string)
        if boolean is not None:
            return boolean == "!0"
        if number is not None:
            return float(number) if "." in number or "e" in number.lower() else int(number)
        if name is not None:
            return {"true": True, "false": False, "null": None}.get(name, name)
        if punct == "{":
            result = {}
            while True:
                key = token()
                if key.group(5) == "}":
                    return result
                if key.group(5) == ",":
                    continue
                name = json.loads(key.group(1)) if key.group(1) else (key.group(3) or key.group(4))
                assert token().group(5) == ":"
                result[name] = value(token())
        if punct == "[":
            result = []
            while True:
                item = token()
                if item.group(5) == "]":
                    return result
                if item.group(5) == ",":
                    continue
                result.append(value(item))
        raise ValueError("unexpected %r at %d" % (punct, position))

    return value(token())


DOCUMENT_SECTIONS = ["$root", "source_vector", "source_raster", "source_raster_dem", "source_geojson", "source_video",
                     "source_image", "layer", "light", "sky", "terrain", "projection", "transition"]
VALIDATED_FIELDS = ["type", "value", "length", "values", "required", "default", "minimum", "maximum"]


def validated(property):
    """The fields of a property (or of an array's item, when that is an object) validation reads."""
    result = {}
    for field in VALIDATED_FIELDS:
        if field not in property:
            continue
        value = property[field]
        if field == "values" and isinstance(value, dict):
            value = list(value.keys())
        if field == "value" and isinstance(value, dict):
            value = validated(value)
        result[field] = value
    expression = property.get("expression")
    if expression:
        result["parameters"] = expression.get("parameters", [])
        result["interpolated"] = bool(expression.get("interpolated"))
    return result


def main():
    source = gljs.maplibre_script().decode()
    start = source.find("{$version:8,$root:")
    if start < 0:
        sys.stderr.write("maplibre-gl.js carries no style specification that this script can find\n")
        sys.exit(1)
    spec = parse_literal(source, start)
    if "--document" in sys.argv:
        document = {section: {name: validated(property) for name, property in spec[section].items()}
                    for section in DOCUMENT_SECTIONS}
        print(json.dumps(document, sort_keys=True, separators=(",", ":")))
        return
    for key, properties in spec.items():
        if not (key.startswith("layout_") or key.startswith("paint_")):
            continue
        group, layer = key.split("_", 1)
        for name, property in properties.items():
            kind = property["type"]
            if kind == "array":
                kind += "/" + property["value"] + ("/%d" % property["length"] if "length" in property else "")
            expression = property.get("expression")
            parameters = ",".join(expression.get("parameters", [])) if expression else ""
            flags = []
            if expression and expression.get("interpolated"):
                flags.append("interpolated")
            if property.get("tokens"):
                flags.append("tokens")
            values = property.get("values")
            if isinstance(values, dict):
                values = list(values.keys())
            if values:
                flags.append("values=" + "|".join(values))
            if "default" in property:
                flags.append("default=" + json.dumps(property["default"], separators=(",", ":")).replace(" ", "%20"))
            print(" ".join([layer, group, name, kind, property.get("property-type", "-"), parameters or "-"] + flags))


main()
