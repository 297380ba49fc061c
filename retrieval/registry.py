"""The one registry of query modes: name, what it does, where it lives, the ablations it offers and
the corpora ``hopgraph eval`` runs it on. The CLI help, the API schema's enum, ``hopgraph eval``'s
default list and the README table are all derived from it.

Adding a mode = one module under ``retrieval/modes/`` with a class that has ``run(run, res)`` and
one ``ModeEntry`` line below. Implementations are imported on first use, so reading the registry
(CLI start-up, ``--help``) loads no model or array library.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from hopgraph.core.errors import BadInputError
from hopgraph.core.settings import RetrievalSettings

if TYPE_CHECKING:
    from retrieval.resources import Resources
    from retrieval.run import Run

TEXT, IMAGE = "text", "image"


class QueryError(BadInputError):
    """A query cannot be answered as asked (bad mode, empty text, refused setting...)."""


class Mode(Protocol):
    """A query mode: turns one query's ``Run`` into ``{chunk_id: score}``."""

    def run(self, run: Run, res: Resources) -> dict[str, float]: ...


@dataclass(frozen=True)
class ModeEntry:
    """One registered mode."""

    name: str
    summary: str
    impl: str                                               # "module:Class"
    ablations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # name -> settings override
    evaluated_on: frozenset[str] = frozenset()              # corpus kinds `hopgraph eval` runs it on
    needs_vector: bool = True                               # False: the query is never embedded (no model load)


class Registry:
    """Modes by name, their ablations, and their implementations (loaded once, on first use)."""

    def __init__(self, entries: Sequence[ModeEntry]) -> None:
        self.entries = {e.name: e for e in entries}
        self.ablations = {a: (e.name, dict(o)) for e in entries for a, o in e.ablations.items()}
        self._loaded: dict[str, Mode] = {}
        self._lock = threading.Lock()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def help(self) -> str:
        """One line per mode for ``--help`` texts."""
        return "; ".join(f"{e.name}: {e.summary}" for e in self.entries.values())

    def markdown(self) -> str:
        """The README's table of modes (a test keeps the README equal to it)."""
        rows = ["| mode | how it ranks | ablations in `hopgraph eval` |", "|---|---|---|"]
        rows += [f"| `{e.name}` | {e.summary} | {', '.join(f'`{a}`' for a in e.ablations)} |"
                 for e in self.entries.values()]
        return "\n".join(rows)

    def check(self, name: str, ablations: bool = False) -> None:
        """Refuse an unknown mode (or ablation, when allowed) with the valid names."""
        if name in self.entries or (ablations and name in self.ablations):
            return
        valid = [*self.entries, *(self.ablations if ablations else ())]
        raise QueryError(f"unknown mode {name!r}; choose one of {', '.join(valid)}")

    def evaluated(self, images: bool) -> list[str]:
        """``hopgraph eval``'s default list for a corpus of texts or of images: modes, then ablations."""
        kind = IMAGE if images else TEXT
        modes = [e for e in self.entries.values() if kind in e.evaluated_on]
        return [e.name for e in modes] + [a for e in modes for a in e.ablations]

    def settings_for(self, name: str, base: RetrievalSettings, **always: Any) -> tuple[str, RetrievalSettings]:
        """The mode behind a mode or ablation name, and its settings (nested overrides merge)."""
        real, override = self.ablations.get(name, (name, {}))
        update: dict[str, Any] = {**always, **override}
        for key, value in override.items():
            if isinstance(value, Mapping):
                update[key] = getattr(base, key).model_copy(update=dict(value))
        return real, base.model_copy(update=update)

    def mode(self, name: str) -> Mode:
        """The implementation of mode ``name``."""
        self.check(name)
        found = self._loaded.get(name)
        if found is None:
            with self._lock:
                module, _, cls = self.entries[name].impl.partition(":")
                found = getattr(importlib.import_module(module), cls)()
                self._loaded[name] = found
        return found


_BOTH = frozenset({TEXT, IMAGE})

