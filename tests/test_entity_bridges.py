"""Entity bridges (retrieval.parts.entity_bridges): in a corpus without titles, the best passage leads on to
the passage that shares a named entity with it and is most similar to the question; hubs lead less."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hopgraph.app.platform import Platform
from hopgraph.retrieval.parts import entity_bridges
from tests.corpus import chunk_of

#: untitled passages: the river names the country, the falls passage names it too and is about a waterfall;
#: two waterfalls elsewhere are closer to the question's words than the right one
PASSAGES = {
    "river": "The Quenwater River is a tributary of the Lorvine River in the Dastmark District of Veloria. "
             "It rises near the town of Hollin.",
    "falls": "Ondrel Falls, on the Semmick River along the border between Veloria and Tarsk, drops 108 metres "
             "into a basalt gorge.",
    "exports": "Veloria exports copper, tobacco and cotton to its neighbours, mostly by rail.",
    "elsewhere": "Brisden Falls is a waterfall in the highlands of Tarsk, fed by melting snow.",
    "famous": "The Mirrow Cascade is a waterfall in Ostrel where a river drops into a gorge.",
    "highest": "The highest waterfall of the country of Pellmark is Saro Falls.",
    "unrelated": "Harbour cranes lift containers from ships onto the quay.",
}
QUERY = "What is the name of the waterfall in the country where the Quenwater River is found?"


@pytest.fixture
def untitled(platform: Platform, tmp_path: Path) -> Platform:
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps({"_id": k, "text": x}) for k, x in PASSAGES.items()))
    platform.ingest([path])
    return platform


def test_the_best_passage_leads_to_the_closest_passage_sharing_an_entity(untitled: Platform) -> None:
    snap = untitled.retriever.snapshot()
    c = chunk_of(untitled)
    qvec = untitled.embedder.embed([QUERY])[0]
    found = entity_bridges.entity_bridge(snap, {c["river"]: 2.0, c["unrelated"]: 1.0}, qvec, sources=1,
                                         weight=0.7)
    # the falls passage shares Veloria with the river passage and is about a waterfall; the exports
    # passage shares Veloria but not the question's subject; Brisden Falls shares nothing with the river
    assert found.scores == {c["falls"]: pytest.approx(1.4)}
    assert [(src, dst) for src, _, dst in found.hops] == [(c["river"], c["falls"])]
    assert found.hops[0][1].lower() == "veloria"
    # an entity the query names leads back to what the first pass found: it is skipped
    river = [i for i, n in enumerate(snap.entity_names) if "quenwater" in n.lower()]
    veloria = [i for i, n in enumerate(snap.entity_names) if n.lower() == "veloria"]
    assert river and veloria
    assert entity_bridges.entity_bridge(snap, {c["river"]: 2.0}, qvec, 1, 0.7, skip={*veloria}).scores.get(
        c["falls"]) is None
    assert entity_bridges.entity_bridge(snap, {c["river"]: 2.0}, qvec, 1, 0.0).scores == {}


def test_graph_mode_ranks_the_entity_bridged_passage_after_its_source(untitled: Platform) -> None:
    c = chunk_of(untitled)
    names = {v: k for k, v in c.items()}
    res = untitled.query(QUERY, mode="graph", top_k=5, explain=True)
    top = [names[r.citation.chunk_id] for r in res.results]
    # the falls passage shares no word of "waterfall" with the question: the bridge lifts it over the
    # waterfall that shares no entity with the river (it ranks below it without the bridge)
    assert top[0] == "river" and top.index("falls") < top.index("elsewhere"), top
    assert any("veloria (entity)" in hop.lower() for hop in res.explain["bridges"])
    assert "entity_bridge" in res.explain["signals"]
    off = untitled.settings.retrieval.merged({"modes": {"graph": {"entity_bridge_weight": 0.0}}})
    plain = untitled.query(QUERY, mode="graph", top_k=5, explain=True, retrieval=off)
    assert "entity_bridge" not in plain.explain["signals"]
    was = [names[r.citation.chunk_id] for r in plain.results]
    assert "falls" not in was or was.index("falls") > was.index("elsewhere"), was


def test_a_hub_entity_leads_less() -> None:
    # four chunks: 0 mentions entities 0 (a hub, in every chunk) and 1 (in chunks 0 and 3)
    inc = np.array([[1, 1], [1, 0], [1, 0], [1, 1]], dtype=float)
    import scipy.sparse as sp

    m = sp.csr_matrix(inc)
    snap = SimpleNamespace(incidence=m, mentioned_in=m.T.tocsr(), entity_types=["GPE", "PERSON"],
                           entity_df=np.array([4.0, 2.0]), entity_hub_limit=2.0,
                           chunk_docs=["a", "b", "c", "d"])
    rows, via, damp = entity_bridges.candidates(snap, 0, skip=())  # type: ignore[arg-type]
    got = {int(r): (int(e), float(d)) for r, e, d in zip(rows, via, damp, strict=True)}
    # chunk 3 is reached over both entities and keeps the undamped one; 1 and 2 only over the hub
    assert got == {1: (0, 0.5), 2: (0, 0.5), 3: (1, 1.0)}
    snap.entity_types = ["CONCEPT", "PERSON"]  # a concept never bridges
    rows, _, _ = entity_bridges.candidates(snap, 0, skip=())  # type: ignore[arg-type]
    assert rows.tolist() == [3]
    rows, _, _ = entity_bridges.candidates(snap, 0, skip={1})  # type: ignore[arg-type]
    assert rows.tolist() == []


def test_a_copy_of_the_best_passage_is_no_bridge(untitled: Platform, tmp_path: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    copy.write_text(json.dumps({"_id": "river-again", "text": PASSAGES["river"]}))
    untitled.ingest([copy])
    snap = untitled.retriever.snapshot()
    c = chunk_of(untitled)
    qvec = untitled.embedder.embed([QUERY])[0]
    # the copy shares every entity with the river passage and is closer to the question than the falls
    found = entity_bridges.entity_bridge(snap, {c["river"]: 2.0}, qvec, sources=1, weight=0.7)
    assert set(found.scores) == {c["falls"]}
