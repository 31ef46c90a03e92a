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
import base64
import functools
import http.server
import json
import os
import sys
import threading

import maplibre
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

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


class Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args, files, **kwargs):
        self.files = files
        super().__init__(*args, **kwargs)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path in self.files:
            body, kind = self.files[path]
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, *args):
        pass


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
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), None)
    base = "http://127.0.0.1:%d/" % server.server_address[1]
    if "sprite" in style:
        style["sprite"] = rewrite_sprite(style["sprite"], root, base)
    script = os.path.join(os.path.dirname(maplibre.__file__), "srcjs", "maplibre-gl.js")
    files = {
        "/__iconr__/index.html": ((PAGE % request).encode(), "text/html"),
        "/__iconr__/style.json": (json.dumps(style).encode(), "application/json"),
        "/__iconr__/maplibre-gl.js": (open(script, "rb").read(), "text/javascript"),
    }
    server.RequestHandlerClass = functools.partial(Handler, files=files, directory=root)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--use-angle=swiftshader",
                     "--enable-unsafe-swiftshader", "--window-size=%d,%d" % (request["width"] + 50, request["height"] + 50),
                     "--force-device-scale-factor=1"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    try:
        driver.set_script_timeout(60)
        driver.get(base + "__iconr__/index.html")
        done = driver.execute_async_script("""
            const callback = arguments[arguments.length - 1];
            const started = Date.now();
            (function wait() {
              if (window.iconrDone || window.iconrErrors.length || Date.now() - started > 50000) {
                callback({done: window.iconrDone, errors: window.iconrErrors, missing: window.iconrMissing});
              } else { setTimeout(wait, 50); }
            })();
        """)
        if done["missing"]:
            # Expected where a style asks for an image it may lack (coalesce); the pixels tell.
            sys.stderr.write("MapLibre GL JS: images missing: %s\n" % ", ".join(sorted(set(done["missing"]))))
        if done["errors"] or not done["done"]:
            sys.stderr.write("MapLibre GL JS: %s\n" % ("; ".join(done["errors"]) or "the map did not finish loading"))
            sys.exit(1)
        data = driver.execute_script("return map.getCanvas().toDataURL('image/png');")
    finally:
        driver.quit()
        server.shutdown()
    with open(sys.argv[2], "wb") as output:
        output.write(base64.b64decode(data.split(",", 1)[1]))


main()
