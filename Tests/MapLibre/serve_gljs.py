"""Draws a style from `iconr serve` in MapLibre GL JS 5 (the PyPI package `maplibre`'s
maplibre-gl.js) in headless Chromium, with iconr.js attached, and writes the map as PNG.

Usage: python3 serve_gljs.py request.json output.png
The request: {"server": "http://127.0.0.1:PORT", "style": "points", "ratio": 2, "width": 600,
              "height": 300, "zoom": 2, "features": [{"x": 30, "y": 30, "color": "#12ab34"}, ...]}
The page (served by this script on another port, so iconr serve's CORS is in play) loads the
style from the server, attaches iconr.js, and then sets the GeoJSON source "points" to the
features, each at logical pixel (x, y) from the top-left corner of a map centred on 0, 0,
with its color in the property "color". It waits until every runtime image iconr.js asked for
is added and the map is idle. Exit 1 with the reason on stderr if the map reports an error or
an image could not be had. The runtime images added (id, width, height, pixelRatio) are
written beside the output, as output.png.json. Used by Tests/IconrCLITests/ServeCommandTests.swift.

"""
import json
import math
import sys

import gljs

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>body { margin: 0 } #map { width: %(width)dpx; height: %(height)dpx }</style>
<script src="/maplibre-gl.js"></script><script src="%(server)s/iconr.js"></script></head>
<body><div id="map"></div><script>
window.iconrErrors = [];
window.iconrDone = false;
const map = new maplibregl.Map({
  container: "map", style: "%(server)s/styles/%(style)s.json", center: [0, 0], zoom: %(zoom)r,
  pixelRatio: %(ratio)r, interactive: false, fadeDuration: 0, attributionControl: false,
  canvasContextAttributes: {preserveDrawingBuffer: true, antialias: false}
});
const icons = iconr.attach(map, {onError: (error) => window.iconrErrors.push(String(error.message || error))});
map.on("error", (event) => window.iconrErrors.push(String(event.error && event.error.message || event.error)));
map.once("load", () => {
  map.getSource("points").setData(%(geojson)s);
  // Idle once the features are drawn (their images missing), then again once iconr.js added them.
  map.once("idle", () => icons.settled().then(() => {
    map.triggerRepaint();
    map.once("idle", () => {
      window.iconrRequested = icons.count();
      window.iconrImages = map.listImages().filter((id) => id.indexOf("iconr:") === 0).map((id) => {
        const image = map.getImage(id);
        return {id: id, width: image.data.width, height: image.data.height, pixelRatio: image.pixelRatio};
      });
      window.iconrDone = true;
    });
  }));
});
</script></body></html>
"""


def lng_lat(x, y, request):
    world = 512 * 2 ** request["zoom"]
    longitude = (x - request["width"] / 2) / world * 360
    latitude = math.degrees(math.atan(math.sinh((request["height"] / 2 - y) / world * 2 * math.pi)))
    return [longitude, latitude]


def main():
    request = json.load(open(sys.argv[1]))
    files = {"/maplibre-gl.js": (gljs.maplibre_script(), "text/javascript")}
    geojson = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": lng_lat(f["x"], f["y"], request)},
         "properties": {"color": f["color"]}} for f in request["features"]]}
    files["/index.html"] = ((PAGE % dict(request, geojson=json.dumps(geojson))).encode(), "text/html")
    server, base = gljs.start_server(files)
    driver = gljs.chrome(request["width"] + 50, request["height"] + 50)
    try:
        driver.get(base + "index.html")
        done = gljs.wait_for(
            driver, "window.iconrDone || window.iconrErrors.length",
            "{done: window.iconrDone, errors: window.iconrErrors, requested: window.iconrRequested, "
            "images: window.iconrImages}", 80000)
        if done["errors"] or not done["done"]:
            sys.stderr.write("MapLibre GL JS: %s\n" % ("; ".join(done["errors"]) or "the map did not finish loading"))
            sys.exit(1)
        sys.stderr.write("MapLibre GL JS: iconr.js fetched %d runtime images\n" % done["requested"])
        png = gljs.canvas_png(driver)
    finally:
        driver.quit()
        server.shutdown()
    with open(sys.argv[2], "wb") as output:
        output.write(png)
    with open(sys.argv[2] + ".json", "w") as output:
        json.dump(done["images"], output)


main()
