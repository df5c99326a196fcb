"""MkDocs hooks: fill the generated parts of the pages, and serve Mermaid from the site itself.

A page asks for generated content with a marker line (an unknown marker fails the build):

    <!-- gen:cli -->               the CLI reference, from the argument parser
    <!-- gen:settings -->         every context class's settings
    <!-- gen:settings METHOD -->  one method's own settings
    <!-- gen:events -->           the stream events the code sends
    <!-- gen:graph NAME -->       the compiled graph NAME as a Mermaid diagram
    <!-- gen:methods -->          `disambig methods`: the registry's one-line summaries
    <!-- gen:bench -->            the benchmark scripts, from their docstrings

Material for MkDocs loads Mermaid from a CDN unless `window.mermaid` already exists, so the site
ships its own copy (`assets/javascripts/mermaid.min.js`, loaded in the page head by
overrides/main.html, before the theme's bundle): the diagrams render with no network. The file (3.6 MB) is not tracked in git; it comes from the npm
registry's `mermaid` package once, into the user cache (`DISAMBIG_DOCS_CACHE`), then offline.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference  # noqa: E402  (beside this file; MkDocs loads hooks by path)

MERMAID_VERSION = "11.17.2"
MERMAID_TARGET = "assets/javascripts/mermaid.min.js"
MARKER = re.compile(r"^<!-- gen:(\w+)(?: ([\w-]+))? -->$", re.M)


def _methods() -> str:
    from graphs.registry import METHODS

    rows = ["| method | what it does |", "|---|---|"]
    return "\n".join(rows + [f"| `{name}` | {summary} |" for name, (_, summary) in METHODS.items()]) + "\n"


def _graph(name: str) -> str:
    return "```mermaid\n" + reference.graph_mermaid(name).strip() + "\n```\n"


GENERATORS = {
    "cli": lambda arg: reference.cli_markdown(),
    "settings": lambda arg: reference.settings_markdown(arg) if arg else reference.all_settings_markdown(),
    "events": lambda arg: reference.events_markdown(),
    "graph": _graph,
    "methods": lambda arg: _methods(),
    "bench": lambda arg: reference.bench_markdown(),
}


def on_page_markdown(markdown: str, page, config, files) -> str:
    def fill(match: re.Match) -> str:
        kind, arg = match.group(1), match.group(2)
        if kind not in GENERATORS:
            raise ValueError(f"{page.file.src_path}: unknown generated block {match.group(0)}")
        return GENERATORS[kind](arg)

    return MARKER.sub(fill, markdown)


def _cache() -> Path:
    from platformdirs import user_cache_dir

    return Path(os.environ.get("DISAMBIG_DOCS_CACHE") or Path(user_cache_dir("disambig")) / "docs")


def mermaid_js() -> Path:
    """The cached mermaid.min.js, fetched once with `npm pack` (the package tarball only)."""
    cached = _cache() / f"mermaid-{MERMAID_VERSION}.min.js"
    if cached.exists():
        return cached
    if not shutil.which("npm"):
        raise RuntimeError(f"the docs need {cached} (Mermaid for offline diagrams): install npm, or put "
                           f"mermaid@{MERMAID_VERSION}'s dist/mermaid.min.js there")
    work = cached.parent / "npm"
    work.mkdir(parents=True, exist_ok=True)
    run = subprocess.run(["npm", "pack", f"mermaid@{MERMAID_VERSION}", "--silent"], cwd=work,
                         capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError(f"npm could not fetch mermaid@{MERMAID_VERSION} (the docs' offline diagrams): "
                           + (run.stderr.strip().splitlines() or ["no output"])[-1])
    packed = run.stdout.strip().splitlines()[-1]
    with tarfile.open(work / packed) as archive:
        member = archive.extractfile("package/dist/mermaid.min.js")
        cached.write_bytes(member.read())
    shutil.rmtree(work)
    return cached


def on_post_build(config) -> None:
    target = Path(config["site_dir"]) / MERMAID_TARGET
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(mermaid_js(), target)
