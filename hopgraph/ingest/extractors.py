"""The one place an extractor is made, for ``extraction.method``: the ingest process (``Ingestor``), its
extraction worker processes (``ingest.extraction_worker``) and Ray tasks (``ingest.ray_engine``) all ask
here. What a caller may do with an extractor it reads from the extractor (``Extractor.local``), never
from its class, so a new kind is added here and nowhere else."""

from __future__ import annotations

from collections.abc import Callable

from hopgraph.core.settings import ExtractionSettings
from hopgraph.ingest.extraction import Extractor, SpacyExtractor
from hopgraph.ingest.llm_client import ChatClient
from hopgraph.ingest.llm_extraction import LlmExtractor

#: a surface entity id -> its canonical id (the aliases of entity resolution)
Resolve = Callable[[str], str]


def local_extractor(cfg: ExtractionSettings, resolve: Resolve | None = None) -> Extractor | None:
    """The extractor ``cfg.method`` names if it is ``local`` (made from ``cfg`` alone, so also in an
    extraction worker process or a Ray task): spaCy; None for the LLM, which runs in the ingest process only."""
    if cfg.method == "spacy":
        return SpacyExtractor(cfg, resolve=resolve)
    return None


def make_extractor(cfg: ExtractionSettings, resolve: Resolve | None = None,
                   chat: Callable[[], ChatClient] | None = None) -> Extractor:
    """The extractor ``cfg.method`` names: spaCy by default; the OpenAI-compatible LLM when
    ``extraction.method = "llm"``, asking ``chat`` for its client (the ingest process's one client and
    response cache, with the LLM settings it was made with), which only the LLM needs."""
    local = local_extractor(cfg, resolve)
    if local is not None:
        return local
    if chat is None:
        raise ValueError(f"extraction.method = {cfg.method!r} needs an LLM client (chat)")
    client = chat()
    return LlmExtractor(client.cfg, client, resolve=resolve)
