"""The chat page of `disambig serve`, driven in headless Chromium against the fixed-latency fake model.

Debian's `chromium` (/usr/bin/chromium; `make test` installs it) is driven by Playwright, which
never downloads a browser here. Each test saves screenshots under its tmp_path (their paths are
printed) so a person can look at what the page showed.
"""

from __future__ import annotations

import json
import re
import signal
import sys
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from bench.chat_screenshot import CHROMIUM, CHROMIUM_ARGS
from bench.fake_openai import FakeOpenAI, closed_port_url
from tests.chat_script import TWO_MEANINGS, fake_openai_reply
from tests.test_server import free_port, server_env, start, stop

WAIT_MS = 300_000  # a run on the shared 2-core machine (the first one loads the detector and the encoder)


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is missing: `apt-get install -y chromium` (make test does it as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def fake():
    """Fixed latency per call, and answers streamed in chunks 50 ms apart like a real server."""
    with FakeOpenAI(reply=fake_openai_reply, latency=0.2, chunk_delay=0.05) as server:
        yield server


class Server:
    """`disambig serve` on a free port with its own state dir; restartable on the same dir."""

    def __init__(self, env: dict, state_dir: Path, log_dir: Path, config: Path | None = None):
        self.env, self.state_dir, self.log_dir, self.config = env, state_dir, log_dir, config
        self.port, self.process, self.starts = free_port(), None, 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "Server":
        self.starts += 1
        command = [sys.executable, "-m", "agent.app.cli", "serve", "--port", str(self.port),
                   "--state-dir", str(self.state_dir)] + (["--config", str(self.config)] if self.config else [])
        self.process = start(command, self.log_dir, self.env, self.port, self.log_dir / f"server-{self.starts}.log")
        return self

    def stop(self) -> None:
        stop(self.process)

    def log(self) -> str:
        return "".join(path.read_text() for path in sorted(self.log_dir.glob("server-*.log")))


@pytest.fixture(scope="module")
def server(fake, demo_index, tmp_path_factory):
    base = tmp_path_factory.mktemp("page-server")
    running = Server(server_env(fake, demo_index), base / "state", base).start()
    yield running
    running.stop()


@pytest.fixture
def page(browser, server, tmp_path):
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(server.url + "/")
    page.wait_for_selector("#method option", state="attached")
    yield page
    context.close()
    assert not errors, errors  # no uncaught script error on the page


def shot(page, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path))
    print(f"screenshot: {path}")
    return path


def ask(page, text: str) -> None:
    page.fill("#input", text)
    page.press("#input", "Enter")  # Enter sends
    assert page.evaluate("document.activeElement.id") == "input"  # focus stays in the input


def record_answer_text(page) -> None:
    """Keep every text the newest answer bubble shows, to see it grow token by token."""
    page.evaluate("""() => {
        window.answerTexts = [];
        new MutationObserver(() => {
            const bubbles = document.querySelectorAll('.msg.ai');
            const last = bubbles[bubbles.length - 1];
            if (last && !last.classList.contains('clarification')) window.answerTexts.push(last.textContent);
        }).observe(document.getElementById('log'), {childList: true, subtree: true, characterData: true});
    }""")


def test_page_asks_streams_stages_and_a_clarification_choice_resumes_the_thread(page, server, tmp_path):
    ask(page, "What is HP?")
    page.wait_for_selector(".msg.clarification .options button", timeout=WAIT_MS)
    stages = page.inner_text(".stages")
    assert "classifying ambiguity" in stages and "retrieving passages" in stages
    # auto, the page's default: the model's two grounded readings (its uncited games reading is
    # dropped), then up to 4 extractive readings ("What is X?" asks for every meaning), the games
    # passages' sense first
    found = re.search(r"interpretations found: (\d) \((\d) grounded senses\), asking which one you mean", stages)
    assert found and 2 <= int(found.group(2)) <= 4  # one option per sense, at most four
    buttons = page.locator(".options button")
    labels = buttons.all_inner_texts()
    assert len(labels) == int(found.group(2)) + 1 and labels[-1] == "All of them"
    for number, label in enumerate(labels[:-1], 1):  # each sense named, with its cited sentence and source
        name, quote, source = label.split("\n")
        assert name.startswith(f"{number}. ") and quote.startswith("\u201c") and source
    assert len({label.split("\n")[0][3:] for label in labels[:-1]}) == len(labels) - 1  # no sense twice
    assert "None of these? Type what you meant." in page.inner_text(".msg.clarification")
    assert "· waiting" in page.inner_text("#threads li.current")
    shot(page, tmp_path, "1-clarification")

    record_answer_text(page)
    chosen = labels[0].split("\n")[0][3:]
    buttons.nth(0).click()
    page.wait_for_selector(".msg.ai.final", timeout=WAIT_MS)
    shot(page, tmp_path, "2-answer")
    thread_id = page.evaluate("location.hash").split("=", 1)[1]
    state = httpx.get(f"{server.url}/threads/{thread_id}/state", timeout=30).json()
    answer = state["values"]["answer"]
    # the chosen sense's cited sentences, written before asking: shown whole, never withdrawn
    squeezed = lambda text: re.sub(r"\s+", "", text)  # noqa: E731 (citation buttons and blocks change spacing only)
    streamed = [text for text in page.evaluate("window.answerTexts") if text]
    assert streamed  # shown at once: no model call after the choice
    final = squeezed(page.inner_text(".msg.ai.final"))  # its sentences, in a block per interpretation they state
    assert all(squeezed(part) in final for part in re.split(r"(?<=\.)\s+(?=[A-Z])", answer))
    assert page.evaluate("document.activeElement.id") == "input"
    assert page.locator(".msg.human").all_inner_texts() == ["What is HP?", chosen]

    citation = page.locator(".msg.ai:not(.clarification) .cite").first
    number = int(citation.inner_text().strip("[]"))
    cited = state["values"]["passages"][number - 1]
    assert citation.get_attribute("title").startswith(f"{cited['title']}: ")  # the passage on hover
    citation.click()  # and in full on click
    assert page.inner_text("#passage-title") == f"[{number}] {cited['title']}"
    assert page.inner_text("#passage-text") == cited["text"]
    assert cited["title"] in page.inner_text(".msg.ai.final .sources")  # sources by title
    shot(page, tmp_path, "3-answer-with-cited-passage")
    assert state["next"] == [] and state["values"]["decision"]["choice"] == 1
    assert "· waiting" not in page.inner_text("#threads li.current")


