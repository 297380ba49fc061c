"""Which collection a request addresses, and whether its key may: ``?collection=NAME`` (default
``default``) on every route that reads or writes a knowledge graph.

A key may use the collections its ``collections`` list names (``*``: all); a key that may not use a
collection gets 403 whether or not the collection exists, so keys learn nothing of others'
collections. With no keys configured (loopback only) every collection is open. Each collection is
served by a ``Platform`` of its own, opened on first use and sharing the loaded models.

Inside a collection, a read key whose ``groups`` do not include ``*`` is a *reader*: its queries and
answers run over the documents it may read (``core.access``), it lists only those, and the routes that
show what several documents built together (entities, relations, communities, Cypher, status, jobs)
refuse it with 403.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends, Query, Request
from starlette.concurrency import run_in_threadpool

from hopgraph.api.auth import Authenticator, Scope, authorize, presented
from hopgraph.api.deps import AppState
from hopgraph.api.problems import ProblemError
from hopgraph.app.collection_registry import exists
from hopgraph.app.platform import Platform
from hopgraph.core.collections import DEFAULT, CollectionNameError, check_name
from hopgraph.retrieval.registry import REGISTRY

COLLECTION_QUERY = Query(DEFAULT, description="The collection (an isolated knowledge graph) addressed; "
                         "`default` holds what was ingested without one.", max_length=40)


def may_use(auth: Authenticator, presented: str | None, collection: str) -> bool:
    """Whether the key ``presented`` may use ``collection`` (every collection while no keys are set)."""
    if auth.open:
        return True
    key = auth.key_of(presented or "")
    return key is not None and ("*" in key.collections or collection in key.collections)


def reader_of(auth: Authenticator, presented: str | None) -> frozenset[str] | None:
    """The access groups of the key ``presented`` when they restrict what it reads (None: it reads every
    document: no keys configured, an admin key, or a key whose groups include ``*``)."""
    if auth.open:
        return None
    key = auth.key_of(presented or "")
    if key is None or key.scope == "admin" or "*" in key.groups:
        return None
    return frozenset(key.groups)


async def request_reader(request: Request, key: str | None = Depends(presented)) -> frozenset[str] | None:
    """A dependency: the access groups of the request's key, when they restrict what it reads."""
    return reader_of(request.app.state.hg.auth, key)


#: a route parameter: the groups the request's key reads (None: every document)
Reader = Annotated[frozenset[str] | None, Depends(request_reader)]

WHOLE_GRAPH = ("this route shows what several documents built together, and this API key reads some documents "
               "only (its groups): it may use /query (modes {modes}), /answer and /documents")


def refuse_readers(reader: frozenset[str] | None) -> None:
    """A 403 for a key with access groups on a route that shows the whole graph."""
    if reader is not None:
        raise ProblemError(403, WHOLE_GRAPH.format(modes=", ".join(REGISTRY.view_modes())))


def check_collection(hg: AppState, presented: str | None, scope: Scope, collection: str, what: str = "this route"
                     ) -> str:
    """``collection`` once the key may use it with ``scope`` (401/403) and it exists (422, 404)."""
    authorize(hg.auth, presented, scope, what)
    if not may_use(hg.auth, presented, collection):
        raise ProblemError(403, f"this API key may not use collection {collection[:40]!r}")
    try:
        check_name(collection)
    except CollectionNameError as exc:
        raise ProblemError(422, str(exc)) from None
    if not exists(hg.settings, collection):
        raise ProblemError(404, f"no collection {collection!r}")
    return collection


def collection_platform(scope: Scope) -> Callable[..., Coroutine[Any, Any, Platform]]:
    """A dependency: the ``Platform`` of the request's collection, once its key may use it with ``scope``."""

    async def platform(request: Request, collection: str = COLLECTION_QUERY,
                       key: str | None = Depends(presented)) -> Platform:
        name = check_collection(request.app.state.hg, key, scope, collection)
        opened: Platform = await run_in_threadpool(request.app.state.hg.platform_for, name)
        return opened

    return platform


#: a route parameter: the platform of the request's collection, for a key with 'read' on it
ReadPlatform = Annotated[Platform, Depends(collection_platform("read"))]
#: the same for a key with 'admin' on it
AdminPlatform = Annotated[Platform, Depends(collection_platform("admin"))]


def _whole_graph() -> Callable[..., Coroutine[Any, Any, Platform]]:
    read = collection_platform("read")

    async def platform(p: Platform = Depends(read), reader: frozenset[str] | None = Depends(request_reader)
                       ) -> Platform:
        refuse_readers(reader)
        return p

    return platform


#: a route parameter: the platform of the request's collection, for a read key that reads every document
WholeGraphPlatform = Annotated[Platform, Depends(_whole_graph())]
