"""A LangChain retriever over hopgraph: ``HopgraphRetriever(platform=...)`` queries an open ``Platform`` in
this process, ``HopgraphRetriever(url=..., api_key=...)`` a running ``hopgraph serve``. Each result is a
``Document`` whose metadata carry its citation (source, document_id, chunk_id), rank, score, mode and
entities. Needs the extra ``langchain`` (``pip install 'hopgraph[langchain]'``)."""

from __future__ import annotations

from typing import Self

from pydantic import Field, SecretStr, model_validator

from hopgraph.app.platform import Platform
from hopgraph.core.limits import TOP_K_MAX
from hopgraph.core.records import QueryFilters, QueryResult
from hopgraph.integrations.backend import KEY_ENV, Backend, citation_metadata, missing_extra

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as exc:  # the extra is not installed
    raise missing_extra("langchain", "langchain-core", exc) from exc

__all__ = ["HopgraphRetriever"]


class HopgraphRetriever(BaseRetriever):
    """Ranked, cited passages of hopgraph as LangChain ``Document``\\ s.

    Give either ``platform`` (an open ``hopgraph.Platform``) or ``url`` (the address of a running
    ``hopgraph serve``, e.g. ``http://127.0.0.1:8000``) with ``api_key`` (a ``read`` key, sent as a bearer
    token; default: the ``HOPGRAPH_API_KEY`` environment variable). A request the server refuses (an
    unknown mode, a bad key) raises ``ValueError`` with the server's message.
    """

    platform: Platform | None = Field(default=None, description="An open Platform of this process.")
    url: str | None = Field(default=None, description="The address of a running hopgraph serve.")
    api_key: SecretStr | None = Field(default=None, repr=False, description="A key of that server (default: "
                                      f"${KEY_ENV}).")
    mode: str = Field(default="graph", description="The retrieval mode (hopgraph modes lists them).")
    top_k: int = Field(default=10, ge=1, le=TOP_K_MAX, description="Documents per query.")
    filters: QueryFilters | None = Field(default=None, description="Only these documents or sources.")
    timeout_s: float = Field(default=120.0, gt=0, description="Time limit of one HTTP query.")

    @model_validator(mode="after")
    def _one_backend(self) -> Self:
        self._backend()  # either a platform or a url
        return self

    @property
    def lc_secrets(self) -> dict[str, str]:
        return {"api_key": KEY_ENV}

    def _backend(self) -> Backend:
        key = self.api_key.get_secret_value() if self.api_key is not None else None
        return Backend(platform=self.platform, url=self.url, api_key=key, timeout_s=self.timeout_s)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun
                                ) -> list[Document]:
        return documents(self._backend().query(query, self.mode, self.top_k, self.filters))

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
                                       ) -> list[Document]:
        return documents(await self._backend().aquery(query, self.mode, self.top_k, self.filters))


def documents(result: QueryResult) -> list[Document]:
    """A query's results as ``Document``\\ s (id: the chunk id), best first."""
    return [Document(page_content=r.text, metadata=citation_metadata(r, result.mode), id=r.citation.chunk_id)
            for r in result.results]
