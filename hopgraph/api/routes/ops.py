"""Operations: GET /health, /ready, /metrics (no key needed: probes and scrapers)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from hopgraph.api.deps import problems, state
from hopgraph.api.problems import ProblemError
from hopgraph.api.schemas import CheckOut, Health, IndexOut, Ready
from hopgraph.app.doctor import diagnose

router = APIRouter(tags=["operations"])


@router.get("/health", response_model=Health, summary="Liveness: the process answers")
def health() -> Health:
    return Health(status="ok")


@router.get("/ready", response_model=Ready, responses=problems(503),
            summary="Readiness: the checks of `hopgraph doctor` (stores, migrations, embedder, counts, orphans)")
async def ready(request: Request) -> Ready:
    platform = state(request).platform
    try:
        checks = await run_in_threadpool(diagnose, platform)
        version = await run_in_threadpool(platform.admin.version)
        chunks = await run_in_threadpool(platform.vectors.count, "chunks")
    except Exception as exc:  # any failure means not ready, with the reason
        raise ProblemError(503, f"not ready: {type(exc).__name__}: {exc}") from None
    failed = [c for c in checks if not c.ok]
    if failed:
        raise ProblemError(503, "not ready: " + "; ".join(f"{c.name}: {c.detail}" for c in failed))
    fresh = platform.retriever.keeper.freshness()
    return Ready(status="ready", graph_version=version, chunks=chunks,
                 index=IndexOut(served_version=fresh.served_version, lag=max(version - fresh.served_version, 0),
                                last_refresh_s=fresh.last_refresh_s, last_refresh_kind=fresh.last_refresh_kind),
                 checks=[CheckOut(name=c.name, ok=c.ok, detail=c.detail) for c in checks])


@router.get("/metrics", summary="Prometheus metrics", response_class=Response,
            responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text format"}})
def metrics(request: Request) -> Response:
    return state(request).metrics.render()
