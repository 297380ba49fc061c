"""One immutable index state per committed graph version: the tables, the snapshot derived from
them, the BM25 index, the PPR walk of the configured link weight, and a memo for what a mode
derives from them on first use (other link weights, image edges, the GPU export). Queries take a
reference to a state and use nothing else, so a newer state can be swapped in under them."""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import scipy.sparse as sp

from hopgraph.retrieval.index.build import build
from hopgraph.retrieval.index.delta import Patch, row_changes
from hopgraph.retrieval.index.tables import Tables
from hopgraph.retrieval.parts.keyword import KeywordIndex
from hopgraph.retrieval.parts.ppr import JointWalk, pushes_by_default
from hopgraph.retrieval.parts.session_links import session_links
from hopgraph.retrieval.snapshot import Snapshot

T = TypeVar("T")


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a state is derived: it makes millions of lists, tuples and
    dicts that hold no cycles, and the collector's passes over them tripled the cost of the name
    index at 1M entities. The collector runs again afterwards (it is process-wide: a concurrent
    derivation keeps it paused until both are done, and nothing is lost meanwhile)."""
    global _paused
    with _gc_lock:
        ours = _paused > 0 or gc.isenabled()  # else the application turned it off: leave it so
        if ours:
            _paused += 1
            gc.disable()
    try:
        yield
    finally:
        if ours:
            with _gc_lock:
                _paused -= 1
                if _paused == 0:
                    gc.enable()


_gc_lock = threading.Lock()
_paused = 0


def _array_bytes(found: object, seen: set[int]) -> int:
    """The bytes of the numpy arrays and sparse matrices in ``found`` (in a dict, tuple or walk too), each
    once."""
    if id(found) in seen:
        return 0
    seen.add(id(found))
    if isinstance(found, np.ndarray):
        return int(found.nbytes)
    if isinstance(found, sp.spmatrix):
        return sum(_array_bytes(getattr(found, name, None), seen) for name in ("data", "indices", "indptr"))
    if isinstance(found, JointWalk):
        found = vars(found)  # its vectors and assembled matrix (its blocks are the snapshot's)
    if isinstance(found, dict):
        return sum(_array_bytes(value, seen) for value in found.values())
    if isinstance(found, tuple):
        return sum(_array_bytes(value, seen) for value in found)
    return 0


@dataclass(frozen=True)
class IndexRecipe:
    """What a state is built with (fixed for its lifetime; part of the persisted file's identity)."""

    typed_weight: float = 2.0
    about_weight: float = 2.0
    link_weight: float = 1.0
    stemmer: str = ""  # the BM25 index's Snowball stemmer ("" = words as written)


@dataclass
class IndexState:
    """Everything a query reads, for one graph version."""

    tables: Tables
    snapshot: Snapshot
    keyword: KeywordIndex
    settings: IndexRecipe
    seconds: dict[str, float] = field(default_factory=dict)
    _memo: dict[Hashable, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def version(self) -> int:
        return self.tables.version

    @classmethod
    def of(cls, tables: Tables, settings: IndexRecipe, keyword: KeywordIndex | None = None,
           since: tuple[Tables, KeywordIndex] | None = None, base: tuple[IndexState, Patch] | None = None
           ) -> IndexState:
        """Derive the snapshot, the BM25 index and the default walk of ``tables``. The BM25 index is
        ``keyword`` when given (the one of these tables, loaded with them: ``KeywordIndex.load`` refuses
        another stemmer's), else ``since``'s (the tables these were patched from, and their index) patched
        when stemmed alike, else built. ``base``: the state these tables were patched from and the patch,
        whose untouched rows the derivation carries over."""
        if base is not None:
            since = since or (base[0].tables, base[0].keyword)
            if base[0].settings != settings:
                base = None
        if since is not None and since[1].stemmer != settings.stemmer:
            since = None  # another stemmer's counts: the index is built anew
        with gc_paused():
            t0 = time.perf_counter()
            snap = build(tables, settings.typed_weight, settings.about_weight,
                         (base[0].snapshot, base[1]) if base is not None else None)
            t1 = time.perf_counter()
            if keyword is None and since is not None:
                old, old_keyword = since
                keep, at, rows = row_changes(old.chunk_ids, old.chunks["text"], tables.chunk_ids,
                                             tables.chunks["text"])
                keyword = old_keyword.patched(keep, at, tables.chunks["text"][rows].tolist())
            keyword = KeywordIndex(snap.chunk_texts, settings.stemmer) if keyword is None else keyword
            t2 = time.perf_counter()
            state = cls(tables, snap, keyword, settings)
            walk = state.walk(settings.link_weight)
            if not pushes_by_default(walk):  # the matrix power iteration reads, off the query path
                walk.assemble()
            t3 = time.perf_counter()
        state.seconds = {"snapshot": round(t1 - t0, 3), "bm25": round(t2 - t1, 3), "walk": round(t3 - t2, 3)}
        return state

    def nbytes(self) -> int:
        """The bytes of the arrays this state holds (tables, snapshot, memo): about what a refresh writes
        anew while this state is still served."""
        seen: set[int] = set()
        return sum(_array_bytes(part, seen) for part in (vars(self.tables), vars(self.snapshot), self._memo))

    def memo(self, key: Hashable, make: Callable[[], T]) -> T:
        """``make()`` once per state and key (the first caller builds; the others wait for it)."""
        found = self._memo.get(key)
        if found is None:
            with self._lock:
                found = self._memo.get(key)
                if found is None:
                    found = make()
                    self._memo = {**self._memo, key: found}
        return found

    def walk(self, link_weight: float, session_weight: float = 0.0) -> JointWalk:
        """The PPR walk for a link weight (the configured one is made with the state) and a weight of
        the session links of conversations (``retrieval.parts.session_links``; 0: none)."""
        if session_weight > 0:
            extra = self.memo("session-links", lambda: session_links(self.tables.chunks["chat"].tolist(),
                                                                     self.snapshot.chunk_docs))
            if extra.nnz:
                return self.memo(("walk", link_weight, session_weight),
                                 lambda: JointWalk(self.snapshot, link_weight=link_weight,
                                                   extra_links=extra * session_weight))
        return self.memo(("walk", link_weight), lambda: JointWalk(self.snapshot, link_weight=link_weight))
