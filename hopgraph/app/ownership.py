"""Who owns the embedded stores: while ``hopgraph serve`` runs it records its pid and URL in
``<data_dir>/serve.json``; other commands read the record and send writes through its API."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hopgraph.core.settings import Settings
from hopgraph.graphdb.arcadedb_server import pid_alive


@dataclass(frozen=True)
class RunningServer:
    """A live ``hopgraph serve`` process."""

    pid: int
    url: str


def record_path(settings: Settings) -> Path:
    return settings.data_dir / "serve.json"


def running_server(settings: Settings) -> RunningServer | None:
    """The ``hopgraph serve`` process that owns this data dir, if one is running."""
    try:
        rec = json.loads(record_path(settings).read_text())
        server = RunningServer(int(rec["pid"]), str(rec["url"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return server if server.pid != os.getpid() and pid_alive(server.pid) else None


def embedded_owner(settings: Settings) -> RunningServer | None:
    """The running ``hopgraph serve`` that owns these embedded stores (None with server backends,
    where several processes may write)."""
    other = running_server(settings)
    return other if other is not None and settings.vectors.backend == "edge" else None


@contextlib.contextmanager
def owner_record(settings: Settings, url: str) -> Iterator[None]:
    """Record this process as the owner while the block runs; remove the record after (if still ours)."""
    record = record_path(settings)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"pid": os.getpid(), "url": url}))
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(record.read_text()).get("pid") == os.getpid():
                record.unlink()
