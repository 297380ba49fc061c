"""Operations: GET /health and /ready answer without a key (probes); /ready's counts and checks, and
/metrics, need a key that may see them (``sees_counts``, ``metrics``) unless ``api.metrics_public`` opens
/metrics to a scraper."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, Response
from starlette.concurrency import run_in_threadpool

from hopgraph.api.auth import authorize, presented
from hopgraph.api.deps import AppState, problems, state
from hopgraph.api.problems import ProblemError
from hopgraph.api.schemas import CheckOut, Health, IndexOut, Ready
from hopgraph.api.tenancy import may_use, reader_of
from hopgraph.app.doctor import diagnose
from hopgraph.core.collections import DEFAULT

router = APIRouter(tags=["operations"])

METRICS_KEY = ("/metrics counts the requests, queries and ingests of every collection: it needs an API key over "
               "every collection (collections = [\"*\"]) that reads every document (groups \"*\", or admin), or "
               "api.metrics_public = true")


def sees_counts(hg: AppState, key: str | None) -> bool:
    """Whether ``key`` may see the default collection's counts, as GET /status shows them: no keys are
    configured, or it is a known key that may use ``default`` and reads every document."""
    if hg.auth.open:
        return True
    return (key is not None and hg.auth.key_of(key) is not None and may_use(hg.auth, key, DEFAULT)
            and reader_of(hg.auth, key) is None)


@router.get("/health", response_model=Health, summary="Liveness: the process answers")
def health() -> Health:
    return Health(status="ok")


@router.get("/ready", response_model=Ready, response_model_exclude_none=True, responses=problems(503),
            summary="Readiness: the checks of `hopgraph doctor` (stores, migrations, embedder, counts, orphans); "
                    "the counts and checks only for a key that may see them (as GET /status)")
async def ready(request: Request, key: str | None = Depends(presented)) -> Ready:
    hg = state(request)
    shown = sees_counts(hg, key)
    platform = hg.platform
    try:
        checks = await run_in_threadpool(diagnose, platform)
        version = await run_in_threadpool(platform.admin.version)
        chunks = await run_in_threadpool(platform.chunk_count)
    except Exception as exc:  # any failure means not ready, with the reason (its text only with a key)
        raise ProblemError(503, f"not ready: {type(exc).__name__}" + (f": {exc}" if shown else "")) from None
    failed = [c for c in checks if not c.ok]
    if failed:
        said = "; ".join(f"{c.name}: {c.detail}" if shown else c.name for c in failed)
        raise ProblemError(503, f"not ready: {said}" + ("" if shown else " (their details need an API key)"))
    if not shown:
        return Ready(status="ready")
    fresh = platform.freshness()
    return Ready(status="ready", graph_version=version, chunks=chunks,
                 index=IndexOut(served_version=fresh.served_version, lag=max(version - fresh.served_version, 0),
                                last_refresh_s=fresh.last_refresh_s, last_refresh_kind=fresh.last_refresh_kind),
                 checks=[CheckOut(name=c.name, ok=c.ok, detail=c.detail) for c in checks])


@router.get("/metrics", summary="Prometheus metrics (a key over every collection, or api.metrics_public)",
            response_class=Response,
            responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text format"},
                       **problems(401, 403)})
def metrics(request: Request, key: str | None = Depends(presented)) -> Response:
    hg = state(request)
    if not hg.settings.api.metrics_public and not hg.auth.open:
        authorize(hg.auth, key, "read")  # 401 without a known key
        found = hg.auth.key_of(key or "")
        if found is None or "*" not in found.collections or reader_of(hg.auth, key) is not None:
            raise ProblemError(403, METRICS_KEY)
    return hg.metrics.render()
