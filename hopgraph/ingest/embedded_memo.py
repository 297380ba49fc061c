"""Which entity and relationship vectors a long-lived ingestor need not embed again.

``written``: ids whose vectors this process wrote (an entity recurs in many batches). ``coming``: ids
of batches computed ahead by the embedding thread and not yet written: the batches after them skip
those too, since they are about to be written. A write moves its ids from ``coming`` to ``written``;
a removal forgets them; the end of a run forgets what never came.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: ids remembered per collection by a long-lived ingestor (about 200 MB)
CAP = 2_000_000
COLLECTIONS = ("entities", "relationships")


@dataclass(frozen=True)
class _Either:
    """Membership in either of two sets."""

    first: set[str]
    second: set[str]

    def __contains__(self, item: object) -> bool:
        return item in self.first or item in self.second


class EmbeddedMemo:
    """The ``written`` and ``coming`` ids per collection (``entities``, ``relationships``)."""

    def __init__(self) -> None:
        self.written: dict[str, set[str]] = {c: set() for c in COLLECTIONS}
        self.coming: dict[str, set[str]] = {c: set() for c in COLLECTIONS}
        self._lock = threading.Lock()

    def known(self) -> Mapping[str, _Either]:
        """Per collection, the ids a batch computed now need not embed."""
        return {c: _Either(self.written[c], self.coming[c]) for c in COLLECTIONS}

    def expect(self, collection: str, ids: Iterable[str]) -> set[str]:
        """Mark ``ids`` as about to be written; returns those that were not marked yet."""
        with self._lock:
            new = set(ids) - self.coming[collection]
            self.coming[collection] |= new
        return new

    def unexpect(self, collection: str, ids: Iterable[str]) -> None:
        """A batch computed again: its marks go (it marks its ids anew)."""
        with self._lock:
            self.coming[collection].difference_update(ids)

    def wrote(self, collection: str, ids: Iterable[str]) -> None:
        """``ids``' vectors are written: remembered (the memo is cleared above ``CAP``, which costs only
        embedding again)."""
        ids = list(ids)
        with self._lock:
            seen = self.written[collection]
            if len(seen) > CAP:
                seen.clear()
            seen.update(ids)
            self.coming[collection].difference_update(ids)

    def forget(self, collection: str, ids: Iterable[str]) -> None:
        """Their vectors are gone (deleted, or merged away): a later batch embeds them again."""
        with self._lock:
            self.written[collection].difference_update(ids)

    def end_run(self) -> None:
        """What batches of a finished (or failed) run marked and never wrote is forgotten."""
        with self._lock:
            for ids in self.coming.values():
                ids.clear()
