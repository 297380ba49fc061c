"""A query's memory budget (``retrieval.query_memory_mb``): work whose size is known before it is built
is checked against the budget and against the memory the host has free, and refused with a clear error
instead of growing the process."""

from __future__ import annotations

from pathlib import Path

from hopgraph.core.errors import BadInputError, StoreUnavailableError

MEMINFO = Path("/proc/meminfo")


class QueryMemoryError(BadInputError):
    """A query would need more memory than ``retrieval.query_memory_mb`` allows."""


class ShortOfMemoryError(StoreUnavailableError):
    """The host has less memory free than a query needs now (try again later)."""


def available_bytes() -> int | None:
    """The host's ``MemAvailable`` (None where ``/proc/meminfo`` does not say)."""
    try:
        for line in MEMINFO.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_budget(nbytes: int, budget_mb: float, what: str) -> None:
    """Refuse ``what`` when its ``nbytes`` exceed the budget (``QueryMemoryError``) or the memory the host
    has available (``ShortOfMemoryError``)."""
    need_mb = nbytes / 2**20
    if need_mb > budget_mb:
        raise QueryMemoryError(f"{what} would take about {need_mb:.0f} MB, over retrieval.query_memory_mb "
                               f"({budget_mb:g} MB): lower the setting it names or raise retrieval.query_memory_mb")
    free = available_bytes()
    if free is not None and nbytes > free:
        raise ShortOfMemoryError(f"{what} would take about {need_mb:.0f} MB and the host has {free / 2**20:.0f} MB "
                                 "available: try again later")
