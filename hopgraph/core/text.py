"""Text helpers shared by ingest, retrieval and gpu: name normalization, word n-grams, token estimates."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence

_WS = re.compile(r"\s+")
_LEADING_ARTICLE = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)
_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")
#: a word of a query or a name: letters, digits, apostrophes and hyphens
WORD = re.compile(r"[\w'\u2019-]+")
#: a sentence ends at . ! or ? (and closing quotes) before whitespace and a capital, digit or quote
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d)]*(?=\s+[A-Z0-9\"'\u201c(])")
#: starts a heading line in a document's text (Markdown and HTML headings): the mark, the heading's level
#: (1-6) and a space, then the heading as a sentence; the chunker cuts sections there and drops the mark
SECTION_MARK = "\ue000"  # a private-use character: never whitespace, never in real text
#: words -> tokens, for budgets (MiniLM word-pieces per English word, roughly)
TOKENS_PER_WORD = 1.3
#: a CamelCase handle ("WolfgangSchulz:", "LiHua", "ChaeSong-hwa"): two or more capitalized words written
#: together, the last one with its hyphenated tail
_CAMEL = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)+(?:-[a-z]+)*\b")
_CAMEL_PART = re.compile(r"[A-Z][a-z'\-]*|[a-z][a-z'\-]*")


def handle_words(handle: str) -> str:
    """The words of a handle: "WolfgangSchulz" -> "Wolfgang Schulz"; "ChaeSong-hwa" -> "Chae Song-hwa";
    a name written with spaces stays as it is. The one rule by which chat speaker tags
    (``ingest.speakers``) and the handles a query or a chunk writes (``with_handles_split``) are read."""
    words: list[str] = []
    for word in handle.split():
        words += _CAMEL_PART.findall(word) if re.search(r"[a-z][A-Z]", word) else [word]
    return " ".join(words)


def is_handle(name: str) -> bool:
    """Whether a name holds a CamelCase handle ("LiHua", "🌟 HaileyJohnson")."""
    return _CAMEL.search(name) is not None


def with_handles_split(text: str) -> str:
    """The text with each CamelCase handle followed by its words ("WolfgangSchulz" -> "WolfgangSchulz
    Wolfgang Schulz"): a chat's speaker tag, or a question that writes the handle, then matches the person."""
    return _CAMEL.sub(lambda m: f"{m.group(0)} {handle_words(m.group(0))}", text)


def normalize_name(name: str) -> str:
    """Normalize an entity surface form: NFKC, casefold, no leading article, no possessive."""
    s = unicodedata.normalize("NFKC", name).strip()
    s = re.sub(r"['\u2019]s$", "", s)
    s = _LEADING_ARTICLE.sub("", s)
    s = _EDGE_PUNCT.sub("", s)
    return _WS.sub(" ", s).casefold()


def ngrams(words: Sequence[str], max_n: int) -> Iterator[tuple[int, str]]:
    """``(n, normalized text)`` of every run of up to ``max_n`` words, longest runs first: how
    entity names and titles are found in a query or a passage."""
    for n in range(min(max_n, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            yield n, normalize_name(" ".join(words[i : i + n]))


def estimate_tokens(text: str) -> int:
    """Cheap token estimate (words x 1.3, plus one), good enough for budgeting."""
    return int(len(text.split()) * TOKENS_PER_WORD) + 1


def words_for_tokens(tokens: int) -> int:
    """How many words fit in ``tokens`` by the same estimate."""
    return int(tokens / TOKENS_PER_WORD)


def split_sentences(text: str) -> list[str]:
    """``text`` cut into sentences by punctuation (cheap: for extractive summaries, not for chunking)."""
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        out.append(text[start:m.end()].strip())
        start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


def heading_line(level: int, sentence: str) -> str:
    """A heading as a marked line of a document's text (see ``SECTION_MARK``)."""
    return f"{SECTION_MARK}{max(1, min(level, 6))} {sentence}"
