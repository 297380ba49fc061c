"""The same suite on qdrant-edge (embedded), qdrant-client ``:memory:`` and a Qdrant server
(testcontainers; skipped with the reason where no Docker engine runs)."""

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import QdrantClient

from hopgraph.core.access import PUBLIC, VECTOR_FIELD, vector_filter, vector_groups
from hopgraph.vectors.edge import EdgeVectorStore
from hopgraph.vectors.qdrant_server import QdrantClientVectorStore
from hopgraph.vectors.store import CollectionSpec, VectorPoint, VectorStore, VectorStoreError

SPEC = CollectionSpec(dim=16, model="test-model")


@pytest.fixture(scope="session")
def qdrant_url() -> Iterator[str]:
    """A real Qdrant server through testcontainers, where a Docker engine runs."""
    from .graph_backends import docker_unavailable_reason

    reason = docker_unavailable_reason()
    if reason:
        pytest.skip(f"Qdrant-server tests need Docker: {reason}")
    from testcontainers.community.qdrant import QdrantContainer

    with QdrantContainer() as c:
        yield f"http://{c.rest_host_address}"


@pytest.fixture(params=["edge", "memory", "server"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    s: VectorStore
    if request.param == "edge":
        s = EdgeVectorStore(tmp_path / "vec")
    elif request.param == "memory":
        s = QdrantClientVectorStore.connect(":memory:", None, "t_", 64, 10)
    else:  # one shared server: collections of their own per test
        prefix = f"t{uuid.uuid4().hex[:8]}_"
        s = QdrantClientVectorStore.connect(request.getfixturevalue("qdrant_url"), None, prefix, 64, 10)
    s.ensure_collections(SPEC)
    yield s
    s.close()


def _points(n: int = 60) -> list[VectorPoint]:
    rng = np.random.default_rng(7)
    vecs = rng.normal(size=(n, 16)).astype(np.float32)
    return [VectorPoint(f"chk_{i}", vecs[i], {"document_id": f"doc_{i % 3}"}) for i in range(n)]


def _exact(points: list[VectorPoint], q: np.ndarray, k: int, doc: str | None = None) -> list[str]:
    cand = [p for p in points if doc is None or p.payload["document_id"] == doc]
    m = np.stack([np.asarray(p.vector) for p in cand])
    sims = (m / np.linalg.norm(m, axis=1, keepdims=True)) @ (q / np.linalg.norm(q))
    return [cand[i].id for i in np.argsort(-sims)[:k]]


def test_upsert_search_filter_delete_scroll(store: VectorStore) -> None:
    pts = _points()
    store.upsert("chunks", pts)
    store.upsert("chunks", pts[:10])  # idempotent by id
    assert store.count("chunks") == 60
    q = np.asarray(pts[5].vector)
    hits = store.search("chunks", q, 5)
    assert [h.id for h in hits] == _exact(pts, q, 5)
    assert hits[0].id == "chk_5" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    filtered = store.search("chunks", q, 5, where={"document_id": "doc_1"})
    assert [h.id for h in filtered] == _exact(pts, q, 5, "doc_1")
    assert {h.payload["document_id"] for h in filtered} == {"doc_1"}
    batch = store.search_many("chunks", np.stack([q, np.asarray(pts[7].vector)]), 5)
    assert [h.id for h in batch[0]] == [h.id for h in hits] and batch[1][0].id == "chk_7"
    anyof = store.search("chunks", q, 60, where={"id": ["chk_1", "chk_2"]})
    assert sorted(h.id for h in anyof) == ["chk_1", "chk_2"]

    got = store.vectors("chunks", ["chk_4", "chk_missing", "chk_9"])
    assert sorted(got) == ["chk_4", "chk_9"]
    v4 = np.asarray(pts[4].vector)
    assert np.allclose(got["chk_4"] / np.linalg.norm(got["chk_4"]), v4 / np.linalg.norm(v4), atol=1e-5)
    assert store.vectors("chunks", []) == {}

    ids, mat = store.export("chunks", batch=16)
    assert sorted(ids) == sorted(p.id for p in pts) and mat.shape == (60, 16)
    row = mat[ids.index("chk_3")]
    v3 = np.asarray(pts[3].vector)
    assert np.allclose(row / np.linalg.norm(row), v3 / np.linalg.norm(v3), atol=1e-5)
    store.delete_where("chunks", {"document_id": "doc_0"})
    store.delete("chunks", ["chk_1", "chk_missing"])
    assert store.count("chunks") == 60 - 20 - 1
    seen: list[str] = []
    offset = None
    while True:
        page, offset = store.scroll("chunks", limit=7, offset=offset)
        seen.extend(h.id for h in page)
        if offset is None:
            break
    expected = {p.id for p in pts if p.payload["document_id"] != "doc_0"} - {"chk_1"}
    assert sorted(seen) == sorted(expected)
    page, _ = store.scroll("chunks", where={"document_id": "doc_2"}, limit=100)
    assert {h.id for h in page} == {p.id for p in pts if p.payload["document_id"] == "doc_2"}


def test_other_embedder_is_refused(store: VectorStore) -> None:
    with pytest.raises(VectorStoreError, match="configured embedder"):
        store.ensure_collections(CollectionSpec(dim=32, model="other"))


def test_edge_store_has_one_owner_and_survives_reopen(tmp_path: Path) -> None:
    first = EdgeVectorStore(tmp_path / "vec")
    first.ensure_collections(SPEC)
    first.upsert("entities", _points(5))
    with pytest.raises(VectorStoreError, match=r"in use by another process \(pid \d+\)"):
        EdgeVectorStore(tmp_path / "vec")
    first.close()
    again = EdgeVectorStore(tmp_path / "vec")
    again.ensure_collections(SPEC)
    assert again.count("entities") == 5
    again.close()


@pytest.mark.filterwarnings("ignore:Local mode performs exact")  # a server's rule, run on the local mode
def test_small_collections_are_searched_exactly(tmp_path: Path) -> None:
    """Below ``exact_below`` points a search is exact (HNSW's answer depends on how its graph was
    built); the count behind that choice follows this process's writes."""
    from hopgraph.core.settings import VectorSettings

    edge = EdgeVectorStore(tmp_path / "vec", VectorSettings(exact_below=50))
    memory = QdrantClientVectorStore(QdrantClient(location=":memory:"), "t_", 64, exact_below=50)
    pts = _points(60)
    q = np.asarray(pts[3].vector)
    try:
        for s in (edge, memory):
            s.ensure_collections(SPEC)
            exact = (lambda: edge._search_params("chunks").exact) if s is edge else (
                lambda: memory._params("chunks") is not None)
            assert exact()  # empty
            s.upsert("chunks", pts[:40])
            assert exact()
            s.upsert("chunks", pts[40:])
            assert not exact()  # 60 points: HNSW
            s.delete("chunks", [p.id for p in pts[:20]])
            assert exact()
            assert [h.id for h in s.search("chunks", q, 5)] == _exact(pts[20:], q, 5)
            s.delete_where("chunks", {"document_id": "doc_0"})
            assert exact() and s.count("chunks") == 27
    finally:
        edge.close()
        memory.close()
    # local mode is exact anyway: it is given no search parameters
    assert QdrantClientVectorStore.connect(":memory:", None, "t_", 64, 10, exact_below=50).exact_below == 0


def test_a_readers_search_is_the_search_of_its_vectors_alone(store: VectorStore) -> None:
    """Access groups filter inside the engine: a reader's top k, its count and its scores are those of a
    search over the points it may read, whatever top k it asks; payloads set by filter reach every point
    of the documents named and no other."""
    pts = _points()
    store.upsert("chunks", pts)
    store.set_payload_where("chunks", {"document_id": ["doc_0", "doc_2"]}, {VECTOR_FIELD: vector_groups([])})
    store.set_payload_where("chunks", {"document_id": "doc_1"}, {VECTOR_FIELD: vector_groups(["hr"])})
    hidden = {p.id for p in pts if p.payload["document_id"] == "doc_1"}
    visible = [p for p in pts if p.id not in hidden]
    q = np.asarray(pts[1].vector)  # a point of the hidden document: its own neighbours rank first
    for k in (1, 5, 20, 40, 70):
        got = store.search("chunks", q, k, where=vector_filter(frozenset({"eng"})))
        assert [h.id for h in got] == _exact(visible, q, k)
        assert len(got) == min(k, len(visible))
    everything = store.search("chunks", q, 70, where=vector_filter(frozenset({"hr"})))
    assert {h.id for h in everything} == {p.id for p in pts}
    assert {tuple(h.payload[VECTOR_FIELD]) for h in everything} == {(PUBLIC,), ("hr",)}
    with pytest.raises(VectorStoreError):
        store.set_payload_where("chunks", {}, {VECTOR_FIELD: ["hr"]})