def test_all_of_them_answers_every_interpretation_and_the_method_list_comes_from_the_registry(page, tmp_path):
    from agent.app.web import chat_methods

    listed = chat_methods()
    assert page.locator("#method option").all_inner_texts() == [m["name"] for m in listed["methods"]]
    assert page.input_value("#method") == listed["default"]
    ask(page, "What is HP?")
    page.wait_for_selector(".options button.all", timeout=WAIT_MS)
    page.click(".options button.all")
    page.wait_for_selector(".msg.ai.final", timeout=WAIT_MS)
    blocks = page.locator(".msg.ai.final .sense")  # one block per sense: its name, cited sentence, sources
    count = blocks.count()
    assert 2 <= count <= 6
    for n in range(count):
        block = blocks.nth(n)
        assert block.locator("h3").inner_text() and block.locator(".cite").count() >= 1
        assert block.locator(".sources").inner_text().startswith("Sources: ")
    answer_text = page.inner_text(".msg.ai:not(.clarification)")  # readings first, then the model's new sentences
    assert "Hewlett-Packard" in answer_text and answer_text.count("[") >= 2
    page.set_viewport_size({"width": 380, "height": 700})  # a narrow window: the input stays on screen
    box = page.locator("#input").bounding_box()
    assert box and box["y"] + box["height"] <= 700 and box["width"] > 200
    page.evaluate("scrollDown()")
    shot(page, tmp_path, "4-all-of-them-narrow")


def test_threads_reopen_with_history_and_a_waiting_question_after_a_server_restart(browser, fake, demo_index,
                                                                                     tmp_path):
    server = Server(server_env(fake, demo_index), tmp_path / "state", tmp_path).start()
    try:
        page = browser.new_page(viewport={"width": 1100, "height": 760})
        page.goto(server.url + "/")
        page.wait_for_selector("#method option", state="attached")
        page.select_option("#method", "rac")
        ask(page, "What is a jaguar?")  # one meaning: answered directly
        page.wait_for_selector(".msg.ai.final", timeout=WAIT_MS)
        answered = page.evaluate("location.hash").split("=", 1)[1]
        runs = httpx.get(f"{server.url}/threads/{answered}/runs", timeout=30).json()
        assert runs[0]["kwargs"]["context"]["downstream"] == "rac"  # the selected method answered
        page.click("#new-chat")
        ask(page, "What is HP?")  # left waiting at the clarification
        page.wait_for_selector(".options button", timeout=WAIT_MS)
        waiting = page.evaluate("location.hash").split("=", 1)[1]

        server.process.send_signal(signal.SIGINT)  # Ctrl-C: the server flushes its threads to the state dir
        server.process.wait(timeout=60)
        ask(page, "Is anyone there?")  # the server is down: said on the page, not swallowed
        page.wait_for_selector(".msg.error", timeout=WAIT_MS)
        assert "cannot reach the disambig server" in page.inner_text(".msg.error")
        shot(page, tmp_path, "5-server-down")
        assert (tmp_path / "state" / ".langgraph_api").is_dir()

        server.start()
        page.goto(server.url + "/")  # a fresh page: the list comes from the restarted server
        page.wait_for_selector(f"#threads li[data-thread='{answered}']")
        titles = page.locator("#threads li").all_inner_texts()
        assert "What is a jaguar?" in titles and "What is HP? · waiting" in titles
        page.click(f"#threads li[data-thread='{answered}']")
        page.wait_for_selector(".msg.ai.final")
        assert page.locator(".msg.human").all_inner_texts() == ["What is a jaguar?"]
        assert page.inner_text(".msg.ai").startswith("A jaguar is a big cat of the Americas")
        shot(page, tmp_path, "6-reopened-after-restart")

        page.click(f"#threads li[data-thread='{waiting}']")
        page.wait_for_selector(".options button")
        # the waiting question still resumes (the scripted focused reply is the company's: choose it,
        # so its reading is grounded in the focused passages and listed)
        first = page.locator(".options button .label").nth(0).inner_text()[3:]
        page.locator(".options button").nth(0).click()
        page.wait_for_selector(".msg.ai.final", timeout=WAIT_MS)
        assert page.locator(".msg.human").all_inner_texts() == ["What is HP?", first]
        shot(page, tmp_path, "7-resumed-after-restart")
        page.close()
    finally:
        server.stop()
    assert "BlockingError" not in server.log()


