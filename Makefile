# hopgraph — the two commands of the README are `make demo` and `make test`.
# Everything installs into .venv, idempotently. torch==2.13.0 goes in FIRST: pip resolves a
# bare `torch` requirement to the CUDA build (several GB) otherwise (see DEVELOPERS.md).

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.hopgraph-installed
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install test lint typecheck unit demo bench clean distclean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.torch: | $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	@touch $@

$(STAMP): pyproject.toml $(VENV)/.torch
	$(BIN)/pip install -q -e ".[dev]"
	$(BIN)/pip check
	@touch $@

install: $(STAMP)  ## create .venv and install everything (idempotent)

lint: install
	$(BIN)/ruff check .

typecheck: install
	$(BIN)/mypy

unit: install
	$(BIN)/pytest -q -ra

test: lint typecheck unit  ## ruff, mypy and the whole pytest suite (real engines, no mocks)

demo: install  ## ingest the sample corpus into ./.hopgraph and run a few cited queries
	$(BIN)/python -m hopgraph.demo

clean:
	rm -rf .pytest_cache .mypy_cache .ruff_cache

distclean: clean
	-$(BIN)/hopgraph db stop
	rm -rf $(VENV) .hopgraph
