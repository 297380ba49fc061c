"""The access invariant on real engines (ArcadeDB, qdrant-edge, MiniLM): for random small corpora with random
access groups, what a reader with groups gets from every mode it may use (``REGISTRY.view_modes()``) equals
what a store built only from the documents it may read answers to a reader that reads everything: the
ranked chunks (ids, order, scores, count), each result's entities, the context and the explanation's seeds,
at top_k 1, 5, 50 and 70, with ``retrieval.candidate_k`` 50 (the default) and 3."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.access import readable
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.retrieval.registry import REGISTRY
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.conftest import settings_for

PEOPLE = ["Maren Holt", "Ivo Brandt", "Selka Quorn", "Teodor Vash", "Alba Renwick"]
PLACES = ["Karsvik", "Tollmere", "Port Elwen", "Durnholm"]
ORGS = ["Veltrix Labs", "the Marrow Institute", "Northwind Guild", "Calder Foundry"]
TOPICS = ["glass synthesis", "river restoration", "quantum ledgers", "salt batteries", "tidal mapping"]
TEMPLATES = [
    "{p} works at {o} in {pl}.",
    "{p} met {p2} in {pl} to discuss {t}.",
    "{o} funded research on {t} led by {p}.",
    "In {pl}, {p} presented a report on {t} to {o}.",
    "{p2} and {p} founded {o} in {pl}.",
    "{o} opened an office in {pl} for work on {t}.",
    "{p} wrote to {p2} about {t} at {o}.",
    "Dr. {last} of {o} studies {t}.",
]
#: the groups a document may carry (weighted towards one group or none)
GROUP_CHOICES = [[], [], ["hr"], ["hr"], ["eng"], ["eng"], ["eng", "hr"]]
READERS = [frozenset({"hr"}), frozenset({"eng"}), frozenset({"ops"}), frozenset({"hr", "eng"})]
TOP_KS = (1, 5, 50, 70)
#: ``retrieval.candidate_k``: the default (past every corpus's chunk count), and one below most top_k, so that a
#: candidate pool taken before the hidden chunks are dropped would show
POOLS = (50, 3)
SEEDS = (7, 19, 2024)
#: relative tolerance of scores (a store's numbers are summed in another order than the view's)
REL = 1e-4


def corpus(seed: int) -> list[dict[str, Any]]:
    """8-12 short records about shared made-up people, places, organisations and topics, random groups."""
    rng = random.Random(seed)
    records = []
    for i in range(rng.randint(8, 12)):
        sentences = []
        for _ in range(rng.randint(2, 4)):
            p, p2 = rng.sample(PEOPLE, 2)
            line = rng.choice(TEMPLATES).format(p=p, p2=p2, pl=rng.choice(PLACES), o=rng.choice(ORGS),
                                                t=rng.choice(TOPICS), last=p.split()[-1])
            sentences.append(line[0].upper() + line[1:])
        text = " ".join(sentences)
        records.append({"id": f"d{seed}-{i}", "title": f"Note {i} on {rng.choice(TOPICS)}", "text": text,
                        "groups": rng.choice(GROUP_CHOICES)})
    return records


def queries(seed: int) -> list[str]:
    """A few questions naming the corpus's entities."""
    rng = random.Random(seed + 1)
    return [f"What did {rng.choice(PEOPLE)} do at {rng.choice(ORGS)}?",
            f"Who worked on {rng.choice(TOPICS)} in {rng.choice(PLACES)}?",
            f"{rng.choice(TOPICS)} {rng.choice(PEOPLE).split()[0]}"]


def _readable_records(records: list[dict[str, Any]], reader: frozenset[str]) -> list[dict[str, Any]]:
    return [r for r in records if readable(",".join(sorted(r["groups"])), reader)]


