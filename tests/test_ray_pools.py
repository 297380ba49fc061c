"""Parsing and embedding on Ray take different nodes: on a cluster whose one GPU node (a GPU declared to
Ray; torch finds none here and embeds on the CPU) embeds, the CPU-only node parses, each actor runs the
threads it declares, and the vectors equal those of the ingest process's own embedder (a real two-node
cluster on 127.0.0.4 and .5)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pytest

from hopgraph.core.records import IngestReport
from hopgraph.core.settings import IngestSettings, Settings
from hopgraph.ingest.ray_engine import RayEngine
from hopgraph.ingest.source_text import SourceText, text_document
from hopgraph.vectors.embedders import SentenceTransformerEmbedder

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

_NODE: dict[str, object] = {"num_cpus": 1, "object_store_memory": 96 * 2**20}
TEXTS = ["Orla Vint cast the carillon of Kelderwick in 1821.", "Teodor Brann built the organ of Mossgate.",
         "Ilse Brann founded the Mossgate Conservatory.", "Kelderwick is a harbour town in Varnland.",
         "The cathedral of Mossgate crowns the kings of Varnland.", "Brita Lund rang the bells at the fair."]


@pytest.fixture(scope="module")
def gpu_cluster() -> Iterator[Cluster]:
    """A CPU-only head at 127.0.0.4 and a node at 127.0.0.5 that declares one GPU."""
    os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
    c = Cluster(initialize_head=True, head_node_args={"node_ip_address": "127.0.0.4", "include_dashboard": False,
                                                       **_NODE})
    try:
        c.add_node(node_ip_address="127.0.0.5", num_gpus=1, **_NODE)
        c.wait_for_nodes()
        yield c
    finally:
        c.shutdown()


def test_gpu_nodes_embed_while_every_node_parses(gpu_cluster: Cluster, embedder: SentenceTransformerEmbedder) -> None:
    docs = [text_document(f"/notes/{i}.txt", "", t) for i, t in enumerate(TEXTS)]
    batches = [[d] for d in docs if isinstance(d, SourceText)]
    engine = RayEngine(Settings(ingest=IngestSettings(engine="ray")), gpu_cluster.address)
    try:
        engine.start()
        assert engine.gpus == 1
        report = IngestReport()
        got = list(engine.prepared(batches, {}, embedder, report))
        infos = engine.actor_infos()
    finally:
        engine.close()
    assert not ray.is_initialized()
    assert [b for b, _ in got] == batches  # handed back in order
    assert set(engine.embedded_on) == {"127.0.0.5"} and engine.embedded_on.total() == len(batches)
    assert engine.by_node["127.0.0.4"] > 0  # the CPU-only node parsed
    for _, prepared in got:
        assert prepared is not None and prepared.extraction is not None
        texts = [c.text for c in prepared.chunks]
        assert np.allclose(prepared.embedder.embed(texts), embedder.embed(texts), atol=1e-5)
    assert {"ray_chunk", "ray_extract", "ray_embed"} <= set(report.stage_seconds)
    # one actor of each kind (a CPU each): the embed actor on the GPU node with half its GPU and one thread
    assert sorted((i["kind"], i["node"]) for i in infos) == [("embed", "127.0.0.5"), ("parse", "127.0.0.4")]
    for info in infos:
        assert info["cpus"] == info["torch_threads"] == 1 and info["loads"] == 1
    assert {i["kind"]: i["gpus"] for i in infos} == {"embed": 0.5, "parse": 0.0}
    assert next(i for i in infos if i["kind"] == "parse")["spacy_n_process"] == 1
