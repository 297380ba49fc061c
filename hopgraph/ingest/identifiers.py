"""Identifiers in tickets, logs and notes: ``INC-2402``, ``JIRA-117``, ``CVE-2024-3094``, ``SKU_778``,
``v2.3``. Each is an entity of type ``IDENTIFIER``: the strongest key a question about a ticket can
name, and never a person or an organisation (the model's entity recognizer types them at random)."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: a code of capitals (or a capitalised word) joined to a number by a hyphen or an underscore, with
#: optional further parts ("INC-2402", "CVE-2024-3094", "Ticket_17", "PR-45b"); or a version ("v2.3.1")
_CODE = r"[A-Z][A-Za-z]{0,11}[-_]\d[\dA-Za-z]*(?:[-_][\dA-Za-z]+)*"
_VERSION = r"[vV]\d+(?:\.\d+)+"
_ID = re.compile(rf"(?<![\w.\-])(?:{_CODE}|{_VERSION})(?![\w\-]|\.\d)")


@dataclass(frozen=True)
class Found:
    """An identifier's character span in a text."""

    start: int
    end: int
    name: str


def identifiers(text: str) -> list[Found]:
    """The identifiers of a text, in order."""
    return [Found(m.start(), m.end(), m.group()) for m in _ID.finditer(text)]


def is_identifier(name: str) -> bool:
    """Whether a whole name is one identifier ("INC-2402", "v2.3")."""
    return _ID.fullmatch(name.strip()) is not None
