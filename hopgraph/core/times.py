"""Timestamps as people and other tools read them: ISO 8601 in UTC, milliseconds, fixed width (so
that they also sort as text)."""

from __future__ import annotations

from datetime import UTC, datetime


def iso_time(ts: float | None) -> str | None:
    """``1700000000.5`` -> ``'2023-11-14T22:13:20.500+00:00'`` (None stays None)."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="milliseconds")
