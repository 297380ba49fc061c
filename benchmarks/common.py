"""Helpers shared by the benchmarks: timing, percentiles, a throwaway embedded ArcadeDB."""

from __future__ import annotations

import contextlib
import resource
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from hopgraph.core.settings import GraphSettings, Settings
from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB, ServerInfo


def commit() -> str:
    """The checkout's short commit id ("unknown" outside a git checkout), ending "+" when files differ
    from it: a report says which code it measured."""
    root = Path(__file__).resolve().parents[1]
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=root,
                          check=False).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True, cwd=root, check=False).stdout.strip()
    return (head + ("+" if dirty else "")) if head else "unknown"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def throwaway_arcadedb(heap: str = "2g") -> Iterator[tuple[ServerInfo, GraphSettings, Path]]:
    """A fresh ArcadeDB server in a temp dir (stopped on exit), and settings that reach it."""
    with tempfile.TemporaryDirectory(prefix="hopgraph-bench-") as tmp:
        cfg = GraphSettings(bolt_port=free_port(), http_port=free_port(), heap=heap)
        server = EmbeddedArcadeDB(Path(tmp), cfg)
        info = server.ensure_running()
        try:
            reach = GraphSettings.model_validate({**cfg.model_dump(), "uri": info.uri, "password": info.password})
            yield info, reach, Path(tmp)
        finally:
            server.stop()



@contextlib.contextmanager
def corpus_store(data_dir: str | None, records: Callable[[], list[str]], database: str) -> Iterator[Settings]:
    """Settings on ``data_dir`` (a store ingested before), or on a throwaway store that the JSONL lines
    ``records()`` are ingested into first."""
    if data_dir:
        yield Settings(data_dir=Path(data_dir))
        return
    from hopgraph.app.platform import Platform

    with throwaway_arcadedb() as (_info, graph_cfg, tmp):
        settings = Settings(data_dir=tmp / "data", graph=graph_cfg.model_copy(update={"database": database}))
        lines = records()
        work = tmp / "corpus.jsonl"
        work.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with Platform(settings) as p:
            t = time.perf_counter()
            p.ingest([work])
            print(f"ingested {len(lines)} records in {time.perf_counter() - t:.0f}s")
        yield settings

def timed(fn: Callable[[], object]) -> float:
    """Seconds one call takes."""
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def percentiles(samples_s: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    ms = sorted(x * 1000 for x in samples_s)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return statistics.median(ms), p95


def status_mb(field: str, pid: int | str = "self") -> float | None:
    """A memory field of ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM``...) in MB; None where the process or
    the field is not there."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        return None
    return None


def rss_mb() -> float:
    """Resident memory now (MB)."""
    found = status_mb("VmRSS")
    return found if found is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
