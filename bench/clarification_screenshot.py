"""Screenshots of the chat page: an empty thread, the page asking which sense was meant, and the
answer after a choice.

    .venv/bin/python bench/clarification_screenshot.py --index DIR --out DIR [--question "What is HP?"]
        [--choose 2] [--model local | --fake-model]

Starts `disambig serve` on the index (bench/first_token.py's Serve), opens the page in Debian's
headless chromium (Playwright, no browser download), saves `chat-empty.png`, asks the question,
saves `chat-asking.png` once the options show, clicks option `--choose` and saves
`chat-chosen.png`; a page that answers without asking is saved as `chat-answered.png` and the
script exits 1. `--fake-model` answers the one model call of auto's fast budget with an
empty reply from a local fake OpenAI server (bench/fake_openai.py), so the options and the
answer are the readings the documents give, in seconds, whatever the machine's load.
Prints what each bubble held.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.chat_screenshot import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

EMPTY_REPLY = '{"interpretations": [], "answer": ""}'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--model", default="local")
    parser.add_argument("--fake-model", action="store_true", help="an empty model reply from a local fake server")
    parser.add_argument("--question", default="What is HP?")
    parser.add_argument("--choose", type=int, default=2)
    parser.add_argument("--limit", type=float, default=600.0, help="seconds to wait for each step")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from bench.fake_openai import FakeOpenAI
    from bench.first_token import Serve

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        model = args.model
        if args.fake_model:
            fake = stack.enter_context(FakeOpenAI(reply=EMPTY_REPLY, latency=0.1))
            os.environ.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="fake")
            model = "openai:fake"
        server = Serve(args.index, model)
        stack.callback(server.stop)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": 1100, "height": 820}).new_page()
            page.goto(server.url + "/")
            page.wait_for_selector(".welcome .example", timeout=args.limit * 1000)
            page.screenshot(path=str(out / "chat-empty.png"))
            print("empty thread:", page.locator(".welcome").inner_text().replace("\n", " | "))
            page.fill("#input", args.question)
            page.press("#input", "Enter")
            # the page asks (options) or answers at once (the send button back): either ends the wait
            page.wait_for_function("() => document.querySelector('.options button') || "
                                   "(!document.querySelector('#send').disabled && "
                                   "document.querySelectorAll('.msg.ai').length >= 1)", timeout=args.limit * 1000)
            if not page.locator(".options button").count():
                page.screenshot(path=str(out / "chat-answered.png"))
                print("answered without asking:", page.locator(".msg.ai").last.inner_text().replace("\n", " | "))
                browser.close()
                return 1
            page.screenshot(path=str(out / "chat-asking.png"))
            print("asking:", page.locator(".msg.ai").last.inner_text().replace("\n", " | "))
            page.click(f'.options button[data-option="{args.choose}"]')
            page.wait_for_function("() => !document.querySelector('#send').disabled && "
                                   "document.querySelectorAll('.msg.ai').length >= 2", timeout=args.limit * 1000)
            page.screenshot(path=str(out / "chat-chosen.png"))
            print("answer:", page.locator(".msg.ai").last.inner_text().replace("\n", " | "))
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
