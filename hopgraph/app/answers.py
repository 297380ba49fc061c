"""Answers: a mode's cited context -> the OpenAI-compatible LLM of the ``llm`` settings -> an answer
whose citations are checked against that context (``hopgraph ask``, ``POST /answer``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from hopgraph.core.answer_settings import AnswerSettings
from hopgraph.core.errors import ConflictError
from hopgraph.core.records import Answer, QueryFilters, QueryResult
from hopgraph.core.settings import LlmSettings, RetrievalSettings
from hopgraph.ingest.llm_client import ChatClient
from hopgraph.retrieval.parts.answer_prompt import check_citations, context_labels, messages

#: what retrieval an answer needs: (question, mode, top_k, retrieval settings, filters, reader) -> result
Retrieve = Callable[[str, str, int, RetrievalSettings, QueryFilters | None, frozenset[str] | None], QueryResult]

NO_LLM = ("no LLM is configured: answers need an OpenAI-compatible endpoint (set llm.base_url, llm.model "
          "and, if it wants one, llm.api_key in hopgraph.toml or HOPGRAPH_LLM__* variables)")


@dataclass(frozen=True)
class AnswerEvent:
    """One step of a streamed answer: the retrieval, a piece of text, or the checked answer."""

    kind: Literal["retrieval", "delta", "answer"]
    retrieval: QueryResult | None = None
    text: str = ""
    answer: Answer | None = None


def require_llm(cfg: LlmSettings) -> None:
    """Raise :class:`ConflictError` (HTTP 409, exit 5) when no endpoint is configured."""
    if not cfg.configured:
        raise ConflictError(NO_LLM)


class Answerer:
    """Retrieves with a mode, asks the LLM with the cited context, checks the answer's citations."""

    def __init__(self, retrieve: Retrieve, client: ChatClient, retrieval: RetrievalSettings,
                 cfg: AnswerSettings, reader: frozenset[str] | None = None) -> None:
        self.retrieve = retrieve
        self.client = client
        self.retrieval = retrieval
        self.cfg = cfg
        self.reader = reader

    def for_reader(self, reader: frozenset[str] | None) -> Answerer:
        """This answerer for one holding the access groups ``reader`` (None: it reads every document)."""
        return self if reader == self.reader else Answerer(self.retrieve, self.client, self.retrieval, self.cfg,
                                                            reader)

    def _context(self, question: str, mode: str | None, top_k: int | None, token_budget: int | None,
                 filters: QueryFilters | None) -> QueryResult:
        budget = token_budget or self.cfg.token_budget
        settings = self.retrieval.model_copy(update={"token_budget": budget})
        return self.retrieve(question, mode or self.cfg.mode, top_k or self.cfg.top_k, settings, filters,
                             self.reader)

    def answer(self, question: str, mode: str | None = None, top_k: int | None = None,
               token_budget: int | None = None, filters: QueryFilters | None = None) -> Answer:
        """Retrieve, ask and check, in one call."""
        t0 = time.perf_counter()
        found = self._context(question, mode, top_k, token_budget, filters)
        t1 = time.perf_counter()
        text = self.client.chat(messages(question, found.context, self.cfg), max_tokens=self.cfg.max_tokens)
        return self._checked(question, text, found, t0, t1)

    def stream(self, question: str, mode: str | None = None, top_k: int | None = None,
               token_budget: int | None = None, filters: QueryFilters | None = None) -> Iterator[AnswerEvent]:
        """The retrieval first, then the answer's text as it is written, then the checked answer."""
        t0 = time.perf_counter()
        found = self._context(question, mode, top_k, token_budget, filters)
        t1 = time.perf_counter()
        yield AnswerEvent("retrieval", retrieval=found)
        pieces: list[str] = []
        for piece in self.client.stream(messages(question, found.context, self.cfg), max_tokens=self.cfg.max_tokens):
            pieces.append(piece)
            yield AnswerEvent("delta", text=piece)
        yield AnswerEvent("answer", answer=self._checked(question, "".join(pieces), found, t0, t1))

    def _checked(self, question: str, text: str, found: QueryResult, t0: float, t1: float) -> Answer:
        check = check_citations(text, context_labels(found))
        t2 = time.perf_counter()
        return Answer(question=question, answer=text.strip(), mode=found.mode, model=self.client.cfg.model,
                      citations=check.cited, invalid_citations=check.invalid,
                      uncited_sentences=check.uncited_sentences, retrieval=found,
                      timings_ms={"retrieval": round((t1 - t0) * 1000, 2), "llm": round((t2 - t1) * 1000, 2),
                                  "total": round((t2 - t0) * 1000, 2)})
