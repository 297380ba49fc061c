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
        self._open: dict[str, Platform] = {}  # collections whose stores and index state are open
        self._lock = threading.Lock()

    def warm(self) -> None:
        """Warm the default platform for queries (``Platform.warm(questions_only=True)``) under the lock that
        ``get`` takes: a call arriving meanwhile waits for it rather than opening the stores a second time."""
        with self._lock:
            self.default.warm(questions_only=True)
            self._open.setdefault(DEFAULT, self.default)

    def get(self, collection: str = DEFAULT) -> Platform:
        """The platform of ``collection``, with its graph and vector stores and its index state open (opened
        once, by whichever thread asks first: an embedded store must not be opened twice at once)."""
        found = self._open.get(collection)
        if found is not None:
            return found
        with self._lock:
            found = self._open.get(collection)
            if found is not None:
                return found
            new = collection != DEFAULT
            platform = (Platform(self.default.settings, embedder=self.default.embedder, collection=collection)
                        if new else self.default)
            try:
                platform.retriever.state()  # the stores and the index state, before the first call
            except BaseException:
                if new:
                    platform.close()
                raise
            self._open[collection] = platform
            return platform

    def names(self) -> list[str]:
        """The collections other than ``default`` whose platforms are open."""
        with self._lock:
            return sorted(n for n in self._open if n != DEFAULT)

    def forget(self, collection: str) -> None:
        """Close the platform of ``collection`` (a deleted one); ``default`` and unopened names: nothing."""
        if collection == DEFAULT:
            return
        with self._lock:
            found = self._open.pop(collection, None)
        if found is not None:
            found.close()

    def close_others(self) -> None:
        """Close every platform but the default one (at shutdown)."""
        for name in self.names():
            self.forget(name)
