"""The in-memory graph store's communities, RAPTOR tree, sections and chat contexts (``CommunityStore``,
``IncrementalCommunities``, ``TreeStore``, ``SectionStore``, ``ChatDateStore``, ``VectorGroupStore``), mixed into
``MemoryGraphStore``.

Each method follows the Bolt adapter's statements: edges to deleted nodes vanish with them (a
community's parent, a summary's or a section's chunks), links are only made between nodes that exist,
and marks (``clustered``, ``stale_summary``, ``embedded``) are set and cleared where the Cypher does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hopgraph.core.access import groups_of
from hopgraph.core.records import ChatContext, Chunk, Community, Entity, Relation, Section, SummaryNode
from hopgraph.graphdb.community_protocol import ChainLink
from hopgraph.graphdb.records import RelationRef
from hopgraph.graphdb.tree_protocol import TreeBranch


class MemoryCommunities:
    """Communities with PARENT links and IN_COMMUNITY memberships."""

    entities: dict[str, Entity]
    relations: dict[str, Relation]
    stored_communities: dict[str, Community]
    members: set[tuple[str, str]]          # (entity id, community id)
    unclustered: set[str]
    untyped: set[str]
    stale_communities: set[str]
    graph_version: int
    communities_version: int | None
    commit: Callable[..., int]             # MemoryGraphStore's

    def upsert_communities(self, communities: Sequence[Community]) -> None:
        for c in communities:
            old = self.stored_communities.get(c.id)
            parent = c.parent_id or (old.parent_id if old else None)  # MERGE adds a link, never drops one
            self.stored_communities[c.id] = c.model_copy(update={"member_ids": [], "parent_id": parent})
            self.stale_communities.discard(c.id)
        for c in communities:  # parents and members link to nodes that exist once all are written
            if c.parent_id and c.parent_id not in self.stored_communities:
                self.stored_communities[c.id] = self.stored_communities[c.id].model_copy(update={"parent_id": None})
            self.members.update((e, c.id) for e in c.member_ids if e in self.entities)

    def community_ids(self) -> dict[str, int]:
        return {i: c.level for i, c in self.stored_communities.items()}

    def level0_membership(self) -> dict[str, str]:
        return {e: c for (e, c) in sorted(self.members) if self.stored_communities[c].level == 0}

    def delete_communities(self, ids: Sequence[str]) -> None:
        dead = set(ids)
        self.stored_communities = {i: (c.model_copy(update={"parent_id": None}) if c.parent_id in dead else c)
                                   for i, c in self.stored_communities.items() if i not in dead}
        self.members = {(e, c) for (e, c) in self.members if c not in dead}

    def relation_descriptions(self, refs: Sequence[RelationRef]) -> dict[str, str]:
        return {r.id: self.relations[r.id].description for r in refs if r.id in self.relations}

    def stale_summaries(self) -> set[str]:
        return self.stale_communities & set(self.stored_communities)

    def clear_stale_summaries(self, ids: Sequence[str]) -> None:
        self.stale_communities -= set(ids)

    def communities_stale(self) -> bool:
        return self.communities_version != self.graph_version

    def mark_communities_built(self, regrouped: Sequence[str] | None = None) -> None:
        self.commit(communities=True, regrouped=regrouped)

    # -- incremental maintenance ---------------------------------------------------------------
    def unclustered_entities(self) -> list[str]:
        return sorted(self.unclustered & set(self.entities))

    def mark_clustered(self, ids: Sequence[str] | None = None) -> None:
        self.unclustered -= set(self.entities if ids is None else ids)

    def mark_unclustered(self, ids: Sequence[str]) -> None:
        live = {i for i in ids if i in self.entities}
        self.unclustered |= live
        self.untyped |= live

    def _has_children(self, cid: str) -> bool:
        return any(c.parent_id == cid for c in self.stored_communities.values())

    def community_chains(self, entity_ids: Sequence[str]) -> list[ChainLink]:
        stored = self.stored_communities
        return [ChainLink(e, c, stored[c].level, stored[c].parent_id, self._has_children(c))
                for e in dict.fromkeys(entity_ids) for (x, c) in sorted(self.members) if x == e]

    def community_members(self, community_ids: Sequence[str]) -> dict[str, list[str]]:
        wanted = set(community_ids)
        out: dict[str, list[str]] = {}
        for e, c in sorted(self.members):
            if c in wanted:
                out.setdefault(c, []).append(e)
        return out

    def community_texts(self, community_ids: Sequence[str]) -> list[Community]:
        return [self.stored_communities[i] for i in dict.fromkeys(community_ids) if i in self.stored_communities]

    def edit_memberships(self, add: Sequence[tuple[str, str]], remove: Sequence[tuple[str, str]]) -> None:
        self.members -= set(remove)
        self.members |= {(e, c) for e, c in add if e in self.entities and c in self.stored_communities}

    def refresh_communities(self, ids: Sequence[str]) -> None:
        for cid in dict.fromkeys(ids):
            if cid not in self.stored_communities:
                continue
            size = sum(1 for (_, c) in self.members if c == cid)
            if size == 0 and not self._has_children(cid):
                self.delete_communities([cid])
            else:
                self.stored_communities[cid] = self.stored_communities[cid].model_copy(update={"size": size})


class MemoryTree:
    """Summaries linked by SUMMARIZES edges to the chunks and summaries below them."""

    chunks: dict[str, Chunk]
    summaries: dict[str, SummaryNode]

    def tree_branches(self) -> list[TreeBranch]:
        return [TreeBranch(s.branch, tuple(s.leaves), tuple(float(x) for x in s.centroid))
                for s in self.summaries.values() if s.root]

    def chunk_ids(self) -> list[str]:
        return list(self.chunks)

    def chunk_texts(self, ids: Sequence[str]) -> dict[str, str]:
        return {i: self.chunks[i].text for i in ids if i in self.chunks}

    def drop_branches(self, ids: Sequence[str]) -> None:
        dead = set(ids)
        self.summaries = {k: s for k, s in self.summaries.items() if s.branch not in dead}

    def write_branch(self, nodes: Sequence[SummaryNode]) -> None:
        for group in ([n for n in nodes if not n.root], [n for n in nodes if n.root]):  # the root last
            for n in group:
                old = self.summaries.get(n.id)
                kept = {"leaves": old.leaves, "centroid": old.centroid} if old and not n.root else {}
                linked = [c for c in n.children if c in (self.chunks if n.level == 1 else self.summaries)]
                children = list(dict.fromkeys([*(old.children if old else []), *linked]))  # MERGE adds edges
                self.summaries[n.id] = n.model_copy(update={"children": children, **kept})

    def summary_nodes(self, ids: Sequence[str]) -> list[SummaryNode]:
        out = []
        for i in dict.fromkeys(ids):
            if (s := self.summaries.get(i)) is not None:
                alive = [c for c in s.children if c in self.chunks or c in self.summaries]
                out.append(s.model_copy(update={"children": sorted(alive), "leaves": [], "centroid": []}))
        return out


class MemorySections:
    """Sections of documents, with HAS_CHUNK links to their chunks."""

    docs: Mapping[str, object]
    chunks: dict[str, Chunk]
    sections: dict[str, Section]
    unembedded: set[str]   # sections a migration gave to older documents
    uncaptioned: set[str]  # image documents a migration marked

    def replace_sections(self, document_ids: Sequence[str], sections: Sequence[Section]) -> None:
        gone = {d for d in document_ids if d in self.docs}
        self.sections = {k: s for k, s in self.sections.items() if s.document_id not in gone}
        for s in sections:
            if s.document_id in self.docs:
                linked = [c for c in s.chunk_ids if c in self.chunks]
                self.sections[s.id] = s.model_copy(update={"chunk_ids": linked})
                self.unembedded.discard(s.id)

    def _read(self, s: Section) -> Section:
        alive = sorted((c for c in s.chunk_ids if c in self.chunks), key=lambda c: self.chunks[c].ord)
        return s.model_copy(update={"chunk_ids": alive})

    def sections_of(self, document_ids: Sequence[str]) -> list[Section]:
        wanted = {d for d in document_ids if d in self.docs}
        return sorted((self._read(s) for s in self.sections.values() if s.document_id in wanted),
                      key=lambda s: (s.document_id, s.ord))

    def unembedded_sections(self, limit: int = 1000) -> list[Section]:
        return [self._read(s) for k, s in self.sections.items() if k in self.unembedded][:limit]

    def mark_sections_embedded(self, ids: Sequence[str]) -> None:
        self.unembedded -= set(ids)

    def uncaptioned_images(self, limit: int = 500) -> dict[str, str]:
        todo = [d for d in self.docs if d in self.uncaptioned][:limit]
        return {d: "\n".join(c.text for c in sorted(self.chunks.values(), key=lambda c: c.ord)
                             if c.document_id == d and c.text) for d in todo}

    def mark_captions_embedded(self, ids: Sequence[str]) -> None:
        self.uncaptioned -= set(ids)

    def chunk_sections(self) -> dict[str, int]:
        return {c: s.ord for s in self.sections.values() for c in s.chunk_ids if c in self.chunks}


class MemoryChats:
    """Chat contexts of conversation chunks, re-dated where a migration marked their documents."""

    docs: Mapping[str, object]
    chunks: dict[str, Chunk]
    undated: set[str]  # documents a migration marked for re-dating

    def undated_chats(self, limit: int = 200) -> dict[str, list[tuple[str, str, str]]]:
        todo = [d for d in self.docs if d in self.undated][:limit]
        return {d: [(c.id, c.text, c.chat_json())
                    for c in self.chunks.values() if c.document_id == d] for d in todo}

    def write_chat_contexts(self, chats: Mapping[str, str]) -> None:
        for cid, chat in chats.items():
            if cid in self.chunks:
                self.chunks[cid] = self.chunks[cid].model_copy(update={"chat": ChatContext.model_validate_json(chat)})

    def mark_chats_dated(self, ids: Sequence[str]) -> None:
        self.undated -= set(ids)


class MemoryAccessMarks:
    """Documents a migration marked for their vectors' access groups (``VectorGroupStore``)."""

    docs: Mapping[str, Any]
    untagged: set[str]  # documents whose vectors a migration marked

    def untagged_documents(self, limit: int = 1000) -> dict[str, list[str]]:
        return {d: groups_of(self.docs[d].document.metadata) for d in sorted(self.untagged)[:limit]}

    def mark_tagged(self, ids: Sequence[str]) -> None:
        self.untagged -= set(ids)
