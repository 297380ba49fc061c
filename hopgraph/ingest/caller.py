"""Who runs an ingest, and so what it may do: which files it may read, and whose access groups it may widen.

- **Files.** Every file and folder a path ingest reaches (named, found by a folder walk, a groups or caption
  sidecar) is judged on its real path, links and '..' resolved (``refusal``): never one in the data dir
  (its stores, every collection's uploads, ``serve.json`` and its owner token), except the uploads folder
  of an upload job; and, for a caller bound by ``api.ingest_roots``, never one outside the roots. A link
  whose target passes is followed (the document is its target's); one whose target does not is skipped
  with the reason, and a folder link is not entered.
- **Groups.** A document is readable by a key that holds one of its groups (or by every key when it has
  none), so a re-ingest *widens* a document when it stores it public, or with a group it did not have
  (``widens``). Only a caller that holds every group the document has (``holds``), or one not bound by
  groups (the server's own user, a full admin), may do that; for any other the document is skipped with
  the reason and keeps what it was.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hopgraph.core.access import groups_of

if TYPE_CHECKING:  # annotations only: the API and the platform import this module at start
    from hopgraph.graphdb.protocols import DocumentReader
    from hopgraph.ingest.source_text import SourceText

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Caller:
    """The rights of an ingest run. The defaults are the owner's: the user who runs hopgraph (the CLI, a
    scheduled source, ``hopgraph serve``'s own user)."""

    #: the folders it may read below (resolved at the check); None: any folder outside the data dir
    roots: tuple[Path, ...] | None = None
    #: the one folder inside the data dir it may read: an upload job's own collection's uploads
    uploads: Path | None = None
    #: the access groups it holds; None: it may widen any document's groups
    holds: frozenset[str] | None = None


#: the user who runs hopgraph: any path outside the data dir, any document
OWNER = Caller()


class PathJudge:
    """``refusal`` for the many paths of one run: the data dir, the roots and the uploads folder resolved
    once."""

    def __init__(self, data_dir: Path | None, caller: Caller = OWNER) -> None:
        self._data = data_dir.resolve() if data_dir is not None else None
        self._roots = None if caller.roots is None else tuple(r.expanduser().resolve() for r in caller.roots)
        self._uploads = caller.uploads.resolve() if caller.uploads is not None else None

    def refusal(self, path: Path) -> str | None:
        """Why the caller may not read ``path``, judged on its real path (None: it may)."""
        real = path.resolve()
        return self.judge(real, real != Path(os.path.abspath(path)))

    def judge(self, real: Path, link: bool) -> str | None:
        """Why the caller may not read the file or folder whose real path is ``real`` (``link``: reached
        through a link or '..'); a reason that does not say where a link leads. None: it may."""
        if self._uploads is not None and real.is_relative_to(self._uploads):
            return None
        how = "is a link that leads" if link else "lies"
        if self._data is not None and real.is_relative_to(self._data):
            return f"{how} into the server's data dir, which no path ingest reads (its stores, uploads, serve.json)"
        if self._roots is not None and not any(real.is_relative_to(r) for r in self._roots):
            where = "api.ingest_roots" if self._roots else "api.ingest_roots (none are configured)"
            return f"{how} outside {where}: not read"
        return None


def refusal(path: Path, data_dir: Path | None, caller: Caller = OWNER) -> str | None:
    """Why ``caller`` may not read ``path`` (a reason that does not say where a link leads), judged on its
    real path; None when it may. ``data_dir``: the data dir of the stores (None: none to keep out)."""
    return PathJudge(data_dir, caller).refusal(path)


def widens(stored: Collection[str], new: Collection[str]) -> bool:
    """Whether storing a document with groups ``new`` instead of ``stored`` lets a key read it that could
    not before: it had groups, and now has none or one it did not have."""
    return bool(stored) and (not new or not set(new) <= set(stored))


def may_widen(stored: Collection[str], caller: Caller) -> bool:
    """Whether ``caller`` may widen a document stored with groups ``stored``: it is not bound by groups, or
    holds every one of them."""
    return caller.holds is None or set(stored) <= caller.holds


def held_back(stored: Sequence[str], new: Sequence[str], caller: Caller) -> str | None:
    """The reason a re-ingest by ``caller`` leaves a document as stored (groups ``stored``) rather than
    storing it with groups ``new``; None when it may store it."""
    if not widens(stored, new) or may_widen(stored, caller):
        return None
    now = f"groups {', '.join(sorted(new))}" if new else "no groups (public)"
    return (f"stored with groups {', '.join(sorted(stored))}; this run would store it with {now}, which more "
            "keys read: only a key holding all of its groups, or a full admin, may do that (it keeps its "
            "groups and content)")


def hold_back(graph: DocumentReader, changed: list[SourceText], caller: Caller,
              skipped: MutableMapping[str, str]) -> list[SourceText]:
    """``changed`` less the documents ``caller`` may not store as they now are (``held_back``), whose
    reasons go into ``skipped`` (source -> reason); the stored groups are read only for a caller bound by
    groups."""
    if caller.holds is None or not changed:
        return changed
    stored = graph.document_groups([s.document.id for s in changed])
    kept = []
    for s in changed:
        why = held_back(stored.get(s.document.id, []), groups_of(s.document.metadata), caller)
        if why is None:
            kept.append(s)
        else:
            skipped[s.document.source] = why
            log.warning("skipped %s: %s", s.document.source, why)
    return kept
