"""Read-only mappings over sorted arrays: what a snapshot looks up by id or by entity pair.

A dict of a million entries costs a tenth of a second to build and cannot follow a delta that shifts
rows; these build from arrays the index state already holds, and a delta patches them with array
operations (rows only ever move by monotone maps, which keep sorted keys sorted).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np


def _find(keys: np.ndarray, key: Any) -> int:
    """The position of ``key`` in sorted ``keys``, or -1."""
    if not len(keys):
        return -1
    try:
        at = int(np.searchsorted(keys, key))
    except TypeError:  # a key of another type than the array's (e.g. None for a str array)
        return -1
    return at if at < len(keys) and keys[at] == key else -1


class RowIndex(Mapping[str, int]):
    """Id -> row over sorted ids (the snapshot's ``entity_index`` and ``chunk_index``)."""

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = ids

    def __getitem__(self, key: str) -> int:
        at = _find(self.ids, key) if isinstance(key, str) else -1
        if at < 0:
            raise KeyError(key)
        return at

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and _find(self.ids, key) >= 0

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids.tolist())

    def __len__(self) -> int:
        return len(self.ids)


class PairLookup(Mapping[tuple[int, int], str]):
    """(source row, target row) -> a string, over pairs sorted by ``source * width + target`` (the
    snapshot's ``edge_types`` and ``relation_ids`` of typed relations)."""

    def __init__(self, pair_keys: np.ndarray, strings: np.ndarray, width: int) -> None:
        self.pair_keys = pair_keys  # int64, sorted, unique
        self.strings = strings      # object, aligned with pair_keys
        self.width = max(width, 1)

    def __getitem__(self, pair: tuple[int, int]) -> str:
        a, b = pair
        if not (0 <= a < self.width and 0 <= b < self.width):
            raise KeyError(pair)
        at = _find(self.pair_keys, int(a) * self.width + int(b))
        if at < 0:
            raise KeyError(pair)
        return str(self.strings[at])

    def __contains__(self, pair: object) -> bool:
        try:
            self[pair]  # type: ignore[index]
        except (KeyError, TypeError, ValueError):
            return False
        return True

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return zip((self.pair_keys // self.width).tolist(), (self.pair_keys % self.width).tolist(), strict=True)

    def __len__(self) -> int:
        return len(self.pair_keys)


class NameIndex(Mapping[str, list[int]]):
    """Normalized name -> the rows of the entities with that name, ascending (the snapshot's
    ``name_index``). It holds entity ids, turned into rows through ``rows`` when looked up, so a delta
    that inserts or removes entities (moving every row after them) patches only the names it touched.
    A patch writes the touched names into a small top layer over the shared base (copying the base would
    cost time in proportion to every name); the layers are merged when the top grows past ``MERGE_AT`` of
    the base."""

    #: the top layer's size, as a fraction of the base's, at which a patch merges the two
    MERGE_AT = 0.125

    def __init__(self, base: dict[str, list[str]], rows: RowIndex, top: dict[str, list[str]] | None = None) -> None:
        self.base = base        # name -> sorted entity ids (never changed once built)
        self.top = top or {}    # names changed since the base was built ([]: no entity has the name any more)
        self.rows = rows
        self._len = len(base) + sum(1 if ids else -1 for k, ids in self.top.items() if (k in base) != bool(ids))

    @classmethod
    def of(cls, keys: np.ndarray, ids: np.ndarray, rows: RowIndex) -> NameIndex:
        """The index of entities with normalized names ``keys`` and sorted ``ids``."""
        by: dict[str, list[str]] = {}
        for key, i in zip(keys.tolist(), ids.tolist(), strict=True):
            by.setdefault(key, []).append(i)
        return cls(by, rows)

    def ids(self, key: str) -> list[str]:
        """The sorted ids of the entities named ``key`` (empty where none)."""
        found = self.top.get(key)
        return found if found is not None else self.base.get(key, [])

    def patched(self, gone: list[tuple[str, str]], come: list[tuple[str, str]], rows: RowIndex) -> NameIndex:
        """This index without the (name, id) pairs ``gone`` and with ``come``, over ``rows`` (this one is
        not changed)."""
        top = dict(self.top)
        for key in {k for k, _ in (*gone, *come)}:
            top[key] = self.ids(key)
        for key, i in gone:
            top[key] = [x for x in top[key] if x != i]
        for key, i in come:
            top[key] = sorted({*top[key], i})
        if len(top) > self.MERGE_AT * max(len(self.base), 1):
            base = {**self.base, **top}
            return NameIndex({k: v for k, v in base.items() if v}, rows)
        return NameIndex(self.base, rows, top)

    def first(self, key: str) -> int:
        """The first row with name ``key`` (the smallest id), -1 where none."""
        ids = self.ids(key)
        return self.rows[ids[0]] if ids else -1

    def __getitem__(self, key: str) -> list[int]:
        ids = self.ids(key)
        if not ids:
            raise KeyError(key)
        return [self.rows[i] for i in ids]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(self.ids(key))

    def __iter__(self) -> Iterator[str]:
        yield from (k for k in self.base if k not in self.top)
        yield from (k for k, ids in self.top.items() if ids)

    def __len__(self) -> int:
        return self._len
