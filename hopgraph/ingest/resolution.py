"""Entity resolution: merge name variants ("Scrooge" → "Ebenezer Scrooge") after an ingest.

Exact variants already share an id (names are normalized: case, punctuation, articles,
possessives, lemmas for concepts). Near-duplicates are found by blocking with approximate nearest
neighbours over the entity vectors (never all pairs) and accepted only when

- the types are compatible (same group; an ORG/NORP-tagged single name may join a PERSON),
- the strings agree: every token of the shorter name is a token of the longer one, which must name
  a person ("Scrooge" is Ebenezer Scrooge, but "France" is not Southern France, nor "London" west
  London, nor "American" British-American), or the two are near-identical spellings (any type),
  and the embeddings are close, or the shorter is the longer written as a chat handle ("LiHua",
  "🌟 HaileyJohnson" is Li Hua, Hailey Johnson: any type of handle joins a person), and
- the two never cross an access-group boundary: every document that mentions either entity has the same
  access groups (``merge_groups``), so a reader reads all the documents of a merge or none, and a
  name never reaches a reader through a merge with a document it may not read, and
- the shorter name is not ambiguous: if it is contained in two different longer names among its
  neighbours whose documents have its groups ("Cratchit" in "Bob Cratchit" and "Tim Cratchit"), it
  is left alone.

The longer name is canonical. Every merge is recorded as an ``(:Alias)`` with its documents' groups;
a later ingest maps the same surface form straight to its entity by the aliases of public merges
(the graph store's ``aliases``: the entity a public merge made has a public name, whatever document
then names it so).
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from hopgraph.core.records import CO_OCCURS, CONCEPT, GRAPH_NODE, Entity
from hopgraph.core.settings import ExtractionSettings, ResolutionSettings
from hopgraph.core.text import handle_words, is_handle, normalize_name
from hopgraph.graphdb.protocols import EntityEditor
from hopgraph.ingest.graph_edits import merge_edits
from hopgraph.ingest.relation_vectors import relation_vectors
from hopgraph.ingest.texts import relation_point
from hopgraph.vectors.embedders import Embedder
from hopgraph.vectors.store import Hit, VectorStore

log = logging.getLogger(__name__)

_GROUPS = {"PERSON": "person", "ORG": "org", "FAC": "org", "GPE": "place", "LOC": "place"}


@dataclass(frozen=True)
class Merge:
    """``alias`` becomes part of ``canonical``."""

    alias_id: str
    alias_name: str
    canonical_id: str
    canonical_name: str
    score: float
    groups: str = ""  # the access groups of every document of both (joined by core.access.SEP; "" public)


def _tokens(name: str) -> list[str]:
    """Distinct tokens in order ("Scrooge Scrooge", an NER artefact, is "scrooge")."""
    return list(dict.fromkeys(normalize_name(name).replace("-", " ").split()))


def compatible_types(short: str, long: str) -> bool:
    if GRAPH_NODE in (short, long):  # a graph document's nodes belong to it alone
        return False
    if CONCEPT in (short, long):
        return short == long
    if _GROUPS.get(short, short) == _GROUPS.get(long, long):
        return True
    return long == "PERSON" and short in ("ORG", "NORP", "PRODUCT", "WORK_OF_ART")


def accepts(kind: str, short: str, long: str) -> bool:
    """Whether a name relation ``kind`` between an entity of type ``short`` (the alias side) and one
    of type ``long`` may merge them: compatible types, and a contained name only inside a person's; a
    handle of a person's name whatever its type (the recognizer reads "YurikoYamamoto" as anything)."""
    if kind == "handle" and long == "PERSON" and short != GRAPH_NODE:
        return True
    return compatible_types(short, long) and (kind != "contained" or long == "PERSON")


