"""Stores chosen by name: a registry maps a backend's name (``graph.backend``, ``vectors.backend``) to
its opener, a function of the settings that returns the opened store.

An opener is given as a callable or as ``"module:function"``, imported on first use: a built-in
backend's driver is loaded only when that backend is opened, and a registry may name an opener in a
layer above its own (``hopgraph.testing``) without importing it. The names are checked when a store is
opened, not when the settings are read (the settings import no store): an unknown one is a
``BadInputError`` listing the registered names.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar, cast

from hopgraph.core.errors import BadInputError, ConflictError

if TYPE_CHECKING:
    from hopgraph.core.settings import Settings

T = TypeVar("T")
Opener = Callable[["Settings"], T]


class UnknownBackendError(BadInputError):
    """A setting names a backend no one registered."""


@dataclass(frozen=True)
class Backend(Generic[T]):
    """A registered backend: its name, its opener, and whether what it stores outlives the process
    (``durable = False``: an in-memory store, whose index state must not be persisted)."""

    name: str
    opener: Opener[T] | str
    durable: bool = True

    def open(self, settings: Settings) -> T:
        """Open the store (importing a ``"module:function"`` opener first)."""
        opener = self.opener
        if isinstance(opener, str):
            module, _, attr = opener.partition(":")
            opener = cast("Opener[T]", getattr(importlib.import_module(module), attr))
        return opener(settings)


class BackendRegistry(Generic[T]):
    """The backends of one kind of store, by name; ``setting`` is the key that chooses one."""

    def __init__(self, setting: str) -> None:
        self.setting = setting
        self._backends: dict[str, Backend[T]] = {}

    @property
    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._backends)

    def register(self, name: str, opener: Opener[T] | str, *, durable: bool = True, replace: bool = False) -> None:
        """Add a backend; a taken name is a ``ConflictError`` unless ``replace``."""
        if not name or not name.strip():
            raise BadInputError(f"{self.setting}: a backend needs a name")
        if name in self._backends and not replace:
            raise ConflictError(f"{self.setting} backend {name!r} is registered already (pass replace=True)")
        self._backends[name] = Backend(name, opener, durable)

    def unregister(self, name: str) -> None:
        """Remove a backend (a test's temporary one); an unknown name is ignored."""
        self._backends.pop(name, None)

    def get(self, name: str) -> Backend[T]:
        """The backend registered as ``name``; ``UnknownBackendError`` naming the registered ones if none."""
        try:
            return self._backends[name]
        except KeyError:
            known = ", ".join(repr(n) for n in self._backends)
            raise UnknownBackendError(f"{self.setting} = {name!r} is not a registered backend "
                                      f"(registered: {known})") from None

    def open(self, name: str, settings: Settings) -> T:
        """Open the backend ``name`` with ``settings``."""
        return self.get(name).open(settings)