def _digest(p: Platform, text: str, mode: str, k: int, pool: int, reader: frozenset[str] | None) -> dict[str, Any]:
    """What the comparison reads of one answer (``pool``: its ``retrieval.candidate_k``)."""
    cfg = p.settings.retrieval.model_copy(update={"candidate_k": pool})
    res = p.query(text, mode=mode, top_k=k, explain=True, retrieval=cfg, reader=reader)
    return {"chunks": [r.citation.chunk_id for r in res.results], "sources": [r.citation.source for r in res.results],
            "scores": [r.score for r in res.results], "entities": [r.entities for r in res.results],
            "context": res.context, "seeds": res.explain.get("seeds")}


#: (mode, query, top_k, candidate_k) -> what the comparison reads of its answer
Answers = dict[tuple[str, str, int, int], Any]


def _answers(p: Platform, qs: list[str], reader: frozenset[str] | None) -> Answers:
    return {(mode, q, k, pool): _digest(p, q, mode, k, pool, reader)
            for mode in REGISTRY.view_modes() for q in qs for k in TOP_KS for pool in POOLS}


@pytest.fixture(scope="module")
def answers(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Callable[[int], dict[frozenset[str], tuple[Answers, Answers]]]]:
    """seed -> reader -> (the view's answers on the whole store, the answers of a store of what it may read):
    each corpus's stores are ingested once, on first use, and closed once queried."""
    done: dict[int, dict[frozenset[str], tuple[Answers, Answers]]] = {}

    def store(records: list[dict[str, Any]], qs: list[str], readers: list[frozenset[str] | None]
              ) -> dict[frozenset[str] | None, Answers]:
        folder: Path = tmp_path_factory.mktemp("view")
        with Platform(settings_for(arcadedb, folder / "data"), embedder=embedder) as p:
            report = p.ingest_records(records)
            assert report.documents_ingested == len(records), report.skipped
            return {reader: _answers(p, qs, reader) for reader in readers}

    def of(seed: int) -> dict[frozenset[str], tuple[Answers, Answers]]:
        if seed not in done:
            records, qs = corpus(seed), queries(seed)
            whole = store(records, qs, [None, *READERS])
            out = {}
            for reader in READERS:
                mine = _readable_records(records, reader)
                alone = whole[None] if len(mine) == len(records) else store(mine, qs, [None])[None]
                out[reader] = (whole[reader], alone)
            done[seed] = out
        return done[seed]

    yield of


def _differences(view: Answers, alone: Answers) -> list[str]:
    """Each way the view's answers differ from the store's, one line each."""
    found = []
    for key, want in alone.items():
        got = view[key]
        for field in ("chunks", "sources", "entities", "context", "seeds"):
            if got[field] != want[field]:
                found.append(f"{key} {field}: view {got[field]!r} != store {want[field]!r}")
                break
        else:
            if any(abs(a - b) > REL * max(abs(a), abs(b), 1e-9) for a, b in zip(got["scores"], want["scores"],
                                                                               strict=True)):
                found.append(f"{key} scores: view {got['scores']} != store {want['scores']}")
    return found


def test_the_corpora_have_what_the_invariant_needs() -> None:
    for seed in SEEDS:
        groups = {tuple(r["groups"]) for r in corpus(seed)}
        assert {(), ("hr",), ("eng",)} <= groups, seed  # something hidden from every reader but hr+eng
        for reader in READERS[:3]:
            assert 0 < len(_readable_records(corpus(seed), reader)) < len(corpus(seed))


@pytest.mark.parametrize("reader", READERS, ids=lambda r: "+".join(sorted(r)))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_readers_view_answers_as_a_store_of_what_it_may_read(
        answers: Callable[[int], dict[frozenset[str], tuple[Answers, Answers]]], seed: int,
        reader: frozenset[str]) -> None:
    assert {"graph", "dense", "naive", "bm25", "rrf"} <= set(REGISTRY.view_modes())
    view, alone = answers(seed)[reader]
    assert len(view) == len(alone) == len(REGISTRY.view_modes()) * len(queries(seed)) * len(TOP_KS) * len(POOLS)
    assert all(any(a["chunks"] for key, a in alone.items() if key[0] == mode) for mode in REGISTRY.view_modes())
    diff = _differences(view, alone)
    assert not diff, f"{len(diff)} answers differ:\n" + "\n".join(diff[:20])
