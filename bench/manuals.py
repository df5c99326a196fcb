"""Real manuals of sixteen command-line tools that share a vocabulary (exclude, verbose, config
file, parallel jobs, keep the input file), in one index of all four formats, for the questions in
bench/fixtures/manuals_questions.json (scored by bench/documents_questions.py).

    sudo .venv/bin/python bench/manuals.py corpus --work DIR   # install, download, lay out, render
    .venv/bin/python bench/manuals.py check --work DIR         # every short answer in its document
    .venv/bin/disambig ingest DIR/corpus/markdown DIR/corpus/html DIR/corpus/pdf DIR/corpus/text \\
        --index DIR/index
    .venv/bin/python bench/documents_questions.py --fixture bench/fixtures/manuals_questions.json \\
        --index DIR/index --split test --budget instant
    .venv/bin/python bench/manuals.py split --split test --work DIR   # the test products alone (or tune)
    .venv/bin/disambig ingest DIR/test/* --index DIR/index-test

`corpus` installs the Debian packages in DEBIAN (pinned; it needs root and Debian 12), downloads
the PyPI sdists in PYPI and the npm packages in NPM into DIR/downloads, and lays out each
product's main manual pages under DIR/corpus/<format>/<product>/: Markdown as the packages ship
it, Sphinx HTML as Debian ships it, man pages typeset by groff as text, HTML, or PDF (HTML printed
by headless Chromium with its outline, as a reader saves a manual), and reStructuredText sources
as plain text. A document's id in the index is its path under DIR/corpus/<format>/. Nothing here
is committed: only the questions are.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.documents import roff  # noqa: E402  (after the path: the bench runs from a checkout)

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "manuals_questions.json"
FORMATS = ("markdown", "html", "pdf", "text")
# Debian 12 packages, pinned to the versions in bookworm's main archive: the manuals are read from
# what they install. A stable update of the same release (+deb12uN) ships the same manual, so an
# installed one counts as the pin. Chromium only prints HTML to PDF and Debian keeps just its
# latest security release, so any version of it will do.
DEBIAN = {"gzip": "1.12-1", "xz-utils": "5.4.1-1+deb12u1", "zstd": "1.5.4+dfsg2-5", "lz4": "1.9.4-1",
          "ninja-build": "1.11.1-2~deb12u1", "git-doc": "1:2.39.5-0+deb12u3", "mercurial-common": "6.3.2-1+deb12u1",
          "python-pytest-doc": "7.2.1-2", "python-coverage-doc": "6.5.0+dfsg1-2", "cmake-doc": "3.25.1-1",
          "groff": "1.22.4-10", "chromium": None}
PYPI = ("black==23.1.0", "nox==2024.10.9", "mypy==1.13.0")
NPM = ("nyc@18.0.0", "c8@12.0.0", "nodemon@3.1.14")
PYTEST_HTML = Path("/usr/share/doc/python-pytest-doc/html")
COVERAGE_HTML = Path("/usr/share/doc/python-coverage-doc/html")
# product -> (format, file name under the product's folder, how it is made, what from)
DOCUMENTS = {
    "gzip": [("text", "gzip.1.txt", "man-text", "/usr/share/man/man1/gzip.1.gz")],
    "xz": [("pdf", "xz.1.pdf", "man-pdf", "/usr/share/man/man1/xz.1.gz")],
    "ninja": [("pdf", "ninja-manual.pdf", "html-pdf", "/usr/share/doc/ninja-build/manual.html")],
    "pytest": [("html", f"{name}.html", "copy", str(PYTEST_HTML / folder / f"{name}.html"))
               for folder, name in (("how-to", "usage"), ("how-to", "output"), ("how-to", "failures"),
                                    ("example", "pythoncollection"), ("reference", "customize"))],
    "coverage": [("html", f"{name}.html", "copy", str(COVERAGE_HTML / f"{name}.html"))
                 for name in ("cmd", "config", "source")],
    "git": [("html", f"{name}.html", "copy", f"/usr/share/doc/git-doc/{name}.html")
            for name in ("gitignore", "git-clean", "git-grep")],
    "black": [("markdown", f"{name}.md", "sdist", f"black-23.1.0/docs/usage_and_configuration/{name}.md")
              for name in ("the_basics", "file_collection_and_discovery")],
    "nyc": [("markdown", "README.md", "npm", "nyc-18.0.0.tgz:package/README.md")],
    "zstd": [("text", "zstd.1.txt", "man-text", "/usr/share/man/man1/zstd.1.gz")],
    "lz4": [("pdf", "lz4.1.pdf", "man-pdf", "/usr/share/man/man1/lz4.1.gz")],
    "mercurial": [("html", f"{name}.5.html", "man-html", f"/usr/share/man/man5/{name}.5.gz") for name in ("hgignore", "hgrc")],
    "ctest": [("html", "ctest.1.html", "copy", "/usr/share/doc/cmake-data/html/manual/ctest.1.html")],
    "nox": [("text", f"{name}.txt", "sdist", f"nox-2024.10.9/docs/{name}.rst") for name in ("usage", "config")],
    "mypy": [("text", f"{name}.txt", "sdist", f"mypy-1.13.0/docs/source/{name}.rst") for name in ("command_line", "config_file")],
    "c8": [("markdown", "README.md", "npm", "c8-12.0.0.tgz:package/README.md")],
    "nodemon": [("markdown", "README.md", "npm", "nodemon-3.1.14.tgz:package/README.md"),
                ("text", "options.txt", "npm", "nodemon-3.1.14.tgz:package/doc/cli/options.txt")],
}


def release(version: str) -> str:
    """A Debian version without its stable-update suffix: `5.4.1-1+deb12u2` is release `5.4.1-1`."""
    return version.split("+deb12u")[0]


def installed(package: str, version: str | None) -> bool:
    """Whether dpkg has the package installed (at this release, when a version is given)."""
    found = subprocess.run(["dpkg-query", "-W", "-f=${Status}|${Version}", package], capture_output=True, text=True).stdout
    status, _, have = found.partition("|")
    return status == "install ok installed" and (version is None or release(have) == release(version))


def install_debian() -> None:
    """The pinned Debian packages that are not installed yet (apt-get, as root; anyone else is
    told the command, as the manuals are read from what the packages install)."""
    missing = [f"{name}={version}" if version else name for name, version in DEBIAN.items()
               if not installed(name, version)]
    if missing and os.geteuid() != 0:
        raise SystemExit("as root: apt-get install -y --no-install-recommends " + " ".join(missing))
    if missing:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *missing], check=True, env=env)


def download(downloads: Path) -> None:
    """The PyPI sdists and npm tarballs, once, into `downloads`, unpacked beside themselves."""
    downloads.mkdir(parents=True, exist_ok=True)
    for spec in PYPI:
        name, version = spec.split("==")
        if not (downloads / f"{name}-{version}").exists():
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
                            "-d", str(downloads), spec], check=True)
            with tarfile.open(downloads / f"{name}-{version}.tar.gz") as archive:
                archive.extractall(downloads, filter="data")
    for spec in NPM:
        tarball = downloads / (spec.replace("@", "-") + ".tgz")
        if not tarball.exists():
            subprocess.run(["npm", "pack", spec, "--silent", "--pack-destination", str(downloads)], check=True,
                           stdout=subprocess.DEVNULL)


def groff(path: str, device: str) -> bytes:
    """A man page typeset by groff as the product typesets one: `utf8` as `man` shows it (no
    bold/underline), or `html`."""
    return roff.typeset(roff.source(Path(path)), device)


def print_pdf(html: Path, pdf: Path) -> None:
    """An HTML page printed by headless Chromium, with the document outline a reader navigates by."""
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                    "--generate-pdf-document-outline", f"--print-to-pdf={pdf}", html.resolve().as_uri()],
                   check=True, capture_output=True, timeout=180)


def make_document(how: str, source: str, target: Path, downloads: Path) -> None:
    """One document laid out at `target`, made from `source` as `how` says."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if how == "copy":
        shutil.copyfile(source, target)
    elif how == "sdist":
        shutil.copyfile(downloads / source, target)
    elif how == "npm":
        tarball, member = source.split(":")
        with tarfile.open(downloads / tarball) as archive:
            target.write_bytes(archive.extractfile(member).read())
    elif how == "man-text":
        target.write_bytes(groff(source, "utf8"))
    elif how == "man-html":
        target.write_bytes(groff(source, "html"))
    elif how == "man-pdf":
        html = downloads / (target.stem + ".html")
        html.write_bytes(groff(source, "html"))
        print_pdf(html, target)
    elif how == "html-pdf":
        print_pdf(Path(source), target)
    else:
        raise ValueError(f"unknown way to make a document: {how}")


