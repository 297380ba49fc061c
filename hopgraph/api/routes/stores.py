"""GET /status and /doctor: what ``hopgraph status`` and ``doctor`` show, for the CLI while ``serve``
owns the embedded stores (read keys)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from hopgraph.api.deps import problems
from hopgraph.api.schemas import CheckOut, StoreStatus
from hopgraph.api.tenancy import WholeGraphPlatform
from hopgraph.app.doctor import diagnose

router = APIRouter(tags=["operations"])


@router.get("/status", response_model=StoreStatus, responses=problems(401, 403, 404, 422),
            summary="The counts of `hopgraph status`: graph items and vectors")
async def store_status(p: WholeGraphPlatform) -> StoreStatus:
    return StoreStatus.model_validate(await run_in_threadpool(p.status))


@router.get("/doctor", response_model=list[CheckOut], responses=problems(401, 403, 404, 422),
            summary="Every check of `hopgraph doctor`, failed ones included (200 either way; see `ok`)")
async def doctor(p: WholeGraphPlatform) -> list[CheckOut]:
    checks = await run_in_threadpool(diagnose, p)
    return [CheckOut(name=c.name, ok=c.ok, detail=c.detail) for c in checks]
