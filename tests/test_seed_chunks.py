"""graph mode's seed chunks: the chunks scored by the seed entities they mention, fused beside the walk
(``retrieval.modes.graph.entity_weight``) on a corpus whose chunks look alike to the embedder."""

from __future__ import annotations

from pathlib import Path

from hopgraph.app.platform import Platform
from hopgraph.core.records import QueryResult

QUESTION = "Where did Melanie go camping?"


def test_graph_fuses_the_chunks_that_name_its_seeds(platform: Platform, tmp_path: Path) -> None:
    texts = {"both.txt": "Melanie went camping in the mountains with her family last summer.",
             "person.txt": "Melanie baked bread for her neighbours on Sunday morning.",
             "topic.txt": "A camping store opened downtown and sells tents and stoves."}
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    platform.ingest([tmp_path])
    # read as a corpus of look-alike chunks (a chat log): the first pass moves dense weight to BM25
    alike = platform.settings.retrieval.merged({"homogeneity_min_chunks": 2, "homogeneity_floor": 0.0})
    on = platform.query(QUESTION, mode="graph", top_k=3, explain=True, retrieval=alike)
    seeds = {s["entity"] for s in on.explain["seeds"]}
    assert {"Melanie", "camping"} <= seeds
    scores = on.explain["signals"]["entities"]
    source = {r.citation.chunk_id: Path(r.citation.source).name for r in on.results}
    best = max(scores, key=scores.__getitem__)
    assert source[best] == "both.txt" and len(scores) == 3  # naming both seeds beats naming either
    plain = platform.query(QUESTION, mode="graph", top_k=3, retrieval=alike.merged(
        {"modes": {"graph": {"entity_weight": 0.0}}}))

    def lead(found: QueryResult) -> float:  # how far both.txt's fused score is above person.txt's
        score = {Path(r.citation.source).name: r.score for r in found.results}
        return score["both.txt"] - score["person.txt"]

    assert lead(on) > lead(plain)  # the seed chunks take part in the fusion
    for no in ({"modes": {"graph": {"entity_weight": 0.0}}},
               {"modes": {"graph": {"expansion": "none"}}},  # there the graph signal is these scores itself
               {"homogeneity_min_chunks": 200}):             # three unrelated texts: the walk alone
        off = platform.query(QUESTION, mode="graph", top_k=3, explain=True, retrieval=alike.merged(no))
        assert "entities" not in off.explain["signals"], no
