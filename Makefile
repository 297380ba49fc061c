# hopgraph — the two commands of the README are `make demo` and `make test`.
# Everything installs into .venv, idempotently. torch==2.13.0 goes in FIRST: pip resolves a
# bare `torch` requirement to the CUDA build (several GB) otherwise (see DEVELOPERS.md).

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.hopgraph-installed
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# pytest worker processes (pytest-xdist): one per core, at most 4; each module runs whole in one worker
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ "$$n" -gt 4 ] && n=4; echo $$n)
# threads of torch's and OpenBLAS's pools (OMP_NUM_THREADS) in each worker and the processes it starts: the
# cores shared out among the workers (a non-numeric TEST_WORKERS such as "auto" counts as one), so that their
# pools do not oversubscribe the cores (an ingest, local or on Ray, still embeds with ingest.embed_threads)
TEST_THREADS ?= $(shell case "$(TEST_WORKERS)" in (''|*[!0-9]*|0) w=1;; (*) w=$(TEST_WORKERS);; esac; \
	n=$$(( $$(nproc 2>/dev/null || echo 1) / w )); [ "$$n" -lt 1 ] && n=1; echo $$n)
# with bytecode caching on (an environment may turn it off), so that the workers and the CLI and server
# processes the tests start compile each module once, not each time they import it
PYTEST := PYTHONDONTWRITEBYTECODE= OMP_NUM_THREADS=$(TEST_THREADS) $(BIN)/pytest -q -ra -n $(TEST_WORKERS) \
	--dist loadscope

.PHONY: install clip-venv browser test lint typecheck docs unit suite demo bench clean distclean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.torch: | $(BIN)/python
	$(BIN)/pip install -q torch==2.13.0
	@touch $@

# open_clip needs torchvision, whose only build for this torch is a CUDA one that breaks every
# `transformers` import: the CLIP path lives in its own venv, used by tests/test_clip.py.
CLIP_VENV  := .venv-clip
CLIP_STAMP := $(CLIP_VENV)/.hopgraph-installed

$(CLIP_STAMP): pyproject.toml
	$(PYTHON) -m venv $(CLIP_VENV)
	$(CLIP_VENV)/bin/pip install -q --upgrade pip
	$(CLIP_VENV)/bin/pip install -q torch==2.13.0
	# --no-deps: torchvision's pin would otherwise swap the CPU torch for the CUDA build (GBs);
	# 0.28 is the torchvision of torch 2.13 (its native ops do not load: vectors/clip.py copes)
	$(CLIP_VENV)/bin/pip install -q --no-deps torchvision==0.28.0 "open_clip_torch>=2.24" timm
	$(CLIP_VENV)/bin/pip install -q regex ftfy tqdm huggingface_hub safetensors pyyaml pillow
	$(CLIP_VENV)/bin/pip install -q -e .
	@touch $@

clip-venv: $(CLIP_STAMP)  ## the separate environment of the CLIP path (extra `clip`)

$(STAMP): pyproject.toml $(VENV)/.torch
	$(BIN)/pip install -q -e ".[dev,llm,mcp,langchain,llamaindex]"
	$(BIN)/pip check
	@touch $@

install: $(STAMP)  ## create .venv and install everything (idempotent)

lint: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy

# the explorer's tests drive Debian's headless Chromium; without it (no root, no apt) they skip, saying why
APT_BROWSER := apt-get install -y -q chromium chromium-driver >/dev/null 2>&1
browser:  ## Debian's chromium + chromium-driver for the explorer's browser tests
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    $(APT_BROWSER) || { apt-get update -q >/dev/null 2>&1 && $(APT_BROWSER); } \
	      || echo "no chromium could be installed: the browser tests will skip"; \
	  else echo "no chromium (installing it needs root and apt): the browser tests will skip"; fi; \
	fi

unit: install  ## the fast unit tests alone: no server, model or process (conftest marks the others)
	$(PYTEST) -m "not integration and not slow"

suite: install clip-venv browser  ## the whole pytest suite, its 25 slowest tests listed at the end
	$(PYTEST) --durations=25

docs: install  ## the manual (MkDocs Material, offline), built strictly into build/site
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d build/site

test: lint typecheck docs suite  ## ruff, mypy, the manual and the whole pytest suite (real engines, no mocks)

demo: install  ## ingest the sample corpus into ./.hopgraph and run a few cited queries
	$(BIN)/python -m hopgraph.cli.demo

clean:
	rm -rf .pytest_cache .mypy_cache .ruff_cache

distclean: clean
	-$(BIN)/hopgraph db stop
	rm -rf $(VENV) $(CLIP_VENV) .hopgraph
