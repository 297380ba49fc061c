"""API keys: only SHA-256 digests are configured; a 'read' scope and an 'admin' scope.

A key is sent as ``X-API-Key: <key>`` or ``Authorization: Bearer <key>``. With no keys configured
the API is open, which ``hopgraph serve`` allows only on a loopback address.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Literal

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from hopgraph.api.problems import ProblemError
from hopgraph.core.errors import BadInputError
from hopgraph.core.service_settings import ApiKey
from hopgraph.core.settings import Settings

Scope = Literal["read", "admin"]

_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="An API key ('read' or 'admin').")
_bearer = HTTPBearer(auto_error=False, description="The same API key as a bearer token.")


def hash_key(key: str) -> str:
    """The digest to put in settings for a key."""
    return hashlib.sha256(key.encode()).hexdigest()


def new_key() -> tuple[str, str]:
    """A fresh random key and its digest."""
    key = "hg_" + secrets.token_urlsafe(32)
    return key, hash_key(key)


class Authenticator:
    """Checks presented keys against the configured digests."""

    def __init__(self, keys: list[ApiKey]) -> None:
        self.keys = list(keys)

    @property
    def open(self) -> bool:
        return not self.keys

    def key_of(self, presented: str) -> ApiKey | None:
        """The configured key whose digest ``presented`` has, if any."""
        digest = hash_key(presented)
        for k in self.keys:
            if hmac.compare_digest(k.sha256, digest):
                return k
        return None

    def scope_of(self, presented: str) -> Scope | None:
        key = self.key_of(presented)
        return key.scope if key is not None else None


async def presented(key: str | None = Depends(_header),
                    bearer: HTTPAuthorizationCredentials | None = Depends(_bearer)) -> str | None:
    """A dependency: the key the request presents (``X-API-Key``, else the bearer token), if any."""
    return key or (bearer.credentials if bearer else None)


def require(scope: Scope) -> Callable[..., Coroutine[Any, Any, Scope]]:
    """A dependency that admits requests whose key has ``scope`` (admin implies read)."""

    async def check(request: Request, key: str | None = Depends(_header),
                    bearer: HTTPAuthorizationCredentials | None = Depends(_bearer)) -> Scope:
        return authorize(request.app.state.hg.auth, key or (bearer.credentials if bearer else None), scope)

    return check


def authorize(auth: Authenticator, presented: str | None, scope: Scope, what: str = "this route") -> Scope:
    """The scope of the ``presented`` key when it allows ``scope`` (admin implies read; everything is
    allowed while no keys are configured); a 401 or 403 ``ProblemError`` otherwise. ``what`` names the
    thing refused in the 403's text."""
    if auth.open:
        return "admin"
    challenge = {"WWW-Authenticate": 'Bearer realm="hopgraph"'}
    if not presented:
        raise ProblemError(401, "an API key is required (X-API-Key header or Authorization: Bearer)", challenge)
    got = auth.scope_of(presented)
    if got is None:
        raise ProblemError(401, "unknown API key", challenge)
    if scope == "admin" and got != "admin":
        raise ProblemError(403, f"{what} needs an API key with the 'admin' scope")
    return got


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a request presents: its ``X-API-Key`` header, else its ``Authorization: Bearer`` token."""
    key = headers.get("x-api-key")
    if key:
        return key
    kind, _, token = (headers.get("authorization") or "").partition(" ")
    return token.strip() or None if kind.lower() == "bearer" else None


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_config(settings: Settings) -> None:
    """Refuse an open API (no keys) on a non-loopback address."""
    if not settings.api.api_keys and not is_loopback(settings.api.host):
        raise BadInputError(f"refusing to serve on {settings.api.host} without API keys: add keys to "
                            "settings (hopgraph api-key makes one) or bind to 127.0.0.1")
