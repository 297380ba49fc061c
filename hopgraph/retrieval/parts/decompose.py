"""Questions with several parts, split without an LLM: "Did X happen before Y?", "Which came first, A or
B?", "between A and B", "from A to B", "What was X and what was Y?". Each part is retrieved on its own
and merged with the whole question's ranking, so that the passages of every side reach the top.

The split is lexical: at a temporal connective that opens a clause (followed by a pronoun, a name or a
gerund, not by a noun phrase: "after he told her", not "after the workout"), at "between … and …" and
"from … to …", at a comma before "A or B", and at "and" followed by a question word. A part keeps at
least ``MIN_WORDS`` words; a question that yields fewer than two parts is not split.
"""

from __future__ import annotations

import re

#: temporal connectives that join the two events of a question
TEMPORAL = ("before", "after", "prior to", "earlier than", "later than", "until", "once")
#: words after which a connective opens a clause (pronouns and determiners of a subject)
_PRONOUNS = {"he", "she", "they", "we", "i", "you", "it", "someone", "somebody", "anyone", "everyone"}
_NOT_CLAUSE = {"a", "an", "the", "this", "that", "these", "those", "my", "his", "her", "its", "our", "their",
               "your", "every", "each", "some", "any", "all", "one", "two", "three", "work", "school", "lunch",
               "dinner", "breakfast", "midnight", "noon", "sleeping"}
_QUESTION_WORDS = ("what", "who", "whom", "whose", "when", "where", "which", "why", "how")
MIN_WORDS = 3
_WORD = re.compile(r"[\w'\u2019-]+")
_TEMPORAL = re.compile(r"\b(" + "|".join(t.replace(" ", r"\s+") for t in TEMPORAL) + r")\s+(\S+)", re.I)
_BETWEEN = re.compile(r"\bbetween\s+(.+?)\s+and\s+(.+)$", re.I)
_FROM_TO = re.compile(r"\bfrom\s+(.+?)\s+to\s+(.+)$", re.I)
_AND_QUESTION = re.compile(r",?\s+and\s+(?=(?:" + "|".join(_QUESTION_WORDS) + r")\b)", re.I)
_CHOICE = re.compile(r",\s*(?:the\s+)?(.+?)\s+or\s+(?:the\s+)?(.+)$", re.I)
_BOTH = re.compile(r"^(?:are|were|is|was|do|did|does|have|has)\s+(.+?)\s+and\s+(.+?)\s+both\b\s*(.*)$", re.I)


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def _clean(text: str) -> str:
    return text.strip(" ,;:?!.\"'“”")


def _opens_clause(word: str) -> bool:
    """Whether the word after a connective starts a clause: a pronoun, a name, or a gerund."""
    bare = word.strip("\"'“”,.?").lower()
    if not bare or bare in _NOT_CLAUSE:
        return False
    return bare in _PRONOUNS or word[:1].isupper() or (bare.endswith("ing") and len(bare) > 4)


def _temporal_parts(question: str) -> list[str]:
    cuts = [m.start() for m in _TEMPORAL.finditer(question) if _opens_clause(m.group(2))]
    parts, start = [], 0
    for cut in cuts:
        head = question[start:cut]
        if _words(head) >= MIN_WORDS and _words(question[cut:]) >= MIN_WORDS + 1:
            parts.append(head)
            start = cut
    parts.append(question[start:])
    if len(parts) < 2:
        return []
    connective = re.compile(r"^\s*(" + "|".join(t.replace(" ", r"\s+") for t in TEMPORAL) + r")\s+", re.I)
    return [connective.sub("", p) for p in parts]


def split_question(question: str) -> list[str]:
    """The parts of a question with several (each a searchable phrase), or [] when it has one."""
    text = " ".join(question.split())
    parts = _temporal_parts(text)
    if not parts:
        for pattern in (_BETWEEN, _FROM_TO):
            m = pattern.search(text)
            if m and min(_words(m.group(1)), _words(m.group(2))) >= MIN_WORDS:
                parts = [m.group(1), m.group(2)]
                break
    if not parts:
        pieces = _AND_QUESTION.split(text)
        if len(pieces) > 1 and min(_words(p) for p in pieces) >= MIN_WORDS:
            parts = pieces
    if not parts:
        m = _BOTH.search(text)
        if m:
            parts = [f"{m.group(1)} {m.group(3)}", f"{m.group(2)} {m.group(3)}"]
    if not parts:
        m = _CHOICE.search(text)
        if m and "," in text:
            parts = [m.group(1), m.group(2)]
    parts = [_clean(p) for p in parts]
    parts = [p for p in parts if p]
    return parts if len(parts) >= 2 and len(set(parts)) == len(parts) else []
