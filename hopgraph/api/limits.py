"""Request size limits as a pure ASGI middleware: 413 before a large body is read into memory."""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class _TooLarge(Exception):
    pass


class BodyLimit:
    """Rejects bodies over ``limit_for(path, content_type)`` bytes, by Content-Length or while streaming."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str, str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        limit = self.limit_for(scope["path"], headers.get(b"content-type", b"").decode("latin-1"))
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            await self._reject(send, scope["path"], limit)
            return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _TooLarge
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracked_send)
        except _TooLarge:
            if not started:
                await self._reject(send, scope["path"], limit)

    @staticmethod
    async def _reject(send: Send, path: str, limit: int) -> None:
        body = json.dumps({"type": "about:blank", "title": "Content Too Large", "status": 413,
                           "detail": f"the request body is larger than {limit} bytes", "instance": path}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/problem+json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
