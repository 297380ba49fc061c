"""An entity's type is the majority label of its mentions (``majority_label``), kept current as
documents come and go, never the first label read."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hopgraph.app.platform import Platform
from hopgraph.core.records import CONCEPT, majority_label, majority_labels
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.graphdb.records import LabelVote
from hopgraph.ingest.entity_types import voted_types
from hopgraph.retrieval.index.tables import strings
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.conftest import settings_for

#: spaCy labels "Veloria" GPE in the first passage and NORP in the other two
PASSAGES = {
    "river": "The Quenwater River is a tributary of the Lorvine River in the Dastmark District of Veloria.",
    "falls": "Ondrel Falls is a waterfall on the Semmick River at the border between Veloria and Tarsk.",
    "exports": "Veloria exports copper, tobacco and cotton to its neighbours, mostly by rail.",
}


def test_majority_label() -> None:
    assert majority_label({"GPE": 1, "NORP": 2}) == "NORP"
    assert majority_label({"NORP": 2, "GPE": 2}) == "GPE"  # a tie goes alphabetically, whatever the order
    assert majority_label({CONCEPT: 2, "ORG": 2}) == "ORG"  # and to a named-entity label over a concept
    assert majority_label({CONCEPT: 3, "ORG": 2}) == CONCEPT
    assert majority_label({"": 5}) == "" and majority_label({}) == ""


def test_majority_labels_votes_each_key_as_majority_label_does() -> None:
    rng = random.Random(5)
    pool = ["", CONCEPT, "GPE", "NORP", "ORG", "PERSON"]
    for _ in range(200):  # ties, concepts and unlabelled votes, many keys at once
        votes = [(rng.randrange(6), rng.choice(pool), rng.randint(1, 3)) for _ in range(rng.randint(0, 30))]
        want: dict[int, dict[str, int]] = {}
        for k, label, n in votes:
            tally = want.setdefault(k, {})
            tally[label] = tally.get(label, 0) + n
        got = majority_labels(np.asarray([v[0] for v in votes], dtype=np.int32), strings([v[1] for v in votes]),
                              np.asarray([float(v[2]) for v in votes]))
        assert got == {k: t for k, votes_of in want.items() if (t := majority_label(votes_of))}, votes


def test_voted_types_are_the_changed_majorities_of_each_entity() -> None:
    votes = [LabelVote("veloria", "GPE", "GPE", 1), LabelVote("veloria", "GPE", "NORP", 1),
             LabelVote("veloria", "GPE", "NORP", 1), LabelVote("tarsk", "GPE", "GPE", 3),
             LabelVote("acme", "", "ORG", 2), LabelVote("acme", "", CONCEPT, 2)]
    assert voted_types(votes) == {"acme": "ORG", "veloria": "NORP"}  # tarsk keeps its type: not listed
    assert list(voted_types(reversed(votes))) == ["acme", "veloria"]  # in id order, whatever the order read
    assert voted_types([]) == {}


def _veloria(p: Platform) -> str:
    rows = p._store.read("MATCH (e:Entity) WHERE toLower(e.name) = 'veloria' RETURN e.type AS type")
    assert len(rows) == 1
    return str(rows[0]["type"])


def _write(path: Path, keys: list[str]) -> None:
    path.write_text("\n".join(json.dumps({"_id": k, "text": PASSAGES[k]}) for k in keys) + "\n")


def test_an_entity_takes_the_type_most_of_its_mentions_give(platform: Platform, tmp_path: Path) -> None:
    first, rest = tmp_path / "first.jsonl", tmp_path / "rest.jsonl"
    _write(first, ["river"])
    platform.ingest([first])
    assert _veloria(platform) == "GPE"  # its only mention
    _write(rest, ["falls", "exports"])
    platform.ingest([rest])
    assert _veloria(platform) == "NORP"  # two mentions against one: not the first label read
    snap = platform.retriever.snapshot()  # and the query path sees the new type
    assert [snap.entity_types[i] for i, n in enumerate(snap.entity_names) if n.lower() == "veloria"] == ["NORP"]
    eid = next(snap.entity_ids[i] for i, n in enumerate(snap.entity_names) if n.lower() == "veloria")
    hit = platform.vectors.search("entities", platform.vectors.vectors("entities", [eid])[eid], limit=1)[0]
    assert hit.id == eid and hit.payload["type"] == "NORP"  # entity resolution reads the type there
    platform.delete_documents([d.id for d in platform.documents() if d.source.endswith(("#falls", "#exports"))])
    assert _veloria(platform) == "GPE"  # the votes follow the documents that are left


def test_the_vote_reads_only_what_changed_when_communities_are_off(
        arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    """The vote has a mark of its own (``typed = false``): with communities disabled nothing clears
    the community marks, and the vote used to re-read every entity ever written on every ingest."""
    settings = settings_for(arcadedb, tmp_path / "data")
    settings = settings.model_copy(update={  # no merges either: the voted set is then exactly the written one
        "communities": settings.communities.model_copy(update={"enabled": False}),
        "resolution": settings.resolution.model_copy(update={"enabled": False})})
    with Platform(settings, embedder=embedder) as p:
        voted: list[list[str]] = []
        vote = p._store.label_votes

        def recording(ids: Sequence[str]) -> list[LabelVote]:  # the real read, its input noted
            voted.append(list(ids))
            return vote(ids)

        p._store.label_votes = recording  # type: ignore[method-assign]
        first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
        _write(first, ["river", "falls"])
        p.ingest([first])
        everyone = {r["id"] for r in p._store.read("MATCH (e:Entity) RETURN e.id AS id")}
        assert set(voted[-1]) == everyone and p._store.untyped_entities() == []
        assert _veloria(p) == "GPE"  # one GPE and one NORP vote: a tie goes alphabetically
        assert p._store.unclustered_entities()  # the community marks stay for a later community update
        _write(second, ["exports"])
        p.ingest([second])
        added = {r["id"] for r in p._store.read(
            "MATCH (:Document {id: $d})-[:HAS_CHUNK]->(:Chunk)-[:MENTIONS]->(e:Entity) RETURN DISTINCT e.id AS id",
            {"d": next(d.id for d in p.documents() if d.source.endswith("#exports"))})}
        assert set(voted[-1]) == added  # the new document's entities, not the first file's again
        assert len(added) < len(everyone) and p._store.untyped_entities() == []
        assert _veloria(p) == "NORP"  # re-voted: its mentions changed (GPE 1, NORP 2)


class Killed(Exception):
    """Stands for the process dying at that point."""


def _served_type(p: Platform) -> tuple[str, str]:
    """Veloria's type as the query path and the entity vector's payload see it."""
    snap = p.retriever.snapshot()
    i = next(i for i, n in enumerate(snap.entity_names) if n.lower() == "veloria")
    eid = snap.entity_ids[i]
    hit = p.vectors.search("entities", p.vectors.vectors("entities", [eid])[eid], limit=1)[0]
    return snap.entity_types[i], str(hit.payload["type"])


def test_a_run_killed_while_committing_new_types_is_completed_by_the_rerun(
        arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    """The new types are written with their change-log entry in one transaction (their vector
    payloads just before): a run that dies before that commit leaves the old types everywhere and
    the marks set, so the rerun votes again and the query path sees the types it commits."""
    settings = settings_for(arcadedb, tmp_path / "data")
    with Platform(settings, embedder=embedder) as p:
        first, rest = tmp_path / "first.jsonl", tmp_path / "rest.jsonl"
        _write(first, ["river"])
        p.ingest([first])
        assert _served_type(p) == ("GPE", "GPE")
        commit = p._store.commit

        def dies_on_types(*args: object, **kwargs: object) -> int:
            if kwargs.get("types"):
                raise Killed
            return commit(*args, **kwargs)  # type: ignore[arg-type]

        p._store.commit = dies_on_types  # type: ignore[method-assign]
        _write(rest, ["falls", "exports"])
        try:
            p.ingest([rest])
            raise AssertionError("the run should have died committing the types")
        except Killed:
            pass
        assert _veloria(p) == "GPE" and p._store.untyped_entities()  # nothing of the vote committed
        p._store.commit = commit  # type: ignore[method-assign]
        p.ingest([first, rest])  # the rerun: every document is unchanged, the vote is still pending
        assert _veloria(p) == "NORP" and p._store.untyped_entities() == []
        assert _served_type(p) == ("NORP", "NORP")
