"""Reading a manual page whose inventory block a generator writes: the block between its markers, and
the names a hand-written table under a heading describes."""

from __future__ import annotations

import re


def block(page: str, marker: str) -> str:
    """The text between ``<!-- marker:begin -->`` and ``<!-- marker:end -->``."""
    return page.split(f"<!-- {marker}:begin -->\n", 1)[1].split(f"\n<!-- {marker}:end -->", 1)[0]


def described(page: str, heading: str) -> set[str]:
    """The names in the first column of the tables under ``### heading`` (up to the next heading)."""
    part = page.split(f"\n### {heading}\n", 1)[1]
    part = re.split(r"\n#{2,3} ", part, maxsplit=1)[0]
    return set(re.findall(r"^\| `(\w+)` \|", part, re.MULTILINE))
