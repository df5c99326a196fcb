"""The documentation site builds in strict mode and renders offline.

`mkdocs build --strict` fails on a broken link, a missing page, an unknown generated block or any
warning. The built home page and a method page are then opened in Debian's headless Chromium with
every request outside the local server aborted: the pages must load, fetch nothing from a CDN, and
draw their LangGraph diagrams (Mermaid served from the site itself).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_gen"))
import site_check  # noqa: E402

PAGES = {"home.png": "", "method-diva.png": "concepts/methods/diva/", "graphs.png": "reference/graphs/"}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site_dir = tmp_path_factory.mktemp("site")
    result = site_check.build(site_dir)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return site_dir


def test_the_site_builds_strict_with_every_page_and_generated_reference(site):
    for page in ["index.html", "concepts/auto/index.html", "reference/cli/index.html",
                 "reference/settings/index.html", "reference/python-api/index.html",
                 "reference/stream-events/index.html", "results/answer-quality/index.html", "changelog/index.html"]:
        assert (site / page).exists(), page
    cli = (site / "reference/cli/index.html").read_text()
    assert "disambig eval" in cli and "--budget" in cli  # generated from the parser, not written by hand
    settings = (site / "reference/settings/index.html").read_text()
    assert "DISAMBIG_MODEL" in settings and "verify_calls" in settings
    assert "gen:" not in (site / "concepts/methods/diva/index.html").read_text()  # every marker was filled
    assert (site / "assets/javascripts/mermaid.min.js").stat().st_size > 1_000_000


def test_the_pages_render_their_diagrams_with_no_network(site, tmp_path):
    if not site_check.CHROMIUM.exists():
        pytest.fail("Debian's chromium is missing: `apt-get install -y chromium` (make test does it as root)")
    report = site_check.look(site, PAGES, tmp_path)
    print("screenshots in", tmp_path)
    assert report["blocked"] == [], report["blocked"]
    assert report["home.png"]["title"] == "disambig"
    assert report["method-diva.png"]["diagrams"] == report["method-diva.png"]["expected"] == 1
    assert report["graphs.png"]["diagrams"] == report["graphs.png"]["expected"] >= 10  # every graph, chat included
    assert not any(report[name]["errors"] for name in PAGES), report
