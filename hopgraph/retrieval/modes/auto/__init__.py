"""``auto``: pick a mode per query from what the query looks like, and say why (``--explain`` and the
result's notes). Rules, in order:

1. a short search (not a question, at most 12 words) with an exact phrase in quotes or an
   identifier (``ERR-1234``, ``v2.3``, ``snake_case``) -> ``rrf`` (keywords must match as written; in
   a question, quotes usually mark a title, which the graph walk handles);
2. "how are X and Y connected / related", "relationship between" about things that are not proper
   names ("privacy and innovation") -> ``mix`` (entities and the relations between them beside the
   passages' dense and BM25 ranks, which ``hybrid`` alone lacks; between named things the graph walk
   finds the chain);
3. an abstract or overview request ("give an overview", "summarize", "what is ... about", "in
   general") that names nothing -> ``raptor`` when the store has the RAPTOR tree (summaries of
   clusters of passages), else rule 4;
4. a thematic, whole-corpus question (themes, trends, "often", "most frequently") that names nothing
   (no proper name, quoted title, document title, identifier, number or date) -> ``global``
   (relationship and community vectors);
5. anything else (questions about named things, multi-hop questions) -> ``graph``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from hopgraph.retrieval.parts import signals
from hopgraph.retrieval.registry import REGISTRY, ModeOutput
from hopgraph.retrieval.resources import Resources
from hopgraph.retrieval.run import Run
from hopgraph.retrieval.trace import Trace

_QUOTED = re.compile(r"[\"“”]([^\"“”]{2,})[\"“”]")
_IDENTIFIER = re.compile(r"\b(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z])[A-Za-z][\w.-]*-?\d[\w.-]*\b|\b[a-z]+_[a-z_]+\b"
                         r"|\b[a-z]+[A-Z][A-Za-z]+\b")
_CONNECTION = re.compile(r"\bhow (?:are|is|were|was|do|does|did)\b.{3,120}\b(?:connected|related|linked|"
                         r"associated)\b|\brelationships? between\b|\bconnections? between\b", re.IGNORECASE)
_THEMATIC = re.compile(r"\b(?:themes?|topics?|trends?|patterns?|recurring|common(?:ly)?|often|frequently|"
                       r"typically|usually|generally|overview|summari[sz]e|across (?:the|all))\b", re.IGNORECASE)
_OVERVIEW = re.compile(r"\b(?:overview|summar(?:y|i[sz]e)|in general|broadly|gist|big picture|main (?:ideas?|points?)|"
                       r"what (?:is|are) (?:the )?[\w\s]{0,40}\babout)\b", re.IGNORECASE)
#: a capitalized word after the first (a proper name); all-capital acronyms ("AI", "NASA") are not names
_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z][\w'-]*")
#: a number, date or time ("20260901_13:00", "1893"): the query names a moment, not the whole corpus
_NUMBER = re.compile(r"\d{2,}")
_WH = re.compile(r"^\s*(who|what|when|where|which|why|how)\b", re.IGNORECASE)


@dataclass
class Route:
    """The chosen mode, the rule that chose it and the features it read."""

    mode: str
    rule: str
    features: dict[str, Any] = field(default_factory=dict)


def route(text: str, titles_named: int, tree: bool = False) -> Route:
    """The mode for a query (pure: ``titles_named`` = documents whose title the query names, ``tree`` =
    whether the RAPTOR tree exists)."""
    quoted = _QUOTED.findall(text)
    identifiers = _IDENTIFIER.findall(text)
    wh = _WH.match(text)
    features: dict[str, Any] = {
        "quoted": quoted, "identifiers": identifiers, "connection": bool(_CONNECTION.search(text)),
        "thematic": bool(_THEMATIC.search(text)), "overview": bool(_OVERVIEW.search(text)),
        "titles_named": titles_named,
        "question_word": wh.group(1).lower() if wh else None, "words": len(text.split()),
        "names": _NAME.findall(text.strip())}
    question = bool(wh) or text.strip().endswith("?")
    if (quoted or identifiers) and not question and features["words"] <= 12:
        return Route("rrf", "a search for an exact phrase or identifier: keywords must match as written", features)
    named = bool(titles_named or quoted or features["names"] or identifiers or _NUMBER.search(text))
    if features["connection"] and not named:
        return Route("mix", "asks how things are connected: entities and the relations between them, beside "
                     "the passages' own dense and keyword ranks", features)
    if features["overview"] and not named and tree:
        return Route("raptor", "an overview naming no document: the summary tree of passage clusters", features)
    if features["thematic"] and not named:
        return Route("global", "a thematic question naming no document: relationship and community vectors",
                     features)
    return Route("graph", "about named things or several hops: the graph walk", features)


class AutoMode:
    def run(self, run: Run, res: Resources) -> ModeOutput:
        titles = len(signals.titles_in_query(run.snap, run.text))
        chosen = route(run.text, titles, tree=True)
        if chosen.mode == "raptor" and not res.vectors.count("summaries"):  # looked for only when it would be chosen
            chosen = route(run.text, titles, tree=False)
        trace = Trace(explain={"auto": {"mode": chosen.mode, "rule": chosen.rule, "features": chosen.features}},
                      notes=[f"auto chose {chosen.mode}: {chosen.rule}"])
        out = REGISTRY.mode(chosen.mode).run(run, res)
        trace.merge(out)
        return replace(out, timings=trace.timings, signals=trace.signals, explain=trace.explain, notes=trace.notes)
