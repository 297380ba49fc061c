"""Optional LLM community reports (``communities.llm_summaries``), GraphRAG style.

Only communities that are new after an ingest are described (unchanged ones keep their report), so
a small change costs a few requests. The prompt lists the community's key entities and relations
(with their supporting sentences); the answer is GraphRAG's JSON report (title, summary, findings).
An answer that is not such a JSON object is rejected (never cached) and the community keeps its
extractive summary, with a warning: a report is an improvement, not something to lose a graph over.
"""

from __future__ import annotations

import json
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hopgraph.core.records import Community
from hopgraph.ingest.llm_client import ChatClient, LlmError, LlmOutputError

log = logging.getLogger(__name__)

REPORT_PROMPT = """You are an AI assistant that helps a human analyst to perform general information discovery.

# Goal
Write a comprehensive report of a community, given a list of entities that belong to the community as well as \
their relationships. The report will be used to inform decision-makers about information associated with the \
community and their potential impact.

# Report Structure
- TITLE: community's name that represents its key entities - short but specific.
- SUMMARY: An executive summary of the community's overall structure and how its entities are related.
- IMPACT SEVERITY RATING: a float score between 0-10 of the importance of the community.
- RATING EXPLANATION: a single sentence explanation of the rating.
- DETAILED FINDINGS: A list of 5-10 key insights about the community, each a short summary and an explanation.

Return output as a well-formed JSON-formatted string with the following format:
{{"title": <report_title>, "summary": <executive_summary>, "rating": <impact_severity_rating>,
  "rating_explanation": <rating_explanation>,
  "findings": [{{"summary": <insight_1_summary>, "explanation": <insight_1_explanation>}}]}}

# Real Data
Use the following text for your answer. Do not make anything up in your answer.

Text:
-----Entities-----
{entities}
-----Relationships-----
{relations}

Output:"""

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


def parse_report(answer: str) -> dict[str, Any]:
    """GraphRAG's report JSON (code fences allowed); ``LlmOutputError`` if it is not one."""
    try:
        data = json.loads(_FENCE.sub("", answer.strip()))
    except ValueError as exc:
        raise LlmOutputError(f"the community report is not JSON: {answer.strip()[:120]!r}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("title"), str) or not isinstance(data.get("summary"),
                                                                                                   str):
        raise LlmOutputError("the community report lacks a string 'title' and 'summary'")
    return data


class LlmReporter:
    """Replaces the extractive title and summary of new communities with LLM reports."""

    def __init__(self, client: ChatClient, max_findings: int = 5) -> None:
        self.client = client
        self.max_findings = max_findings
        self.failed = 0

    def _one(self, entities: list[str], relations: list[str]) -> dict[str, Any] | None:
        prompt = REPORT_PROMPT.format(entities="\n".join(entities), relations="\n".join(relations) or "(none)")
        try:
            return parse_report(self.client.chat([{"role": "user", "content": prompt}], accept=parse_report))
        except LlmOutputError as exc:
            log.warning("community report rejected, keeping the extractive summary: %s", exc)
        except LlmError as exc:
            log.warning("community report failed, keeping the extractive summary: %s", exc)
        self.failed += 1
        return None

    def describe(self, communities: list[Community], contexts: dict[str, tuple[list[str], list[str]]],
                 max_concurrency: int) -> None:
        """``contexts``: community id -> (entity lines, relation lines)."""
        todo = [c for c in communities if c.id in contexts]
        with ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="llm-report") as pool:
            reports = list(pool.map(lambda c: self._one(*contexts[c.id]), todo))
        for c, rep in zip(todo, reports, strict=True):
            if rep is None:
                continue
            findings = [f.get("summary", "") for f in rep.get("findings", []) if isinstance(f, dict)]
            c.title = rep["title"][:200]
            c.summary = " ".join([rep["summary"], *(f"{s}." for s in findings[: self.max_findings] if s)])
