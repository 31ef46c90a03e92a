"""Plays a page's taps in MapLibre GL JS in headless Chromium, as a person would, and writes a
screenshot after each: the seed's interaction (tap a flag: icon-size 2; tap it again: 1).

Usage: python3 tap_gljs.py request.json output-prefix
The request: {"page": html, "width": 480, "height": 320, "ratio": 2, "taps": [[lng, lat], ...],
              "points": [[lng, lat], ...]}
The page (served by this script on another port, so iconr serve's CORS is in play) must set a
global `map`. Its "/maplibre-gl.js" is MapLibre GL JS 5 (the PyPI package `maplibre`), and its
"/maplibre-gl-6.mjs" MapLibre GL JS 6.11.2 as an ES module: the build bundled in the PyPI package
`lonboard` (0.17.0), whose widget module exports no Map, so this script exports it (and skips the
widget's start-up fetch of a WebAssembly file from a CDN, which this machine cannot reach).

The window is `width` x `height` CSS pixels at device scale `ratio`. The script waits until the
map is loaded, no fetch is in flight, and both have held for 600 ms; writes output-prefix-0.png;
then for each tap clicks the canvas where the map projects it (a real mouse click), waits again,
and writes output-prefix-N.png. output-prefix.json lists, for each screenshot, where `points`
project (CSS pixels) and the images the map has (id, width, pixelRatio), and every
console warning and error the page logged. Exit 1 with the
reason on stderr if the page never settles. Used by Tests/IconrCLITests/TapTests.swift.
"""
import importlib.util
import json
import os
import re
import sys

import gljs
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

# Before any of the page's scripts: count fetches in flight, keep console warnings and errors.
WATCH = """
window.iconrTest = {fetches: 0, console: []};
(function () {
  const fetch = window.fetch;
  window.fetch = function () {
    window.iconrTest.fetches++;
    return fetch.apply(this, arguments).finally(() => { window.iconrTest.fetches--; });
  };
  for (const level of ["warn", "error"]) {
    const original = console[level];
    console[level] = function () {
      window.iconrTest.console.push(level + ": " + Array.from(arguments).map(String).join(" "));
      return original.apply(this, arguments);
    };
  }
  window.addEventListener("error", (event) => window.iconrTest.console.push("error: " + event.message));
})();
"""

READY = ("typeof map !== 'undefined' && map.loaded() && map.areTilesLoaded() && !map.isMoving() "
         "&& window.iconrTest.fetches === 0")


def maplibre6_module():
    """lonboard's bundle with MapLibre GL JS 6's Map class and worker set-up exported."""
    # Found, not imported: the package's Python side needs dependencies the test does not.
    spec = importlib.util.find_spec("lonboard")
    if spec is None:
        sys.exit("MapLibre GL JS 6: the PyPI package lonboard (0.17.0) is not installed (.ci/install installs it)")
    with open(os.path.join(spec.submodule_search_locations[0], "static", "index.js")) as bundle:
        text = bundle.read()
    resolver = text.find("setMissingStyleImageResolver(t){return this._missingStyleImageResolver=t")
    classes = list(re.finditer(r"(\w+)=class extends \w+\{get _ownerWindow\(\)", text[:resolver]))
    if resolver < 0 or not classes:
        sys.exit("lonboard's bundle: MapLibre GL JS 6's Map class not found")
    map_class = classes[-1].group(1)
    # The widget fetches parquet's WebAssembly from a CDN before MapLibre's worker is set up.
    text, count = re.subn(r"await (\w+)\(\);(\w+\(\);)", r"\2", text, count=1)
    exports = list(re.finditer(r"export\{(\w+) as default\}", text))
    if count != 1 or len(exports) != 1:
        sys.exit("lonboard's bundle: its start-up or exports are not as expected")
    export = exports[0]
    return (text[:export.start()] + "export{%s as default,%s as Map}" % (export.group(1), map_class)
            + text[export.end():]).encode()


def settle(driver, what):
    driver.execute_script("window.iconrTest.steadySince = 0;")
    done = gljs.wait_for(
        driver,
        "(window.iconrTest.steadySince = (%s) ? (window.iconrTest.steadySince || Date.now()) : 0) && "
        "Date.now() - window.iconrTest.steadySince > 600" % READY,
        "{done: %s, console: window.iconrTest.console}" % READY, 60000)
    if not done["done"]:
        sys.stderr.write("MapLibre GL JS: the map did not settle %s (console: %s)\n" % (what, done["console"]))
        sys.exit(1)


def main():
    request = json.load(open(sys.argv[1]))
    prefix = sys.argv[2]
    files = {
        "/maplibre-gl.js": (gljs.maplibre_script(), "text/javascript"),
        "/index.html": (request["page"].encode(), "text/html"),
    }
    if "/maplibre-gl-6.mjs" in request["page"]:
        files["/maplibre-gl-6.mjs"] = (maplibre6_module(), "text/javascript")
    server, base = gljs.start_server(files)
    driver = gljs.chrome(request["width"] + 100, request["height"] + 100, scale=request.get("ratio", 1))
    report = {"steps": []}
    try:
        # The viewport exactly: a window's size includes what headless Chromium keeps of its frame.
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": request["width"], "height": request["height"],
            "deviceScaleFactor": request.get("ratio", 1), "mobile": False})
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
        driver.get(base + "index.html")
        canvas = None
        for step in range(len(request["taps"]) + 1):
            if step > 0:
                x, y = driver.execute_script("const p = map.project(arguments[0]); return [p.x, p.y];",
                                             request["taps"][step - 1])
                canvas = canvas or driver.find_element(By.CSS_SELECTOR, "canvas.maplibregl-canvas")
                size = canvas.size
                ActionChains(driver).move_to_element_with_offset(
                    canvas, x - size["width"] / 2, y - size["height"] / 2).click().perform()
            settle(driver, "after tap %d" % step if step else "at load")
            points = driver.execute_script(
                "return arguments[0].map((c) => { const p = map.project(c); return [p.x, p.y]; });",
                request.get("points", []))
            images = driver.execute_script(
                "return map.listImages().sort().map((id) => {"
                "  const image = map.getImage(id);"
                "  return {id: id, width: image.data.width, pixelRatio: image.pixelRatio}; });")
            with open("%s-%d.png" % (prefix, step), "wb") as output:
                output.write(driver.get_screenshot_as_png())
            report["steps"].append({"points": points, "images": images})
        report["console"] = driver.execute_script("return window.iconrTest.console;")
    finally:
        driver.quit()
        server.shutdown()
    with open(prefix + ".json", "w") as output:
        json.dump(report, output)


main()
