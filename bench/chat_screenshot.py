"""Screenshots of the chat page while a real model is still writing.

    .venv/bin/python bench/chat_screenshot.py --index DIR [--model local] [--question "What is HP?"] --out DIR

Starts `disambig serve` with the model (bench/first_token.py's Serve), opens the page in
Debian's headless chromium (Playwright, no browser download), asks the question and saves a
screenshot every `--every` seconds from the first reading on screen until the answer is final,
each named by its time after enter. Prints what the answer bubble held at each shot.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHROMIUM = Path("/usr/bin/chromium")  # Debian's; Playwright never downloads a browser here
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--model", default="local")
    parser.add_argument("--question", default="What is HP?")
    parser.add_argument("--every", type=float, default=4.0)
    parser.add_argument("--limit", type=float, default=300.0, help="seconds to wait for the final answer")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from bench.first_token import Serve

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    server = Serve(args.index, args.model)
    try:
        server.run("What is a Jaguar?")  # warm: the page then meets a loaded model and encoder
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": 1100, "height": 760}).new_page()
            page.goto(server.url + "/")
            page.wait_for_selector("#method option", state="attached")
            page.fill("#input", args.question)
            started = time.time()
            page.press("#input", "Enter")
            page.wait_for_selector(".msg.ai", timeout=args.limit * 1000)
            seen_readings = False
            while time.time() - started < args.limit:
                seconds = time.time() - started
                path = out / f"chat-{seconds:05.1f}s.png"
                page.screenshot(path=str(path))
                bubble = page.locator(".msg.ai").last.inner_text().replace("\n", " | ")
                print(f"[{seconds:6.1f}s] {path.name}: {bubble[:300]}", flush=True)
                readings = page.locator(".msg.ai .reading").count()
                seen_readings = seen_readings or readings > 0
                if (seen_readings and readings == 0) or page.locator(".msg.ai.final").count():
                    break  # the checked answer replaced the early lines
                time.sleep(args.every)
            browser.close()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
