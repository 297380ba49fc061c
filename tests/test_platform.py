"""End to end on the real embedded stores: ingest, idempotence, delete, planted facts."""

from pathlib import Path
from typing import Any

import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.errors import NotFoundError
from hopgraph.retrieval.registry import QueryError

FACT = ("The Vexmoor Observatory was founded in 1893 by the astronomer Zorblax Quintana, who paid for "
        "its brass telescope with money from a salt mine near Kelderwick.")


def _corpus(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "curie.txt").write_text(
        "Marie Curie was a physicist and chemist who worked in Paris. She shared the Nobel Prize in "
        "Physics with Pierre Curie and Henri Becquerel. Later she won the Nobel Prize in Chemistry.")
    (root / "einstein.txt").write_text(
        "Albert Einstein worked at the patent office in Bern. He received the Nobel Prize in Physics "
        "for the photoelectric effect and later moved to Princeton.")
    (root / "turing.txt").write_text(
        "Alan Turing worked at Bletchley Park during the Second World War and designed the Bombe to "
        "break the Enigma cipher. After the war he joined the University of Manchester.")
    (root / "vexmoor.txt").write_text("Kelderwick is a quiet town on a northern ridge. " + FACT)
    return root


def _counts(p: Platform) -> dict[str, int]:
    """Graph and vector counts; communities are left out: warm-started clustering depends on history."""
    st = p.status()
    counts = {**st["graph"], **{f"vec_{k}": v for k, v in st["vectors"].items()}}
    return {k: v for k, v in counts.items() if k not in ("Community", "IN_COMMUNITY", "vec_communities")}


