"""The one registry of query modes: name, what it does, where it lives, the settings it reads, the
behaviours the retriever applies for it, the ablations it offers and the corpora ``hopgraph eval``
runs it on. The CLI help and ``hopgraph modes``, the API schema's enum, ``hopgraph eval``'s default
list, the README table and the docs' modes page are all derived from it.

Adding a mode = one package ``retrieval/modes/<mode>/`` (its class, its own helpers and explain view; the
parts modes share are in ``retrieval/parts/``) whose class's ``run(run, res)`` returns a ``ModeOutput`` (its
scores, what else it found and what it says about the query: it writes nothing into the ``Run``), and one
``ModeEntry`` line below. ``impl`` names the class on the package's public face ("hopgraph.retrieval.modes.<mode>:
Class"): nothing outside a mode's folder imports its submodules. A package adds one without touching hopgraph: an
entry point in the group ``hopgraph.modes`` names its ``ModeEntry`` (or a callable returning one), loaded when
the registry is first used; ``REGISTRY.register(entry)`` adds one at run time.
A mode with settings of its own declares their model in ``options``: they are read from
``[retrieval.modes.<name>]`` (``HOPGRAPH_RETRIEVAL__MODES__<NAME>__<KEY>``): a built-in mode's table is a
typed field of ``ModeSettings`` (``run.cfg.modes.raptor``), a plug-in mode's is read with ``Run.options``.
Implementations (and option models) are imported on first use, so reading the registry (CLI
start-up, ``--help``) loads no model or array library.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from hopgraph.core.errors import BadInputError
from hopgraph.core.retrieval_settings import ModeSettings
from hopgraph.core.settings import RetrievalSettings

if TYPE_CHECKING:
    import numpy as np

    from hopgraph.gpu.train import Example
    from hopgraph.retrieval.resources import Resources
    from hopgraph.retrieval.run import Run

log = logging.getLogger(__name__)

TEXT, IMAGE = "text", "image"
#: the entry-point group of plug-in modes: each names a ``ModeEntry`` or a callable returning one
ENTRY_POINT_GROUP = "hopgraph.modes"

#: settings the retriever itself reads for every mode (result count, candidate pools, reranking,
#: diversity, NLI clusters, confidence, stage caps, context budget)
SHARED_SETTINGS = ("top_k", "candidate_k", "rrf_k", "rerank", "rerank_k", "reranker", "mmr_lambda", "mmr_pool",
                   "nli", "confidence", "stage_cap_ms", "token_budget",
                   "query_memory_mb")
#: settings the index state (snapshot) is built with, fixed per retriever
INDEX_SETTINGS = ("typed_weight", "about_weight", "keyword_stemmer")


class QueryError(BadInputError):
    """A query cannot be answered as asked (bad mode, empty text, refused setting...)."""


@dataclass
class ModeOutput:
    """What a mode answers, the only way it answers; the retriever renders every part generically,
    whatever the mode.

    - ``scores``: ``{chunk_id: score}``;
    - ``entities``, ``relations``, ``communities``: lines for the cited context (the entities a mode
      seeded or weighted, the relations and community reports it used);
    - ``seed_weights``: per entity index, its weight: a result's "via" entities are those of its chunk;
    - ``context``: titled lists that join the cited context after the communities ({"Summaries": [...]});
    - ``chunk_fields``: per chunk id, fields of its ``RetrievedChunk`` ({"section": path});
    - ``extras``: the mode's own output, returned as ``QueryResult.extras`` (JSON-able values);
    - ``timings``, ``signals``, ``explain``, ``notes``: what it says about the query (``retrieval.trace.Trace``):
      ms per stage, chunk signals and explanation for ``--explain``, notes joining ``QueryResult.notes``.
    """

    scores: dict[str, float]
    entities: list[str] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    communities: list[str] = field(default_factory=list)
    seed_weights: dict[int, float] = field(default_factory=dict)
    context: dict[str, list[str]] = field(default_factory=dict)
    chunk_fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    signals: dict[str, dict[str, float]] = field(default_factory=dict)
    explain: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class Mode(Protocol):
    """A query mode: turns one query's ``Run`` into its ``ModeOutput``."""

    def run(self, run: Run, res: Resources) -> ModeOutput: ...


