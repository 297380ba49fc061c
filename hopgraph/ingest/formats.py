"""Plain text out of Markdown and HTML (text only: no scripts, styles or markup).

A heading is a sentence of its own: it ends with a full stop when it has no closing punctuation, so
that "# Marrowind Engineering" followed by "Marrowind Engineering is ..." never reads as one name
"Marrowind Engineering Marrowind Engineering" to the entity extractor. Its line starts with
``SECTION_MARK`` and its level, where the chunker cuts the document into sections. The first level-1 heading of
a Markdown file (or the page's <title>, else its first <h1>) is the document's title.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

from hopgraph.core.text import heading_line

#: what a heading may already end with
_CLOSED = ".!?:;…"
_ATX = re.compile(r"^\s{0,3}(?P<hashes>#{1,6})[ \t]*(?P<text>.*?)[ \t]*#*[ \t]*$", re.MULTILINE)
_SETEXT = re.compile(r"^(?P<text>[^\n]*\S[^\n]*)\n\s{0,3}(?P<rule>=+|-+)[ \t]*$", re.MULTILINE)
_H1 = re.compile(r"^\s{0,3}#[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


def as_sentence(heading: str) -> str:
    """A heading with a closing full stop unless it has closing punctuation ("" stays "")."""
    heading = heading.strip()
    return heading if not heading or heading[-1] in _CLOSED else heading + "."


_MD_RULES: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(r"```.*?```", re.DOTALL), " "),               # fenced code
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),           # images -> alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),            # links -> text
    (_ATX, lambda m: _heading(len(m.group("hashes")), m.group("text"))),  # "## Title" -> marked "Title."
    (_SETEXT, lambda m: _heading(1 if m.group("rule")[0] == "=" else 2, m.group("text"))),  # "Title\n===="
    (re.compile(r"^\s{0,3}>\s?", re.MULTILINE), ""),          # block quotes
    (re.compile(r"^\s*[-*+]\s+", re.MULTILINE), ""),          # bullets
    (re.compile(r"(\*\*|__|\*|_|`)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # emphasis, inline code
    (re.compile(r"^\s*[-*_]{3,}\s*$", re.MULTILINE), ""),     # rules
]


def _heading(level: int, text: str) -> str:
    sentence = as_sentence(text)
    return heading_line(level, sentence) if sentence else ""


def markdown_to_text(md: str) -> str:
    """Strip Markdown syntax, keeping the words and paragraph breaks; headings become sentences."""
    out = md
    for pattern, repl in _MD_RULES:
        out = pattern.sub(repl, out)
    return out.strip()


def markdown_title(md: str) -> str:
    """The text of the first level-1 heading ("" when there is none)."""
    found = _H1.search(re.sub(r"```.*?```", " ", md, flags=re.DOTALL))
    return markdown_to_text(found.group(1)).rstrip(".") if found else ""


class _TextExtractor(HTMLParser):
    SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head"})
    BLOCK = frozenset({"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section",
                       "article", "blockquote", "pre", "title"})
    HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False
        self._heading_from = -1  # index in parts where the open heading starts
        self.first_h1 = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skip += 1
        if tag == "title":
            self._in_title = True
        if tag in self.BLOCK:
            self.parts.append("\n")
        if tag in self.HEADINGS:
            self._heading_from = len(self.parts)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self._skip:
            self._skip -= 1
        if tag == "title":
            self._in_title = False
        if tag in self.HEADINGS and self._heading_from >= 0:
            heading = " ".join("".join(self.parts[self._heading_from:]).split())
            sentence = as_sentence(heading)
            self.parts[self._heading_from:] = [heading_line(int(tag[1]), sentence) if sentence else ""]
            if tag == "h1" and not self.first_h1:
                self.first_h1 = heading
            self._heading_from = -1
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """(title, text) of an HTML page."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    text = re.sub(r"[ \t]+", " ", "".join(parser.parts))
    text = re.sub(r"\s*\n\s*", "\n", text).strip()
    return (" ".join(parser.title.split()) or parser.first_h1), text
