"""Shared request-level helpers: the app's state, and problem responses for the OpenAPI schema."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request

from hopgraph.api.auth import Authenticator
from hopgraph.api.jobs import JobManager
from hopgraph.api.metrics import Metrics
from hopgraph.api.schemas import Problem
from hopgraph.app.open_platforms import OpenPlatforms
from hopgraph.app.platform import Platform
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
    #: the platforms of the collections requests opened (``default``: ``platform``)
    opened: OpenPlatforms = field(init=False)

    def __post_init__(self) -> None:
        self.opened = OpenPlatforms(self.platform)

    def platform_for(self, collection: str) -> Platform:
        """The platform of ``collection`` (opened on first use, sharing the default one's models)."""
        return self.opened.get(collection)

    def forget(self, collection: str) -> None:
        """Close the platform of a deleted collection."""
        self.opened.forget(collection)

    def close_others(self) -> None:
        """Close every collection's platform but the default one (at shutdown)."""
        self.opened.close_others()


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
