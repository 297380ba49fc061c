"""The keeper of the served index state: loads it from disk or builds it once, then brings it up to
the graph's committed version by deltas (or a rebuild when the change log no longer reaches back),
and swaps the new state in with one assignment. Queries never wait for a refresh once a state is
served: ``current()`` returns whatever is served; ``refresh()`` runs on the writer's thread (after
an ingest in this process) or on the keeper's poller thread (writes of other processes).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from hopgraph.core import memory
from hopgraph.graphdb.protocols import IndexSource
from hopgraph.retrieval.index import persist
from hopgraph.retrieval.index.delta import NeedsRebuild, Patch, apply_delta
from hopgraph.retrieval.index.state import IndexRecipe, IndexState, gc_paused
from hopgraph.retrieval.index.tables import Tables, fetch_all
from hopgraph.vectors.store import VectorStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Freshness:
    """Which version answers, and how far the graph has moved past it."""

    served_version: int
    graph_version: int
    last_refresh_s: float
    last_refresh_kind: str

    @property
    def lag(self) -> int:
        return max(self.graph_version - self.served_version, 0)


class IndexKeeper:
    """Holds the served ``IndexState`` and refreshes it (thread-safe; one refresh at a time)."""

    def __init__(self, graph: IndexSource, vectors: VectorStore, recipe: IndexRecipe, dim: int,
                 folder: Path | None = None, persist_every_s: float = 30.0, fresh_reads: bool = True,
                 owner: str = "") -> None:
        self.graph = graph
        self.vectors = vectors
        self.recipe = recipe
        self.dim = dim
        self.folder = folder
        #: the graph the persisted state is read from (its manifest must name the same)
        self.owner = owner
        self.persist_every_s = persist_every_s
        #: check the graph's version on every ``current()`` and refresh first (a library or CLI
        #: reading its own writes); a server turns it off and polls instead
        self.fresh_reads = fresh_reads
        self._state: IndexState | None = None
        self._graph_version = 0
        self._refresh_lock = threading.Lock()
        self._saved_at = 0.0
        self._saved_version = -1
        self._saver: threading.Thread | None = None
        self._save_lock = threading.Lock()
        self._last = (0.0, "none")
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None
        self._pregrow = 0.0
        self._grower: threading.Thread | None = None

    @classmethod
    def serving(cls, state: IndexState, graph: IndexSource, vectors: VectorStore, dim: int) -> IndexKeeper:
        """A keeper that serves ``state`` as it is (built elsewhere, e.g. from generated tables): reads do
        not ask the graph for a newer version; ``refresh()`` still would."""
        keeper = cls(graph, vectors, state.settings, dim, fresh_reads=False)
        keeper._state = state
        return keeper

    # -- reading -------------------------------------------------------------------------------
    def current(self) -> IndexState:
        """The served state (loaded or built on the very first call)."""
        state = self._state
        if state is None:
            return self.refresh()
        if self.fresh_reads and self.graph.version() != state.version:
            return self.refresh()
        return state

    def freshness(self) -> Freshness:
        served = self._state.version if self._state is not None else 0
        return Freshness(served, max(self._graph_version, served), *self._last)

    # -- refreshing ----------------------------------------------------------------------------
    def refresh(self) -> IndexState:
        """Bring the served state up to the graph's committed version and return it."""
        with self._refresh_lock:
            state = self._state
            t0 = time.perf_counter()
            version = self.graph.version()
            self._graph_version = version
            if state is not None and state.version == version:
                return state
            with gc_paused():
                tables, kind, loaded, patch = self._next_tables(state, version)
                keyword, since = None, None
                if kind == "load" and self.folder:
                    keyword = persist.load_keyword(self.folder, tables, self.recipe.stemmer)
                elif kind == "load+delta" and self.folder and loaded is not None:
                    saved = persist.load_keyword(self.folder, loaded, self.recipe.stemmer)
                    since = (loaded, saved) if saved is not None else None
                elif kind == "delta" and state is not None:
                    since = (state.tables, state.keyword)
                base = (state, patch) if kind == "delta" and state is not None and patch is not None else None
                state = IndexState.of(tables, self.recipe, keyword, since, base)
            self._state = state
            self._last = (round(time.perf_counter() - t0, 3), kind)
            log.info("index state v%d served (%s in %.2fs: %s)", state.version, kind, self._last[0], state.seconds)
            if kind == "load" and keyword is None and len(tables.chunk_ids):
                self._saved_version = -1  # saved without its BM25 index (an older file): add it
            self._maybe_save(state, force=kind in ("rebuild", "load"))
            self._grow_for(state)
            return state

    def _next_tables(self, state: IndexState | None, version: int
                     ) -> tuple[Tables, str, Tables | None, Patch | None]:
        """The tables of ``version``, how they were made, the tables loaded from disk (if any), and
        what a delta changed."""
        base = state.tables if state is not None else None
        kind, loaded = "delta", None
        if base is None and self.folder is not None:
            base = loaded = persist.load(self.folder, self.owner)
            kind = "load"
            if base is not None:
                self._saved_at, self._saved_version = time.monotonic(), base.version
                if base.version == version:
                    return base, kind, loaded, None
        if base is not None and base.version <= version:
            changes = self.graph.changes_since(base.version)
            try:
                if changes is not None and not changes:
                    return base, "load+delta" if kind == "load" else "delta", loaded, None
                if changes is not None:
                    patched, patch = apply_delta(base, changes, self.graph, self.vectors)
                    return patched, "load+delta" if kind == "load" else "delta", loaded, patch
                log.info("change log does not reach back to v%d: rebuilding the index state", base.version)
            except NeedsRebuild as exc:
                log.info("index state v%d cannot be patched (%s): rebuilding", base.version, exc)
        return fetch_all(self.graph, self.vectors, self.dim), "rebuild", None, None

    def _maybe_save(self, state: IndexState, force: bool = False) -> None:
        """Write ``state`` on a background thread (one write at a time; the writer never waits)."""
        if self.folder is None or state.version == self._saved_version:
            return
        if not force and time.monotonic() - self._saved_at < self.persist_every_s:
            return
        if self._saver is not None and self._saver.is_alive():
            return  # the next refresh (or close) writes the newer state
        self._saved_at, self._saved_version = time.monotonic(), state.version
        self._saver = threading.Thread(target=self._write, args=(state,), name="index-save", daemon=True)
        self._saver.start()

    def _write(self, state: IndexState) -> None:
        assert self.folder is not None
        t0 = time.perf_counter()
        try:
            with self._save_lock:
                persist.save(state.tables, self.folder, self.owner, state.keyword)
        except OSError as exc:  # a full disk: the state is still served, the next write tries again
            self._saved_version = -1
            log.warning("index state v%d not written to %s: %s", state.version, self.folder, exc)
            return
        log.info("index state v%d written to %s in %.2fs", state.version, self.folder, time.perf_counter() - t0)

    def save(self) -> None:
        """Write the served state now and wait for it (a clean shutdown)."""
        with self._refresh_lock:
            if self._saver is not None:
                self._saver.join()
            state = self._state
            if self.folder is not None and state is not None and state.version != self._saved_version:
                self._saved_version = state.version
                self._write(state)

    # -- polling (servers) ---------------------------------------------------------------------
    def start_polling(self, every_s: float, pregrow: float = 0.0) -> None:
        """Refresh on a background thread whenever the graph's version moves; ``current()`` stops
        checking the version itself (queries never wait for a refresh). ``pregrow``: have the heap hold
        this many times the served state's arrays once, in the background (``hopgraph.core.memory``), so
        the first refreshes do not pay for growing the process (again when the state grew a quarter)."""
        if self._poller is not None:
            return
        self._pregrow = pregrow
        self._grow_for(self._state)
        self.fresh_reads = False
        self._stop.clear()
        self._poller = threading.Thread(target=self._poll, args=(every_s,), name="index-keeper", daemon=True)
        self._poller.start()

    def _grow_for(self, state: IndexState | None) -> None:
        if not self._pregrow or state is None or (self._grower is not None and self._grower.is_alive()):
            return
        size = int(state.nbytes() * self._pregrow)
        self._grower = threading.Thread(target=memory.pregrow, args=(size,), name="index-pregrow", daemon=True)
        self._grower.start()

    def _poll(self, every_s: float) -> None:
        while not self._stop.wait(every_s):
            try:
                self._graph_version = self.graph.version()
                if self._state is None or self._graph_version != self._state.version:
                    self.refresh()
            except Exception:  # the next poll tries again; queries keep the served state
                log.exception("index state refresh failed; serving v%s", self._state.version if self._state else "-")

    def stop_polling(self) -> None:
        """Stop the poller; ``current()`` checks the graph's version itself again."""
        self._stop.set()
        if self._poller is not None:
            self._poller.join(timeout=30)
            self._poller = None
        self.fresh_reads = True

    def close(self) -> None:
        """Stop polling and write the served state."""
        self.stop_polling()
        try:
            self.save()
        except OSError as exc:
            log.warning("index state not written: %s", exc)
