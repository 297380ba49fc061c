"""Document access groups: who may read a document inside one collection.

A document carries the access groups set at ingest (``groups`` of a record, ``--groups`` of the CLI),
kept in its metadata; a document with none is public in its collection. A reader is given as the set
of groups it holds (``None``: it reads everything, as an admin key or a server with no keys does). A
reader sees a document when the document is public or shares a group with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from hopgraph.core.errors import BadInputError

#: an access group's name: kept in document metadata and in API key settings
GROUP = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
GROUP_RULE = "a lower-case letter or digit, then up to 63 lower-case letters, digits, '_', '.' or '-'"
#: the metadata key holding a document's groups
META_KEY = "groups"
#: the separator of a chunk's groups in the index state's ``groups`` column ("": public)
SEP = ","


def check_groups(groups: Iterable[Any]) -> list[str]:
    """``groups`` sorted and deduplicated, or a ``BadInputError`` naming the first invalid one."""
    if isinstance(groups, str):
        raise BadInputError(f"access groups must be a list of names, not the string {groups[:60]!r}")
    out: set[str] = set()
    for g in groups:
        if not isinstance(g, str):
            raise BadInputError(f"invalid access group: a {type(g).__name__}, not a name")
        if not GROUP.fullmatch(g):
            raise BadInputError(f"invalid access group {g[:60]!r}: {GROUP_RULE}")
        out.add(g)
    return sorted(out)


def parse_groups(text: str) -> list[str]:
    """The groups of a comma-separated list as a person types it ("hr, finance"): blanks around names and
    empty entries ignored, then checked as ``check_groups`` does."""
    return check_groups([g.strip() for g in text.split(SEP) if g.strip()])


def groups_of(metadata: Mapping[str, Any] | None) -> list[str]:
    """The access groups a document's metadata holds (none: public); invalid entries are left out."""
    found = (metadata or {}).get(META_KEY)
    if not isinstance(found, list):
        return []
    return sorted({g for g in found if isinstance(g, str) and GROUP.fullmatch(g)})


def readable(doc_groups: str, reader: frozenset[str] | None) -> bool:
    """Whether a reader holding ``reader`` may read a document whose groups are ``doc_groups``
    (joined by ``SEP``; "" is public)."""
    if reader is None or not doc_groups:
        return True
    return not reader.isdisjoint(doc_groups.split(SEP))


#: the access group a public document's vectors carry (no group name can start with '_'): a vector
#: search for a reader with groups keeps the points whose groups include one of its own or this one
PUBLIC = "_public"
#: the payload field of a vector that holds its document's access groups
VECTOR_FIELD = "groups"


def vector_groups(groups: Iterable[str]) -> list[str]:
    """The access groups a document's vectors carry in their payload: its groups, or ``[PUBLIC]``."""
    return sorted(set(groups)) or [PUBLIC]


def vector_filter(reader: frozenset[str] | None) -> dict[str, list[str]] | None:
    """The payload filter that keeps the vectors ``reader`` may read (None: it reads every vector), applied
    inside the vector engine so that a search's top k is computed over those vectors alone."""
    if reader is None:
        return None
    return {VECTOR_FIELD: [*sorted(reader), PUBLIC]}
