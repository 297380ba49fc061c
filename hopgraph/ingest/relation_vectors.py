"""Relationship vectors, made one of two ways (``extraction.relation_vectors``):

- ``text``: the embedding of "{source} {type} {target}: {sentence}" (``ingest.texts.relation_text``);
- ``composed``: no relation text is embedded. A relationship's vector is made of vectors the ingest
  already has or gets almost for free: the direction of the sum of its two entities' (their names)
  and its type's (a few thousand distinct types, each embedded once), plus, with the same weight, its
  stating chunk's (the chunk its description comes from), scaled to unit length. The chunk carries
  the sentence the text form spelled out; at half that weight the gains were gone.

``composed`` is the default: it embeds no relation text, so an ingest does less embedding work
(``python -m benchmarks.ingest``); only the modes that read relationship vectors (``global``,
``hybrid``, ``mix``) rank differently (``hopgraph eval`` on a store ingested each way compares them).
``text`` is there for descriptions that say more than their chunk (an LLM's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from hopgraph.core.linalg import unit
from hopgraph.core.records import Relation
from hopgraph.core.settings import ExtractionSettings
from hopgraph.ingest.texts import relation_text
from hopgraph.vectors.embedders import Embedder

#: stored vectors of ids in a collection ("entities", "chunks"); ids without one are left out
Lookup = Callable[[str, Sequence[str]], Mapping[str, np.ndarray]]


def stating_chunk(r: Relation) -> str:
    """The chunk a relation's description comes from (its smallest supporting chunk when unset)."""
    return r.description_chunk or (min(r.chunk_ids) if r.chunk_ids else "")


def type_text(r: Relation) -> str:
    return r.type.replace("_", " ")


def composed(relations: Sequence[Relation], embedder: Embedder, names: Mapping[str, str], lookup: Lookup
             ) -> np.ndarray:
    """The ``composed`` vectors of ``relations`` (an entity without a stored vector has its name
    embedded; a stating chunk without one is left out of the sum)."""
    ends = sorted({e for r in relations for e in (r.source_id, r.target_id)})
    entity = dict(lookup("entities", ends))
    missing = [e for e in ends if e not in entity]
    if missing:
        entity.update(zip(missing, embedder.embed([names.get(e, e) for e in missing]), strict=True))
    chunk = lookup("chunks", sorted({c for r in relations if (c := stating_chunk(r))}))
    types = sorted({type_text(r) for r in relations})
    typed = dict(zip(types, embedder.embed(types), strict=True))
    out = np.zeros((len(relations), embedder.dim), dtype=np.float32)
    for k, r in enumerate(relations):
        ends_and_type = unit(unit(entity[r.source_id]) + unit(typed[type_text(r)]) + unit(entity[r.target_id]))
        said = chunk.get(stating_chunk(r))
        out[k] = ends_and_type if said is None else unit(ends_and_type + unit(said))
    return out


def relation_vectors(relations: Sequence[Relation], embedder: Embedder, cfg: ExtractionSettings,
                     names: Mapping[str, str], lookup: Lookup) -> np.ndarray:
    """One vector per relation, as ``cfg.relation_vectors`` says (``names``: entity id -> name, for
    the text form and for entities without a stored vector)."""
    if not relations:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    if cfg.relation_vectors == "composed":
        return composed(relations, embedder, names, lookup)
    return embedder.embed([relation_text(r, names, cfg.relation_text_words) for r in relations])
