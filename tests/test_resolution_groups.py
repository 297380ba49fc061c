"""Entity resolution never merges across an access-group boundary (``ingest.resolution.merge_groups``):
the rule as a pure function, a short name whose only other reading is in a hidden document, and the
aliases of stores from before the rule (migration ``0015_alias_groups``), on ArcadeDB."""

from __future__ import annotations

from pathlib import Path

import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.records import entity_id
from hopgraph.core.settings import Settings
from hopgraph.graphdb.bolt.store import BoltGraphStore
from hopgraph.graphdb.migrations import discover, packaged
from hopgraph.ingest.resolution import Merge, merge_groups, public_aliases
from hopgraph.vectors.embedders import SentenceTransformerEmbedder

ENTITIES = "MATCH (e:Entity) RETURN e.name AS name"
ALIASES = "MATCH (a:Alias) RETURN a.name AS name, a.groups AS groups ORDER BY name"


@pytest.mark.parametrize(("alias", "canonical", "shared"), [
    ({""}, {""}, ""),                      # public and public
    ({"hr"}, {"hr"}, "hr"),                # inside one group
    ({"eng,hr"}, {"eng,hr"}, "eng,hr"),    # documents read by hr or eng, on both sides
    ({""}, {"hr"}, None),                  # a public name and an hr one: the attack of issue 79
    ({"hr"}, {"eng,hr"}, None),            # eng reads the canonical's documents, not the alias's
    ({"", "hr"}, {"", "hr"}, None),        # equal sets: a public reader would see one side's hr name
    ({"hr"}, {"", "hr"}, None),
    (set(), {""}, None),                   # an entity without mentions: nothing to stand on
])
def test_a_merge_needs_one_group_list_for_every_document_of_both(alias: set[str], canonical: set[str],
                                                                 shared: str | None) -> None:
    assert merge_groups(alias, canonical) == shared
    assert merge_groups(canonical, alias) == shared


def test_later_ingests_apply_the_aliases_of_public_merges_alone() -> None:
    merges = [Merge("a", "Quillon", "b", "Quillon Marsh", 0.9, ""), Merge("c", "Vex", "d", "Abernathy-Vex", 0.9, "hr")]
    assert public_aliases(merges) == {"a": "b"}


def _bolt(p: Platform) -> BoltGraphStore:
    assert isinstance(p._store, BoltGraphStore)
    return p._store


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_hidden_longer_name_neither_takes_nor_blocks_a_public_short_one(
        settings: Settings, embedder: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    """"Cratchit" is contained in the public "Bob Cratchit" and the hr "Tim Cratchit": it joins the public
    one, as in a store of the public notes alone (the hr name neither takes it nor makes it ambiguous)."""
    public = _write(tmp_path, "goose.txt", "Bob Cratchit carried the goose home through the snow. "
                    "Cratchit laughed at the fire.")
    hidden = _write(tmp_path, "crutch.txt", "Tim Cratchit was given a new crutch by the payroll office.")
    with Platform(settings, embedder=embedder) as p:
        p.ingest([hidden], groups=["hr"])
        report = p.ingest([public])
        names = {r["name"] for r in _bolt(p).read(ENTITIES)}
        aliases = _bolt(p).read(ALIASES)
        applied = p._store.aliases()
    assert report.entities_merged == 1
    assert {"Bob Cratchit", "Tim Cratchit"} <= names and "Cratchit" not in names
    assert aliases == [{"name": "Cratchit", "groups": ""}]
    assert applied == {entity_id("Cratchit"): entity_id("Bob Cratchit")}


def test_aliases_from_before_the_rule_are_applied_only_where_no_document_has_groups(
        settings: Settings, embedder: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    public = _write(tmp_path, "goose.txt", "Bob Cratchit carried the goose home. Cratchit laughed at the fire.")
    hr_name = _write(tmp_path, "warning.txt", "Quillon Abernathy-Vex received a salary warning in Brimfield.")
    hr_alias = _write(tmp_path, "review.txt", "Dr. Quillon signed the salary review in Brimfield.")
    with Platform(settings, embedder=embedder) as p:
        p.ingest([public])
        p.ingest([hr_name, hr_alias], groups=["hr"])
        g = _bolt(p)
        assert g.read(ALIASES) == [{"name": "Cratchit", "groups": ""}, {"name": "Quillon", "groups": "hr"}]
        g._write(lambda tx: tx.run("MATCH (a:Alias) REMOVE a.groups").consume())  # as an older version wrote
        assert g.aliases() == {}  # an alias without groups is not applied before the migration
        for statement in next(m for m in discover(packaged()) if m.name == "alias_groups").statements:
            g._write(lambda tx, s=statement: tx.run(s).consume())  # type: ignore[misc]
        assert g.read(ALIASES) == [{"name": "Cratchit", "groups": ""}, {"name": "Quillon", "groups": "?"}]
        assert g.aliases() == {entity_id("Cratchit"): entity_id("Bob Cratchit")}