def test_ingest_is_idempotent(platform: Platform, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    first = platform.ingest([corpus])
    assert first.documents_ingested == 4 and not first.skipped
    counts = _counts(platform)
    assert counts["Document"] == 4 and counts["Chunk"] >= 4 and counts["Entity"] >= 8
    assert counts["vec_chunks"] == counts["Chunk"] and counts["vec_entities"] == counts["Entity"]
    assert counts["MENTIONS"] >= counts["Entity"]
    second = platform.ingest([corpus])
    assert second.documents_ingested == 0 and second.documents_unchanged == 4
    assert _counts(platform) == counts


def test_a_missing_path_is_not_found_as_in_the_cli(platform: Platform, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    with pytest.raises(NotFoundError, match=f"no such file or directory: {tmp_path / 'gone.txt'}"):
        platform.ingest([corpus, tmp_path / "gone.txt"])
    assert platform.documents() == []  # nothing ingested: refused before anything was read


def test_invalid_utf8_is_ingested_with_a_warning(platform: Platform, tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_bytes("Orla Vint tuned the carillon of Kelderwick caf\xe9.".encode("latin-1"))
    report = platform.ingest([note])
    assert report.documents_ingested == 1 and not report.skipped
    assert "1 byte(s) replaced" in report.warnings[str(note.resolve())]


def test_planted_fact_ranks_first(platform: Platform, tmp_path: Path) -> None:
    platform.ingest([_corpus(tmp_path / "corpus")])
    for mode in ("naive", "local"):
        res = platform.query("Who founded the Vexmoor Observatory?", mode=mode, top_k=3)
        assert res.results, mode
        top = res.results[0]
        assert "Zorblax Quintana" in top.text, mode
        assert top.citation.source.endswith("vexmoor.txt")
        assert top.citation.document_id.startswith("doc_") and top.citation.chunk_id.startswith("chk_")
    local = platform.query("Who founded the Vexmoor Observatory?", mode="local")
    assert "Vexmoor Observatory" in local.results[0].entities


def test_delete_cleans_graph_and_vectors(platform: Platform, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    platform.ingest([corpus])
    before = _counts(platform)
    docs = {d.source: d.id for d in platform._store.list_documents()}
    turing = docs[str((corpus / "turing.txt").resolve())]
    assert platform.delete(turing)
    assert not platform.delete(turing)  # already gone
    after = _counts(platform)
    assert after["Document"] == before["Document"] - 1
    g = platform._store
    assert g.read("MATCH (e:Entity) WHERE NOT (e)<-[:MENTIONS]-() RETURN count(e) AS n")[0]["n"] == 0
    assert g.read("MATCH (c:Chunk) WHERE NOT (c)<-[:HAS_CHUNK]-() RETURN count(c) AS n")[0]["n"] == 0
    names = {r["n"] for r in g.read("MATCH (e:Entity) RETURN e.name AS n")}
    assert "Bletchley Park" not in names and "Enigma" not in names
    # an entity still mentioned elsewhere survives (Nobel Prize in Physics: Curie and Einstein)
    einstein = docs[str((corpus / "einstein.txt").resolve())]
    platform.delete(einstein)
    names = {r["n"] for r in g.read("MATCH (e:Entity) RETURN e.name AS n")}
    assert "Nobel Prize in Physics" in names and "Princeton" not in names
    after = _counts(platform)
    assert after["vec_chunks"] == after["Chunk"] and after["vec_entities"] == after["Entity"]
    hits = platform.query("Enigma cipher Bombe", mode="naive", top_k=10).results
    assert all(not h.citation.source.endswith(("turing.txt", "einstein.txt")) for h in hits)


def test_changed_file_reingest_equals_fresh_ingest(platform: Platform, tmp_path: Path,
                                                   arcadedb: object, embedder: object) -> None:
    from .conftest import settings_for

    corpus = _corpus(tmp_path / "corpus")
    platform.ingest([corpus])
    (corpus / "turing.txt").write_text("Alan Turing proposed the imitation game in Manchester.")
    report = platform.ingest([corpus])
    assert report.documents_ingested == 1 and report.documents_unchanged == 3
    changed = _counts(platform)
    names = {r["n"] for r in platform._store.read("MATCH (e:Entity) RETURN e.name AS n")}
    assert "Bletchley Park" not in names
    fresh_settings = settings_for(arcadedb, tmp_path / "fresh")  # type: ignore[arg-type]
    with Platform(fresh_settings, embedder=embedder) as fresh:  # type: ignore[arg-type]
        fresh.ingest([corpus])
        assert _counts(fresh) == changed


def test_bad_queries_are_refused(platform: Platform) -> None:
    with pytest.raises(QueryError, match="unknown mode"):
        platform.query("x", mode="telepathy")
    with pytest.raises(QueryError, match="empty"):
        platform.query("   ")


def test_recurring_entities_are_embedded_once_and_again_after_deletion(
        arcadedb: object, embedder: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One document per batch: an entity of several documents gets one vector write per process,
    and an entity whose vectors a deletion removed is embedded again when it comes back."""
    from hopgraph.core.settings import IngestSettings
    from hopgraph.ingest import pipeline
    from hopgraph.vectors.store import VectorPoint

    from .conftest import settings_for

    cfg = settings_for(arcadedb, tmp_path / "data", ingest=IngestSettings(doc_batch=1))  # type: ignore[arg-type]
    corpus = _corpus(tmp_path / "corpus")
    with Platform(cfg, embedder=embedder) as p:  # type: ignore[arg-type]
        written: list[str] = []
        real = pipeline.vector_points

        def spy(*args: Any, **kwargs: Any) -> dict[str, list[VectorPoint]]:
            points = real(*args, **kwargs)
            written.extend(pt.id for pt in points["entities"])
            return points

        monkeypatch.setattr(pipeline, "vector_points", spy)
        p.ingest([corpus])
        assert len(written) == len(set(written)) == _counts(p)["Entity"]
        docs = {d.source: d.id for d in p._store.list_documents()}
        p.delete(docs[str((corpus / "turing.txt").resolve())])
        written.clear()
        p.ingest([corpus])  # turing.txt comes back
        assert any(p._store.read("MATCH (e:Entity {id: $i}) RETURN e.name AS n", {"i": i})[0]["n"]
                   == "Bletchley Park" for i in written)
        counts = _counts(p)
        assert counts["vec_entities"] == counts["Entity"] and counts["vec_relationships"] > 0
        hit = p.vectors.search("entities", p.embedder.embed(["Bletchley Park"])[0], limit=1)[0]
        assert hit.payload["name"] == "Bletchley Park"
