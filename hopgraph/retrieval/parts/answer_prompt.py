"""Answer prompts and their citation check (pure: no model, no store).

The context a mode builds cites each passage as ``[document_id#chunk_id]`` and each image as
``[document_id]``; the answer must cite those labels. :func:`check_citations` finds every label the
answer cites, resolves it to the retrieved result it names (the full label, or the chunk id alone)
and flags those that name nothing in the context, and the sentences that cite nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hopgraph.core.answer_settings import AnswerSettings
from hopgraph.core.records import Citation, QueryResult

_BRACKETS = re.compile(r"\[([^\[\]\n]{1,400})\]")
_SEPARATORS = re.compile(r"\s*[,;]\s*")
#: a sentence ends at . ! or ? and the citations right after it, before a capital or the end
_SENTENCE_END = re.compile(r"[.!?](?:\s*\[[^\[\]\n]*\])*(?=\s+[A-Z0-9\"'(]|\s*$)")
_LABEL_SHAPE = re.compile(r"^[\w.:/-]+(#[\w.:/-]+)?$")
#: sentences shorter than this (words) need no citation ("Yes.", "In short:")
MIN_CITED_WORDS = 4


def messages(question: str, context: str, cfg: AnswerSettings) -> list[dict[str, str]]:
    """The chat messages that ask for a cited answer to ``question`` from ``context``."""
    body = context.strip() or "(no passages were retrieved)"
    return [{"role": "system", "content": cfg.system_prompt},
            {"role": "user", "content": cfg.user_prompt.format(context=body, question=question.strip())}]


def context_labels(result: QueryResult) -> dict[str, Citation]:
    """Every label that cites a retrieved item of ``result`` whose text reached the context: the full
    label (``doc#chunk``, or ``doc`` for an image) and the chunk id alone."""
    labels: dict[str, Citation] = {}
    for r in result.results:
        c = r.citation
        full = c.document_id if r.image else f"{c.document_id}#{c.chunk_id}"
        if f"[{full}]" not in result.context:
            continue  # cut by the token budget: citing it cites nothing the model saw
        labels[full] = c
        labels.setdefault(c.chunk_id, c)
    return labels


@dataclass
class CitationCheck:
    """What an answer cites: resolved citations in first-cited order, labels naming nothing in the
    context, and sentences that cite nothing."""

    cited: list[Citation] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    uncited_sentences: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.invalid


def cited_labels(text: str) -> list[str]:
    """The labels written in square brackets in ``text``, in order (``[a, b]`` is two labels);
    bracketed prose (spaces inside a part) is not a label."""
    out: list[str] = []
    for group in _BRACKETS.findall(text):
        out.extend(part.strip() for part in _SEPARATORS.split(group)
                   if part.strip() and _LABEL_SHAPE.match(part.strip()))
    return out


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (a citation after the full stop stays with its sentence)."""
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        out.append(text[start:m.end()].strip())
        start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


def check_citations(answer: str, labels: dict[str, Citation]) -> CitationCheck:
    """Resolve the citations of ``answer`` against ``labels`` (see :func:`context_labels`)."""
    check = CitationCheck()
    seen: set[str] = set()
    for label in cited_labels(answer):
        citation = labels.get(label)
        if citation is None:
            if label not in check.invalid:
                check.invalid.append(label)
        elif citation.chunk_id not in seen:
            seen.add(citation.chunk_id)
            check.cited.append(citation)
    for sentence in sentences(answer):
        prose = _BRACKETS.sub("", sentence).strip()
        if len(prose.split()) >= MIN_CITED_WORDS and not cited_labels(sentence):
            check.uncited_sentences.append(prose)
    return check
