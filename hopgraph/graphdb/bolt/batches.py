"""Cutting id lists and row lists into the statement-sized batches every UNWIND takes."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")


def batches(rows: Sequence[T], size: int) -> Iterator[list[T]]:
    """``rows`` in consecutive lists of at most ``size``."""
    for i in range(0, len(rows), size):
        yield list(rows[i : i + size])
