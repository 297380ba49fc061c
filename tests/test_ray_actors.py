"""Ray's actors on a real two-node cluster on this machine (127.0.0.6 and .7, two CPUs each): each actor
kind runs as many threads as the CPUs it declares (the int8 ONNX embedder's onnxruntime threads
included), and a document spaCy cannot parse is a dead letter while the rest of the run lands; the
status names it, and a rerun tries it again."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.settings import EmbedderSettings, IngestSettings, Settings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.ingest.ray_engine import RayEngine
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.paths import SHARED_DATA

from .conftest import settings_for

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

_NODE: dict[str, object] = {"num_cpus": 2, "object_store_memory": 96 * 2**20}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
    c = Cluster(initialize_head=True, head_node_args={"node_ip_address": "127.0.0.6", "include_dashboard": False,
                                                       **_NODE})
    try:
        c.add_node(node_ip_address="127.0.0.7", **_NODE)
        c.wait_for_nodes()
        yield c
    finally:
        c.shutdown()


def test_each_actor_runs_the_threads_it_declares(cluster: Cluster) -> None:
    """Two embedding threads asked for on 2-CPU nodes: one embed actor declares two CPUs and runs two torch
    and two onnxruntime threads; the three CPUs left hold one-thread parse actors (spaCy's n_process 1)."""
    s = Settings(embedder=EmbedderSettings(kind="onnx-int8"), ingest=IngestSettings(engine="ray", embed_threads=2))
    engine = RayEngine(s, cluster.address)
    try:
        engine.start()
        infos = engine.actor_infos()
    finally:
        engine.close()
    assert not ray.is_initialized()
    assert sorted(i["kind"] for i in infos) == ["embed", "parse", "parse"]
    for info in infos:
        assert info["loads"] == 1 and info["gpus"] == 0
        if info["kind"] == "embed":
            assert info["cpus"] == info["torch_threads"] == info["onnx_threads"] == 2
        else:
            assert info["cpus"] == info["torch_threads"] == info["spacy_n_process"] == 1


def test_a_document_spacy_cannot_parse_is_a_dead_letter(cluster: Cluster, arcadedb: ServerInfo,
                                                        embedder: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    """One word of a million characters: its chunk is longer than spaCy parses (E088). The run writes the
    other documents (graph and vectors), the report and the status name the poisoned one, and once the
    file is fixed a rerun writes it and the list empties."""
    corpus = tmp_path / "corpus.jsonl"
    with (SHARED_DATA / "hotpotqa-100" / "corpus.jsonl").open() as fh:
        corpus.write_text("".join(line for _, line in zip(range(4), fh, strict=False)))
    poison = tmp_path / "poison.txt"
    poison.write_text("Ada Lovelace wrote the first program. " + "x" * 1_000_001)
    ingest = IngestSettings(doc_batch=2, engine="ray", ray_address=cluster.address, embed_threads=1)
    s = settings_for(arcadedb, tmp_path / "data", ingest=ingest)
    with Platform(s, embedder=embedder) as p:
        report = p.ingest([corpus, poison])
        assert [(d.source, d.attempts) for d in report.dead_letters] == [(str(poison), 1)]
        assert "E088" in report.dead_letters[0].error
        assert report.documents_ingested == 4
        docs = {r["source"]: r["status"] for r in p._store.read("MATCH (d:Document) RETURN d.source AS source, "
                                                                   "d.status AS status")}
        assert len(docs) == 4 and str(poison) not in docs and set(docs.values()) == {"complete"}
        chunk_ids = p.vectors.export("chunks")[0]
        graph_chunks = {r["id"] for r in p._store.read("MATCH (c:Chunk) RETURN c.id AS id")}
        assert set(chunk_ids) == graph_chunks and graph_chunks
        status = p.status()
        assert [d["source"] for d in status["dead_letters"]] == [str(poison)]
        saved = json.loads((s.data_dir / "dead-letters.json").read_text())
        assert saved[0]["document_id"] == report.dead_letters[0].document_id

        poison.write_text("Ada Lovelace wrote the first program.")  # fixed: the rerun writes it
        rerun = p.ingest([corpus, poison])
        assert rerun.documents_ingested == 1 and rerun.documents_unchanged == 4 and not rerun.dead_letters
        assert p.status()["dead_letters"] == []
        assert p._store.read("MATCH (d:Document) WHERE d.source = $s RETURN d.status AS st",
                            {"s": str(poison)})[0]["st"] == "complete"
