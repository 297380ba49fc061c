"""The read-only check of a Cypher statement before any store opens (the console checks it again)."""

from __future__ import annotations

from hopgraph.core.settings import Settings
from hopgraph.graphdb.readonly import READ_RULES, ReadOnlyViolation, check_read_only


def refused_write(settings: Settings, statement: str) -> str | None:
    """Why the configured backend's allow-list refuses ``statement`` (it may write), or None where it
    passes or the backend has no allow-list of its own."""
    backend = settings.graph.backend
    if backend not in READ_RULES:
        return None
    try:
        check_read_only(statement, backend)
    except ReadOnlyViolation as exc:
        return str(exc)
    return None
