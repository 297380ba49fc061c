"""Summaries of the RAPTOR tree's clusters.

Extractive by default (no LLM): the sentences of the children, scored by centrality (TF-IDF cosine
with the cluster's mean sentence, as in LexRank's centroid variant), the most central first while a
near-duplicate of a chosen sentence is skipped, then put back in reading order. With
``raptor.llm_summaries`` the OpenAI-compatible LLM writes them with RAPTOR's prompt; a failed request
keeps the extractive summary (with a warning).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from hopgraph.core.text import split_sentences
from hopgraph.ingest.llm_client import ChatClient, LlmError

log = logging.getLogger(__name__)

#: a sentence this similar (TF-IDF cosine) to a chosen one says nothing new
DUPLICATE = 0.8
SUMMARY_PROMPT = "Write a summary of the following, including as many key details as possible: {context}"


def extractive(texts: Sequence[str], sentences: int, chars: int) -> str:
    """The most central sentences of ``texts`` (at most ``sentences`` and ``chars``), in reading order."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    sents = list(dict.fromkeys(s for t in texts for s in split_sentences(t)))
    if len(sents) <= 1:
        return (sents[0] if sents else "")[:chars]
    try:
        m = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit_transform(sents)
    except ValueError:  # only stop words: keep the opening sentences
        return " ".join(sents[:sentences])[:chars]
    centre = np.asarray(m.mean(axis=0)).ravel()
    norm = float(np.linalg.norm(centre))
    scores = (m @ centre) / (norm or 1.0)
    chosen: list[int] = []
    used = 0
    for i in np.argsort(-scores, kind="stable").tolist():
        if len(chosen) == sentences:
            break
        if chosen and float((m[chosen] @ m[i].T).toarray().max()) >= DUPLICATE:
            continue
        if used + len(sents[i]) > chars and chosen:
            continue
        chosen.append(i)
        used += len(sents[i]) + 1
    return " ".join(sents[i] for i in sorted(chosen))[:chars]


class LlmSummarizer:
    """Cluster summaries written by the LLM (RAPTOR's prompt); ``None`` where a request failed."""

    def __init__(self, client: ChatClient, max_concurrency: int = 4, max_chars: int = 12_000) -> None:
        self.client = client
        self.max_concurrency = max_concurrency
        self.max_chars = max_chars
        self.failed = 0

    def _one(self, texts: Sequence[str]) -> str | None:
        context = "\n\n".join(texts)[: self.max_chars]
        try:
            answer = self.client.chat([{"role": "user", "content": SUMMARY_PROMPT.format(context=context)}])
        except LlmError as exc:
            log.warning("tree summary failed, keeping the extractive one: %s", exc)
            self.failed += 1
            return None
        return answer.strip() or None

    def summarize(self, groups: Sequence[Sequence[str]]) -> list[str | None]:
        """One summary per group of child texts."""
        with ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix="llm-tree") as pool:
            return list(pool.map(self._one, groups))
