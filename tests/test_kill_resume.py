"""A killed ingestion leaves no duplicates, and rerunning it completes the work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import neo4j
import pytest

from hopgraph.app.platform import Platform
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.paths import SHARED_DATA, empty_config
from tests.processes import cli_env

from .conftest import settings_for

HOTPOT = SHARED_DATA / "hotpotqa-100" / "corpus.jsonl"
#: passages of the killed ingest: it is killed once 6 are complete, with most of them still to do
DOCS = 36


def _write_corpus(root: Path, n: int) -> Path:
    root.mkdir(parents=True)
    with HOTPOT.open() as fh:
        for i, line in zip(range(n), fh, strict=False):
            rec = json.loads(line)
            (root / f"p{i:03d}.txt").write_text(f"{rec['title']}. {rec['text']}")
    return root


def _counts(p: Platform) -> dict[str, int]:
    """Graph and vector counts; communities are left out: warm-started clustering depends on history."""
    st = p.status()
    counts = {**st["graph"], **{f"vec_{k}": v for k, v in st["vectors"].items()}}
    return {k: v for k, v in counts.items() if k not in ("Community", "IN_COMMUNITY", "vec_communities")}


def test_killed_ingest_resumes_without_duplicates(arcadedb: ServerInfo, tmp_path: Path,
                                                  embedder: SentenceTransformerEmbedder) -> None:
    corpus = _write_corpus(tmp_path / "corpus", DOCS)
    s = settings_for(arcadedb, tmp_path / "killed")
    env = {
        **os.environ,
        "HOPGRAPH_DATA_DIR": str(s.data_dir),
        "HOPGRAPH_GRAPH__URI": arcadedb.uri,
        "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password,
        "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
        "HOPGRAPH_GRAPH__DATABASE": s.graph.database,
        "HOPGRAPH_INGEST__DOC_BATCH": "2",
        "HOPGRAPH_CONFIG": empty_config(tmp_path),
    }
    proc = subprocess.Popen([sys.executable, "-m", "hopgraph.cli", "ingest", "--no-progress", str(corpus)],
                            env=cli_env(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    complete = 0
    deadline = time.monotonic() + 240
    with neo4j.GraphDatabase.driver(arcadedb.uri, auth=("root", arcadedb.password)) as drv:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with drv.session(database=s.graph.database) as ses:
                    rec = ses.run("MATCH (d:Document) WHERE d.status = 'complete' RETURN count(d) AS n").single()
                    complete = int(rec["n"]) if rec else 0
            except neo4j.exceptions.Neo4jError:
                complete = 0  # database not created yet
            if complete >= 6:
                break
            time.sleep(0.05)
    if proc.poll() is not None:
        pytest.fail(f"ingest ended before it could be killed: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 6 <= complete < DOCS

    with Platform(s, embedder=embedder) as p:
        interrupted = _counts(p)
        assert interrupted["Document"] < DOCS
        # the shard the killed process left opens; recovery leaves no vector of an unfinished document
        left = p._store.unfinished_documents()
        assert p.recover() == len([d for d in left if d.status == "pending"])
        done_ids = {d["id"] for d in p._store.read("MATCH (d:Document {status: 'complete'}) RETURN d.id AS id")}
        offset, owners = None, set()
        while True:
            page, offset = p.vectors.scroll("chunks", limit=500, offset=offset)
            owners |= {str(h.payload["document_id"]) for h in page}
            if offset is None:
                break
        assert owners and owners <= done_ids
        report = p.ingest([corpus])
        assert report.documents_unchanged >= complete  # finished documents are not redone
        assert report.documents_ingested + report.documents_unchanged == DOCS
        resumed = _counts(p)
        assert not p._store.unfinished_documents()
        dupes = p._store.read("MATCH (c:Chunk) WITH c.id AS id, count(*) AS n WHERE n > 1 RETURN count(id) AS d")
        assert dupes[0]["d"] == 0

    with Platform(settings_for(arcadedb, tmp_path / "fresh"), embedder=embedder) as fresh:
        fresh.ingest([corpus])
        assert _counts(fresh) == resumed


@pytest.mark.parametrize("stage", ["graph writes", "communities"])
def test_a_killed_graph_server_is_restarted_and_a_rerun_completes(stage: str, tmp_path: Path,
                                                                  embedder: SentenceTransformerEmbedder,
                                                                  arcadedb: ServerInfo,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL the embedded ArcadeDB server in the middle of an ingest (injected at a fixed point:
    the 3rd mention write, or the start of the communities stage); the next command restarts it and
    the rerun ends with the counts of a clean ingest, no duplicates and a clean doctor."""
    from hopgraph.app.doctor import diagnose
    from hopgraph.core.settings import IngestSettings, Settings
    from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB
    from hopgraph.graphdb.bolt.store import BoltGraphStore
    from hopgraph.ingest.communities import CommunityBuilder

    from .conftest import server_settings

    corpus = _write_corpus(tmp_path / "corpus", 24)
    graph = server_settings()
    s = Settings(data_dir=tmp_path / "data", graph=graph, ingest=IngestSettings(doc_batch=4))
    # the killed run's driver gives up on the dead server after 1 s, not the default 15 s per transaction
    killed = s.model_copy(update={"graph": graph.model_copy(update={"max_retry_time_s": 1.0})})
    server = EmbeddedArcadeDB(s.graph_dir, graph)
    calls = {"n": 0}

    def kill_server() -> None:
        info = server.status()
        assert info is not None
        os.kill(info.pid, signal.SIGKILL)
        time.sleep(0.5)

    if stage == "graph writes":
        real = BoltGraphStore.upsert_mentions

        def upsert_mentions(self: BoltGraphStore, mentions: Any) -> None:
            calls["n"] += 1
            if calls["n"] == 3:
                kill_server()
            real(self, mentions)

        monkeypatch.setattr(BoltGraphStore, "upsert_mentions", upsert_mentions)
    else:
        real_rebuild = CommunityBuilder.rebuild

        def rebuild(self: CommunityBuilder) -> Any:
            calls["n"] += 1
            if calls["n"] == 1:
                kill_server()
            return real_rebuild(self)

        monkeypatch.setattr(CommunityBuilder, "rebuild", rebuild)
    try:
        with pytest.raises(Exception), Platform(killed, embedder=embedder) as p:  # noqa: B017 - whatever the driver raises
            p.ingest([corpus])
        monkeypatch.undo()
        assert server.status() is None  # dead: the state file points at a killed process
        with Platform(s, embedder=embedder) as p:  # restarts the server, then the rerun completes
            p.ingest([corpus])
            resumed = _counts(p)
            dupes = p._store.read("MATCH (c:Chunk) WITH c.id AS id, count(*) AS n WHERE n > 1 RETURN count(id) AS d")
            assert dupes[0]["d"] == 0 and [c for c in diagnose(p) if not c.ok] == []
    finally:
        server.stop()
    with Platform(settings_for(arcadedb, tmp_path / "fresh"), embedder=embedder) as fresh:
        fresh.ingest([corpus])
        assert _counts(fresh) == resumed
