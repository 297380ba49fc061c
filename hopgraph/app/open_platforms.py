"""The platforms a long-running process has opened, one per collection: the default collection's (its
owner's), and the others', opened on first use with their stores and index state and sharing the
default one's models. ``hopgraph serve`` and ``hopgraph mcp`` both hold one."""

from __future__ import annotations

import threading

from hopgraph.app.platform import Platform
from hopgraph.core.collections import DEFAULT


class OpenPlatforms:
    """Collection name -> its open platform; thread-safe. The default collection's platform belongs to the
    caller (``default``); the others are opened here and closed by ``forget`` or ``close_others``."""

    def __init__(self, default: Platform) -> None:
        self.default = default
        self._others: dict[str, Platform] = {}
        self._ready: set[str] = set()  # collections whose stores and index state are open
        self._lock = threading.Lock()

    def get(self, collection: str = DEFAULT) -> Platform:
        """The platform of ``collection``, with its graph and vector stores and its index state open (opened
        once, by whichever thread asks first: an embedded store must not be opened twice at once)."""
        if collection in self._ready:
            ready = self.default if collection == DEFAULT else self._others.get(collection)
            if ready is not None:  # (None: forgotten meanwhile; opened afresh below)
                return ready
        with self._lock:
            found = self.default if collection == DEFAULT else self._others.get(collection)
            if found is None:
                found = Platform(self.default.settings, embedder=self.default.embedder, collection=collection)
                self._others[collection] = found
            if collection not in self._ready:
                found.retriever.state()  # the stores and the index state, before the first call
                self._ready.add(collection)
            return found

    def names(self) -> list[str]:
        """The collections other than ``default`` whose platforms are open."""
        with self._lock:
            return sorted(self._others)

    def forget(self, collection: str) -> None:
        """Close the platform of ``collection`` (a deleted one); ``default`` and unopened names: nothing."""
        with self._lock:
            found = self._others.pop(collection, None)
            self._ready.discard(collection)
        if found is not None:
            found.close()

    def close_others(self) -> None:
        """Close every platform but the default one (at shutdown)."""
        for name in self.names():
            self.forget(name)
