"""Collections: isolated knowledge graphs in one deployment, each with its own stores.

A collection other than ``default`` has a graph database of its own (``<graph.database>_<name>`` on
ArcadeDB, ``<graph.database>.<name>`` on Neo4j, whose names allow no ``_``), vector collections of its
own (qdrant-edge shards under ``<data_dir>/collections/<name>/vectors``; ``<vectors.prefix><name>_*`` on
a Qdrant server), and its own index state and GNN checkpoint under ``<data_dir>/collections/<name>/``.
No query, walk or write of one collection can reach another's data: they are different databases and
collections, opened by different stores. ``default`` is where everything lived before collections
existed, unchanged: upgrading moves nothing.
"""

from __future__ import annotations

import re

from hopgraph.core.backends import graph_backend
from hopgraph.core.errors import BadInputError
from hopgraph.core.service_settings import COLLECTION_NAME
from hopgraph.core.settings import Settings

DEFAULT = "default"
#: a collection's name: it becomes part of database and collection names on every backend
NAME = re.compile(COLLECTION_NAME)
NAME_RULE = "a lower-case letter, then up to 39 lower-case letters or digits"


class CollectionNameError(BadInputError):
    """A collection name that is not allowed."""


def check_name(name: str) -> str:
    """``name`` when it is a valid collection name, else a ``CollectionNameError`` saying the rule."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise CollectionNameError(f"invalid collection name {str(name)[:60]!r}: {NAME_RULE}")
    return name


def home(settings: Settings, name: str) -> str:
    """The folder of a collection's own files, relative to ``data_dir`` (none for ``default``)."""
    return "" if name == DEFAULT else f"collections/{check_name(name)}"


def placed(settings: Settings, name: str | None = None) -> Settings:
    """The settings of collection ``name`` (default: ``settings.collection``): its database, vector
    collections, index state and GNN checkpoint. Settings placed in ``default`` can be placed in another
    collection; settings placed in another collection stay there (placing them elsewhere is an error)."""
    want = check_name(name or settings.collection)
    if settings.placed_in == want:
        return settings
    if settings.placed_in not in (None, DEFAULT):  # default's places are the settings as given
        raise BadInputError(f"these settings address collection {settings.placed_in!r}, not {want!r}")
    if want == DEFAULT:
        out = settings.model_copy(update={"collection": DEFAULT})
    else:
        root = settings.data_dir / home(settings, want)
        backend = graph_backend(settings.graph.backend)
        database = backend.collection_database(settings.graph.database, want) if backend is not None \
            else f"{settings.graph.database}_{want}"
        out = settings.model_copy(update={
            "collection": want,
            "graph": settings.graph.model_copy(update={"database": database}),
            "vectors": settings.vectors.model_copy(update={"path": root / "vectors",
                                                           "prefix": f"{settings.vectors.prefix}{want}_"}),
            "index": settings.index.model_copy(update={"path": root / "index"}),
            **settings.with_gnn_checkpoint(root / "gnn.pt"),
        })
    out.mark_placed(want)
    return out
