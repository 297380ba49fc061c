"""Qdrant distributed mode: ``vectors.shard_number`` and ``vectors.replication_factor`` reach
``create_collection`` when set, and are left to the server's defaults when not. No server needed: the
client's collection calls are recorded (a Qdrant server in distributed mode is not something a test
machine runs)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from qdrant_client import models as qm

from hopgraph.core.settings import Settings, VectorSettings
from hopgraph.vectors.factory import open_vector_store
from hopgraph.vectors.qdrant_server import QdrantClientVectorStore, collection_params
from hopgraph.vectors.store import COLLECTIONS, CollectionSpec

SPEC = CollectionSpec(dim=16, model="test-model")

pytestmark = [
    pytest.mark.filterwarnings("ignore:Failed to obtain server version"),  # the client asks; nothing listens
    pytest.mark.filterwarnings("ignore:Payload indexes have no effect in the local Qdrant"),
]


def test_collection_params_carry_the_layout_only_when_set() -> None:
    unset = collection_params(16, "m")
    assert "shard_number" not in unset and "replication_factor" not in unset
    assert unset["vectors_config"] == qm.VectorParams(size=16, distance=qm.Distance.COSINE)
    assert unset["metadata"] == {"model": "m", "dim": 16}
    both = collection_params(16, "m", shard_number=6, replication_factor=2)
    assert both["shard_number"] == 6 and both["replication_factor"] == 2
    assert collection_params(16, "m", replication_factor=3).keys() == {"vectors_config", "metadata",
                                                                       "replication_factor"}


def test_the_settings_have_no_layout_by_default_and_refuse_zero() -> None:
    s = VectorSettings()
    assert s.shard_number is None and s.replication_factor is None
    with pytest.raises(ValueError):
        VectorSettings(shard_number=0)
    with pytest.raises(ValueError):
        VectorSettings(replication_factor=0)


def _recording(store: QdrantClientVectorStore, exists: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """Replace the client's collection calls by recorders (nothing is sent to a server)."""
    created: list[tuple[str, dict[str, Any]]] = []

    def create_collection(name: str, **kw: Any) -> bool:
        created.append((name, kw))
        return True

    client: Any = store.client
    client.collection_exists = lambda name: exists
    client.create_collection = create_collection
    client.create_payload_index = lambda *a, **kw: None
    return created


@pytest.mark.parametrize(("shards", "replicas"), [(6, 2), (None, None), (4, None)])
def test_a_server_store_creates_its_collections_with_the_configured_layout(
        monkeypatch: pytest.MonkeyPatch, shards: int | None, replicas: int | None) -> None:
    """From the settings through ``open_vector_store`` (backend ``server``) to ``create_collection``."""
    monkeypatch.delenv("HOPGRAPH_CONFIG", raising=False)
    settings = Settings(vectors=VectorSettings(backend="server", url="http://127.0.0.1:9", shard_number=shards,
                                               replication_factor=replicas))
    store = open_vector_store(settings)
    assert isinstance(store, QdrantClientVectorStore)
    try:
        created = _recording(store)
        store.ensure_collections(SPEC)
    finally:
        store.close()
    assert [name for name, _ in created] == [f"hopgraph_{c}" for c in COLLECTIONS]
    for _, kw in created:
        assert kw.get("shard_number") == shards and kw.get("replication_factor") == replicas
        assert ("shard_number" in kw) == (shards is not None)
        assert ("replication_factor" in kw) == (replicas is not None)


def test_an_existing_collection_of_another_layout_is_kept_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """The layout is fixed when a collection is created: an existing one is used as it is, and the log says
    that the setting did not apply to it."""
    store = QdrantClientVectorStore.connect(":memory:", None, "t_", 64, 10, shard_number=3, replication_factor=2)
    try:
        store.ensure_collections(SPEC)  # local mode accepts the layout and ignores it
        client: Any = store.client
        real = client.get_collection

        def one_shard(name: str) -> Any:
            info = real(name)
            params = info.config.params.model_copy(update={"shard_number": 1, "replication_factor": 2})
            return info.model_copy(update={"config": info.config.model_copy(update={"params": params})})

        client.get_collection = one_shard
        with caplog.at_level(logging.WARNING, logger="hopgraph.vectors.qdrant_server"):
            store.ensure_collections(SPEC)
    finally:
        store.close()
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == len(COLLECTIONS)
    assert all("shard_number = 1, not the configured 3" in m for m in said)
    assert not [m for m in said if "replication_factor" in m]


def test_a_qdrant_server_reports_the_shards_it_was_asked_for() -> None:
    """A real Qdrant server (testcontainers; one node, where several shards are allowed too)."""
    import uuid

    from .graph_backends import docker_unavailable_reason

    reason = docker_unavailable_reason()
    if reason:
        pytest.skip(f"Qdrant-server tests need Docker: {reason}")
    from testcontainers.community.qdrant import QdrantContainer

    with QdrantContainer() as c:
        prefix = f"t{uuid.uuid4().hex[:8]}_"
        store = QdrantClientVectorStore.connect(f"http://{c.rest_host_address}", None, prefix, 64, 10,
                                                shard_number=2)
        try:
            store.ensure_collections(SPEC)
            for name in COLLECTIONS:
                assert store.client.get_collection(prefix + name).config.params.shard_number == 2, name
        finally:
            store.close()
