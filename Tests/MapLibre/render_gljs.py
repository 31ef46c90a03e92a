"""Draws a style in MapLibre GL JS (the PyPI package `maplibre`'s maplibre-gl.js) in headless
Chromium (Debian's chromium and chromium-driver, driven by Selenium) and writes the map as PNG.

Usage: python3 render_gljs.py request.json output.png
The request: {"style_file": path, "root": folder, "ratio": 2, "width": 320, "height": 280,
              "zoom": 16, "longitude": 24.6881, "latitude": 60.185755}
Files under `root` are served over HTTP on 127.0.0.1; sprite URLs of the style that are
file:// paths under `root` are rewritten to that server. The script fails (exit 1, the
messages on stderr) if the map reports an error, such as a style it rejects.
Used by iconr's tests (Tests/IconrCLITests/MapLibreTests.swift) next to render.py
(MapLibre Native), so that each emitted style is checked in both clients.
"""
import json
import os
import sys

import gljs

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>body { margin: 0 } #map { width: %(width)dpx; height: %(height)dpx }</style>
<script src="/__iconr__/maplibre-gl.js"></script></head>
<body><div id="map"></div><script>
window.iconrErrors = [];
window.iconrDone = false;
const map = new maplibregl.Map({
  container: "map", style: "/__iconr__/style.json", center: [%(longitude)r, %(latitude)r], zoom: %(zoom)r,
  pixelRatio: %(ratio)r, interactive: false, fadeDuration: 0, attributionControl: false,
  canvasContextAttributes: {preserveDrawingBuffer: true, antialias: false}
});
map.on("error", (event) => window.iconrErrors.push(String(event.error && event.error.message || event.error)));
window.iconrMissing = [];
map.on("styleimagemissing", (event) => window.iconrMissing.push(event.id));
map.once("idle", () => { window.iconrDone = true; });
</script></body></html>
"""


def rewrite_sprite(sprite, root, base):
    def url(value):
        prefix = "file://" + os.path.abspath(root).rstrip("/") + "/"
        return base + value[len(prefix):] if value.startswith(prefix) else value
    if isinstance(sprite, str):
        return url(sprite)
    if isinstance(sprite, list):
        return [dict(entry, url=url(entry["url"])) for entry in sprite]
    return sprite


def main():
    request = json.load(open(sys.argv[1]))
    root = request["root"]
    style = json.load(open(request["style_file"]))
    files = {}
    server, base = gljs.start_server(files, directory=root)
    if "sprite" in style:
        style["sprite"] = rewrite_sprite(style["sprite"], root, base)
    files.update({
        "/__iconr__/index.html": ((PAGE % request).encode(), "text/html"),
        "/__iconr__/style.json": (json.dumps(style).encode(), "application/json"),
        "/__iconr__/maplibre-gl.js": (gljs.maplibre_script(), "text/javascript"),
    })
    driver = gljs.chrome(request["width"] + 50, request["height"] + 50)
    try:
        driver.get(base + "__iconr__/index.html")
        done = gljs.wait_for(
            driver, "window.iconrDone || window.iconrErrors.length",
            "{done: window.iconrDone, errors: window.iconrErrors, missing: window.iconrMissing}", 50000)
        if done["missing"]:
            # Expected where a style asks for an image it may lack (coalesce); the pixels tell.
            sys.stderr.write("MapLibre GL JS: images missing: %s\n" % ", ".join(sorted(set(done["missing"]))))
        if done["errors"] or not done["done"]:
            sys.stderr.write("MapLibre GL JS: %s\n" % ("; ".join(done["errors"]) or "the map did not finish loading"))
            sys.exit(1)
        png = gljs.canvas_png(driver)
        # The ids it asked for and could not find, for tests that require none.
        with open(sys.argv[2] + ".json", "w") as sidecar:
            json.dump({"missing": sorted(set(done["missing"]))}, sidecar)
    finally:
        driver.quit()
        server.shutdown()
    with open(sys.argv[2], "wb") as output:
        output.write(png)


main()
