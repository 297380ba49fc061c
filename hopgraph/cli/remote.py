"""While ``hopgraph serve`` owns the embedded stores, ``hopgraph query``, ``ask``, ``ingest``,
``delete``, ``status`` and ``doctor`` ask it over HTTP instead of refusing: the key comes from
``HOPGRAPH_API_KEY`` (never the command line)."""

from __future__ import annotations

import os
import time
from typing import Any

from hopgraph.core.errors import (
    BadInputError,
    ConflictError,
    HopgraphError,
    NotFoundError,
    StoreUnavailableError,
    TimeLimitError,
)
from hopgraph.core.records import Answer, IngestReport, QueryResult

KEY_ENV = "HOPGRAPH_API_KEY"
_BY_STATUS: dict[int, type[HopgraphError]] = {401: BadInputError, 403: BadInputError, 404: NotFoundError,
                                              409: ConflictError, 422: BadInputError, 504: TimeLimitError}


def _call(method: str, url: str, timeout: float = 120.0, extra_headers: dict[str, str] | None = None,
          **kwargs: Any) -> Any:
    import httpx

    from hopgraph.cli import common

    if common.COLLECTION not in (None, "default"):  # the collection --collection chose
        kwargs["params"] = {**kwargs.get("params", {}), "collection": common.COLLECTION}
    key = os.environ.get(KEY_ENV)
    headers = {"X-API-Key": key} if key else {}
    headers.update(extra_headers or {})
    try:
        r = httpx.request(method, url, headers=headers, timeout=timeout, **kwargs)
    except httpx.HTTPError as exc:
        raise StoreUnavailableError(f"the running hopgraph serve at {url} did not answer: {exc}") from exc
    if r.status_code >= 400:
        try:
            detail = r.json().get("detail") or r.text
        except ValueError:
            detail = r.text
        hint = f" (set {KEY_ENV} to a key of the server)" if r.status_code in (401, 403) else ""
        raise _BY_STATUS.get(r.status_code, StoreUnavailableError)(f"hopgraph serve: {detail}{hint}")
    return r.json()


def query(base: str, text: str, mode: str, top_k: int, explain: bool) -> QueryResult:
    """The running server's answer (the same result a local query gives)."""
    body = _call("POST", f"{base}/query", json={"text": text, "mode": mode, "top_k": top_k, "explain": explain})
    body.pop("degraded", None)
    return QueryResult.model_validate(body)


def answer(base: str, question: str, mode: str | None, top_k: int | None) -> Answer:
    """The running server's answer (``POST /answer``), as a local ``ask`` gives it."""
    request = {"text": question, **({"mode": mode} if mode else {}), **({"top_k": top_k} if top_k else {})}
    body = _call("POST", f"{base}/answer", timeout=600.0, json=request)
    body.pop("citations_valid", None)
    body["retrieval"].pop("degraded", None)
    return Answer.model_validate(body)


def status(base: str) -> dict[str, Any]:
    """The server's counts (``GET /status``), as ``Platform.status`` gives them."""
    body: dict[str, Any] = _call("GET", f"{base}/status")
    return body


def doctor(base: str) -> list[dict[str, Any]]:
    """Every check of the server's stores (``GET /doctor``): name, ok, detail."""
    checks: list[dict[str, Any]] = _call("GET", f"{base}/doctor", timeout=600.0)
    return checks


def _finished(base: str, job: dict[str, Any], doing: str, timeout_s: float) -> dict[str, Any]:
    """Poll a job of the server until it ends; its result, or why it failed."""
    deadline = time.monotonic() + timeout_s
    while job["status"] in ("queued", "running", "cancelling"):
        if time.monotonic() > deadline:
            raise TimeLimitError(f"hopgraph serve is still {doing} (job {job['id']}; see GET /jobs/{job['id']})")
        time.sleep(0.2)
        job = _call("GET", f"{base}/jobs/{job['id']}")
    if job["status"] != "succeeded":
        raise ConflictError(f"hopgraph serve failed {doing}: {job.get('error')}")
    result: dict[str, Any] = job.get("result") or {}
    return result


def delete(base: str, doc_ids: list[str], timeout_s: float = 600.0) -> int:
    """Delete documents through the server's jobs; return how many it deleted."""
    done = 0
    for doc_id in doc_ids:
        job = _call("DELETE", f"{base}/documents/{doc_id}")
        done += int(_finished(base, job, f"deleting {doc_id}", timeout_s).get("deleted", 0))
    return done


def ingest(base: str, paths: list[str], token: str = "", timeout_s: float = 24 * 3600.0,
           groups: list[str] | None = None) -> IngestReport:
    """Ingest files and folders of this machine through the server (``POST /documents/paths``), showing
    the owner ``token`` of its ``serve.json`` (which only the server's user can read): the server then
    reads any path, as this user could, not only those below ``api.ingest_roots``."""
    from hopgraph.app.ownership import OWNER_HEADER

    job = _call("POST", f"{base}/documents/paths", json={"paths": paths, **({"groups": groups} if groups else {})},
                extra_headers={OWNER_HEADER: token} if token else None)
    return IngestReport.model_validate(_finished(base, job, f"ingesting {len(paths)} path(s)", timeout_s))


def collections(base: str) -> list[dict[str, Any]]:
    """``GET /collections`` of a running serve."""
    found: list[dict[str, Any]] = _call("GET", f"{base}/collections")
    return found


def create_collection(base: str, name: str) -> dict[str, Any]:
    """``POST /collections`` of a running serve."""
    made: dict[str, Any] = _call("POST", f"{base}/collections", json={"name": name})
    return made


def delete_collection(base: str, name: str) -> None:
    """``DELETE /collections/NAME`` of a running serve."""
    _call("DELETE", f"{base}/collections/{name}")
