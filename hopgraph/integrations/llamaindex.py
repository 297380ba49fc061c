"""A LlamaIndex retriever over hopgraph: ``HopgraphRetriever(platform=...)`` queries an open ``Platform`` in
this process, ``HopgraphRetriever(url=..., api_key=...)`` a running ``hopgraph serve``. Each result is a
``NodeWithScore`` around a ``TextNode`` (id: the chunk id) whose metadata carry its citation (source,
document_id, chunk_id), rank, score, mode and entities. Needs the extra ``llamaindex``
(``pip install 'hopgraph[llamaindex]'``)."""

from __future__ import annotations

from hopgraph.app.platform import Platform
from hopgraph.core.errors import BadInputError
from hopgraph.core.limits import TOP_K_MAX
from hopgraph.core.records import QueryFilters, QueryResult
from hopgraph.integrations.backend import Backend, citation_metadata, missing_extra

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # the extra is not installed
    raise missing_extra("llamaindex", "llama-index-core", exc) from exc

__all__ = ["HopgraphRetriever"]

#: the metadata an LLM prompt or an embedding of the node shows with its text (the rest is bookkeeping)
SHOWN_METADATA = frozenset({"source", "section"})


class HopgraphRetriever(BaseRetriever):
    """Ranked, cited passages of hopgraph as LlamaIndex ``NodeWithScore``\\ s.

    Give either ``platform`` (an open ``hopgraph.Platform``) or ``url`` (the address of a running
    ``hopgraph serve``, e.g. ``http://127.0.0.1:8000``) with ``api_key`` (a ``read`` key, sent as a bearer
    token; default: the ``HOPGRAPH_API_KEY`` environment variable). A request the server refuses (an
    unknown mode, a bad key) raises ``ValueError`` with the server's message.
    """

    def __init__(self, *, platform: Platform | None = None, url: str | None = None, api_key: str | None = None,
                 mode: str = "graph", top_k: int = 10, filters: QueryFilters | None = None,
                 timeout_s: float = 120.0, callback_manager: CallbackManager | None = None,
                 verbose: bool = False) -> None:
        if not 1 <= top_k <= TOP_K_MAX:
            raise BadInputError(f"top_k must be 1 to {TOP_K_MAX}, not {top_k}")
        self._backend = Backend(platform=platform, url=url, api_key=api_key, timeout_s=timeout_s)
        self.mode = mode
        self.top_k = top_k
        self.filters = filters
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    @property
    def platform(self) -> Platform | None:
        return self._backend.platform

    @property
    def url(self) -> str | None:
        return self._backend.url

    def __repr__(self) -> str:
        where = f"url={self.url!r}" if self.url is not None else "platform=..."
        return f"HopgraphRetriever({where}, mode={self.mode!r}, top_k={self.top_k})"

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return nodes(self._backend.query(query_bundle.query_str, self.mode, self.top_k, self.filters))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return nodes(await self._backend.aquery(query_bundle.query_str, self.mode, self.top_k, self.filters))


def nodes(result: QueryResult) -> list[NodeWithScore]:
    """A query's results as scored ``TextNode``\\ s (id: the chunk id), best first."""
    out = []
    for r in result.results:
        meta = citation_metadata(r, result.mode)
        hidden = [k for k in meta if k not in SHOWN_METADATA]
        node = TextNode(text=r.text, id_=r.citation.chunk_id, metadata=meta,
                        excluded_llm_metadata_keys=hidden, excluded_embed_metadata_keys=hidden)
        out.append(NodeWithScore(node=node, score=r.score))
    return out
