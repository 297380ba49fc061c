"""Read-only statements on ArcadeDB over its HTTP query API, with a time limit that holds on the server.

ArcadeDB ignores the Bolt driver's transaction timeout, and a statement keeps a core busy after the
client gave up. Over HTTP it cancels a statement whose client disconnected: the time limit is the
client's read timeout, after which the connection is closed and the server stops the statement (over
Bolt, the same statement runs on to its end).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from hopgraph.core.errors import BadInputError, StoreUnavailableError, TimeLimitError
from hopgraph.graphdb.records import ExploreResult


def _plain(value: Any) -> Any:
    """ArcadeDB's JSON records as the Bolt path shows them: a node {labels, ...}, an edge {type, ...}."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        props = {k: _plain(v) for k, v in value.items() if not k.startswith("@")}
        if value.get("@cat") == "v":
            return {"labels": [value.get("@type")], **props}
        if value.get("@cat") == "e":
            return {"type": value.get("@type"), **props}
        return props
    return value


def explore(base_url: str, auth: tuple[str, str], database: str, statement: str,
            params: Mapping[str, Any] | None, row_limit: int, timeout_s: float) -> ExploreResult:
    """Run a (checked read-only) Cypher statement; stop it on the server after ``timeout_s``."""
    body = {"language": "cypher", "command": statement, "params": dict(params or {}), "limit": row_limit + 1}
    try:
        with httpx.Client(auth=auth, timeout=httpx.Timeout(timeout_s, connect=10.0)) as client:
            r = client.post(f"{base_url}/api/v1/query/{database}", json=body)
    except httpx.ReadTimeout as exc:
        raise TimeLimitError(f"the statement ran past its {timeout_s:g} s limit and was stopped") from exc
    except httpx.HTTPError as exc:
        raise StoreUnavailableError(f"cannot reach ArcadeDB's HTTP API at {base_url}: {exc}") from exc
    if r.status_code >= 400:
        try:
            detail = r.json().get("detail") or r.json().get("error") or r.text
        except ValueError:
            detail = r.text
        raise BadInputError(f"the graph database rejected the statement: {str(detail)[:500]}")
    records = r.json().get("result", [])
    columns = list(records[0]) if records else []
    rows = [[_plain(rec.get(c)) for c in columns] for rec in records[:row_limit]]
    return ExploreResult(columns, rows, truncated=len(records) > row_limit)
