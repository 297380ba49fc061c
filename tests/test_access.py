"""Document access groups on the in-memory stores: what a reader with groups finds, through every mode
that answers over its view, and what the view of an index state keeps."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from hopgraph import Platform
from hopgraph.app.collections import create_collection
from hopgraph.core.access import check_groups, groups_of, parse_groups, readable
from hopgraph.core.errors import BadInputError, ForbiddenError
from hopgraph.core.records import CO_OCCURS
from hopgraph.core.service_settings import ScheduledSource
from hopgraph.retrieval.index.view import hidden_chunks, readable_documents, view_of, visible_tables
from hopgraph.retrieval.registry import REGISTRY
from hopgraph.testing import memory_settings
from tests.hash_embedder import HashEmbedder

#: a public note, and one note per group; the group notes share an entity with the public one, so a walk
#: from the public note is tempted to cross into them
RECORDS = [
    {"id": "pub", "text": "Zorblax Quintana founded the Vexmoor Observatory in Kelderwick in 1890."},
    {"id": "hr", "groups": ["hr"], "text": "Zorblax Quintana kept the Brimstone Ledger in Kelderwick. "
     "The ledger opens with the phrase saffronhrcanary."},
    {"id": "eng", "metadata": {"groups": ["eng"]}, "text": "Zorblax Quintana built the Copperline Engine in "
     "Kelderwick. The engine starts with the word cobaltengcanary."},
]
CANARY = {"hr": "saffronhrcanary", "eng": "cobaltengcanary"}
QUESTIONS = ["What phrase opens the Brimstone Ledger of Zorblax Quintana?",
             "Which word starts the Copperline Engine in Kelderwick?", "What did Zorblax Quintana do in Kelderwick?"]


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    with Platform(memory_settings(tmp_path_factory.mktemp("access")), embedder=HashEmbedder()) as p:
        report = p.ingest_records(RECORDS)
        assert report.documents_ingested == 3
        yield p


def test_group_names_and_who_reads_what() -> None:
    assert check_groups(["hr", "eng", "hr"]) == ["eng", "hr"]
    for bad in (["HR"], ["a b"], [""], ["x" * 65], "hr", [3]):
        with pytest.raises(BadInputError):
            check_groups(bad)  # type: ignore[arg-type]
    assert parse_groups(" hr , finance,,hr ") == ["finance", "hr"] and parse_groups("  ") == []
    with pytest.raises(BadInputError, match="invalid access group 'Not Valid'"):
        parse_groups("hr, Not Valid")  # what the CLI's --groups and an upload's 'groups' field both read
    assert groups_of({"groups": ["hr", "Bad Name"]}) == ["hr"] and groups_of({"groups": "hr"}) == []
    assert readable("", frozenset()) and readable("eng,hr", frozenset({"hr"})) and readable("hr", None)
    assert not readable("eng,hr", frozenset({"ops"})) and not readable("hr", frozenset())


def _everything(p: Platform, reader: list[str] | None) -> str:
    """Every answer of every view mode to every question, with its explanation, as one text."""
    return " ".join(p.query(q, mode=m, explain=True, reader=reader).model_dump_json()
                    for m in REGISTRY.view_modes() for q in QUESTIONS)


@pytest.mark.parametrize(("held", "sees", "hidden"), [
    (None, {"hr", "eng"}, set()), (["hr"], {"hr"}, {"eng"}), (["eng", "ops"], {"eng"}, {"hr"}),
    ([], set(), {"hr", "eng"}), (["ops"], set(), {"hr", "eng"}),
])
def test_a_reader_finds_what_its_groups_read_and_nothing_else(platform: Platform, held: list[str] | None,
                                                              sees: set[str], hidden: set[str]) -> None:
    text = _everything(platform, held)
    assert "Vexmoor" in text  # the public note, for everyone
    for group in sees:
        assert CANARY[group] in text
    for group in hidden:
        assert CANARY[group] not in text
        assert {"hr": "Brimstone", "eng": "Copperline"}[group] not in text.replace(QUESTIONS[0], "").replace(
            QUESTIONS[1], "")  # not even an entity only the hidden note names


def test_modes_that_read_what_several_documents_built_are_refused_to_readers(platform: Platform) -> None:
    others = [m for m in REGISTRY.entries if m not in REGISTRY.view_modes() and m != "image"]
    assert {"local", "global", "mix", "raptor", "pcst"} <= set(others)
    for mode in others:
        for held in (["hr"], ["hr", "eng"]):  # refused whether or not something is hidden: it tells nothing
            with pytest.raises(ForbiddenError, match="with access groups, use graph"):
                platform.query(QUESTIONS[2], mode=mode, reader=held)
    assert platform.query(QUESTIONS[2], mode="local").results  # no reader: every mode


def test_the_view_keeps_the_readable_rows_and_what_only_they_support(platform: Platform) -> None:
    state = platform.retriever.state()
    t = state.tables
    hidden = hidden_chunks(t, frozenset({"hr"}))
    assert sorted(set(t.chunks["groups"][hidden].tolist())) == ["eng"]
    view = visible_tables(t, hidden)
    assert len(view.chunk_ids) == len(t.chunk_ids) - int(hidden.sum())
    assert "Copperline Engine" not in view.entity_names.tolist() and "Zorblax Quintana" in view.entity_names
    assert len(view.member_entity) == 0
    # each relation, typed or not, weighs its supporting chunks the reader may read; one with none is gone
    kept = set(view.chunk_ids.tolist())
    weights = {(e.source, e.target, e.type): sum(c in kept for c in e.chunk_ids)
               for e in platform._store.snapshot_edges()}
    assert weights and any(w == 0 for w in weights.values()) and any(t != CO_OCCURS for _, _, t in weights)
    names = view.edge_type_names[view.edge_type].tolist()
    got = {(view.entity_ids[s], view.entity_ids[d], n): w
           for s, d, n, w in zip(view.edge_source, view.edge_target, names, view.edge_weight.tolist(), strict=True)}
    assert got == {k: float(w) for k, w in weights.items() if w}
    assert np.array_equal(view.chunk_vectors, t.chunk_vectors[~hidden])
    assert view_of(state, None) is state and view_of(state, frozenset({"hr", "eng"})) is state
    assert view_of(state, frozenset({"hr"})) is view_of(state, frozenset({"hr"}))  # derived once
    docs = readable_documents(state, frozenset({"hr"}))
    assert len(docs) == 2 and set(docs) < set(t.chunks["document_id"].tolist())


def test_the_view_votes_types_and_spells_names_over_the_readable_mentions(platform: Platform) -> None:
    t = platform.retriever.state().tables
    e = t.entity_names.tolist().index("Zorblax Quintana")
    ours = np.flatnonzero(t.mention_entity == e)
    assert sorted(t.chunks["groups"][t.mention_chunk[ours]].tolist()) == ["", "eng", "hr"]
    # stored as if a hidden chunk wrote it first, and typed by the vote of all three mentions (ORG 2, PERSON 1)
    labels, counts, names, types = (t.mention_label.copy(), t.mention_count.copy(), t.entity_names.copy(),
                                    t.entity_types.copy())
    for row in ours.tolist():
        labels[row] = "PERSON" if t.chunks["groups"][t.mention_chunk[row]] == "" else "ORG"
        counts[row] = 1.0
    names[e], types[e] = "ZORBLAX quintana", "ORG"
    t = replace(t, mention_label=labels, mention_count=counts, entity_names=names, entity_types=types)
    public = visible_tables(t, hidden_chunks(t, frozenset({"ops"})))  # reads the public note alone
    at = public.entity_ids.tolist().index(t.entity_ids[e])
    assert public.entity_types[at] == "PERSON" and public.entity_names[at] == "Zorblax Quintana"
    assert public.entity_keys[at] == "zorblax quintana"
    hr = visible_tables(t, hidden_chunks(t, frozenset({"hr"})))  # PERSON 1, ORG 1: the tie goes to ORG
    assert hr.entity_types[hr.entity_ids.tolist().index(t.entity_ids[e])] == "ORG"
    kept = public.entity_names.tolist().index("Kelderwick")  # a name a readable chunk writes stays
    assert public.entity_types[kept] == t.entity_types[t.entity_names.tolist().index("Kelderwick")]


def test_new_groups_rewrite_a_document_and_files_take_the_groups_given(tmp_path: Path) -> None:
    with Platform(memory_settings(tmp_path / "data"), embedder=HashEmbedder()) as p:
        p.ingest_records(RECORDS[:2])
        assert CANARY["hr"] not in _everything(p, ["eng"])
        again = p.ingest_records([{**RECORDS[1], "groups": ["hr", "eng"]}])
        assert again.documents_ingested == 1  # the groups are part of the content
        assert CANARY["hr"] in _everything(p, ["eng"])
        assert p.ingest_records([{**RECORDS[1], "groups": ["hr", "eng"]}]).documents_unchanged == 1
        bad = p.ingest_records([{"id": "x", "text": "Something.", "groups": ["Not Valid"]}])
        assert "invalid access group" in next(iter(bad.skipped.values()))

        folder = tmp_path / "notes"
        folder.mkdir()
        (folder / "memo.txt").write_text("Quorlan Vesk approved the tangerineopscanary budget.", encoding="utf-8")
        (folder / "own.jsonl").write_text(json.dumps({"id": "j", "text": "Quorlan Vesk filed the "
                                                      "plumfinancecanary report.", "groups": ["finance"]}) + "\n",
                                          encoding="utf-8")
        p.ingest([folder], groups=["ops"])
        ops, finance = _everything(p, ["ops"]), _everything(p, ["finance"])
        assert "tangerineopscanary" in ops and "plumfinancecanary" not in ops  # the record keeps its own
        assert "plumfinancecanary" in finance and "tangerineopscanary" not in finance
        with pytest.raises(BadInputError, match="invalid access group"):
            p.ingest([folder], groups=["Not Valid"])


def test_a_scheduled_source_ingests_into_its_collection_with_its_groups(tmp_path: Path) -> None:
    settings = memory_settings(tmp_path / "data")
    create_collection(settings, "teama")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "memo.txt").write_text("Quorlan Vesk signed the indigohrcanary memo.", encoding="utf-8")
    source = ScheduledSource(name="memos", paths=[str(tmp_path / "src")], interval_s=60, collection="teama",
                             groups=["hr"])
    with pytest.raises(ValidationError, match="invalid access group"):
        ScheduledSource(name="x", paths=["."], interval_s=60, groups=["Not Valid"])
    with Platform(settings, embedder=HashEmbedder()) as default:
        with pytest.raises(BadInputError, match="goes to collection 'teama'"):
            default.reingest(source)
        with Platform(settings, embedder=HashEmbedder(), collection="teama") as team:
            assert team.reingest(source).status == "succeeded"
            assert "indigohrcanary" in _everything(team, ["hr"]) and "indigohrcanary" not in _everything(team, [])
        assert default.query("indigohrcanary memo", mode="bm25").results == []
