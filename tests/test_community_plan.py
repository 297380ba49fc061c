"""Where an incremental community update re-clusters and how the new leaves fit the hierarchy (pure logic)."""

from __future__ import annotations

from hopgraph.graphdb.community_protocol import ChainLink
from hopgraph.ingest.community_plan import community_id, leaves_of, place, region_of

# root R (level 0) has leaves A = {a1, a2, a3} and B = {b1, b2}; x hangs loose in R (its own
# cluster was too small to keep); S (level 0) is a leaf of its own: {s1, s2}
TREE = {"R": (0, None, True), "A": (1, "R", False), "B": (1, "R", False), "S": (0, None, False)}
MEMBERS = {"A": ["a1", "a2", "a3"], "B": ["b1", "b2"], "S": ["s1", "s2"]}


def chains(*entities: str) -> list[ChainLink]:
    where = {"a": "A", "b": "B", "s": "S"}
    out = []
    for e in entities:
        leaf = where.get(e[0])
        path = [leaf, TREE[leaf][1]] if leaf else ["R"] if e == "x" else []
        out += [ChainLink(e, c, TREE[c][0], TREE[c][1], TREE[c][2]) for c in path if c]
    return out


def test_the_region_is_the_dissolved_leaves_and_the_loose_or_new_dirty_entities() -> None:
    links = chains("a1", "x", "new")
    assert leaves_of(["a1", "x", "new"], links) == {"A"}  # R has children: x is loose in it
    region = region_of(["a1", "x", "new"], links, {"A": MEMBERS["A"]})
    assert region.entities == ["a1", "a2", "a3", "new", "x"]
    assert region.slot == {"a1": "R", "a2": "R", "a3": "R", "x": "R", "new": None}
    assert region.old_chain["a2"] == {"A", "R"} and region.old_chain["x"] == {"R"} and region.old_chain["new"] == set()
    assert region.start["a3"] == "A" and region.start["new"] == "new"


def test_new_leaves_hang_under_the_parent_most_members_had_and_ancestors_get_membership_edits() -> None:
    links = chains("a1", "x", "new")
    region = region_of(["a1", "x", "new"], links, {"A": MEMBERS["A"]})
    plan = place(region, [["a1", "a2", "new"], ["a3", "x"]], min_size=2)
    first, second = sorted(plan.new, key=lambda c: c.member_ids)
    assert first.member_ids == ["a1", "a2", "new"] and first.parent_id == "R" and first.level == 1
    assert first.id == community_id(1, ["a1", "a2", "new"])
    assert second.member_ids == ["a3", "x"] and second.parent_id == "R"
    assert plan.deleted == ["A"] and plan.kept == set()
    assert plan.add == [("new", "R")]  # the new entity joins the root through its leaf
    assert plan.remove == []  # members of A leave A by its deletion
    assert plan.ancestors == {"R"}


def test_a_leaf_that_comes_back_unchanged_is_kept_and_a_too_small_cluster_leaves_entities_loose() -> None:
    b = community_id(1, ["b1", "b2"])  # a stored id is the hash of its members, as a fresh build writes it
    links = [ChainLink("b1", b, 1, "R", False), ChainLink("b1", "R", 0, None, True),
             ChainLink("s1", "S", 0, None, False)]
    region = region_of(["b1", "s1"], links, {b: ["b1", "b2"], "S": MEMBERS["S"]})
    plan = place(region, [["b1", "b2"], ["s1"], ["s2"]], min_size=2)
    assert plan.kept == {b} and plan.new == []
    assert plan.deleted == ["S"]  # s1 and s2 are now apart and too small: S dissolves
    assert plan.add == [] and plan.remove == []  # S was a root: nothing above it to edit
    moved = place(region, [["b1", "b2", "s1"]], min_size=2)  # a larger cluster is a new leaf: B and S go
    assert b not in moved.kept and sorted(moved.deleted) == sorted([b, "S"])


def test_entities_that_move_between_roots_leave_the_old_root() -> None:
    links = chains("a1", "s1")
    region = region_of(["a1", "s1"], links, {"A": MEMBERS["A"], "S": MEMBERS["S"]})
    plan = place(region, [["a1", "a2", "a3", "s1"], ["s2"]], min_size=2)
    (leaf,) = plan.new
    assert leaf.parent_id == "R" and leaf.level == 1  # three votes for R against one (S is a root: none)
    assert ("s1", "R") in plan.add and ("s2", "R") not in plan.add
    assert sorted(plan.deleted) == ["A", "S"]
    assert plan.ancestors == {"R"}


def test_a_cluster_of_new_entities_only_becomes_a_root() -> None:
    region = region_of(["n1", "n2"], [], {})
    plan = place(region, [["n1", "n2"]], min_size=2)
    (root,) = plan.new
    assert root.level == 0 and root.parent_id is None and plan.add == [] and plan.ancestors == set()
