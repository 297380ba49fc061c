"""One query as it goes through a mode: its inputs (text, vector, settings, index state) and its logs
(timings, notes, signals, explanations). What a mode finds travels in its ``ModeOutput``, not here."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel

from hopgraph.core.records import MODEL_LOAD
from hopgraph.core.settings import RetrievalSettings
from hopgraph.retrieval.index.state import IndexState
from hopgraph.retrieval.signals import Seeds
from hopgraph.retrieval.snapshot import Snapshot
from hopgraph.vectors.store import Filter

M = TypeVar("M", bound=BaseModel)


@dataclass
class Run:
    """One query: its text, vector, settings and index state, and the logs its stages write."""

    text: str
    qvec: np.ndarray
    k: int
    cfg: RetrievalSettings
    state: IndexState
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    signals: dict[str, dict[str, float]] = field(default_factory=dict)
    explain: dict[str, Any] = field(default_factory=dict)
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

    def stage(self, name: str, t0: float) -> float:
        """Record the milliseconds since ``t0`` under ``name``; return them."""
        ms = (time.perf_counter() - t0) * 1000
        self.timings[name] = round(self.timings.get(name, 0.0) + ms, 2)
        return ms

    def loaded(self, t0: float) -> None:
        """Record the milliseconds since ``t0`` as waiting for a model to load (``model_load``), kept out
        of the stages and of ``total``: a cold process's first query is not charged for it."""
        ms = (time.perf_counter() - t0) * 1000
        self.timings[MODEL_LOAD] = round(self.timings.get(MODEL_LOAD, 0.0) + ms, 2)

    def over_cap(self, ms: float, stage: str, fallback: str) -> bool:
        """Whether a stage overran ``stage_cap_ms`` (then the mode answers as ``fallback``, saying so)."""
        if self.cfg.stage_cap_ms is not None and ms > self.cfg.stage_cap_ms:
            self.notes.append(f"degraded: {stage} took {ms:.0f} ms > stage_cap_ms={self.cfg.stage_cap_ms:.0f}; "
                              f"answered as {fallback}")
            return True
        return False

    def keep_known(self, scores: dict[str, float]) -> dict[str, float]:
        """Drop vector hits the snapshot does not know (a document being written or deleted)."""
        return {c: s for c, s in scores.items() if c in self.snap.chunk_index}

    def explain_seeds(self, seeds: Seeds) -> list[str]:
        """``--explain``'s seed list; returns the context's lines for the strongest seeds."""
        snap = self.snap
        top = sorted(seeds.weights.items(), key=lambda kv: -kv[1])[:15]
        self.explain["seeds"] = [{"entity": snap.entity_names[e], "weight": round(w, 4), "why": seeds.origin[e]}
                                 for e, w in top]
        return [f"{snap.entity_names[e]} ({snap.entity_types[e]})" for e, _ in top]
