"""POST /admin/reload: re-read the settings and apply the API keys and schedules (admin keys only)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool

from hopgraph.api.auth import require
from hopgraph.api.deps import problems, state
from hopgraph.api.schemas import ReloadOut

router = APIRouter(tags=["operations"], dependencies=[Depends(require("admin"))])


@router.post("/admin/reload", response_model=ReloadOut, responses=problems(400, 401, 403),
             summary="Reload API keys and schedules from the settings (as SIGHUP does)")
async def reload_settings(request: Request) -> ReloadOut:
    """The environment and config file are read again; keys and schedules change at once, other
    changed sections are named in ``restart_needed`` and left as they were."""
    done = await run_in_threadpool(state(request).reload)
    return ReloadOut(keys=done.keys, schedules=done.schedules, restart_needed=done.restart_needed)
