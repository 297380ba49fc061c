"""Which collection a request addresses, and whether its key may: ``?collection=NAME`` (default
``default``) on every route that reads or writes a knowledge graph.

A key may use the collections its ``collections`` list names (``*``: all); a key that may not use a
collection gets 403 whether or not the collection exists, so keys learn nothing of others'
collections. With no keys configured (loopback only) every collection is open. Each collection is
served by a ``Platform`` of its own, opened on first use and sharing the loaded models.
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

COLLECTION_QUERY = Query(DEFAULT, description="The collection (an isolated knowledge graph) addressed; "
                         "`default` holds what was ingested without one.", max_length=40)


def may_use(auth: Authenticator, presented: str | None, collection: str) -> bool:
    """Whether the key ``presented`` may use ``collection`` (every collection while no keys are set)."""
    if auth.open:
        return True
    key = auth.key_of(presented or "")
    return key is not None and ("*" in key.collections or collection in key.collections)


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
