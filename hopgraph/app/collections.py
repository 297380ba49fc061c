"""Creating, listing and deleting collections (``hopgraph.core.collections`` places their stores).

The names live in ``<data_dir>/collections.json``, written under a file lock by whichever process
creates or deletes one (the CLI or ``hopgraph serve``). ``default`` always exists and cannot be deleted.
Deleting a collection drops its graph database, its vector collections and its index state.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from hopgraph.core.collections import DEFAULT, check_name, home, placed
from hopgraph.core.errors import BadInputError, ConflictError, NotFoundError
from hopgraph.core.settings import Settings


class CollectionInfo(BaseModel):
    """A collection and when it was created (None for ``default``, which always existed)."""

    name: str = Field(description="The collection's name (`default`: what was ingested without one).")
    created_at: str | None = Field(default=None, description="ISO time of its creation.")


def _registry(settings: Settings) -> Path:
    return settings.data_dir / "collections.json"


@contextlib.contextmanager
def _locked(settings: Settings) -> Iterator[dict[str, dict[str, str]]]:
    """The registry, read and (when the block changes it) written back atomically, under a lock."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    with open(settings.data_dir / "collections.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            known = _read(settings)
            before = json.dumps(known, sort_keys=True)
            yield known
            if json.dumps(known, sort_keys=True) != before:
                tmp = _registry(settings).with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(known, indent=1, sort_keys=True), encoding="utf-8")
                os.replace(tmp, _registry(settings))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _read(settings: Settings) -> dict[str, dict[str, str]]:
    try:
        data = json.loads(_registry(settings).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def list_collections(settings: Settings) -> list[CollectionInfo]:
    """``default`` first, then the created collections by name."""
    known = _read(settings)
    return [CollectionInfo(name=DEFAULT)] + [CollectionInfo(name=n, created_at=known[n].get("created_at"))
                                             for n in sorted(known)]


def exists(settings: Settings, name: str) -> bool:
    """Whether collection ``name`` exists (``default`` always does)."""
    return name == DEFAULT or check_name(name) in _read(settings)


def require(settings: Settings, name: str) -> str:
    """``name`` when the collection exists, else a ``NotFoundError`` naming how to create it."""
    if not exists(settings, name):
        raise NotFoundError(f"no collection {name!r} (create it: hopgraph collections create {name}, or POST "
                            "/collections)")
    return name


def create_collection(settings: Settings, name: str) -> CollectionInfo:
    """Create collection ``name``: its graph database and vector collections are made and migrated now,
    so a store that cannot hold another collection fails here, not at the first ingest."""
    from hopgraph.app.platform import Platform

    check_name(name)
    if name == DEFAULT:
        raise ConflictError("collection 'default' always exists")
    made = datetime.now(UTC).isoformat(timespec="seconds")
    with _locked(settings) as known:
        if name in known:
            raise ConflictError(f"collection {name!r} exists")
        known[name] = {"created_at": made}
    try:
        with Platform(settings, collection=name) as p:
            p.admin.migrate()
            p.vectors.count("chunks")
    except BaseException:
        with _locked(settings) as known:
            known.pop(name, None)
        raise
    return CollectionInfo(name=name, created_at=made)


def delete_collection(settings: Settings, name: str) -> None:
    """Delete collection ``name``: its graph database, vector collections, index state and files."""
    from hopgraph.graphdb.factory import drop_database
    from hopgraph.vectors.factory import open_vector_store

    if check_name(name) == DEFAULT:
        raise BadInputError("collection 'default' cannot be deleted (delete its documents instead)")
    with _locked(settings) as known:
        if name not in known:
            raise NotFoundError(f"no collection {name!r}")
        where = placed(settings, name)
        drop_database(where)
        if where.vectors.backend != "edge":
            store = open_vector_store(where)
            try:
                drop = getattr(store, "drop_collections", None)
                if drop is not None:
                    drop()
            finally:
                store.close()
        shutil.rmtree(settings.data_dir / home(settings, name), ignore_errors=True)
        del known[name]
