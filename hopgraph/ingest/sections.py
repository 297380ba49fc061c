"""A document's sections: the text between its marked headings (``hopgraph.core.text.SECTION_MARK``,
set by the Markdown and HTML converters), or its paragraphs (blank lines), or the whole text.

A heading stays in its section's text, as the sentence it was. A heading with nothing under it
before the next one (a chapter title right above its first subsection) is carried into the next
section's text rather than becoming a section of one line. Each section has a path: the headings
from the top down to it (``"History > Founding"``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from hopgraph.core.text import SECTION_MARK

SectionSplit = Literal["headings", "paragraphs", "none"]
_MARKED = re.compile(f"^{SECTION_MARK}([1-6]) (.*)$", re.MULTILINE)
_PARAGRAPH = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class SectionText:
    """One section of a document: its heading, level, path and text (marks removed)."""

    title: str
    level: int
    path: str
    text: str


def unmarked(text: str) -> str:
    """The text with heading marks removed (headings stay as sentences)."""
    return _MARKED.sub(lambda m: m.group(2), text) if SECTION_MARK in text else text


def split_sections(text: str, split: SectionSplit = "headings") -> list[SectionText]:
    """The sections of a document's text, in order (at least one)."""
    if split == "paragraphs":
        parts = [p.strip() for p in _PARAGRAPH.split(unmarked(text)) if p.strip()]
        return [SectionText("", 0, f"¶{i + 1}", p) for i, p in enumerate(parts)] or [SectionText("", 0, "", "")]
    marks = list(_MARKED.finditer(text)) if split == "headings" else []
    if not marks:
        return [SectionText("", 0, "", unmarked(text))]
    out: list[SectionText] = []
    intro = text[: marks[0].start()].strip()
    if intro:
        out.append(SectionText("", 0, "", unmarked(intro)))
    stack: list[tuple[int, str]] = []
    carried = ""
    for i, m in enumerate(marks):
        level, sentence = int(m.group(1)), m.group(2).strip()
        title = sentence[:-1] if sentence.endswith(".") else sentence
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        body = text[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(text)].strip()
        if not body:  # a heading with nothing under it: its words go with the next section
            carried += sentence + "\n"
            continue
        out.append(SectionText(title, level, " > ".join(t for _, t in stack),
                               unmarked(f"{carried}{sentence}\n{body}")))
        carried = ""
    if carried:  # trailing headings with no text under any of them
        out.append(SectionText(stack[-1][1], stack[-1][0], " > ".join(t for _, t in stack), carried.strip()))
    return out