REGISTRY = Registry([
    ModeEntry("graph", "dense + BM25 first pass, entity seeds, personalized PageRank over entities and "
              "passages, fused, then the documents the best ones name by title or lead to over a shared entity "
              "(default, strongest)",
              "retrieval.modes.graph:GraphMode",
              ablations={"graph-no-enrichment": {"enrichment": False}, "graph-with-generic": {"drop_generic": False},
                         "graph-0-hops": {"expansion": "none", "bridge_weight": 0.0, "entity_bridge_weight": 0.0},
                         "graph-no-walk": {"expansion": "none"},
                         "graph-no-bridges": {"bridge_weight": 0.0, "entity_bridge_weight": 0.0},
                         "graph-no-title-bridges": {"bridge_weight": 0.0},
                         "graph-no-entity-bridges": {"entity_bridge_weight": 0.0},
                         "graph-beam": {"expansion": "beam"}, "graph+rerank": {"rerank": True},
                         "graph-no-parts": {"decompose": False}, "graph-fixed-weights": {"homogeneity_slope": 0.0}},
              evaluated_on=frozenset({TEXT})),
    ModeEntry("auto", "picks graph, rrf, mix, raptor or global per query from its features (a search for an "
              "exact phrase or identifier, a connection question, an overview or a thematic question naming "
              "nothing) and says why",
              "retrieval.modes.auto:AutoMode", evaluated_on=frozenset({TEXT})),
    ModeEntry("raptor", "RAPTOR's collapsed tree: chunk vectors and the summary tree's vectors searched together, "
              "summaries expanded to their most central chunks (hopgraph tree builds the tree)",
              "retrieval.modes.raptor:RaptorMode", evaluated_on=frozenset({TEXT}),
              ablations={"raptor-rrf": {"raptor_fusion": "rrf"}, "raptor-tree-only": {"raptor_fusion": "tree"}}),
    ModeEntry("sections", "documents by their best chunk (list pages left out), then their sections by vector "
              "(or reranker), each result with its probability under the score-entropy distribution",
              "retrieval.modes.sections:SectionsMode", evaluated_on=frozenset({TEXT})),
    ModeEntry("naive", "chunk vectors nearest to the query (= dense)", "retrieval.modes.baseline:DenseMode"),
    ModeEntry("dense", "chunk vectors nearest to the query", "retrieval.modes.baseline:DenseMode",
              evaluated_on=_BOTH),
    ModeEntry("bm25", "keyword search over chunk texts", "retrieval.modes.baseline:Bm25Mode", evaluated_on=_BOTH,
              needs_vector=False),
    ModeEntry("rrf", "reciprocal-rank fusion of dense and BM25", "retrieval.modes.baseline:RrfMode",
              evaluated_on=_BOTH),
    ModeEntry("local", "LightRAG's local: entities named in or similar to the query and their neighbours -> their "
              "chunks; for exploring an entity's neighbourhood (--explain), below dense on passage recall",
              "retrieval.modes.lightrag:LocalMode", evaluated_on=frozenset({TEXT})),
    ModeEntry("global", "LightRAG's global: relationship and community vectors -> the entities and chunks behind "
              "them; for the relations and communities a theme touches, below dense on passage recall",
              "retrieval.modes.lightrag:GlobalMode", evaluated_on=frozenset({TEXT})),
    ModeEntry("hybrid", "LightRAG's hybrid: local + global by reciprocal rank; below dense on passage recall",
              "retrieval.modes.lightrag:HybridMode", evaluated_on=frozenset({TEXT})),
    ModeEntry("mix", "LightRAG's mix: hybrid's list fused with the dense + BM25 first pass (hybrid at half weight); "
              "at or above the best baseline's R@5 on every developer set",
              "retrieval.modes.lightrag:MixMode", evaluated_on=frozenset({TEXT})),
    ModeEntry("pcst", "graph's candidates -> prize-collecting Steiner tree -> its chunks",
              "retrieval.modes.subgraph:PcstMode", evaluated_on=frozenset({TEXT})),
    ModeEntry("gnn", "graph's candidates rescored by the trained GNN (hopgraph train-gnn)",
              "retrieval.modes.subgraph:GnnMode"),
    ModeEntry("image", "text -> images: similarity of the captions together and of the best single caption "
              "(or CLIP) fused with the entity graph",
              "retrieval.modes.image:ImageMode",
              ablations={"image-rrf": {"image": {"fusion": "rrf"}},
                         "image-no-expansion": {"image": {"similar_k": 0, "cooccur_k": 0}},
                         "image-no-kg": {"image": {"kg_weight": 0.0}},
                         "image-no-best-caption": {"image": {"best_caption_weight": 0.0}}},
              evaluated_on=frozenset({IMAGE})),
])
