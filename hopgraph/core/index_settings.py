"""Settings of the query-time index state (kept apart to keep settings.py readable)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class IndexSettings(BaseModel):
    """The query-time index state: kept in memory per committed graph version, refreshed by deltas off
    the request path, and persisted so that a restart answers without rebuilding."""

    model_config = ConfigDict(frozen=True)

    path: Path | None = Field(default=None, description="Persisted index state (default: <data_dir>/index).")
    persist: bool = Field(default=True, description="Write the index state to disk, load it at start-up.")
    poll_s: float = Field(default=1.0, gt=0, description="How often a server asks the graph for a new version "
                          "(another process's writes); its own writes refresh the state at once.")
    persist_every_s: float = Field(default=30.0, ge=0, description="After a delta, write the state again at most "
                                   "this often (a full build and a clean shutdown always write it).")
    keep_freed_memory: bool = Field(
        default=True, description="Keep the memory a refresh frees (the previous state's arrays) in the process "
        "for the next refresh, instead of handing it back to the kernel (glibc only; see hopgraph.core.memory). "
        "The process then stays at its peak size; off, a refresh may wait for pages the kernel must find again.")
    pregrow: float = Field(
        default=3.0, ge=0, description="A server has its heap hold this many times the served index state's "
        "arrays once, in the background after start (written, then freed and kept: needs keep_freed_memory), so "
        "its first refreshes do not wait for the pages growing the process takes (a refresh holds the next state "
        "beside the served one). Costs that memory from the start and the time to write it (in proportion to "
        "its size; python -m benchmarks.freshness --synthetic ... prints it); 0: off. The CLI never does it.")
