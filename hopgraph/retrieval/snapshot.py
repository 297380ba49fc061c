"""The in-memory query-time graph: entities, chunks, their incidence and entity-entity edges.

Derived from the index state's tables (``retrieval.index``), tagged with the committed graph version
it shows. Expansion, PPR and keyword search run here, not hop by hop in Cypher. Edge weights:

- typed relations: ``typed_weight`` x support (chunks stating them);
- co-occurrences: positive PMI over chunks, ``log(N * n_ab / (df_a * df_b))``, times support;
- chunk -> entity: mention count, damped by the entity's specificity ``1 / log(1 + df)``, plus
  ``about_weight`` when the entity is what the chunk's document is about (its title names it);
- chunk -> chunk: a chunk whose text names another document's title links to that document's
  chunks (``link_weight``), the way a hyperlink would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp


@dataclass
class Snapshot:
    """Arrays for one graph version. Entity index i, chunk index j."""

    version: int
    entity_ids: list[str]
    entity_names: list[str]
    entity_types: list[str]
    entity_vectors: np.ndarray           # (n_entities, dim), unit rows; zero rows if missing
    chunk_ids: list[str]
    chunk_texts: list[str]
    chunk_docs: list[str]
    chunk_sources: list[str]
    chunk_corpus_ids: list[str]
    chunk_kinds: list[str]               # 'text' or 'image' (of the chunk's document)
    chunk_uris: list[str]                # the image path/URI of image documents
    chunk_vectors: np.ndarray            # (n_chunks, dim), unit rows; zero rows if missing
    entity_df: np.ndarray                # chunks mentioning each entity (document frequency)
    entity_cf: np.ndarray                # mentions of each entity over all chunks (collection frequency)
    incidence: sp.csr_matrix             # (n_chunks, n_entities) mention weights
    mentioned_in: sp.csr_matrix          # (n_entities, n_chunks) the incidence transposed: entity -> its chunks
    adjacency: sp.csr_matrix             # (n_entities, n_entities) symmetric relation weights
    links: sp.csr_matrix                 # (n_chunks, n_chunks) symmetric title links
    edge_types: Mapping[tuple[int, int], str] = field(default_factory=dict)
    relation_ids: Mapping[tuple[int, int], str] = field(default_factory=dict)  # typed pair -> relation id
    entity_index: Mapping[str, int] = field(default_factory=dict)
    chunk_index: Mapping[str, int] = field(default_factory=dict)
    name_index: Mapping[str, list[int]] = field(default_factory=dict)  # (``index.lookups.NameIndex``)
    title_index: dict[str, list[int]] = field(default_factory=dict)  # normalized title -> chunks
    title_automaton: Any = None          # finds title_index's keys in a text (``index.links.titles_in``)
    title_named_by: dict[str, int] = field(default_factory=dict)  # title -> chunks (of other documents) naming it
    title_hub_limit: float = float("inf")  # more naming chunks than this: a hub (``index.links.hub_limit``)
    entity_hub_limit: float = float("inf")  # more chunks mentioning an entity than this: a hub (``hub_limit``)
    generic: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # concepts mentioned by hub-many chunks
    community_members: dict[str, np.ndarray] = field(default_factory=dict)  # community id -> entity indices
    title_keys: dict[str, str] = field(default_factory=dict)  # chunk title -> normalized title
    chunk_about: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # the entity a chunk's title names
    chunk_titles: list[tuple[str, ...]] = field(default_factory=list)  # the title keys each chunk names
    title_cased: set[str] = field(default_factory=set)  # titles some document writes with a capital
    changed: np.ndarray | None = None    # entity rows whose relations were derived again (None: all were)
    build_seconds: float = 0.0

    @property
    def n_entities(self) -> int:
        return len(self.entity_ids)

    @property
    def n_chunks(self) -> int:
        return len(self.chunk_ids)

    def chunk_entities(self, j: int) -> np.ndarray:
        """The entities chunk row ``j`` mentions (its incidence row's columns, a read-only view)."""
        m = self.incidence
        row = m.indices[m.indptr[j]:m.indptr[j + 1]]
        row.flags.writeable = False
        return row