def test_model_server_down_is_shown_on_the_page(browser, demo_index, tmp_path):
    down = closed_port_url()
    env = server_env(SimpleNamespace(base_url=down), demo_index)
    env["DISAMBIG_MAX_RETRIES"] = "0"
    server = Server(env, tmp_path / "state", tmp_path).start()
    try:
        page = browser.new_page(viewport={"width": 1100, "height": 760})
        page.goto(server.url + "/")
        page.wait_for_selector("#method option", state="attached")
        ask(page, "What is HP?")
        page.wait_for_selector(".msg.error", timeout=WAIT_MS)
        error = page.inner_text(".msg.error")
        assert error.startswith("the run failed: ModelUnavailableError") and f"cannot reach the model server at {down}" in error
        # the readings shown before the model call stay on screen, each cited; no model answer follows
        shown = page.locator(".msg.ai")
        assert shown.count() <= 1 and all("[" in shown.nth(n).inner_text() for n in range(shown.count()))
        shot(page, tmp_path, "8-model-down")
        page.reload()
        page.wait_for_selector("#threads li")
        assert "· failed" in page.inner_text("#threads li")
        page.click("#threads li")
        page.wait_for_selector(".msg.error")
        assert "The last run on this thread failed" in page.inner_text(".msg.error")
        page.close()
    finally:
        server.stop()


def test_early_readings_show_at_once_and_the_checked_answer_updates_the_same_bubble(browser, tmp_path):
    """A scripted server (tests/readings_graph.py as the chat graph): the readings event, the
    prose a sentence at a time, then the checked answer that keeps one reading and drops one."""
    from tests import readings_graph as script

    config = tmp_path / "state" / "langgraph.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"dependencies": ["."], "graphs": {"chat": "tests.readings_graph:graph"},
                                  "http": {"app": "agent.app.web:app"}, "env": {}}))
    env = {**server_env(SimpleNamespace(base_url=closed_port_url()), "/nonexistent-index"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    server = Server(env, tmp_path / "state", tmp_path, config).start()
    try:
        page = browser.new_page(viewport={"width": 1100, "height": 760})
        page.goto(server.url + "/")
        page.wait_for_selector("#method option", state="attached")
        record_answer_text(page)
        ask(page, "What is HP?")
        page.wait_for_selector(".msg.ai .reading", timeout=WAIT_MS)
        lines = page.locator(".msg.ai .reading").all_inner_texts()
        assert lines == [r["text"] for r in script.READINGS]  # both cited lines, before any prose
        assert page.inner_text(".msg.ai .prose") == ""
        assert page.locator(".msg.ai .reading .cite").first.get_attribute("title") == "Hewlett-Packard"
        page.wait_for_function("document.querySelector('.msg.ai .prose').textContent.length > 0", timeout=WAIT_MS)
        assert page.locator(".msg.ai .reading").count() == 2  # the prose streams under the readings
        path = shot(page, tmp_path, "9-readings-then-prose-streaming")
        print(f"streaming screenshot: {path}")
        page.wait_for_selector(".msg.ai.final", timeout=WAIT_MS)

        assert page.locator(".msg.ai").count() == 1  # one bubble, updated in place: not three versions
        bubble = page.inner_text(".msg.ai")
        assert bubble.startswith(script.ANSWER) and bubble.count(script.READINGS[0]["text"][:30]) == 1
        assert page.locator(".msg.ai .reading").count() == 0  # the checked answer replaced the early lines
        assert page.inner_text(".msg.ai .dropped") == "dropped: As a unit of power (not asked about in this chat)"
        prose = "".join(script.PROSE)
        texts = [t for t in page.evaluate("window.answerTexts") if "interpretations" not in t.lower()]
        streamed = [t.split(script.READINGS[1]["text"])[-1] for t in texts if script.READINGS[1]["text"] in t]
        assert streamed and all(prose.startswith(t) for t in streamed), streamed  # sentences grew, none withdrawn
        assert {t for t in streamed if t} >= {"".join(script.PROSE[:n]) for n in (1, 2, 3)}
        shot(page, tmp_path, "10-checked-answer-in-place")
        page.close()
    finally:
        server.stop()
