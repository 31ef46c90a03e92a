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
an image could not be had. Used by Tests/IconrCLITests/ServeCommandTests.swift.

Or {"page": html, "width": 400, "height": 300}: a whole page of its own (the README's), whose
global `map` is watched until it is loaded with a runtime image added; the output is then a
screenshot of the window (such a page need not keep its drawing buffer).
"""
import base64
import functools
import http.server
import json
import math
import os
import sys
import threading

import maplibre
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

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
    map.once("idle", () => { window.iconrRequested = icons.count(); window.iconrDone = true; });
  }));
});
</script></body></html>
"""


class Handler(http.server.BaseHTTPRequestHandler):
    def __init__(self, *args, files, **kwargs):
        self.files = files
        super().__init__(*args, **kwargs)

    def do_GET(self):
        body, kind = self.files.get(self.path.split("?")[0], (b"not found", "text/plain"))
        self.send_response(200 if kind != "text/plain" else 404)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def lng_lat(x, y, request):
    world = 512 * 2 ** request["zoom"]
    longitude = (x - request["width"] / 2) / world * 360
    latitude = math.degrees(math.atan(math.sinh((request["height"] / 2 - y) / world * 2 * math.pi)))
    return [longitude, latitude]


def serve_page(request, files):
    """Loads request["page"], waits for its map to show a runtime image, screenshots it."""
    files["/index.html"] = (request["page"].encode(), "text/html")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, files=files))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    driver = chrome(request)
    try:
        driver.set_script_timeout(90)
        driver.get("http://127.0.0.1:%d/index.html" % server.server_address[1])
        done = driver.execute_async_script("""
            const callback = arguments[arguments.length - 1];
            const started = Date.now();
            let steadySince = 0;
            (function wait() {
              const ready = typeof map !== "undefined" && map.loaded() &&
                  map.listImages().some((id) => id.indexOf("iconr:") === 0);
              steadySince = ready ? (steadySince || Date.now()) : 0;
              if ((ready && Date.now() - steadySince > 500) || Date.now() - started > 80000) {
                callback({done: ready, images: typeof map === "undefined" ? [] : map.listImages()});
              } else { setTimeout(wait, 50); }
            })();
        """)
        if not done["done"]:
            sys.stderr.write("MapLibre GL JS: the page showed no runtime image (images: %s)\n" % done["images"])
            sys.exit(1)
        png = driver.get_screenshot_as_png()
    finally:
        driver.quit()
        server.shutdown()
    with open(sys.argv[2], "wb") as output:
        output.write(png)


def chrome(request):
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--use-angle=swiftshader",
                     "--enable-unsafe-swiftshader", "--window-size=%d,%d" % (request["width"], request["height"]),
                     "--force-device-scale-factor=1", "--hide-scrollbars"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


def main():
    request = json.load(open(sys.argv[1]))
    script = os.path.join(os.path.dirname(maplibre.__file__), "srcjs", "maplibre-gl.js")
    if "page" in request:
        serve_page(request, {"/maplibre-gl.js": (open(script, "rb").read(), "text/javascript")})
        return
    geojson = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": lng_lat(f["x"], f["y"], request)},
         "properties": {"color": f["color"]}} for f in request["features"]]}
    page = PAGE % dict(request, geojson=json.dumps(geojson))
    files = {"/index.html": (page.encode(), "text/html"), "/maplibre-gl.js": (open(script, "rb").read(), "text/javascript")}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, files=files))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    driver = chrome(dict(request, width=request["width"] + 50, height=request["height"] + 50))
    try:
        driver.set_script_timeout(90)
        driver.get("http://127.0.0.1:%d/index.html" % server.server_address[1])
        done = driver.execute_async_script("""
            const callback = arguments[arguments.length - 1];
            const started = Date.now();
            (function wait() {
              if (window.iconrDone || window.iconrErrors.length || Date.now() - started > 80000) {
                callback({done: window.iconrDone, errors: window.iconrErrors, requested: window.iconrRequested});
              } else { setTimeout(wait, 50); }
            })();
        """)
        if done["errors"] or not done["done"]:
            sys.stderr.write("MapLibre GL JS: %s\n" % ("; ".join(done["errors"]) or "the map did not finish loading"))
            sys.exit(1)
        sys.stderr.write("MapLibre GL JS: iconr.js fetched %d runtime images\n" % done["requested"])
        data = driver.execute_script("return map.getCanvas().toDataURL('image/png');")
    finally:
        driver.quit()
        server.shutdown()
    with open(sys.argv[2], "wb") as output:
        output.write(base64.b64decode(data.split(",", 1)[1]))


main()
