"""Document sections: where documents are cut (Markdown and HTML headings, paragraphs, nothing), chunks
that never span two sections, and sections in the real stores: written with their vectors, replaced
by a re-ingest, gone with their document, and given to documents of an older store by the migration."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hopgraph.app.platform import Platform
from hopgraph.core.text import SECTION_MARK
from hopgraph.graphdb.migrations import discover, packaged
from hopgraph.ingest.chunking import Chunker
from hopgraph.ingest.formats import html_to_text, markdown_to_text
from hopgraph.ingest.sections import split_sections
from hopgraph.vectors.embedders import SentenceTransformerEmbedder

MARKDOWN = """# Vexmoor Observatory

The Vexmoor Observatory stands on the northern ridge above Kelderwick.

## History

### Founding

It was founded in 1893 by the astronomer Zorblax Quintana with the proceeds of a salt mine.

### Later years

After her death the observatory passed to the Kelderwick Astronomical Society.

## Instruments

Its brass refractor telescope was restored in 1951.
"""


def test_markdown_and_html_headings_cut_sections_with_paths() -> None:
    parts = split_sections(markdown_to_text(MARKDOWN))
    assert [(p.title, p.level, p.path) for p in parts] == [
        ("Vexmoor Observatory", 1, "Vexmoor Observatory"),
        ("Founding", 3, "Vexmoor Observatory > History > Founding"),  # "History" had no text of its own
        ("Later years", 3, "Vexmoor Observatory > History > Later years"),
        ("Instruments", 2, "Vexmoor Observatory > Instruments")]
    assert parts[1].text.startswith("History.\nFounding.\nIt was founded") and SECTION_MARK not in parts[1].text
    _, html = html_to_text("<h1>Guide</h1><p>Intro.</p><h2>Usage</h2><p>Run it.</p>")
    assert [(p.title, p.path, p.text) for p in split_sections(html)] == [
        ("Guide", "Guide", "Guide.\nIntro."), ("Usage", "Guide > Usage", "Usage.\nRun it.")]
    assert [p.path for p in split_sections("One.\n\nTwo.\n\n\nThree.", "paragraphs")] == ["¶1", "¶2", "¶3"]
    assert SECTION_MARK not in split_sections(markdown_to_text(MARKDOWN), "none")[0].text
    plain = "No headings here. Just text."
    assert split_sections(plain) == split_sections(plain, "none") and split_sections(plain)[0].text == plain


def test_chunks_never_span_two_sections(embedder: SentenceTransformerEmbedder) -> None:
    chunker = Chunker(embedder.count_tokens, max_tokens=40, overlap_tokens=8)
    sections, chunks = chunker.chunk_document("doc_v", markdown_to_text(MARKDOWN))
    assert len(sections) == 4 and [c.ord for c in chunks] == list(range(len(chunks)))
    owner = {c: s for s in sections for c in s.chunk_ids}
    assert sorted(owner) == sorted(c.id for c in chunks)  # every chunk in exactly one section
    for s in sections:
        texts = " ".join(c.text for c in chunks if c.id in s.chunk_ids)
        assert s.title in texts and not any(o.title in texts for o in sections if o.ord > s.ord and o.title)
    plain = "The Vexmoor Observatory was founded in 1893. " * 20  # no headings: the chunks of before
    whole, chunked = chunker.chunk_document("doc_p", plain)
    assert len(whole) == 1 and whole[0].chunk_ids == [c.id for c in chunked] == [c.id for c in chunker.chunk(
        "doc_p", plain)]


def _sections(p: Platform) -> dict[str, dict[str, object]]:
    rows = p._store.read("MATCH (d:Document)-[:HAS_SECTION]->(s:Section) OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c:Chunk) "
                        "RETURN s.id AS id, d.id AS doc, s.path AS path, s.embedded AS embedded, "
                        "collect(c.id) AS chunks")
    return {r["id"]: r for r in rows}


def _section_vectors(p: Platform) -> dict[str, dict[str, object]]:
    page, _ = p.vectors.scroll("sections", limit=1000)
    return {h.id: h.payload for h in page}


def test_sections_are_written_replaced_deleted_and_migrated(platform: Platform, tmp_path: Path) -> None:
    docs = tmp_path / "docs"  # not tmp_path itself: the stores' data dir (written in the background) is there
    docs.mkdir()
    doc = docs / "vexmoor.md"
    doc.write_text(MARKDOWN)
    (docs / "plain.txt").write_text("Kelderwick is a town of salt mines on the northern coast.")
    platform.ingest([docs])
    first = _sections(platform)
    assert len(first) == 5 and all(s["chunks"] and s["embedded"] for s in first.values())
    assert {s["path"] for s in first.values()} >= {"Vexmoor Observatory > Instruments", ""}
    vecs = _section_vectors(platform)
    assert set(vecs) == set(first) and all(v["chunks"] for v in vecs.values())

    doc.write_text(MARKDOWN.replace("restored in 1951", "restored in 1952"))
    platform.ingest([docs])
    second = _sections(platform)
    assert set(second) == set(first) and set(_section_vectors(platform)) == set(second)  # ids: place and headings
    changed = [k for k in second if second[k]["chunks"] != first[k]["chunks"]]
    assert [second[k]["path"] for k in changed] == ["Vexmoor Observatory > Instruments"]  # its new chunk
    chunk_ids = {r["id"] for r in platform._store.read("MATCH (c:Chunk) RETURN c.id AS id")}
    assert all(set(s["chunks"]) <= chunk_ids for s in second.values())

    victim = next(d.id for d in platform.documents() if d.source and d.source.endswith("vexmoor.md"))
    platform.delete_documents([victim])
    left = _sections(platform)
    assert len(left) == 1 and all(s["doc"] != victim for s in left.values())
    assert set(_section_vectors(platform)) == set(left)

    # a store from before sections: its documents have none; the migration gives each one section
    # (embedded = false) and the next ingest writes its vector
    def write(statement: str) -> None:
        platform._store._write(lambda tx: tx.run(statement).consume())

    write("MATCH (s:Section) DETACH DELETE s")
    platform.vectors.delete_where("sections", {"document_id": [str(s["doc"]) for s in left.values()]})
    migration = next(m for m in discover(packaged()) if m.name == "sections")
    write(migration.statements[-1])
    migrated = _sections(platform)
    assert len(migrated) == 1 and not next(iter(migrated.values()))["embedded"]
    platform.ingest([docs / "plain.txt"])  # nothing changed: only the vector is written
    assert [s["embedded"] for s in _sections(platform).values()] == [True]
    vec = platform.vectors.vectors("sections", list(migrated))
    chunk = platform.vectors.vectors("chunks", list(next(iter(migrated.values()))["chunks"]))  # type: ignore[arg-type]
    assert np.allclose(next(iter(vec.values())), next(iter(chunk.values())), atol=1e-5)  # one chunk: its vector


def test_mode_sections_answers_with_the_section_and_its_confidence(platform: Platform, tmp_path: Path) -> None:
    (tmp_path / "vexmoor.md").write_text(MARKDOWN)
    (tmp_path / "list.md").write_text("# List of observatories\n\nVexmoor Observatory: brass refractor telescope, "
                                      "restored in 1951.\n\nPell Observatory: a reflector.\n")
    platform.ingest([tmp_path])
    res = platform.query("When was the brass refractor telescope restored?", mode="sections", top_k=3,
                         explain=True)
    top = res.results[0]
    assert top.section == "Vexmoor Observatory > Instruments" and "1951" in top.text
    assert top.confidence is not None and res.confidence is not None and res.explain["confidence"]["entropy"] >= 0
    assert [r.confidence for r in res.results] == sorted((r.confidence or 0 for r in res.results), reverse=True)
    listed = next(d.id for d in platform.documents() if d.source and d.source.endswith("list.md"))
    assert listed in res.explain["excluded_documents"]  # a list page is no candidate
    assert all(r.citation.document_id != listed for r in res.results)
    paths = [s["path"] for s in res.explain["sections"]]
    assert paths[0] == "Vexmoor Observatory > Instruments" and len(paths) == len(set(paths))
