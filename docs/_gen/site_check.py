"""Build the docs site and look at it in headless Chromium with the network cut off.

    .venv/bin/python docs/_gen/site_check.py            # build, check, and write docs/screenshots/*.png

The browser may reach only the local server that serves the built site: any other request (a CDN,
a font) is aborted and reported, so a page that renders here renders offline. The check waits for
each Mermaid diagram to become an SVG. tests/test_docs_site.py runs the same functions.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")  # Debian's; Playwright never downloads a browser here
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
DRAWN_COUNT = "[...document.querySelectorAll('.mermaid')].filter(e => e.tagName == 'DIV' && e.offsetHeight > 40).length"
DRAWN = f"n => ({DRAWN_COUNT}) >= n"
SHOTS = {"home.png": "", "method-diva.png": "concepts/methods/diva/"}


def build(site_dir: Path) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` into `site_dir` (a broken link, a missing page or a warning fails)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
                          cwd=ROOT, env=env, capture_output=True, text=True)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@contextmanager
def serve(site_dir: Path):
    handler = functools.partial(QuietHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


def look(site_dir: Path, pages: dict[str, str], shots_dir: Path | None = None) -> dict:
    """Open each page offline; {page: {"diagrams": n rendered, "errors": [...]}, "blocked": [urls]}."""
    from playwright.sync_api import sync_playwright

    report: dict = {"blocked": []}
    with serve(site_dir) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})

        def only_local(route):
            if urlparse(route.request.url).hostname == "127.0.0.1":
                route.continue_()
            else:
                report["blocked"].append(route.request.url)
                route.abort()

        page.route("**/*", only_local)
        for name, path in pages.items():
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(base + path, wait_until="load")
            # Material renders each diagram into a closed shadow root of a div.mermaid: a drawn one has a height
            count = page.locator(".mermaid").count()
            if count:
                page.wait_for_function(DRAWN, arg=count, timeout=60_000)
                page.locator(".mermaid").first.scroll_into_view_if_needed()
            drawn = page.evaluate(DRAWN_COUNT)
            report[name] = {"title": page.title(), "diagrams": drawn, "expected": count, "errors": errors}
            if shots_dir is not None:
                page.screenshot(path=str(shots_dir / name))
        browser.close()
    return report


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        result = build(Path(tmp))
        if result.returncode:
            sys.exit(result.stdout + result.stderr)
        out = ROOT / "docs" / "screenshots"
        out.mkdir(exist_ok=True)
        print(look(Path(tmp), SHOTS, out))
