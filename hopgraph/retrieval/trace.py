"""What a mode says about one query beside its ranking: the stages it timed, the chunk signals
``--explain`` lists, its explanation and its notes. A mode keeps them in a ``Trace`` it creates and
passes to the shared parts it calls, and returns them in its ``ModeOutput`` (``Trace.output``); the
retriever merges them into the query's result."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from hopgraph.core.records import MODEL_LOAD
from hopgraph.retrieval.registry import ModeOutput


@dataclass
class Trace:
    """One query's log: timings (ms per stage), signals (name -> chunk scores), explanation, notes."""

    timings: dict[str, float] = field(default_factory=dict)
    signals: dict[str, dict[str, float]] = field(default_factory=dict)
    explain: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

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

    def signal(self, name: str, scores: dict[str, float]) -> dict[str, float]:
        """Keep ``scores`` as signal ``name`` for ``--explain``; return them."""
        self.signals[name] = scores
        return scores

    def over_cap(self, cap_ms: float | None, name: str, t0: float, fallback: str) -> bool:
        """Record stage ``name`` since ``t0``; whether it overran ``cap_ms`` (``stage_cap_ms``: then the mode
        answers as ``fallback``, and a note says so)."""
        ms = self.stage(name, t0)
        if cap_ms is not None and ms > cap_ms:
            self.notes.append(f"degraded: {name} took {ms:.0f} ms > stage_cap_ms={cap_ms:.0f}; answered as {fallback}")
            return True
        return False

    def merge(self, other: Trace | ModeOutput) -> None:
        """Add ``other``'s log after this one's (timings of a stage both timed add up)."""
        for name, ms in other.timings.items():
            self.timings[name] = round(self.timings.get(name, 0.0) + ms, 2)
        self.signals.update(other.signals)
        self.explain.update(other.explain)
        self.notes.extend(other.notes)

    def output(self, scores: dict[str, float], **fields: Any) -> ModeOutput:
        """The mode's answer: ``scores`` and ``fields`` (``ModeOutput``'s), with this log."""
        return ModeOutput(scores, timings=self.timings, signals=self.signals, explain=self.explain,
                          notes=self.notes, **fields)
