"""The local ingest pipeline: batches computed ahead on the embedding thread and written in order, the
busiest stage named, and a batch embedded before a removal it depends on computed again at its write
(real engines)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.records import IngestReport
from hopgraph.core.settings import IngestSettings, ResolutionSettings
from hopgraph.ingest.batches import Prepared
from hopgraph.ingest.embedded_memo import EmbeddedMemo
from hopgraph.ingest.extraction_worker import cores
from hopgraph.ingest.local_engine import AHEAD, busiest, embed_threads, pipelined
from hopgraph.ingest.source_text import SourceText
from tests.conftest import ServerInfo, settings_for


def _prepared(n: int) -> Prepared:
    return Prepared([], [], [], {str(n): []}, {}, [])


def test_batches_are_computed_ahead_and_yielded_in_order() -> None:
    computed: list[int] = []
    written: list[int] = []
    ahead_seen: list[int] = []
    lock = threading.Lock()

    def compute(p: Prepared, report: IngestReport) -> Prepared:
        n = int(next(iter(p.per_doc)))
        time.sleep(0.01 * (n % 3))  # uneven batches
        with lock:
            computed.append(n)
        return p

    batches = [([], _prepared(n)) for n in range(9)]
    report = IngestReport()
    items: list[tuple[list[SourceText], Prepared | None]] = [*batches[:4], ([], None), *batches[4:]]
    for _, done in pipelined(iter(items), compute, report, threads=1):
        if done is not None:
            n = int(next(iter(done.per_doc)))
            written.append(n)
            with lock:
                ahead_seen.append(len(computed) - len(written))
    assert written == list(range(9)) == computed  # one embedding thread: computed in order too
    assert max(ahead_seen) <= AHEAD and "write" in report.stage_wait


def test_a_failed_batch_stops_the_run_with_its_error() -> None:
    def compute(p: Prepared, report: IngestReport) -> Prepared:
        if "2" in p.per_doc:
            raise ValueError("batch 2 is broken")
        return p

    written = []
    with pytest.raises(ValueError, match="batch 2 is broken"):
        for _, done in pipelined(iter([([], _prepared(n)) for n in range(6)]), compute, IngestReport(), threads=1):
            written.append(done)
    assert len(written) == 2


def test_the_busiest_stage_bounds_the_run() -> None:
    r = IngestReport(stage_seconds={"embed": 5.0, "extract": 1.0, "graph_write": 2.0, "communities": 2.5})
    assert busiest(r, 10.0) == "embed"
    r.stage_seconds["vector_write"] = 1.0
    assert busiest(r, 10.0) == "write"
    assert busiest(IngestReport(), 10.0) == ""
    assert embed_threads(3) == 3 and embed_threads(0) == cores()


def test_an_entity_removed_by_the_batch_before_is_embedded_again(arcadedb: ServerInfo, tmp_path: Path) -> None:
    """A long-lived ingestor embedded Zorblax Quintana once; the re-ingest's first batch drops the only
    mention (the entity and its vector are removed) while the second batch, computed ahead, mentions it
    again: the entity must end with its vector."""
    s = settings_for(arcadedb, tmp_path / "data", ingest=IngestSettings(doc_batch=1),
                     resolution=ResolutionSettings(enabled=False))
    first = [{"id": "a", "text": "Zorblax Quintana founded the Vexmoor Observatory in Kelderwick in 1893."},
             {"id": "b", "text": "The harbour of Kelderwick froze in the winter of 1901."}]
    again = [{"id": "a", "text": "The Vexmoor Observatory closed its dome in 1950 after a long decline."},
             {"id": "b", "text": "Zorblax Quintana painted the frozen harbour of Kelderwick in the winter of 1901."}]
    with Platform(s) as p:
        p.ingest_records(first)
        rows = p._store.read("MATCH (e:Entity) WHERE e.name = 'Zorblax Quintana' RETURN e.id AS id")
        assert len(rows) == 1
        report = p.ingest_records(again)
        assert report.documents_ingested == 2 and report.stage_threads["embed"] >= 1 and report.bound
        rows = p._store.read("MATCH (e:Entity) WHERE e.name = 'Zorblax Quintana' RETURN e.id AS id")
        assert len(rows) == 1
        assert rows[0]["id"] in p.vectors.vectors("entities", [rows[0]["id"]])


def test_the_memo_skips_ids_written_or_coming_and_forgets_what_never_came() -> None:
    memo = EmbeddedMemo()
    assert memo.expect("entities", ["a", "b"]) == {"a", "b"}
    assert memo.expect("entities", ["b", "c"]) == {"c"}  # b: marked by the batch before
    known = memo.known()["entities"]
    assert "a" in known and "c" in known and "z" not in known
    memo.wrote("entities", ["a", "b"])
    assert memo.written["entities"] == {"a", "b"} and memo.coming["entities"] == {"c"}
    memo.forget("entities", ["a"])
    memo.unexpect("entities", ["c"])
    assert "a" not in memo.known()["entities"] and "c" not in memo.known()["entities"]
    memo.expect("relationships", ["r"])
    memo.end_run()
    assert "r" not in memo.known()["relationships"] and "b" in memo.known()["entities"]
