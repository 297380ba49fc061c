"""``/mcp`` of ``hopgraph serve``: the MCP tools over streamable HTTP, authorised as the HTTP API is.

A request to ``/mcp`` without a known key is refused (401) when keys are configured, before the MCP
layer reads it; then each tool call is authorised by the key of the request that carries it (``X-API-Key``
or ``Authorization: Bearer``), with the API's own rule (``hopgraph.api.auth.authorize``): a ``read`` key
calls the read tools, ``ingest_paths`` needs an ``admin`` key. With no keys configured the endpoint is
open, as the API is (``serve`` then listens on loopback only). Keys reloaded on SIGHUP apply at once.
The transport is stateless (each POST stands alone) and answers JSON, never a long-lived stream.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from hopgraph.api.auth import Scope, authorize, presented_key
from hopgraph.api.deps import AppState
from hopgraph.api.problems import ProblemError
from hopgraph.api.routes.documents import submit_local_paths
from hopgraph.api.tenancy import check_collection, reader_of
from hopgraph.app.platform import Platform
from hopgraph.core.collections import DEFAULT

log = logging.getLogger(__name__)

#: where the MCP endpoint is served
PATH = "/mcp"
#: seconds ``ingest_paths`` waits for its job before answering with the job still running
INGEST_WAIT_S = 600.0


class ServedAccess:
    """The tools of a running ``serve``: the app's platform, the caller's key, the app's job queue."""

    def __init__(self, app: FastAPI) -> None:
        self._app = app

    @property
    def hg(self) -> AppState:
        hg: AppState = self._app.state.hg
        return hg

    @property
    def query_timeout_s(self) -> float | None:
        return self.hg.settings.api.query_timeout_s

    def platform(self, ctx: Any, scope: Scope, tool: str, collection: str = DEFAULT) -> Platform:
        request = ctx.request_context.request
        headers = request.headers if isinstance(request, Request) else {}
        name = check_collection(self.hg, presented_key(headers), scope, collection, f"the tool {tool!r}")
        return self.hg.platform_for(name)

    def ingest(self, ctx: Any, paths: list[str], collection: str = DEFAULT) -> dict[str, Any]:
        """Queue the paths as ``POST /documents/paths`` does and wait for the job (or answer it running)."""
        request = ctx.request_context.request
        key = presented_key(request.headers if isinstance(request, Request) else {})
        job = submit_local_paths(self.hg, self.hg.platform_for(collection), paths, key)
        with contextlib.suppress(concurrent.futures.TimeoutError):
            job = self.hg.jobs.wait(job.id, timeout=INGEST_WAIT_S) or job
        return job.model_dump(mode="json")


class _KeyGate:
    """Refuses requests without a known key (any scope) when keys are configured: a 401 problem."""

    def __init__(self, inner: ASGIApp, hg: Callable[[], AppState]) -> None:
        self.inner = inner
        self.hg = hg

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            key = presented_key(Request(scope).headers)
            authorize(self.hg().auth, key, "read")
            if reader_of(self.hg().auth, key) is not None:  # its tools show entities and communities too
                raise ProblemError(403, "the MCP endpoint serves keys that read every document; this key reads "
                                        "some only (its groups): use POST /query or /answer")
        await self.inner(scope, receive, send)


def install(app: FastAPI, host: str) -> Callable[[], contextlib.AbstractAsyncContextManager[None]]:
    """Serve the MCP tools at ``/mcp`` of ``app`` (which listens on ``host``: on loopback the SDK refuses
    other Host and Origin headers, against DNS rebinding); returns what the app's lifespan must run around
    its serving (the SDK's session manager). Without the ``mcp`` extra, nothing is served there."""
    try:
        from hopgraph.api.mcp_server import build_server
    except ImportError as exc:  # the optional extra is not installed
        log.info("no MCP endpoint (%s): pip install 'hopgraph[mcp]'", exc)
        return contextlib.nullcontext
    access = ServedAccess(app)
    server = build_server(access)
    server.streamable_http_app(streamable_http_path=PATH, stateless_http=True, json_response=True, host=host)
    manager = server.session_manager
    app.router.routes.append(Route(PATH, endpoint=_KeyGate(manager.asgi_app, lambda: access.hg),
                                   include_in_schema=False))

    @contextlib.asynccontextmanager
    async def running() -> AsyncIterator[None]:
        async with manager.run():
            yield

    return running
