"""Shared request-level helpers: the app's state, and problem responses for the OpenAPI schema."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request

from hopgraph.api.auth import Authenticator
from hopgraph.api.jobs import JobManager
from hopgraph.api.metrics import Metrics
from hopgraph.api.schemas import Problem
from hopgraph.app.platform import Platform
from hopgraph.core.collections import DEFAULT
from hopgraph.core.settings import Settings
from hopgraph.ingest.scheduler import ReingestScheduler


@dataclass
class AppState:
    """What the routes reach through ``request.app.state.hg``."""

    settings: Settings
    platform: Platform
    jobs: JobManager
    metrics: Metrics
    auth: Authenticator
    scheduler: ReingestScheduler | None = None
    reload: Callable[[], Any] = lambda: None  # set by the app: re-read keys and schedules (api.reload)
    #: the platforms of the collections other than ``default`` that requests opened
    others: dict[str, Platform] = field(default_factory=dict)
    opening: threading.Lock = field(default_factory=threading.Lock)

    def platform_for(self, collection: str) -> Platform:
        """The platform of ``collection`` (opened on first use, sharing the default one's models)."""
        if collection == DEFAULT:
            return self.platform
        with self.opening:
            found = self.others.get(collection)
            if found is None:
                found = Platform(self.settings, embedder=self.platform.embedder, collection=collection)
                found.retriever.state()  # the stores and the index state, before the first request
                self.others[collection] = found
            return found

    def forget(self, collection: str) -> None:
        """Close the platform of a deleted collection."""
        with self.opening:
            found = self.others.pop(collection, None)
        if found is not None:
            found.close()

    def close_others(self) -> None:
        """Close every collection's platform but the default one (at shutdown)."""
        for name in list(self.others):
            self.forget(name)


def state(request: Request) -> AppState:
    hg: AppState = request.app.state.hg
    return hg


_TITLES = {400: "Bad request", 401: "No or unknown API key", 403: "The key's scope does not allow this",
           404: "Not found", 413: "Body too large", 422: "Invalid body or parameters",
           503: "A store is unavailable", 504: "Timed out"}


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` entries documenting problem-JSON errors."""
    return {s: {"model": Problem, "description": _TITLES.get(s, "Error"),
                "content": {"application/problem+json": {}}} for s in statuses}
