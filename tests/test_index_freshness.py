"""The served index state on the real engines: a change is served by a delta that ranks exactly as a
fresh build, a restart loads the persisted state instead of rebuilding, and a server's poller
picks up another process's writes while queries keep answering from the previous state."""

from __future__ import annotations

import time
from pathlib import Path

from hopgraph.app.platform import Platform
from hopgraph.core.settings import Settings
from hopgraph.retrieval.index.keeper import IndexKeeper
from hopgraph.retrieval.index.state import IndexState
from hopgraph.retrieval.index.tables import fetch_all
from hopgraph.retrieval.retriever import Retriever, recipe_of
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.test_index_state import assert_same
from tests.test_platform import _corpus

QUESTIONS = ["Who founded the Vexmoor Observatory?", "Where did Einstein work before Princeton?",
             "Which prizes did Marie Curie share?"]
MODES = ("graph", "local", "global", "hybrid", "naive", "pcst")


def _rankings(r: Retriever) -> list[list[tuple[str, float]]]:
    return [[(c.citation.chunk_id, c.score) for c in r.query(q, mode=m, top_k=5).results]
            for q in QUESTIONS for m in MODES]


def _same_as_fresh(p: Platform) -> None:
    """The served state equals one built from scratch now, and every mode ranks identically."""
    served = p.retriever.keeper.current()
    recipe = recipe_of(p.settings.retrieval)
    assert_same(served, IndexState.of(fetch_all(p._store, p.vectors, p.embedder.dim), recipe))
    fresh = Retriever(p._store, p.vectors, p.embedder, p.settings.retrieval,
                      keeper=IndexKeeper(p._store, p.vectors, recipe, p.embedder.dim))
    assert _rankings(p.retriever) == _rankings(fresh)


def test_changes_are_served_by_deltas_that_rank_as_a_fresh_build(
        settings: Settings, embedder: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    with Platform(settings, embedder=embedder) as p:
        p.ingest([corpus])
        first = p.query(QUESTIONS[0], mode="graph")
        keeper = p.retriever.keeper
        assert keeper.freshness().last_refresh_kind == "rebuild"
        assert first.index_version == first.graph_version == p._store.version() > 0

        (corpus / "einstein.txt").write_text(
            "Albert Einstein visited the Vexmoor Observatory with Zorblax Quintana in 1921 and admired the brass "
            "telescope. He worked at the patent office in Bern.")
        p.ingest([corpus])
        assert keeper.freshness().last_refresh_kind == "delta"  # refreshed by the ingest, not by the query
        after = p.query("Who visited the Vexmoor Observatory in 1921?", mode="graph", top_k=3)
        assert after.index_version == p._store.version() > first.index_version
        assert "Einstein" in after.results[0].text
        _same_as_fresh(p)

        doc = next(d.id for d in p.documents() if d.source.endswith("turing.txt"))
        assert p.delete(doc)
        assert keeper.freshness().last_refresh_kind == "delta"
        assert not any("Turing" in c.text for c in p.query("Who broke the Enigma cipher?", top_k=5).results)
        _same_as_fresh(p)
        served = keeper.current().version

    with Platform(settings, embedder=embedder) as again:  # a restart: the persisted state answers
        res = again.query(QUESTIONS[0], mode="graph")
        assert again.retriever.keeper.freshness().last_refresh_kind == "load"
        assert res.index_version == served
        _same_as_fresh(again)


def test_a_polling_keeper_serves_the_old_state_until_the_new_one_is_ready(
        platform: Platform, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    platform.ingest([corpus / "curie.txt"])
    keeper = platform.retriever.keeper
    v1 = platform.query("Marie Curie").index_version
    keeper.start_polling(0.1)
    # a write the platform is not told about (as another replica's would be): only the poller sees it
    platform._ingestor().ingest_paths([corpus / "vexmoor.txt"])
    target = platform._store.version()
    deadline = time.monotonic() + 300  # a guard against a hang, however busy the machine
    while (res := platform.query("Who founded the Vexmoor Observatory?", top_k=1)).index_version != target:
        assert v1 <= res.index_version < target  # an older state answers meanwhile
        assert time.monotonic() < deadline, "the poller never served the new version"
        time.sleep(0.05)
    assert "Zorblax" in res.results[0].text and keeper.freshness().lag == 0
