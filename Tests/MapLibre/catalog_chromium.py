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

import gljs
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium import webdriver

VISIBLE = "Array.from(document.querySelectorAll('.card')).filter(c => !c.classList.contains('hidden')).length"

# The pixels of the first redrawable icon's 2x image, read through a canvas (same origin).
PIXELS = """
const input = document.querySelector('input[type=color]:not([disabled])');
if (!input) return null;
const image = input.closest('.card').querySelectorAll('.frame img')[1];
if (!image || !image.complete || !image.naturalWidth) return null;
const canvas = document.createElement('canvas');
canvas.width = image.naturalWidth; canvas.height = image.naturalHeight;
const context = canvas.getContext('2d');
context.drawImage(image, 0, 0);
return [image.src, Array.from(context.getImageData(0, 0, canvas.width, canvas.height).data)];
"""


def main():
    request = json.load(open(sys.argv[1]))
    files = {}
    server, base = gljs.start_server(files)
    if "file" in request:
        files["/catalog.html"] = (open(request["file"], "rb").read(), "text/html")
        url = base + "catalog.html"
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
        driver.get(url)
        gljs.wait_for(driver, "document.querySelectorAll('.card').length > 0", "0", 15000)
        result = {"cards": driver.execute_script("return " + VISIBLE)}
        driver.execute_script(
            "const s = document.getElementById('search'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('input'));", request.get("search", ""))
        result["afterSearch"] = driver.execute_script("return " + VISIBLE)
        driver.execute_script(
            "const s = document.getElementById('search'); s.value = ''; s.dispatchEvent(new Event('input'));")
        result["redrawable"] = driver.execute_script(
            "return document.querySelectorAll('input[type=color]:not([disabled])').length")
        before = driver.execute_script(PIXELS)
        if before is not None:
            driver.execute_script(
                "const input = document.querySelector('input[type=color]:not([disabled])');"
                "input.value = arguments[0]; input.dispatchEvent(new Event('input'));", request.get("color", "#ff0000"))
            gljs.wait_for(
                driver, "(() => { const i = document.querySelector('input[type=color]:not([disabled])');"
                "const m = i.closest('.card').querySelectorAll('.frame img')[1];"
                "return m.src !== %s && m.complete && m.naturalWidth > 0; })()" % json.dumps(before[0]), "0", 15000)
            after = driver.execute_script(PIXELS)
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
