"""Time to first result of the built page (docs/web.md), in headless Chromium from 127.0.0.1.

Usage: .venv/bin/python web/build/measure.py [RUNS]. Each run opens the page in a
fresh browser (no cache) and reads `window.gradlangPage.firstResultAt`, the
milliseconds from opening the page to the first result shown, and the times
the status line first said each of its steps. A measurement, not a test.
"""

import functools
import http.server
import sys
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

DIST = Path(__file__).resolve().parents[1] / "dist"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def measure(url: str) -> tuple[float, list]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page()
        page.add_init_script("""new MutationObserver(() => {}).observe(document, {subtree: true, childList: true});
            window.__steps = []; document.addEventListener('DOMContentLoaded', () => {
            const s = document.getElementById('status');
            new MutationObserver(() => window.__steps.push([performance.now(), s.textContent]))
              .observe(s, {childList: true, characterData: true, subtree: true}); });""")
        page.goto(url)
        page.wait_for_function("window.gradlangPage && window.gradlangPage.firstResultAt", timeout=600_000)
        first = page.evaluate("window.gradlangPage.firstResultAt") / 1000
        steps = page.evaluate("window.__steps")
        browser.close()
    return first, steps


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(DIST)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    for run in range(runs):
        first, steps = measure(url)
        seen = " | ".join(f"{ms / 1000:.1f} s {text}" for ms, text in steps if not text.startswith("running line"))
        print(f"run {run + 1}: first result at {first:.1f} s  ({seen})")
    server.shutdown()


main()
