"""Stores chosen by name: a registry maps a backend's name (``graph.backend``, ``vectors.backend``) to
a backend object, its opener (a function of the settings that returns the opened store) with the
capabilities it declares; callers ask a capability, never a name.

An opener is given as a callable or as ``"module:function"``, imported on first use. A registry also
loads the backends a package declares under its entry-point group (``hopgraph.graph_backends``,
``hopgraph.vector_backends``) the first time a name is looked up: each entry point names a backend
object, or a function of no argument that returns one. The names are checked when a store is opened,
not when the settings are read: an unknown one is a ``BadInputError`` listing the registered names.

The graph registry publishes itself here (``publish``) so that the settings of this layer can ask a
graph backend's capabilities (``graph_backend``) without importing ``hopgraph.graphdb``.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

from hopgraph.core.errors import BadInputError, ConflictError

if TYPE_CHECKING:
    from hopgraph.core.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")
Opener = Callable[["Settings"], T]
#: drops what a collection's store keeps outside the collection's folder (``None``: nothing to drop)
Dropper = Callable[["Settings"], None]


class UnknownBackendError(BadInputError):
    """A setting names a backend no one registered."""


def _load(target: Callable[..., Any] | str) -> Callable[..., Any]:
    if isinstance(target, str):
        module, _, attr = target.partition(":")
        return cast("Callable[..., Any]", getattr(importlib.import_module(module), attr))
    return target


@dataclass(frozen=True)
class Backend(Generic[T]):
    """A registered backend and what it can do.

    ``durable``: what it stores outlives the process (``False``: an in-memory store, whose index state
    must not be persisted); ``single_writer``: one process owns the store, so no other process writes it
    meanwhile (what an interrupted run left can be cleaned up on the next start); ``dropper``: removes a
    collection's data that lives outside the collection's folder when the collection is deleted."""

    name: str
    opener: Opener[T] | str
    durable: bool = True
    single_writer: bool = False
    dropper: Dropper | str | None = None

    def open(self, settings: Settings) -> T:
        """Open the store (importing a ``"module:function"`` opener first)."""
        return cast("T", _load(self.opener)(settings))

    def drop_collection(self, settings: Settings) -> None:
        """Remove the data of the collection ``settings`` are placed in (nothing without a dropper)."""
        if self.dropper is not None:
            _load(self.dropper)(settings)


@dataclass(frozen=True)
class GraphBackendSpec(Backend[T]):
    """A graph backend: besides a backend's capabilities, how it keeps collections apart (``collections``:
    a ``"database"`` per collection named ``<graph.database><collection_separator><collection>``, or one
    database with a ``"partition"`` key), the Cypher dialect it speaks (``None``: no Cypher console), and
    what locates its data (``located_by``: ``graph.uri``, or the data dir's graph folder)."""

    collections: Literal["database", "partition"] = "database"
    collection_separator: str = "_"
    dialect: str | None = None
    located_by: Literal["uri", "data_dir"] = "data_dir"

    def collection_database(self, database: str, collection: str) -> str:
        """The database that holds ``collection`` when ``database`` holds the default one."""
        return f"{database}{self.collection_separator}{collection}" if self.collections == "database" else database

    def location(self, settings: Settings) -> str:
        """Where the graph lives: its server's URI, or the resolved graph folder of the data dir."""
        return str(settings.graph.uri) if self.located_by == "uri" else str(settings.graph_dir.resolve())


class BackendRegistry(Generic[T]):
    """The backends of one kind of store, by name; ``setting`` is the key that chooses one, ``group`` the
    entry-point group plug-ins declare theirs in, ``kind`` the class ``register`` makes."""

    def __init__(self, setting: str, group: str | None = None, kind: type[Backend[Any]] = Backend) -> None:
        self.setting = setting
        self.group = group
        self.kind = kind
        self._backends: dict[str, Backend[T]] = {}
        self._plugins_loaded = group is None

    @property
    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order (built-ins, then entry points)."""
        self._load_plugins()
        return tuple(self._backends)

    def add(self, backend: Backend[T], *, replace: bool = False) -> None:
        """Register a backend object; a taken name is a ``ConflictError`` unless ``replace``."""
        if not isinstance(backend, self.kind):
            raise BadInputError(f"{self.setting}: {backend!r} is not a {self.kind.__name__}")
        if not backend.name or not backend.name.strip():
            raise BadInputError(f"{self.setting}: a backend needs a name")
        if backend.name in self._backends and not replace:
            raise ConflictError(f"{self.setting} backend {backend.name!r} is registered already (pass replace=True)")
        self._backends[backend.name] = backend

    def register(self, name: str, opener: Opener[T] | str, *, durable: bool = True, replace: bool = False,
                 **capabilities: Any) -> None:
        """Register ``opener`` as backend ``name`` with the capabilities given (those of ``kind``)."""
        self.add(cast("Backend[T]", self.kind(name, opener, durable=durable, **capabilities)), replace=replace)

    def unregister(self, name: str) -> None:
        """Remove a backend (a test's temporary one); an unknown name is ignored."""
        self._backends.pop(name, None)

    def find(self, name: str) -> Backend[T] | None:
        """The backend registered as ``name``, or None."""
        if name not in self._backends:
            self._load_plugins()
        return self._backends.get(name)

    def get(self, name: str) -> Backend[T]:
        """The backend registered as ``name``; ``UnknownBackendError`` naming the registered ones if none."""
        found = self.find(name)
        if found is None:
            known = ", ".join(repr(n) for n in self._backends)
            raise UnknownBackendError(f"{self.setting} = {name!r} is not a registered backend "
                                      f"(registered: {known})")
        return found

    def open(self, name: str, settings: Settings) -> T:
        """Open the backend ``name`` with ``settings``."""
        return self.get(name).open(settings)

    def reload_plugins(self) -> None:
        """Look at the entry points again on the next look-up (after a package was installed)."""
        self._plugins_loaded = self.group is None

    def _load_plugins(self) -> None:
        if self._plugins_loaded or self.group is None:
            return
        self._plugins_loaded = True
        for ep in entry_points(group=self.group):
            if ep.name in self._backends:
                continue
            try:
                found = ep.load()
                backend = found if isinstance(found, Backend) else found()
                if backend.name != ep.name:
                    backend = replace(backend, name=ep.name)
                self.add(backend)
            except Exception as exc:  # one broken plug-in must not take the built-ins down
                log.warning("%s: the %s entry point %r (%s) was not loaded: %s", self.setting, self.group,
                            ep.name, ep.value, exc)

    def publish(self) -> None:
        """Make this the registry ``registry_for(self.setting)`` answers."""
        _PUBLISHED[self.setting] = self


_PUBLISHED: dict[str, BackendRegistry[Any]] = {}


def registry_for(setting: str) -> BackendRegistry[Any] | None:
    """The published registry of ``setting`` (``graph.backend``), if its layer was imported."""
    return _PUBLISHED.get(setting)


def graph_backend(name: str) -> GraphBackendSpec[Any] | None:
    """The graph backend registered as ``name`` (None when unknown: opening it will say so)."""
    registry = registry_for("graph.backend")
    found = registry.find(name) if registry is not None else None
    return found if isinstance(found, GraphBackendSpec) else None
