"""POST /answer and POST /answer/stream: an LLM's answer from a mode's cited context."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from fastapi import APIRouter, Depends
from fastapi.sse import EventSourceResponse, ServerSentEvent
from starlette.concurrency import run_in_threadpool

from hopgraph.api.deps import problems
from hopgraph.api.schemas import AnswerRequest, AnswerResponse
from hopgraph.api.tenancy import Reader, ReadPlatform
from hopgraph.app.answers import Answerer
from hopgraph.core.errors import HopgraphError, classify

log = logging.getLogger(__name__)
router = APIRouter(tags=["answer"])


def answerer(p: ReadPlatform, reader: Reader) -> Answerer:
    """The answerer of the request's collection, over the documents its key reads. As a dependency it runs
    before the response starts, so "no LLM is configured" (``ConflictError``) is a 409 problem, never an
    event inside a begun stream."""
    return p.answerer.for_reader(reader)


def _args(body: AnswerRequest) -> dict[str, object]:
    return {"mode": body.mode.value if body.mode else None, "top_k": body.top_k,
            "token_budget": body.token_budget, "filters": body.filters}


@router.post("/answer", response_model=AnswerResponse, responses=problems(400, 401, 403, 404, 409, 413, 422, 503),
             summary="Answer a question with the configured LLM, citing the retrieved passages")
async def answer(body: AnswerRequest, ans: Answerer = Depends(answerer)) -> AnswerResponse:
    """Retrieve with a mode, send its cited context to the OpenAI-compatible endpoint of the ``llm``
    settings and check the answer's citations against that context (``invalid_citations`` lists labels
    that name nothing in it). 409 when no LLM is configured; 503 when the endpoint fails."""
    result = await run_in_threadpool(ans.answer, body.text, **_args(body))  # type: ignore[arg-type]
    return AnswerResponse(**result.model_dump(exclude={"citations_valid"}))


@router.post("/answer/stream", response_class=EventSourceResponse,
             responses=problems(400, 401, 403, 404, 409, 413, 422),
             summary="The same answer as server-sent events, written as the LLM writes it")
def answer_stream(body: AnswerRequest, ans: Answerer = Depends(answerer)) -> Iterator[ServerSentEvent]:
    """Events in order: ``retrieval`` (the ranked passages and the context sent), ``delta`` (pieces of
    the answer's text, JSON strings), then ``answer`` (the whole answer with its checked citations), or
    ``error`` (a problem document) if retrieval or the LLM fails after the stream has begun."""
    try:
        for event in ans.stream(body.text, **_args(body)):  # type: ignore[arg-type]
            if event.kind == "retrieval" and event.retrieval is not None:
                yield ServerSentEvent(event="retrieval", data=event.retrieval.model_dump(mode="json"))
            elif event.kind == "delta":
                yield ServerSentEvent(event="delta", data=event.text)
            elif event.answer is not None:
                yield ServerSentEvent(event="answer", data=event.answer.model_dump(mode="json"))
    except HopgraphError as exc:
        status = classify(exc)[1]
        log.warning("answer stream failed: %s", exc)
        yield ServerSentEvent(event="error", data={"type": "about:blank", "status": status, "detail": str(exc)})
