"""The names of the collections, in ``<data_dir>/collections.json``, written under a file lock by
whichever process creates or deletes one (the CLI or ``hopgraph serve``); ``default`` always exists.
Creating and deleting them is ``hopgraph.app.collections``."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, Field

from hopgraph.core.collections import DEFAULT, check_name
from hopgraph.core.errors import NotFoundError
from hopgraph.core.settings import Settings


class CollectionInfo(BaseModel):
    """A collection and when it was created (None for ``default``, which always existed)."""

    name: str = Field(description="The collection's name (`default`: what was ingested without one).")
    created_at: str | None = Field(default=None, description="ISO time of its creation.")


def _registry(settings: Settings) -> Path:
    return settings.data_dir / "collections.json"


@contextlib.contextmanager
def locked(settings: Settings) -> Iterator[dict[str, dict[str, str]]]:
    """The registry, read and (when the block changes it) written back atomically, under a lock."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    with open(settings.data_dir / "collections.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            known = read(settings)
            before = json.dumps(known, sort_keys=True)
            yield known
            if json.dumps(known, sort_keys=True) != before:
                tmp = _registry(settings).with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(known, indent=1, sort_keys=True), encoding="utf-8")
                os.replace(tmp, _registry(settings))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def read(settings: Settings) -> dict[str, dict[str, str]]:
    try:
        data = json.loads(_registry(settings).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def list_collections(settings: Settings) -> list[CollectionInfo]:
    """``default`` first, then the created collections by name."""
    known = read(settings)
    return [CollectionInfo(name=DEFAULT)] + [CollectionInfo(name=n, created_at=known[n].get("created_at"))
                                             for n in sorted(known)]


def exists(settings: Settings, name: str) -> bool:
    """Whether collection ``name`` exists (``default`` always does)."""
    return name == DEFAULT or check_name(name) in read(settings)


def require(settings: Settings, name: str) -> str:
    """``name`` when the collection exists, else a ``NotFoundError`` naming how to create it."""
    if not exists(settings, name):
        raise NotFoundError(f"no collection {name!r} (create it: hopgraph collections create {name}, or POST "
                            "/collections)")
    return name
