"""POST /query."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from hopgraph.api.deps import problems, state
from hopgraph.api.problems import ProblemError
from hopgraph.api.schemas import QueryRequest, QueryResponse
from hopgraph.api.tenancy import Reader, ReadPlatform

router = APIRouter(tags=["query"])


@router.post("/query", response_model=QueryResponse, responses=problems(400, 401, 403, 404, 413, 422, 503, 504),
             summary="Retrieve ranked, cited chunks and a cited context")
async def query(body: QueryRequest, request: Request,
                p: ReadPlatform, reader: Reader) -> QueryResponse:
    """Answer a query with one of the retrieval modes. ``notes`` and ``degraded`` say when a stage
    overran its time cap and a cheaper mode answered; ``timings_ms`` gives each stage's time. A key with
    access groups finds the documents it reads alone (403 for a mode that cannot answer over them)."""
    hg = state(request)
    overrides: dict[str, Any] = {}
    if body.token_budget is not None:
        overrides["token_budget"] = body.token_budget
    if body.rerank is not None:
        overrides["rerank"] = body.rerank
    if body.mmr_lambda is not None:
        overrides["mmr_lambda"] = body.mmr_lambda
    if body.nli is not None:
        nli = hg.settings.retrieval.nli
        if body.nli and not nli.model:
            raise ProblemError(400, "nli needs retrieval.nli.model (an NLI cross-encoder name or path) in the "
                                    "server's settings")
        overrides["nli"] = nli.model_copy(update={"enabled": body.nli})
    if body.confidence is not None:
        overrides["confidence"] = hg.settings.retrieval.confidence.model_copy(update={"enabled": body.confidence})
    cfg = hg.settings.retrieval.model_copy(update=overrides) if overrides else None
    timeout = hg.settings.api.query_timeout_s
    try:
        result = await asyncio.wait_for(run_in_threadpool(
            p.query, body.text, body.mode.value, body.top_k, body.explain, cfg, body.filters, reader), timeout)
    except TimeoutError:
        raise ProblemError(504, f"the query took longer than query_timeout_s={timeout:g}s") from None
    hg.metrics.observe_query(body.mode.value, result.degraded, result.timings_ms.get("total", 0.0))
    return QueryResponse(**result.model_dump(exclude={"degraded"}))