def build_corpus(work: Path) -> dict[str, list[str]]:
    """Every product's documents under work/corpus/<format>/<product>/; returns their ids by format."""
    install_debian()
    downloads = work / "downloads"
    download(downloads)
    corpus = work / "corpus"
    if corpus.exists():
        shutil.rmtree(corpus)
    laid: dict[str, list[str]] = {kind: [] for kind in FORMATS}
    for product, documents in DOCUMENTS.items():
        for kind, name, how, source in documents:
            make_document(how, source, corpus / kind / product / name, downloads)
            laid[kind].append(f"{product}/{name}")
    return laid


def read_texts(work: Path) -> dict[str, dict]:
    """Each document's passages as the index cuts them: {id: {"text", "sections": {section: text}}}."""
    from agent.retrieval.corpus import ReadReport, chunk_document, read_documents

    texts: dict[str, dict] = {}
    for kind in FORMATS:
        for document in read_documents([str(work / "corpus" / kind)], ReadReport()):
            passages = chunk_document(document)
            sections: dict[str, str] = {}
            for passage in passages:
                section = (passage.get("metadata") or {}).get("section") or ""
                sections[section] = sections.get(section, "") + " " + " ".join(passage["text"].split())
            texts[document.id] = {"text": " ".join(" ".join(p["text"] for p in passages).split()), "sections": sections}
    return texts


