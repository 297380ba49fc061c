"""The CLI starts without loading a model, an engine driver or an array library for commands that
need none (start-up time is measured in benchmarks; here: what a command imports, which does not
depend on the machine's speed)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.processes import cli_env

HEAVY = ("torch", "numpy", "scipy", "spacy", "sentence_transformers", "transformers", "neo4j", "qdrant_edge",
         "fastapi", "hopgraph.app.platform")
HEAVY_MODELS = ("torch", "spacy", "sentence_transformers", "transformers", "torch_geometric")
PROBE = """
import json, sys
from typer.testing import CliRunner
from hopgraph.cli.main import app
result = CliRunner().invoke(app, json.loads(sys.argv[1]))
print(json.dumps({"code": result.exit_code, "loaded": [m for m in json.loads(sys.argv[2]) if m in sys.modules]}))
"""


@pytest.mark.parametrize("args, code", [
    (["--help"], 0),
    (["--version"], 0),
    (["api-key", "--help"], 0),
    (["query", "who?", "--mode", "bogus"], 2),  # a bad mode is refused before any store is opened
    (["query", "--help"], 0),
])
def test_commands_that_need_no_model_load_none(args: list[str], code: int) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args), json.dumps(HEAVY)], capture_output=True,
                         text=True, timeout=120, check=True, env=cli_env())
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found == {"code": code, "loaded": []}


def test_the_platform_and_the_bm25_path_import_no_model_library() -> None:
    """``status``, ``doctor`` and ``query --mode bm25`` open the platform and the retriever: neither
    imports torch or a model library until a mode needs one."""
    probe = ("import json, sys, hopgraph.app.platform, hopgraph.retrieval.retriever, "
             "hopgraph.retrieval.modes.baseline; "
             f"print(json.dumps([m for m in {list(HEAVY_MODELS)!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True,
                         env=cli_env())
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
