"""Loads style documents in MapLibre GL JS (the PyPI package `maplibre`'s maplibre-gl.js) in
headless Chromium and prints, as JSON, the errors each load reports: GL JS validates a style
before it loads it and reports every validation error (then loads nothing).

Usage: python3 validate_gljs.py style.json...
Prints {"<file>": ["<error message>", ...], ...}; an empty list is a style GL JS loaded. Errors
fetching what the style names (a sprite URL nothing serves) are not validation: left out.
Used by Tests/IconrCLITests/DocumentValidationTests.swift.
"""
import json
import sys

import gljs

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>body { margin: 0 } #map { width: 64px; height: 64px }</style>
<script src="/__iconr__/maplibre-gl.js"></script></head>
<body><div id="map"></div><script>
window.iconrLoad = (style) => new Promise((resolve) => {
  const errors = [];
  const map = new maplibregl.Map({container: "map", style, interactive: false, attributionControl: false,
                                  fadeDuration: 0, validateStyle: true});
  let finished = false;
  const finish = () => { if (!finished) { finished = true; map.remove(); resolve(errors); } };
  // Validation reports every error at once, then loads nothing.
  map.on("error", (event) => {
    const message = String(event.error && event.error.message || event.error);
    if (message.includes("Failed to fetch")) return;
    errors.push(message);
    setTimeout(finish, 100);
  });
  map.once("style.load", () => setTimeout(finish, 50));
  setTimeout(finish, 3000);
});
</script></body></html>
"""


def main():
    files = {}
    server, base = gljs.start_server(files)
    files.update({
        "/__iconr__/index.html": (PAGE.encode(), "text/html"),
        "/__iconr__/maplibre-gl.js": (gljs.maplibre_script(), "text/javascript"),
    })
    driver = gljs.chrome(64, 64)
    try:
        driver.get(base + "__iconr__/index.html")
        driver.set_script_timeout(30)
        result = {}
        for path in sys.argv[1:]:
            with open(path) as file:
                style = json.load(file)
            result[path] = driver.execute_async_script(
                "window.iconrLoad(arguments[0]).then(arguments[arguments.length - 1]);", style)
        print(json.dumps(result))
    finally:
        driver.quit()
        server.shutdown()


main()
