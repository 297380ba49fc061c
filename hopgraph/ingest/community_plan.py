"""Where an incremental community update re-clusters, and how its result fits the hierarchy.

Pure functions over what the store reports. The entities whose neighbourhood changed ("dirty")
dissolve the leaf communities they belong to; the **region** is every member of those leaves plus
the dirty entities themselves (a new entity, or one hanging loose in an internal community because
its own cluster was too small to keep). The region is re-clustered on its own edges, and each new
cluster becomes a leaf under the parent most of its members hung under before (its *slot*), so
every community outside the region keeps its id and members, and ancestors only gain or lose the
region's entities.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hopgraph.core.records import Community, stable_id
from hopgraph.graphdb.community_protocol import ChainLink


@dataclass
class CommunityReport:
    """What a (re)computation did."""

    communities: int = 0
    levels: int = 0
    written: int = 0
    deleted: int = 0
    unchanged: int = 0
    seconds: float = 0.0
    regrouped: list[str] | None = None  # the only entities whose memberships changed (None: any)


def community_id(level: int, members: Sequence[str]) -> str:
    """Content-derived: the same members at the same level give the same id."""
    return stable_id("com", str(level), *sorted(members))


@dataclass
class Hierarchy:
    """The part of the community tree the dirty entities' chains reach."""

    level: dict[str, int] = field(default_factory=dict)
    parent: dict[str, str | None] = field(default_factory=dict)
    has_children: dict[str, bool] = field(default_factory=dict)

    def chain(self, community: str | None) -> set[str]:
        """The community and all its ancestors (empty for None)."""
        out: set[str] = set()
        while community is not None and community not in out:
            out.add(community)
            community = self.parent.get(community)
        return out


@dataclass
class Region:
    """What an incremental update re-clusters."""

    entities: list[str]
    slot: dict[str, str | None]       # the community an entity hangs under once its leaf is dissolved
    start: dict[str, str]             # the dissolved leaf (or the entity itself) it starts Leiden from
    old_chain: dict[str, set[str]]    # the communities it belongs to now
    leaves: set[str]                  # the leaves dissolved
    tree: Hierarchy


def hierarchy(links: Sequence[ChainLink]) -> Hierarchy:
    tree = Hierarchy()
    for link in links:
        tree.level[link.community_id] = link.level
        tree.parent[link.community_id] = link.parent_id
        tree.has_children[link.community_id] = link.has_children
    return tree


def leaves_of(dirty: Sequence[str], links: Sequence[ChainLink]) -> set[str]:
    """The leaf communities (no children) that are the deepest community of a dirty entity."""
    deepest: dict[str, ChainLink] = {}
    for link in links:
        d = deepest.get(link.entity_id)
        if d is None or link.level > d.level:
            deepest[link.entity_id] = link
    return {d.community_id for e, d in deepest.items() if e in set(dirty) and not d.has_children}


def region_of(dirty: Sequence[str], links: Sequence[ChainLink], members: Mapping[str, Sequence[str]]) -> Region:
    """``links``: the chains of the dirty entities; ``members``: the members of ``leaves_of`` them."""
    tree = hierarchy(links)
    leaves = leaves_of(dirty, links)
    slot: dict[str, str | None] = {}
    start: dict[str, str] = {}
    old_chain: dict[str, set[str]] = {}
    for leaf in sorted(leaves):
        for m in members.get(leaf, ()):
            slot[m] = tree.parent.get(leaf)
            start[m] = leaf
            old_chain[m] = tree.chain(leaf)
    chains: dict[str, set[str]] = defaultdict(set)
    for link in links:
        chains[link.entity_id].add(link.community_id)
    for e in dirty:
        if e in slot:
            continue
        mine = chains.get(e, set())
        deepest = max(mine, key=lambda c: (tree.level[c], c)) if mine else None
        slot[e] = deepest  # a loose member of an internal community, or (None) in no community yet
        start[e] = e
        old_chain[e] = set(mine)
    return Region(sorted(slot), slot, start, old_chain, leaves, tree)


@dataclass
class Placement:
    """The edits an incremental update makes."""

    new: list[Community]                # leaves to write (members, level, parent)
    kept: set[str]                      # dissolved leaves that came back with the same members
    deleted: list[str]                  # dissolved leaves that did not come back
    add: list[tuple[str, str]]          # (entity, community) memberships of existing communities
    remove: list[tuple[str, str]]
    ancestors: set[str]                 # existing communities that gained or lost members

    @property
    def changed(self) -> set[str]:
        return {e for e, _ in self.add} | {e for e, _ in self.remove}


def place(region: Region, clusters: Sequence[Sequence[str]], min_size: int) -> Placement:
    """Fit the region's new clusters (a partition of some of its entities) into the hierarchy."""
    tree = region.tree
    new_chain: dict[str, set[str]] = {e: tree.chain(region.slot[e]) for e in region.entities}
    new: list[Community] = []
    for cluster in clusters:
        found = sorted(set(cluster))
        if len(found) < min_size:
            continue  # too small to keep: its entities hang loose under their slots
        votes = Counter(region.slot[m] for m in found if region.slot.get(m) is not None)
        parent = min(votes, key=lambda c: (-votes[c], str(c))) if votes else None
        level = tree.level[parent] + 1 if parent is not None else 0
        c = Community(id=community_id(level, found), level=level, size=len(found), parent_id=parent,
                      member_ids=found)
        new.append(c)
        for m in found:
            new_chain[m] = {c.id} | tree.chain(parent)
    # a dissolved leaf that came back with the same members, level and parent is left as it is (a new
    # parent makes it a delete and a write: its PARENT edge moves)
    kept = {c.id for c in new if c.id in region.leaves and c.parent_id == tree.parent.get(c.id)}
    written = {c.id for c in new} - kept
    add: list[tuple[str, str]] = []
    remove: list[tuple[str, str]] = []
    for e in region.entities:
        before, after = region.old_chain[e], new_chain[e]
        add += [(e, c) for c in sorted(after - before) if c not in written]
        remove += [(e, c) for c in sorted(before - after) if c not in region.leaves]
    ancestors = {c for _, c in add} | {c for _, c in remove}
    return Placement([c for c in new if c.id in written], kept, sorted(region.leaves - kept), add, remove,
                     ancestors - written - region.leaves)
