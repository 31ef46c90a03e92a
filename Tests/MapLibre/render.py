"""Renders points with sprite icons in MapLibre Native (pymgl) and writes the map as PNG.

Usage: EGL_PLATFORM=surfaceless python3 render.py request.json output.png
The request: {"sprite": <style "sprite" value>, "ratio": 2, "width": 400, "height": 200,
              "zoom": 1, "points": [{"icon": "flag", "x": 40, "y": 50}, ...]}
x and y are logical pixels from the map's top-left corner; the map is centred on 0, 0.
Or, to draw a whole style: {"style_file": path, "ratio": 2, "width": 320, "height": 280,
              "zoom": 16, "longitude": 24.6881, "latitude": 60.185755}.
Used by iconr's tests (Tests/IconrCLITests/MapLibreTests.swift) to check real sprite loading.
"""
import json
import math
import sys

import pymgl


def lng_lat(x, y, request):
    world = 512 * 2 ** request["zoom"]
    dx = x - request["width"] / 2
    dy = request["height"] / 2 - y
    longitude = dx / world * 360
    latitude = math.degrees(math.atan(math.sinh(dy / world * 2 * math.pi)))
    return [longitude, latitude]


def main():
    request = json.load(open(sys.argv[1]))
    if "style_file" in request:
        with pymgl.Map(open(request["style_file"]).read(), request["width"], request["height"], request["ratio"],
                       request["longitude"], request["latitude"], request["zoom"]) as map:
            png = map.renderPNG()
        with open(sys.argv[2], "wb") as output:
            output.write(png)
        return
    features = [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": lng_lat(p["x"], p["y"], request)},
         "properties": {"icon": p["icon"]}}
        for p in request["points"]
    ]
    style = {
        "version": 8,
        "sprite": request["sprite"],
        "sources": {"points": {"type": "geojson", "data": {"type": "FeatureCollection", "features": features}}},
        "layers": [
            {"id": "background", "type": "background", "paint": {"background-color": "#ffffff"}},
            {"id": "icons", "type": "symbol", "source": "points",
             "layout": {"icon-image": ["get", "icon"], "icon-allow-overlap": True, "icon-ignore-placement": True}},
        ],
    }
    with pymgl.Map(json.dumps(style), request["width"], request["height"], request["ratio"], 0, 0, request["zoom"]) as map:
        # renderPNG, not renderBuffer: pymgl 0.5.0's buffer holds only width x height pixels
        # at any ratio.
        png = map.renderPNG()
    with open(sys.argv[2], "wb") as output:
        output.write(png)


main()
