"""Plain text out of Markdown and HTML (text only: no scripts, styles or markup)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

_MD_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"```.*?```", re.DOTALL), " "),               # fenced code
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),           # images -> alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),            # links -> text
    (re.compile(r"^\s{0,3}#{1,6}\s*", re.MULTILINE), ""),     # heading marks
    (re.compile(r"^\s{0,3}>\s?", re.MULTILINE), ""),          # block quotes
    (re.compile(r"^\s*[-*+]\s+", re.MULTILINE), ""),          # bullets
    (re.compile(r"(\*\*|__|\*|_|`)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # emphasis, inline code
    (re.compile(r"^\s*[-*_]{3,}\s*$", re.MULTILINE), ""),     # rules
]


def markdown_to_text(md: str) -> str:
    """Strip Markdown syntax, keeping the words and paragraph breaks."""
    out = md
    for pattern, repl in _MD_RULES:
        out = pattern.sub(repl, out)
    return out.strip()


class _TextExtractor(HTMLParser):
    SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head"})
    BLOCK = frozenset({"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section",
                       "article", "blockquote", "pre", "title"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skip += 1
        if tag == "title":
            self._in_title = True
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self._skip:
            self._skip -= 1
        if tag == "title":
            self._in_title = False
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
    return parser.title.strip(), text
