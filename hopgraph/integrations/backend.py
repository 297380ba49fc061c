"""What the framework retrievers share: one query, answered by a local ``Platform`` or by a running
``hopgraph serve`` over its HTTP API, and the citation metadata of each result."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from hopgraph.core.errors import BadInputError, StoreUnavailableError, TimeLimitError
from hopgraph.core.records import QueryFilters, QueryResult, RetrievedChunk

if TYPE_CHECKING:
    from hopgraph.app.platform import Platform

#: where the key of a remote server is read when none is given (as for the CLI's remote commands)
KEY_ENV = "HOPGRAPH_API_KEY"
#: the optional fields of a result that go into its metadata when set
OPTIONAL_FIELDS = ("section", "image", "confidence", "cluster")


def missing_extra(extra: str, package: str, exc: ImportError) -> ImportError:
    """The error of an integration whose framework is not installed: what to install."""
    return ImportError(f"hopgraph.integrations.{extra} needs the {package} package: "
                       f"pip install 'hopgraph[{extra}]' ({exc})")


@dataclass(frozen=True)
class Backend:
    """Either a local ``platform`` or the ``url`` of a running ``hopgraph serve`` (with ``api_key``,
    sent as a bearer token; default: the ``HOPGRAPH_API_KEY`` environment variable)."""

    platform: Platform | None = None
    url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 120.0

    def __post_init__(self) -> None:
        if (self.platform is None) == (self.url is None):
            raise BadInputError("give one of platform= (an open hopgraph Platform) or url= (the address of a "
                                "running hopgraph serve)")
        if self.url is not None:
            if not self.url.startswith(("http://", "https://")):
                raise BadInputError(f"url must be an http:// or https:// address, not {self.url!r}")
            object.__setattr__(self, "url", self.url.rstrip("/"))
            if self.api_key is None:
                object.__setattr__(self, "api_key", os.environ.get(KEY_ENV) or None)

    # -- the query -----------------------------------------------------------------------------
    def query(self, text: str, mode: str, top_k: int, filters: QueryFilters | None = None) -> QueryResult:
        """The platform's or the server's answer (BadInputError, a ValueError, for a bad request)."""
        if self.platform is not None:
            return self.platform.query(text, mode=mode, top_k=top_k, filters=filters)
        try:
            response = httpx.post(self._endpoint, json=self._body(text, mode, top_k, filters),
                                  headers=self._headers(), timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc
        return self._result(response)

    async def aquery(self, text: str, mode: str, top_k: int, filters: QueryFilters | None = None) -> QueryResult:
        """As ``query``, without blocking the event loop: a local platform answers in a worker thread."""
        if self.platform is not None:
            return await asyncio.to_thread(self.platform.query, text, mode=mode, top_k=top_k, filters=filters)
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s) as client:
                response = await client.post(self._endpoint, json=self._body(text, mode, top_k, filters),
                                             headers=self._headers())
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from exc
        return self._result(response)

    # -- the HTTP exchange ------------------------------------------------------------------------
    @property
    def _endpoint(self) -> str:
        return f"{self.url}/query"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    @staticmethod
    def _body(text: str, mode: str, top_k: int, filters: QueryFilters | None) -> dict[str, Any]:
        body: dict[str, Any] = {"text": text, "mode": mode, "top_k": top_k}
        if filters is not None:
            body["filters"] = filters.model_dump(exclude_none=True)
        return body

    def _unreachable(self, exc: httpx.HTTPError) -> StoreUnavailableError:
        return StoreUnavailableError(f"hopgraph serve at {self.url} did not answer: {exc}")

    def _result(self, response: httpx.Response) -> QueryResult:
        status = response.status_code
        if status < 400:
            body = response.json()
            body.pop("degraded", None)
            return QueryResult.model_validate(body)
        try:
            problem = response.json()
            detail = str(problem.get("detail") or problem.get("title") or response.text)
        except ValueError:
            detail = response.text.strip() or response.reason_phrase
        message = f"hopgraph serve at {self.url} answered {status}: {detail}"
        if status in (401, 403):
            message += f" (pass api_key= a key of the server with scope read, or set {KEY_ENV})"
        if status == 504:
            raise TimeLimitError(message)
        if 400 <= status < 500:
            raise BadInputError(message)
        raise StoreUnavailableError(message)


def citation_metadata(chunk: RetrievedChunk, mode: str) -> dict[str, Any]:
    """A result's citation, rank, score, answering mode and entities (and section, image, confidence and
    NLI cluster when it has them), as plain values for a framework's metadata."""
    meta: dict[str, Any] = {
        "source": chunk.citation.source, "document_id": chunk.citation.document_id,
        "chunk_id": chunk.citation.chunk_id, "rank": chunk.rank, "score": chunk.score, "mode": mode,
        "entities": list(chunk.entities),
    }
    meta.update({name: value for name in OPTIONAL_FIELDS if (value := getattr(chunk, name)) is not None})
    return meta
