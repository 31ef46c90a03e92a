"""What iconr's MapLibre GL JS scripts share (render_gljs.py, serve_gljs.py): a local HTTP
server for the page and its files, headless Chromium (Debian's chromium and chromium-driver,
through Selenium) with WebGL on SwiftShader, and the map's canvas as PNG bytes.
"""
import base64
import functools
import http.server
import os
import threading

import maplibre
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service


def maplibre_script():
    """maplibre-gl.js as the PyPI package `maplibre` ships it."""
    with open(os.path.join(os.path.dirname(maplibre.__file__), "srcjs", "maplibre-gl.js"), "rb") as script:
        return script.read()


class Handler(http.server.SimpleHTTPRequestHandler):
    """Serves `files` ({path: (body, content type)}); other paths from `directory`, or 404."""

    def __init__(self, *args, files, directory=None, **kwargs):
        self.files = files
        self.has_directory = directory is not None
        super().__init__(*args, directory=directory or os.devnull, **kwargs)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path in self.files or not self.has_directory:
            body, kind = self.files.get(path, (b"not found", "text/plain"))
            self.send_response(200 if path in self.files else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, *args):
        pass


def start_server(files, directory=None):
    """A threaded server on 127.0.0.1 (any free port) and its base URL, `http://127.0.0.1:PORT/`.
    `files` may be filled in after it starts, before the first request."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, files=files, directory=directory))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, "http://127.0.0.1:%d/" % server.server_address[1]


def chrome(width, height, scale=1):
    """Headless Chromium with a window of `width` x `height` CSS pixels at device scale `scale`."""
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--use-angle=swiftshader",
                     "--enable-unsafe-swiftshader", "--window-size=%d,%d" % (width, height),
                     "--force-device-scale-factor=%r" % scale, "--hide-scrollbars"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


def wait_for(driver, finished, result, timeout_ms):
    """Polls the page every 50 ms until the JavaScript expression `finished` is true (or
    `timeout_ms` passed) and returns the JavaScript expression `result` evaluated then."""
    driver.set_script_timeout(timeout_ms / 1000 + 10)
    return driver.execute_async_script("""
        const callback = arguments[arguments.length - 1];
        const started = Date.now();
        (function wait() {
          if ((%s) || Date.now() - started > %d) { callback(%s); } else { setTimeout(wait, 50); }
        })();
    """ % (finished, timeout_ms, result))


def canvas_png(driver):
    """The map's canvas (the page's global `map`) as PNG bytes; it must keep its drawing buffer."""
    data = driver.execute_script("return map.getCanvas().toDataURL('image/png');")
    return base64.b64decode(data.split(",", 1)[1])