def check(work: Path) -> list[str]:
    """Problems with the fixture against the laid-out corpus: a short answer not written verbatim
    in any of its sense's documents, or a section under which none of its answers is written."""
    texts = read_texts(work)
    problems = []
    for question in json.loads(FIXTURE.read_text())["questions"]:
        for sense in question["senses"]:
            docs = [texts[d] for d in sense["documents"] if d in texts]
            if len(docs) != len(sense["documents"]):
                problems.append(f"{question['id']}: a document is not in the corpus: {sense['documents']}")
                continue
            for answer in sense["answers"]:
                if not any(" ".join(answer.split()) in d["text"] for d in docs):
                    problems.append(f"{question['id']} {sense['product']}: answer not in its documents: {answer!r}")
            under = [text for d in docs for section, text in d["sections"].items() if sense["section"].lower() in section.lower()]
            if not any(" ".join(answer.split()) in text for text in under for answer in sense["answers"]):
                problems.append(f"{question['id']} {sense['product']}: no answer under section {sense['section']!r}")
    return problems


def lay_out_split(work: Path, split: str) -> list[Path]:
    """The products of one split copied under work/<split>/<format>/<product>/ (document ids as in
    the whole corpus), so each split is answered over an index of its own products only: a test
    question then finds no tune product that answers it unlabelled, and tuning never reads a test manual."""
    products = {name for name, about in json.loads(FIXTURE.read_text())["products"].items() if about["split"] == split}
    root = work / split
    if root.exists():
        shutil.rmtree(root)
    for folder in sorted((work / "corpus").glob("*/*")):
        if folder.name in products:
            shutil.copytree(folder, root / folder.parent.name / folder.name)
    return sorted(path for path in root.iterdir())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=["corpus", "check", "split"])
    parser.add_argument("--split", choices=["tune", "test"], help="split: the split whose products to lay out")
    parser.add_argument("--work", required=True, help="work folder (downloads and corpus; never committed)")
    args = parser.parse_args(argv)
    work = Path(args.work)
    if args.step == "corpus":
        laid = build_corpus(work)
        for kind, ids in laid.items():
            print(f"{kind}: {len(ids)} documents: {', '.join(ids)}")
        return 0
    if args.step == "split":
        print(" ".join(str(path) for path in lay_out_split(work, args.split or "test")))
        return 0
    problems = check(work)
    for line in problems:
        print(line)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
