"""``hopgraph doctor``: a clean store passes every check; each invariant broken on purpose is caught."""

from __future__ import annotations

import shutil
from pathlib import Path

from hopgraph.app.doctor import diagnose
from hopgraph.app.platform import Platform
from hopgraph.core.settings import EmbedderSettings
from hopgraph.graphdb.migrations import packaged


def _failed(p: Platform) -> dict[str, str]:
    return {c.name: c.detail for c in diagnose(p) if not c.ok}


def _corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("Ada Lovelace worked with Charles Babbage in London on the Analytical Engine.")
    (folder / "b.txt").write_text("Charles Babbage designed the Difference Engine. Babbage lived in London.")
    return folder


def test_a_clean_store_passes_and_each_broken_invariant_is_reported(platform: Platform, tmp_path: Path) -> None:
    platform.ingest([_corpus(tmp_path)])
    assert _failed(platform) == {}
    platform.retriever.keeper.save()  # the ingest kept the index state current; wait for its write
    index = {c.name: c.detail for c in diagnose(platform)}["index state"]
    assert index == f"persisted at graph version {platform._store.version()}"
    chunk = platform._store.read("MATCH (c:Chunk) RETURN c.id AS id LIMIT 1")[0]["id"]
    platform.vectors.delete("chunks", [chunk])  # a lost vector
    assert _failed(platform)["chunks"] == "2 chunks in the graph, 1 vectors — they differ"
    platform._store._write(lambda tx: tx.run("CREATE (:Entity {id: 'ent_lonely', name: 'Lonely'})").consume())
    failed = _failed(platform)
    assert "1 orphan entities" in failed["orphans"] and "differ" in failed["entities"]
    for collection in ("relationships", "communities"):  # a lost relationship vector, a lost community vector
        page, _ = platform.vectors.scroll(collection, limit=1)
        assert page, collection
        platform.vectors.delete(collection, [page[0].id])
        assert "differ" in _failed(platform)[collection]
    doc = platform._store.read("MATCH (d:Document) RETURN d.id AS id LIMIT 1")[0]["id"]
    platform._store.set_document_status([(doc, "pending", "x")])
    assert "1 unfinished" in _failed(platform)["documents"]


def test_a_pending_migration_and_another_embedder_are_reported(platform: Platform, tmp_path: Path) -> None:
    platform.ingest([_corpus(tmp_path)])
    extra = tmp_path / "migrations"
    shutil.copytree(packaged(), extra, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (extra / "0999_later.cypher").write_text("CREATE INDEX later_idx IF NOT EXISTS FOR (n:Later) ON (n.id);\n")
    graph_cfg = platform.settings.graph.model_copy(update={"migrations_dir": extra})
    platform._store.cfg = graph_cfg  # the adapter reads its directory from here; the graph stays open
    assert "0999_later.cypher" in _failed(platform)["migrations"]
    platform.close()
    other = platform.settings.model_copy(update={"embedder": EmbedderSettings(kind="onnx-int8")})
    with Platform(other) as p:
        assert "vector store" in _failed(p)
