"""Creating and deleting collections (``hopgraph.core.collections`` places their stores; their names
are ``hopgraph.app.collection_registry``'s). Deleting a collection drops its graph database, its vector
collections, its index state and its files; ``default`` cannot be deleted.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime

from hopgraph.app.collection_registry import CollectionInfo, locked
from hopgraph.app.platform import Platform
from hopgraph.core.collections import DEFAULT, check_name, home, placed
from hopgraph.core.errors import BadInputError, ConflictError, NotFoundError
from hopgraph.core.settings import Settings


def create_collection(settings: Settings, name: str) -> CollectionInfo:
    """Create collection ``name``: its graph database and vector collections are made and migrated now,
    so a store that cannot hold another collection fails here, not at the first ingest."""
    check_name(name)
    if name == DEFAULT:
        raise ConflictError("collection 'default' always exists")
    made = datetime.now(UTC).isoformat(timespec="seconds")
    with locked(settings) as known:
        if name in known:
            raise ConflictError(f"collection {name!r} exists")
        known[name] = {"created_at": made}
    try:
        with Platform(settings, collection=name) as p:
            p.admin.migrate()
            p.vectors.count("chunks")
    except BaseException:
        with locked(settings) as known:
            known.pop(name, None)
        raise
    return CollectionInfo(name=name, created_at=made)


def delete_collection(settings: Settings, name: str) -> None:
    """Delete collection ``name``: its graph database, vector collections, index state and files."""
    from hopgraph.graphdb.factory import drop_database
    from hopgraph.vectors.registry import vector_backend

    if check_name(name) == DEFAULT:
        raise BadInputError("collection 'default' cannot be deleted (delete its documents instead)")
    with locked(settings) as known:
        if name not in known:
            raise NotFoundError(f"no collection {name!r}")
        where = placed(settings, name)
        drop_database(where)
        vector_backend(where.vectors.backend).drop_collection(where)
        shutil.rmtree(settings.data_dir / home(settings, name), ignore_errors=True)
        del known[name]
