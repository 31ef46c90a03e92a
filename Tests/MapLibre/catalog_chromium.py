"""Opens iconr's catalog page (iconr serve's /catalog, or the file iconr sprite --catalog
writes) in headless Chromium and reports, as JSON on stdout, what a person would see:
console errors, how many icon cards show before and after typing into the search box, and,
when the page draws through a server, whether setting a parameter's color input changes the
pixels of the icon drawn at 2x.

Usage: python3 catalog_chromium.py request.json
The request: {"url": "http://127.0.0.1:PORT/catalog"} or {"file": "catalog.html"},
             "search": "flag", "screenshot": "catalog.png" (optional), "color": "#ff0000"
Used by Tests/IconrCLITests/CatalogTests.swift.
"""
import json
import sys
import time

import gljs
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium import webdriver

VISIBLE = "Array.from(document.querySelectorAll('.card')).filter(c => !c.classList.contains('hidden')).length"

# The pixels of the first redrawable icon's 2x image: its source (a cut of a sheet, or a
# whole redrawn image) drawn into a canvas (same origin). Async: it loads that image.
PIXELS = """
const done = arguments[arguments.length - 1];
const input = document.querySelector('input[type=color]:not([disabled])');
if (!input) { done(null); return; }
const node = input.closest('.card').querySelectorAll('.frame .pixels')[1];
if (!node || !node.dataset.src) { done(null); return; }
const image = new Image();
image.onload = () => {
  const cut = node.dataset.cut ? node.dataset.cut.split(' ').map(Number) : [0, 0, image.naturalWidth, image.naturalHeight];
  const canvas = document.createElement('canvas');
  canvas.width = cut[2]; canvas.height = cut[3];
  const context = canvas.getContext('2d');
  context.drawImage(image, cut[0], cut[1], cut[2], cut[3], 0, 0, cut[2], cut[3]);
  done([node.dataset.src, Array.from(context.getImageData(0, 0, canvas.width, canvas.height).data)]);
};
image.onerror = () => done(null);
image.src = node.dataset.src;
"""

# How many sheet images the page shows and how many of them loaded (each sheet is fetched once).
SHEETS = """
const done = arguments[arguments.length - 1];
const urls = Array.from(new Set(Array.from(document.querySelectorAll('.pixels')).map(n => n.dataset.src).filter(Boolean)));
let loaded = 0, left = urls.length;
if (!left) { done([0, 0]); return; }
urls.forEach(url => { const image = new Image(); image.onload = () => { loaded += 1; if (--left === 0) done([urls.length, loaded]); };
  image.onerror = () => { if (--left === 0) done([urls.length, loaded]); }; image.src = url; });
"""


def main():
    request = json.load(open(sys.argv[1]))
    files = {}
    # A written catalog fetches the sheets beside it by relative URLs: the files are served as they lie.
    server, base = gljs.start_server(files, directory="/")
    if "file" in request:
        url = base + request["file"].lstrip("/")
    else:
        url = request["url"]
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1100,800",
                     "--hide-scrollbars"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    try:
        started = time.monotonic()
        driver.get(url)
        gljs.wait_for(driver, "document.querySelectorAll('.card').length > 0", "0", 15000)
        driver.set_script_timeout(60)
        sheets = driver.execute_async_script(SHEETS)
        result = {"cards": driver.execute_script("return " + VISIBLE), "sheets": sheets[0], "sheetsLoaded": sheets[1],
                  "loadSeconds": time.monotonic() - started,
                  "backdrops": driver.execute_script(
                      "return Array.from(document.querySelectorAll('#sets > section')).map(s => s.dataset.backdrop)"),
                  "sections": driver.execute_script(
                      "return Array.from(document.querySelectorAll('#sets > section h2')).map(h => h.textContent)")}
        driver.execute_script(
            "const s = document.getElementById('search'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('input'));", request.get("search", ""))
        result["afterSearch"] = driver.execute_script("return " + VISIBLE)
        driver.execute_script(
            "const s = document.getElementById('search'); s.value = ''; s.dispatchEvent(new Event('input'));")
        result["redrawable"] = driver.execute_script(
            "return document.querySelectorAll('input[type=color]:not([disabled])').length")
        before = driver.execute_async_script(PIXELS)
        if before is not None:
            driver.execute_script(
                "const input = document.querySelector('input[type=color]:not([disabled])');"
                "input.value = arguments[0]; input.dispatchEvent(new Event('input'));", request.get("color", "#ff0000"))
            gljs.wait_for(
                driver, "(() => { const i = document.querySelector('input[type=color]:not([disabled])');"
                "const m = i.closest('.card').querySelectorAll('.frame .pixels')[1];"
                "return m.dataset.src !== %s; })()" % json.dumps(before[0]), "0", 15000)
            after = driver.execute_async_script(PIXELS)
            result["pixelsChanged"] = after is not None and after[1] != before[1]
            result["redrawnFrom"] = after[0] if after else None
        if request.get("screenshot"):
            driver.save_screenshot(request["screenshot"])
        result["errors"] = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        print(json.dumps(result))
    finally:
        driver.quit()
        server.shutdown()


main()
