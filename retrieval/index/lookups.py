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