@runtime_checkable
class ImageQueries(Protocol):
    """A mode that also answers a query by image (its CLIP vector): mode ``image``."""

    def run_image(self, run: Run, res: Resources, vector: np.ndarray) -> ModeOutput: ...


@runtime_checkable
class GnnExamples(Protocol):
    """A mode whose candidates train the GNN (``hopgraph train-gnn``): mode ``gnn``."""

    def example(self, run: Run, res: Resources, gold_chunk_ids: set[str], query_id: str) -> Example | None: ...


class ModeOptions(BaseModel):
    """The base of a mode's own settings model (``ModeEntry.options``): frozen, unknown keys refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True)
class ModeEntry:
    """One registered mode: ``settings`` are the ``retrieval.*`` keys it reads beyond ``SHARED_SETTINGS``
    (``modes.<other>``: another mode's whole table), ``options`` the model of its own settings ("module:Model", a
    ``ModeOptions`` or a typed table of ``ModeSettings``), ``confidence`` that its scores rank a few whole answers:
    the retriever turns confidence on over all of them; ``views`` that it answers from the index state alone, so a
reader with access groups may use it over the state of what it may read (``index.view``)."""

    name: str
    summary: str
    impl: str                                               # "module:Class"
    settings: tuple[str, ...] = ()
    options: str | None = None
    ablations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # name -> settings override
    evaluated_on: frozenset[str] = frozenset()              # corpus kinds `hopgraph eval` runs it on
    needs_vector: bool = True                               # False: the query is never embedded (no model load)
    confidence: bool = False
    views: bool = False                                     # answers from the index state alone: a reader's view


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


class Registry:
    """Modes by name, their ablations, settings and implementations (loaded once, on first use)."""

    def __init__(self, entries: Sequence[ModeEntry], plugins: str | None = None) -> None:
        """``plugins``: the entry-point group whose modes join on first use (None: none)."""
        self._entries: dict[str, ModeEntry] = {}
        self._ablations: dict[str, tuple[str, dict[str, Any]]] = {}
        self._loaded: dict[str, Mode] = {}
        self._lock = threading.RLock()
        self._plugins = plugins
        for entry in entries:
            self._add(entry, replace=False)

    @property
    def entries(self) -> dict[str, ModeEntry]:
        """The modes by name (plug-ins included)."""
        self._load_plugins()
        return self._entries

    @property
    def ablations(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """The ablations by name: (mode, settings override)."""
        self._load_plugins()
        return self._ablations

    def register(self, entry: ModeEntry, replace: bool = False) -> None:
        """Add mode ``entry``; a name (or ablation name) already taken is refused unless ``replace``."""
        self._load_plugins()
        self._add(entry, replace)

    def _add(self, entry: ModeEntry, replace: bool) -> None:
        if not isinstance(entry, ModeEntry):
            raise TypeError(f"a mode is registered as a ModeEntry, not {type(entry).__name__}")
        tables = {f"modes.{name}" for name in ModeSettings.model_fields}
        unknown = set(entry.settings) - set(RetrievalSettings.model_fields) - tables
        if unknown:
            raise ValueError(f"mode {entry.name!r} declares unknown retrieval settings: {sorted(unknown)}")
        with self._lock:
            old = self._entries.get(entry.name)
            taken = {a for a in entry.ablations if a in self._ablations and self._ablations[a][0] != entry.name}
            if not replace and (old is not None or taken or entry.name in self._ablations):
                clash = entry.name if old is not None or entry.name in self._ablations else sorted(taken)[0]
                raise ValueError(f"mode {entry.name!r}: the name {clash!r} is already registered "
                                 "(register(entry, replace=True) replaces it)")
            if old is not None:
                self._ablations = {a: v for a, v in self._ablations.items() if v[0] != entry.name}
                self._loaded.pop(entry.name, None)
            self._entries = {**self._entries, entry.name: entry}
            self._ablations = {**self._ablations, **{a: (entry.name, dict(o)) for a, o in entry.ablations.items()}}

    def _load_plugins(self) -> None:
        """Register the modes of the entry-point group, once (a broken plug-in is an error naming it)."""
        if self._plugins is None:
            return
        with self._lock:
            group, self._plugins = self._plugins, None
            for ep in sorted(entry_points(group=group), key=lambda e: e.name):
                try:
                    found = ep.load()
                    entry = found() if callable(found) and not isinstance(found, ModeEntry) else found
                    self._add(entry, replace=False)
                except Exception as exc:
                    raise ValueError(f"the mode plug-in {ep.name} = {ep.value} (entry point group {group}) "
                                     f"cannot be registered: {exc}") from exc
                log.debug("mode %s registered from %s", entry.name, ep.value)

    def view_modes(self) -> list[str]:
        """The modes a reader with access groups may use: those that answer from the index state alone."""
        return [name for name, entry in self.entries.items() if entry.views]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def help(self) -> str:
        """One line per mode for ``--help`` texts."""
        return "; ".join(f"{e.name}: {e.summary}" for e in self.entries.values())

    def markdown(self, settings: bool = False) -> str:
        """The table of modes: the README's, or with ``settings`` the docs' (each mode's own keys, and
        whether keys with access groups may use it)."""
        extra = " settings (`retrieval.*`) | keys with groups |" if settings else ""
        rows = ["| mode | how it ranks | ablations in `hopgraph eval` |" + extra,
                "|---|---|---|" + ("---|---|" if extra else "")]
        for e in self.entries.values():
            keys = (f" {', '.join(f'`{k}`' for k in self.setting_keys(e.name))} | {'yes' if e.views else ''} |"
                    if settings else "")
            rows.append(f"| `{e.name}` | {e.summary} | {', '.join(f'`{a}`' for a in e.ablations)} |{keys}")
        return "\n".join(rows)

    def options_model(self, name: str) -> type[BaseModel] | None:
        """The model of mode ``name``'s own settings, if it has any (imported here)."""
        path = self.entries[name].options
        return None if path is None else _load(path)

    def setting_keys(self, name: str) -> list[str]:
        """The keys under ``retrieval.`` mode ``name`` reads beyond the shared ones, its own options included."""
        keys = [k for k in self.entries[name].settings if not k.startswith("modes.")]
        tables = [k for k in self.entries[name].settings if k.startswith("modes.")]
        model = self.options_model(name)
        if model is not None:
            keys += [f"modes.{name}.{k}" for k in model.model_fields]
        for table in tables:  # another mode's table it reads too (pcst and gnn: graph's)
            other = self.options_model(table.removeprefix("modes."))
            keys += [f"{table}.{k}" for k in (other.model_fields if other is not None else ())]
        return keys

    def check_options(self, cfg: RetrievalSettings) -> None:
        """Refuse plug-in ``[retrieval.modes.*]`` tables of unknown modes or modes without options, and invalid
        values (the built-in modes' tables are typed settings, checked when read)."""
        for name, values in cfg.modes.plugin_tables().items():
            model = self.options_model(name) if name in self.entries else None
            if model is None:
                raise QueryError(f"retrieval.modes.{name}: no mode {name!r} with settings of its own")
            try:
                model.model_validate(values)
            except ValidationError as exc:
                raise QueryError(f"retrieval.modes.{name}: {exc}") from exc

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
        return real, base.merged({**always, **override})

    def mode(self, name: str) -> Mode:
        """The implementation of mode ``name``."""
        self.check(name)
        found = self._loaded.get(name)
        if found is None:
            with self._lock:
                found = _load(self.entries[name].impl)()
                self._loaded[name] = found
        return found

    def image_queries(self, name: str = "image") -> ImageQueries:
        """Mode ``name``, which answers queries by image."""
        impl = self.mode(name)
        if not isinstance(impl, ImageQueries):
            raise QueryError(f"mode {name} does not answer queries by image")
        return impl

    def gnn_examples(self, name: str = "gnn") -> GnnExamples:
        """Mode ``name``, whose candidates make the GNN's training examples."""
        impl = self.mode(name)
        if not isinstance(impl, GnnExamples):
            raise QueryError(f"mode {name} makes no GNN training examples")
        return impl


