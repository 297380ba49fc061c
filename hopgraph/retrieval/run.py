"""One query as it goes through a mode: its inputs (text, vector, settings, index state). What a mode
finds and says (its timings, signals, explanation, notes: ``retrieval.trace``) travels in its
``ModeOutput``; nothing but the retriever writes into a ``Run``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from pydantic import BaseModel

from hopgraph.core.settings import RetrievalSettings
from hopgraph.retrieval.index.state import IndexState
from hopgraph.retrieval.snapshot import Snapshot
from hopgraph.vectors.store import Filter

M = TypeVar("M", bound=BaseModel)


@dataclass
class Run:
    """One query: its text, vector, settings and index state."""

    text: str
    qvec: np.ndarray
    k: int
    cfg: RetrievalSettings
    state: IndexState
    explaining: bool = False  # the caller asked for --explain: work done only for it may run
    #: the payload filter of the vectors the one asking may read (``core.access.vector_filter``), applied by
    #: every vector search of the query inside the engine; None: it reads every vector
    vector_filter: Filter | None = None

    def options(self, mode: str, model: type[M]) -> M:
        """A plug-in mode's own settings (``[retrieval.modes.<mode>]``), read with its ``model``."""
        return model.model_validate(self.cfg.modes.plugin_tables().get(mode, {}))

    @property
    def snap(self) -> Snapshot:
        """The snapshot of the index state this query reads."""
        return self.state.snapshot

    def keep_known(self, scores: dict[str, float]) -> dict[str, float]:
        """Drop vector hits the snapshot does not know (a document being written or deleted)."""
        return {c: s for c, s in scores.items() if c in self.snap.chunk_index}
