"""graph mode's person scope: on a corpus of look-alike chunks (a chat log), a question naming a person
keeps the walk's scores on the chunks linked to that person (``retrieval.modes.graph.person_scope``)."""

from __future__ import annotations

from pathlib import Path

from hopgraph.app.platform import Platform
from hopgraph.core.records import QueryResult

TEXTS = {"melanie.txt": "Melanie went camping in the mountains with her family last summer.",
         "caroline.txt": "Caroline went camping at the lake with her friends in June.",
         "store.txt": "A camping store opened downtown and sells tents and stoves."}


def _walked(found: QueryResult) -> set[str]:
    """The files whose chunks the walk scored (the ``graph`` signal of ``--explain``)."""
    source = {r.citation.chunk_id: Path(r.citation.source).name for r in found.results}
    return {source[c] for c in found.explain["signals"]["graph"] if c in source}


def test_the_walk_keeps_to_the_named_persons_chunks_on_a_chat_like_corpus(platform: Platform,
                                                                          tmp_path: Path) -> None:
    for name, text in TEXTS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    platform.ingest([tmp_path])
    # read as a corpus of look-alike chunks (a chat log): the first pass moves dense weight to BM25
    alike = platform.settings.retrieval.merged({"homogeneity_min_chunks": 2, "homogeneity_floor": 0.0})
    question = "Where did Melanie go camping?"
    scoped = platform.query(question, mode="graph", top_k=3, explain=True, retrieval=alike)
    assert scoped.explain["person_scope"] == ["Melanie"]
    assert _walked(scoped) == {"melanie.txt"}
    assert len(scoped.results) == 3  # the other chunks are still found, by the other signals
    free = platform.query(question, mode="graph", top_k=3, explain=True,
                          retrieval=alike.merged({"modes": {"graph": {"person_scope": False}}}))
    assert "person_scope" not in free.explain and _walked(free) == set(TEXTS)  # over "camping" to all three
    for settings in (alike.merged({"homogeneity_min_chunks": 200}),  # three unrelated texts: unscoped
                     alike):
        text = question if settings is not alike else "Where do people go camping?"  # names no person
        other = platform.query(text, mode="graph", top_k=3, explain=True, retrieval=settings)
        assert "person_scope" not in other.explain and _walked(other) == set(TEXTS), text
