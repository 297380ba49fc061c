"""Errors as RFC 7807 problem details, and the mapping of hopgraph's errors onto HTTP statuses."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from neo4j.exceptions import ClientError, Neo4jError
from starlette.exceptions import HTTPException as StarletteHTTPException

from hopgraph.core.errors import HopgraphError, StoreUnavailableError, classify

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"


class ProblemError(Exception):
    """Raise to answer with a problem document."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers


def problem(status: int, detail: str = "", instance: str | None = None, headers: dict[str, str] | None = None,
            **extra: Any) -> JSONResponse:
    body = {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status, "detail": detail,
            "instance": instance, **extra}
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def _field_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    return [{"loc": [str(p) for p in e.get("loc", ())], "msg": e.get("msg", ""), "type": e.get("type", "")}
            for e in exc.errors()]


def install(app: FastAPI) -> None:
    """Register the handlers that turn every error into problem JSON."""

    @app.exception_handler(ProblemError)
    async def _problem(request: Request, exc: ProblemError) -> JSONResponse:
        return problem(exc.status, exc.detail, request.url.path, exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return problem(exc.status_code, str(exc.detail), request.url.path, getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = _field_errors(exc)
        detail = "; ".join(f"{'.'.join(e['loc'])}: {e['msg']}" for e in errors[:5])
        return problem(422, detail or "invalid request", request.url.path, errors=errors)

    @app.exception_handler(HopgraphError)
    async def _hopgraph(request: Request, exc: HopgraphError) -> JSONResponse:
        status = classify(exc)[1]
        if isinstance(exc, StoreUnavailableError):
            log.warning("store error on %s: %s", request.url.path, exc)
            return problem(status, f"a store is unavailable: {exc}", request.url.path)
        return problem(status, str(exc), request.url.path)

    @app.exception_handler(ClientError)
    async def _cypher(request: Request, exc: ClientError) -> JSONResponse:
        if "Timeout" in (exc.code or "") or "timeout" in (exc.message or "").lower():
            return problem(504, f"the statement timed out: {exc.message}", request.url.path)
        return problem(400, f"the graph database rejected the statement: {exc.message or exc}", request.url.path)

    @app.exception_handler(Neo4jError)
    async def _unavailable(request: Request, exc: Exception) -> JSONResponse:
        log.warning("store error on %s: %s", request.url.path, exc)
        return problem(503, f"a store is unavailable: {exc}", request.url.path)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s", request.url.path)
        return problem(500, f"internal error ({type(exc).__name__})", request.url.path)
