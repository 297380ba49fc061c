"""The domain decisions behind graph edits, as pure functions over what the store reports:
what removing chunks deletes, and how folding an alias entity into its canonical one rewires
mentions and relations. The store adapter only runs the statements."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from hopgraph.core.records import Mention, Relation, combine_mentions, relation_id
from hopgraph.graphdb.records import RemovalFacts, RemovalPlan


def plan_removal(facts: RemovalFacts, keep_entities: Collection[str] = (),
                 keep_relations: Collection[str] = ()) -> RemovalPlan:
    """Delete the stale chunks, the entities only they mention and the relations only they support,
    except entities and relations that a new version of the documents writes again."""
    return RemovalPlan(
        chunk_ids=list(facts.chunk_ids),
        entity_ids=sorted(e for e in facts.orphaned_entity_ids if e not in keep_entities),
        touched_entity_ids=list(facts.touched_entity_ids),
        relations=[facts.unsupported[k] for k in sorted(facts.unsupported) if k not in keep_relations],
        community_ids=sorted(facts.community_ids))


@dataclass(frozen=True)
class MergeEdits:
    """The edits of a batch of merges: mentions to add, relations to write and relation ids that go."""

    mentions: list[Mention]
    relations: list[Relation]
    removed_relation_ids: list[str]


def merge_edits(target: Mapping[str, str], mentions: Sequence[Mention], relations: Sequence[Relation]
                ) -> MergeEdits:
    """``target``: alias entity id -> canonical id. Mentions of the aliases move to their canonical
    entities (counts add up); relations are re-pointed (their ids derive from the endpoints, so they
    change); a relation between two names of the same entity disappears."""
    moved: list[Relation] = []
    for r in relations:
        src, dst = target.get(r.source_id, r.source_id), target.get(r.target_id, r.target_id)
        if src != dst:
            moved.append(r.model_copy(update={"id": relation_id(src, r.type, dst), "source_id": src,
                                              "target_id": dst}))
    added = combine_mentions(m.model_copy(update={"entity_id": target[m.entity_id]}) for m in mentions)
    return MergeEdits(added, moved, sorted({r.id for r in relations}))


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def sentence_with(text: str, names: Sequence[str]) -> str:
    """The first sentence of ``text`` naming all of ``names`` (else any of them; else the first),
    cut at 240 characters: how an extracted description looks."""
    sentences = [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]
    wanted = [n.casefold() for n in names if n]
    for test in (all, any):
        for s in sentences:
            if wanted and test(n in s.casefold() for n in wanted):
                return s[:240]
    return (sentences[0] if sentences else "")[:240]


def refreshed_description(description: str, names: Sequence[str], texts: Sequence[str]) -> str | None:
    """A description to write instead of ``description`` when it no longer appears in any text that
    still supports the item (it quoted a removed chunk), or None to keep it."""
    flat = [" ".join(t.split()) for t in texts]
    if description and any(" ".join(description.split()) in t for t in flat):
        return None
    fresh = next((s for s in (sentence_with(t, names) for t in flat) if s), "")
    return fresh if fresh != description else None
