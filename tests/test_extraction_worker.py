"""spaCy in worker processes (a batch split among several, or one parsing a batch ahead): the
extraction is the one the ingest process would make (aliases applied, entities met in several pieces
described as one extraction would), a worker that dies costs nothing but a warning, and an ingest of
many batches writes the same graph with the workers as without them (real model, real engines)."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.records import Chunk, entity_id
from hopgraph.core.settings import ExtractionSettings, IngestSettings, ResolutionSettings
from hopgraph.ingest.extraction import Extraction, SpacyExtractor
from hopgraph.ingest.extraction_worker import ExtractionWorker, pieces
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.conftest import settings_for
from tests.paths import SHARED_DATA
from tests.processes import cli_env
from tests.test_incremental_ingest import _graph

PASSAGES = [json.loads(line) for line in
            (SHARED_DATA / "hotpotqa-100" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:12]]


def _chunks() -> list[Chunk]:
    return [Chunk(id=f"c{i:03d}", document_id=f"d{i}", text=p["text"], ord=0) for i, p in enumerate(PASSAGES)]


def _dump(x: Extraction) -> dict[str, Any]:
    return {"entities": {k: v.model_dump() for k, v in sorted(x.entities.items())},
            "mentions": [m.model_dump() for m in x.mentions], "relations": [r.model_dump() for r in x.relations]}


@pytest.fixture(params=[1, 3], ids=["one-worker", "split-in-3"])
def worker(request: pytest.FixtureRequest) -> Iterator[ExtractionWorker]:
    w = ExtractionWorker(ExtractionSettings(), processes=request.param)
    yield w
    w.close()


def test_the_workers_extract_what_the_ingest_process_would(worker: ExtractionWorker) -> None:
    # the first passage again at the end, under a smaller chunk id: its entities recur in another
    # piece, and the later piece holds the chunk that describes them
    chunks = [*_chunks(), Chunk(id="a000", document_id="d-again", text=PASSAGES[0]["text"], ord=0)]
    here = SpacyExtractor(ExtractionSettings()).extract(chunks)
    assert any(e.description_chunk == "a000" for e in here.entities.values())
    some = sorted(here.entities)[0]
    aliases = {some: entity_id("Somebody Else")}
    assert _dump(worker.submit(chunks, aliases).result()) == _dump(
        SpacyExtractor(ExtractionSettings(), resolve=lambda e: aliases.get(e, e)).extract(chunks))
    got = worker.submit(chunks, {}).result()
    assert _dump(got) == _dump(here)
    assert list(got.entities) == list(here.entities)  # in the order of first mention, too
    # the shipped model needs no PyTorch (its meta.json says so): the workers parsed all that without it
    assert worker._pool is not None
    loaded = worker._pool.submit(eval, "[m for m in ('spacy', 'torch') if __import__('sys').modules.get(m)]")
    assert loaded.result() == ["spacy"]


def test_a_batch_is_cut_into_consecutive_pieces_of_about_equal_text() -> None:
    chunks = [Chunk(id=f"c{i}", document_id="d", text="x" * n, ord=i) for i, n in enumerate([10, 10, 10, 10, 40])]
    cut = pieces(chunks, 2)
    assert [c.id for part in cut for c in part] == [c.id for c in chunks]
    assert [len(part) for part in cut] == [4, 1]  # 40 + 40 characters
    assert [len(part) for part in pieces([chunks[0], chunks[4], *chunks[1:4]], 2)] == [2, 3]  # 50 + 30, not 10 + 70
    assert [len(part) for part in pieces(chunks[:4], 3)] == [1, 2, 1]
    assert [len(part) for part in pieces(chunks, 9)] == [1, 1, 1, 1, 1]
    assert pieces(chunks[:1], 3) == [chunks[:1]]
    assert pieces([], 3) == [[]]


def test_a_dead_worker_costs_a_warning_not_the_batch(worker: ExtractionWorker,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    chunks = _chunks()
    expected = _dump(SpacyExtractor(ExtractionSettings()).extract(chunks))
    worker.start()
    assert worker._pool is not None and len(worker._pool._processes) == worker.processes
    for pid in list(worker._pool._processes):  # killed while idle, or while parsing the batch below
        os.kill(pid, signal.SIGKILL)
    with caplog.at_level(logging.WARNING, logger="hopgraph.ingest.extraction_worker"):
        future = worker.submit(chunks, {})
        got = worker.result(future, SpacyExtractor(ExtractionSettings()), chunks)
    assert "an extraction worker died" in caplog.text
    assert _dump(got) == expected


@pytest.mark.parametrize("how", ["split", "here"])
def test_an_ingest_parsed_by_the_workers_writes_the_same_graph(how: str, arcadedb: Any, tmp_path: Path,
                                                               embedder: SentenceTransformerEmbedder,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(p) for p in PASSAGES) + "\n", encoding="utf-8")
    submitted: list[int] = []
    real = ExtractionWorker.submit
    monkeypatch.setattr(ExtractionWorker, "submit",
                        lambda self, chunks, aliases: (submitted.append(len(chunks)), real(self, chunks, aliases))[1])
    extraction = {"split": ExtractionSettings(processes=2)}
    graphs = []
    for run, cfg in enumerate([extraction.get(how, ExtractionSettings(processes=1)), ExtractionSettings(processes=1)]):
        settings = settings_for(arcadedb, tmp_path / f"data-{run}", ingest=IngestSettings(doc_batch=3),
                                extraction=cfg, resolution=ResolutionSettings(enabled=False))
        with Platform(settings, embedder=embedder) as p:
            report = p.ingest([corpus])
            assert report.documents_ingested == len(PASSAGES)
            assert not multiprocessing.active_children()  # the workers left with the run
            graphs.append(_graph(p))
        # 4 batches of 3: the workers parsed them (in the first run), or this process did
        assert len(submitted) == (4 if run == 0 and how != "here" else 0)
        submitted.clear()
    assert graphs[0] == graphs[1]


def test_the_worker_leaves_when_the_ingest_process_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(
        "import sys, time\n"
        "from hopgraph.core.settings import ExtractionSettings\n"
        "from hopgraph.ingest.extraction_worker import ExtractionWorker\n"
        "if __name__ == '__main__':\n"
        "    w = ExtractionWorker(ExtractionSettings())\n"
        "    w.submit([], {}).result()\n"
        "    print(*w._pool._processes, flush=True)\n"
        "    time.sleep(600)\n", encoding="utf-8")
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).resolve().parents[1], env=cli_env())
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline().split()[0])
        assert _alive(child)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 120  # a liveness bound, not a speed test
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(child)
    finally:
        parent.kill()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited
