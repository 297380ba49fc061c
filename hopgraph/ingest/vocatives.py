"""Speakers addressed by name in a chat turn: "Woohoo Melanie!", "Aww John, bummer", "Glad it helped ya,
Melanie!". The recognizer reads an unknown greeting as part of the name it precedes ("Woohoo Melanie",
"Aww John"), and resolution then makes that longer name the person's canonical one, so a question naming
Melanie finds no entity of that name. Where a turn writes the name of one of its chunk's speakers in the
place of an address — followed by punctuation or the line's end, and preceded by a comma or by at most
two words (none capitalised after the first) from the start of the turn or sentence — the name is that
speaker and the words before it (the greeting) belong to no entity."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: words a greeting before an addressed name may have ("Hey", "Thank you")
GREETING_WORDS = 2
#: what may follow an addressed name
_AFTER = {",", "!", "?", ".", "…", "...", ";"}
#: what may precede a greeting: a speaker tag's colon or the end of a sentence
_BOUNDARY = {":", ".", "!", "?", "…"}


@dataclass(frozen=True)
class Addressed:
    """A speaker addressed by name: the tokens of the greeting (``start:name_start``, none after a comma)
    and of the name (``name_start:end``)."""

    start: int
    name_start: int
    end: int
    name: str


def addressed(doc: Any, names: Iterable[str]) -> list[Addressed]:
    """Where the spaCy ``doc`` addresses one of the speakers ``names``, in the order found."""
    out: list[Addressed] = []
    for name in sorted(dict.fromkeys(names), key=len, reverse=True):  # "John Smith" before "Smith"
        for m in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", doc.text):
            span = doc.char_span(m.start(), m.end())
            if span is None or not _followed_by_a_stop(doc, span.end):
                continue
            start = greeting_start(doc, span.start)
            if start is not None:
                out.append(Addressed(start, span.start, span.end, name))
    return out


def _followed_by_a_stop(doc: Any, i: int) -> bool:
    return i >= len(doc) or doc[i].text in _AFTER or "\n" in doc[i].text


def greeting_start(doc: Any, i: int) -> int | None:
    """The first token of the greeting before a name at token ``i`` (``i`` itself after a comma or at the
    start of a turn or sentence); None where the name is not in the place of an address, or where a word
    after the greeting's first is capitalised (part of another name)."""
    if i > 0 and doc[i - 1].text == ",":
        return i
    j = i
    while j > 0 and i - j < GREETING_WORDS and doc[j - 1].is_alpha:
        j -= 1
    if any(t.text[:1].isupper() and t.text != "I" for t in doc[j + 1:i]):
        return None  # a capitalised word inside the greeting is a name's ("Saw Elton John!")
    if j == 0 or doc[j - 1].text in _BOUNDARY or doc[j - 1].is_space or doc[j].is_sent_start:
        return j
    return None