def name_relation(a: str, b: str) -> str | None:
    """'handle' if one name is the other written as a CamelCase handle ("LiHua", "Li Hua"),
    'contained' if the tokens of the shorter name are a subset of the longer's (in order of
    appearance not required), 'fuzzy' if the spellings are near-identical, else None."""
    ta, tb = _tokens(a), _tokens(b)
    if ta != tb and (is_handle(a) or is_handle(b)) and _tokens(handle_words(a)) == _tokens(handle_words(b)):
        return "handle"
    if not ta or not tb or ta == tb:
        return None
    short, long = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    if len(short) < len(long) and set(short) <= set(long) and all(len(t) > 1 for t in short):
        return "contained"
    if difflib.SequenceMatcher(None, " ".join(ta), " ".join(tb)).ratio() >= 0.92 and len(" ".join(short)) >= 5:
        return "fuzzy"
    return None


def merge_groups(alias: Collection[str], canonical: Collection[str]) -> str | None:
    """The access groups that every document mentioning either of two entities has, or None when their
    documents' groups differ (then the two must not merge). Each entity is given as the distinct group
    lists of its documents (joined by ``core.access.SEP``, "" public). One shared list is required, not
    equal sets: with {public, hr} on both sides a reader without hr would read some documents of each and
    could be shown the other side's name from an hr one."""
    if len(set(alias)) != 1 or set(alias) != set(canonical):
        return None
    return next(iter(alias))


def public_aliases(merges: Sequence[Merge]) -> dict[str, str]:
    """Alias id -> canonical id of the ``merges`` that a later ingest may apply to any document: those
    of public documents (a group's merge is made again by resolution, inside the group)."""
    return {m.alias_id: m.canonical_id for m in merges if not m.groups}


