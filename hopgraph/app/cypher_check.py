"""The read-only check of a Cypher statement before any store opens (the console checks it again)."""

from __future__ import annotations

from hopgraph.core.settings import Settings
from hopgraph.graphdb.readonly import READ_RULES, ReadOnlyViolation, check_read_only
from hopgraph.graphdb.registry import graph_dialect


def refused_write(settings: Settings, statement: str) -> str | None:
    """Why the configured backend's allow-list refuses ``statement`` (it may write), or None where it
    passes or the backend's dialect has no allow-list."""
    dialect = graph_dialect(settings.graph.backend)
    if dialect is None or dialect not in READ_RULES:
        return None
    try:
        check_read_only(statement, dialect)
    except ReadOnlyViolation as exc:
        return str(exc)
    return None