#: settings of the modes that seed entities, and those graph mode's pass reads beside its own table
#: (``retrieval.modes.graph``; pcst and gnn build on that pass and read the table too)
_SEEDS = ("entity_k", "min_entity_score", "cased_names")
_WEIGHTS = ("weights", "homogeneity_floor", "homogeneity_slope", "homogeneity_min_chunks", "homogeneity_min_share")
_GRAPH = (*_SEEDS, *_WEIGHTS, "link_weight")


def _graph(**override: Any) -> dict[str, Any]:
    """An ablation of graph mode's own settings."""
    return {"modes": {"graph": override}}


_BOTH = frozenset({TEXT, IMAGE})

REGISTRY = Registry(plugins=ENTRY_POINT_GROUP, entries=[
    ModeEntry("graph", "dense + BM25 first pass, entity seeds, personalized PageRank over entities and "
              "passages, fused with the chunks naming the seeds, then the documents the best ones name by title or "
              "lead to over a shared entity, and the chunks dated in the question's time cue (the default)",
              "hopgraph.retrieval.modes.graph:GraphMode", settings=_GRAPH,
              options="hopgraph.core.retrieval_settings:GraphModeSettings",
              ablations={"graph-no-enrichment": _graph(enrichment=False),
                         "graph-with-generic": _graph(drop_generic=False),
                         "graph-0-hops": _graph(expansion="none", bridge_weight=0.0, entity_bridge_weight=0.0),
                         "graph-no-walk": _graph(expansion="none"),
                         "graph-no-bridges": _graph(bridge_weight=0.0, entity_bridge_weight=0.0),
                         "graph-no-title-bridges": _graph(bridge_weight=0.0),
                         "graph-no-entity-bridges": _graph(entity_bridge_weight=0.0),
                         "graph-beam": _graph(expansion="beam"), "graph+rerank": {"rerank": True},
                         "graph-no-parts": _graph(decompose=False), "graph-fixed-weights": {"homogeneity_slope": 0.0},
                         "graph-any-case-names": {"cased_names": False}, "graph-no-time": _graph(time_weight=0.0),
                         "graph+threads": _graph(session_link_weight=1.0), "graph-no-facts": _graph(fact_weight=0.0),
                         "graph-no-when": _graph(when_weight=0.0), "graph-no-seed-chunks": _graph(entity_weight=0.0),
                         "graph-no-person-scope": _graph(person_scope=False)},
              evaluated_on=frozenset({TEXT}), views=True),
    ModeEntry("auto", "picks graph, rrf, mix, raptor or global per query from its features (a search for an "
              "exact phrase or identifier, a connection question, an overview or a thematic question naming "
              "nothing) and says why",
              "hopgraph.retrieval.modes.auto:AutoMode", evaluated_on=frozenset({TEXT})),
    ModeEntry("raptor", "RAPTOR's collapsed tree: chunk vectors and the summary tree's vectors searched together, "
              "summaries expanded to their most central chunks (hopgraph tree builds the tree)",
              "hopgraph.retrieval.modes.raptor:RaptorMode",
              options="hopgraph.core.retrieval_settings:RaptorModeSettings",
              evaluated_on=frozenset({TEXT}),
              ablations={"raptor-rrf": {"modes": {"raptor": {"fusion": "rrf"}}},
                         "raptor-tree-only": {"modes": {"raptor": {"fusion": "tree"}}}}),
    ModeEntry("sections", "documents by their best chunk (list pages left out), then their sections by vector "
              "(or reranker), each result with its probability under the score-entropy distribution",
              "hopgraph.retrieval.modes.sections:SectionsMode",
              options="hopgraph.core.result_settings:SectionModeSettings",
              confidence=True,
              evaluated_on=frozenset({TEXT})),
    ModeEntry("naive", "chunk vectors nearest to the query (= dense)", "hopgraph.retrieval.modes.baseline:DenseMode",
              views=True),
    ModeEntry("dense", "chunk vectors nearest to the query", "hopgraph.retrieval.modes.baseline:DenseMode",
              evaluated_on=_BOTH, views=True),
    ModeEntry("bm25", "keyword search over chunk texts", "hopgraph.retrieval.modes.baseline:Bm25Mode",
              evaluated_on=_BOTH, needs_vector=False, views=True),
    ModeEntry("rrf", "reciprocal-rank fusion of dense and BM25", "hopgraph.retrieval.modes.baseline:RrfMode",
              evaluated_on=_BOTH, views=True),
    ModeEntry("local", "LightRAG's local: entities named in or similar to the query and their neighbours -> their "
              "chunks; for exploring an entity's neighbourhood (--explain)",
              "hopgraph.retrieval.modes.lightrag:LocalMode", settings=_SEEDS, evaluated_on=frozenset({TEXT})),
    ModeEntry("global", "LightRAG's global: relationship and community vectors -> the entities and chunks behind "
              "them; for questions about a whole corpus",
              "hopgraph.retrieval.modes.lightrag:GlobalMode", settings=("entity_k",), evaluated_on=frozenset({TEXT})),
    ModeEntry("hybrid", "LightRAG's hybrid: local + global by reciprocal rank",
              "hopgraph.retrieval.modes.lightrag:HybridMode", settings=_SEEDS, evaluated_on=frozenset({TEXT})),
    ModeEntry("mix", "LightRAG's mix: hybrid's list fused with the dense + BM25 first pass (hybrid at half weight)",
              "hopgraph.retrieval.modes.lightrag:MixMode", settings=(*_SEEDS, *_WEIGHTS),
              evaluated_on=frozenset({TEXT})),
    ModeEntry("pcst", "graph's candidates -> prize-collecting Steiner tree -> its chunks",
              "hopgraph.retrieval.modes.subgraph:PcstMode", settings=(*_GRAPH, "modes.graph"),
              options="hopgraph.core.subgraph_settings:PcstModeSettings", evaluated_on=frozenset({TEXT})),
    ModeEntry("gnn", "graph's candidates rescored by the trained GNN (hopgraph train-gnn)",
              "hopgraph.retrieval.modes.subgraph:GnnMode", settings=(*_GRAPH, "modes.graph"),
              options="hopgraph.core.subgraph_settings:GnnModeSettings"),
    ModeEntry("image", "text -> images: similarity of the captions together and of the best single caption "
              "(or CLIP) fused with the entity graph",
              "hopgraph.retrieval.modes.image:ImageMode",
              settings=_SEEDS, options="hopgraph.core.retrieval_settings:ImageRetrievalSettings",
              ablations={"image-rrf": {"modes": {"image": {"fusion": "rrf"}}},
                         "image-no-expansion": {"modes": {"image": {"similar_k": 0, "cooccur_k": 0}}},
                         "image-no-kg": {"modes": {"image": {"kg_weight": 0.0}}},
                         "image-no-best-caption": {"modes": {"image": {"best_caption_weight": 0.0}}}},
              evaluated_on=frozenset({IMAGE})),
])