class EntityResolver:
    """Finds and applies merges among recently written entities."""

    def __init__(self, graph: EntityEditor, vectors: VectorStore, embedder: Embedder,
                 cfg: ResolutionSettings, extraction: ExtractionSettings) -> None:
        self.extraction = extraction
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.cfg = cfg

    def find(self, entities: Sequence[Entity]) -> list[Merge]:
        """Merges for the given entities (candidates are their ANN neighbours in the whole store whose
        documents have the same access groups as theirs)."""
        probes = [e for e in entities
                  if e.type != GRAPH_NODE and (e.type != CONCEPT or self.cfg.concepts or is_handle(e.name))]
        probes = [e for e in probes if len(_tokens(e.name)) <= self.cfg.max_alias_tokens]
        if not probes:
            return []
        probes = sorted(probes, key=lambda e: e.id)
        hits = self.vectors.search_many("entities", self._name_vectors(probes), self.cfg.neighbours + 5)
        found = {e.id: self._containing(e, h) for e, h in zip(probes, hits, strict=True)}
        found = {k: v for k, v in found.items() if v}
        groups = self.graph.mention_groups(sorted({*found, *(c[0] for v in found.values() for c in v)}))
        merges: dict[str, Merge] = {}
        for e in probes:
            containing = [(*c, shared) for c in found.get(e.id, [])
                          if (shared := merge_groups(groups.get(e.id, ()), groups.get(c[0], ()))) is not None]
            if not containing:
                continue
            distinct = {normalize_name(c[1]) for c in containing}
            if len(distinct) > 1 and not all(name_relation(a, b) for a in distinct for b in distinct if a < b):
                log.debug("not merging ambiguous %r: %s", e.name, sorted(distinct))
                continue
            best = max(containing, key=lambda c: (len(_tokens(c[1])), round(c[2], 5), c[0]))
            merges[e.id] = Merge(e.id, e.name, best[0], best[1], best[2], best[3])
        # an alias's canonical may itself be an alias: follow the chain, never merge in a cycle (every
        # link has the same groups: each joins two entities whose documents all have them)
        out: list[Merge] = []
        for m in merges.values():
            target, seen = m.canonical_id, {m.alias_id}
            while target in merges and target not in seen:
                seen.add(target)
                target = merges[target].canonical_id
            if target not in seen:
                out.append(Merge(m.alias_id, m.alias_name, target, m.canonical_name, m.score, m.groups))
        return sorted(out, key=lambda m: m.alias_id)

    def _containing(self, e: Entity, found: Sequence[Hit]) -> list[tuple[str, str, float]]:
        """The neighbours ``found`` for ``e`` that name it more fully (or spell it alike) closely
        enough, with compatible types: (id, name, score), before access groups and ambiguity."""
        # deterministic whatever the segment layout: ties by id, then the first `neighbours`
        neigh = sorted(found, key=lambda h: (-round(h.score, 5), h.id))[: self.cfg.neighbours]
        out: list[tuple[str, str, float]] = []
        for h in neigh:
            other_name, other_type = str(h.payload.get("name", "")), str(h.payload.get("type", ""))
            if h.id == e.id or not other_name:
                continue
            kind = name_relation(e.name, other_name)
            if kind is None or len(_tokens(other_name)) < len(_tokens(e.name)):
                continue  # the probe must be the shorter (alias) side
            if kind == "fuzzy" and len(_tokens(other_name)) == len(_tokens(e.name)) and other_name < e.name:
                continue  # equal-length spellings: the lexicographically first is canonical
            threshold = self.cfg.fuzzy_similarity if kind == "fuzzy" else self.cfg.contained_similarity
            if h.score >= threshold and accepts(kind, e.type, other_type):
                out.append((h.id, other_name, h.score))
        return out

    def _name_vectors(self, entities: Sequence[Entity]) -> np.ndarray:
        """The entities' stored vectors (written by the ingest that created them); names without one
        are embedded."""
        stored = self.vectors.vectors("entities", [e.id for e in entities])
        missing = [e for e in entities if e.id not in stored]
        if missing:
            stored.update(zip((e.id for e in missing), self.embedder.embed([e.name for e in missing]), strict=True))
        return np.stack([stored[e.id] for e in entities]) if entities else np.zeros((0, self.embedder.dim))

    def apply(self, merges: Sequence[Merge]) -> None:
        """Rewire the graph in a few batched statements and keep entity and relationship vectors in step."""
        if not merges:
            return
        ids = sorted({m.alias_id for m in merges})
        edits = merge_edits({m.alias_id: m.canonical_id for m in merges}, self.graph.mentions_of_entities(ids),
                            self.graph.relations_of_entities(ids))
        self.graph.add_mentions(edits.mentions)
        self.graph.upsert_relations(edits.relations)
        self.graph.delete_entities(ids)
        self.graph.record_aliases([(m.alias_id, m.alias_name, m.canonical_id) for m in merges],
                                  {m.alias_id: m.groups for m in merges})
        # the canonical entities and the neighbours of the aliases have new edges: their communities move
        self.graph.mark_unclustered(sorted({*(m.canonical_id for m in merges),
                                            *(e for r in edits.relations for e in (r.source_id, r.target_id))}))
        self.graph.commit(entities=sorted({*ids, *(m.canonical_id for m in merges)}))
        self.vectors.delete("entities", ids)
        self.vectors.delete("relationships", edits.removed_relation_ids)
        keep = [r for r in edits.relations if r.type != CO_OCCURS]
        if keep:  # re-pointed relations are embedded again, named by both of their (current) ends
            names = {m.canonical_id: m.canonical_name for m in merges}
            names.update((i, name) for i, name, _ in self.graph.snapshot_entities(
                sorted({e for r in keep for e in (r.source_id, r.target_id)})))
            vecs = relation_vectors(keep, self.embedder, self.extraction, names, self.vectors.vectors)
            self.vectors.upsert("relationships", [relation_point(r, v) for r, v in zip(keep, vecs, strict=True)])
        for m in merges:
            log.debug("merged entity %r into %r (similarity %.2f)", m.alias_name, m.canonical_name, m.score)
        log.info("entity resolution: %d merge(s)", len(merges))
