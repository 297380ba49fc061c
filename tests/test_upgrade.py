"""Upgrading a store written by older code: it opens and answers as before, with nothing re-ingested.

``upgrade/store-134e0d8.tar.gz`` holds the data directory (embedded ArcadeDB, qdrant-edge, index state
in its old format) that hopgraph at commit 134e0d8 — before collections and access groups — wrote with
``hopgraph ingest /tmp/hopgraph-upgrade/docs`` (two Markdown pages, a dated chat log, a JSONL of two
records), then ``hopgraph db stop``, logs removed; ``upgrade/rankings-134e0d8.json`` holds the chunks
that code returned for three questions in five modes. A document's id comes from its absolute path, so
the documents are put back where they were ingested from.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hopgraph.cli.main import app
from tests.conftest import free_port
from tests.paths import empty_config

HERE = Path(__file__).parent / "upgrade"
#: where the old code read the documents from (their ids derive from it)
SOURCES = Path("/tmp/hopgraph-upgrade/docs")


@pytest.fixture()
def old_store(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The old data directory unpacked in ``tmp_path``, its documents back in place, and the CLI's
    environment for it; the embedded server it starts is stopped afterwards."""
    with tarfile.open(HERE / "store-134e0d8.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    shutil.rmtree(SOURCES, ignore_errors=True)
    SOURCES.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(tmp_path / "docs", SOURCES)
    env = {"HOPGRAPH_CONFIG": empty_config(tmp_path), "HOPGRAPH_DATA_DIR": str(tmp_path / "data"),
           "HOPGRAPH_GRAPH__BOLT_PORT": str(free_port()), "HOPGRAPH_GRAPH__HTTP_PORT": str(free_port()),
           "HOPGRAPH_GRAPH__HEAP": "512m", "HOPGRAPH_RETRIEVAL__STAGE_CAP_MS": "none",
           "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    yield env
    CliRunner().invoke(app, ["db", "stop"], env=env)
    shutil.rmtree(SOURCES, ignore_errors=True)


def run(env: dict[str, str], *args: str) -> str:
    out = CliRunner().invoke(app, list(args), env=env)
    assert out.exit_code == 0, out.output
    return out.stdout


def documents(env: dict[str, str]) -> list[dict[str, object]]:
    listed: list[dict[str, object]] = json.loads(run(env, "documents", "--json"))
    return listed


def test_a_store_written_before_collections_and_groups_answers_as_before(old_store: dict[str, str]) -> None:
    env = old_store
    for want in json.loads((HERE / "rankings-134e0d8.json").read_text()):
        got = json.loads(run(env, "query", want["query"], "--mode", want["mode"], "--json", "--top-k", "5"))
        assert [r["citation"]["chunk_id"] for r in got["results"]] == want["chunks"], want

    said = " ".join(run(env, "ingest", "--no-progress", str(SOURCES)).split())
    assert "0 ingested, 5 unchanged" in said, said  # the content hashes of today's code are the old ones
    listed = documents(env)
    assert len(listed) == 5 and {d["status"] for d in listed} == {"complete"}, listed

    # the old store is the default collection: a new one is created beside it and leaves it whole
    name = f"c{uuid.uuid4().hex[:8]}"
    run(env, "collections", "create", name)
    note = SOURCES / "extra.md"
    note.write_text("Brita Lund rang the carillon of Kelderwick on the first day of spring.")
    said = " ".join(run(env, "--collection", name, "ingest", "--no-progress", "--groups", "bells", str(note)).split())
    assert "1 ingested" in said, said
    assert len(documents(env)) == 5
    top = json.loads(run(env, "--collection", name, "query", "Who rang the carillon?", "--json"))["results"]
    assert [r["citation"]["source"] for r in top] == [str(note)]
    run(env, "collections", "delete", name, "--yes")
    assert len(documents(env)) == 5
