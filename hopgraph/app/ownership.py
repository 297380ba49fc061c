"""Who owns the embedded stores: while ``hopgraph serve`` runs it records its pid, URL and a random
token in ``<data_dir>/serve.json`` (readable by its user only); other commands read the record and
send writes through its API, showing the token where only the server's own user may act (ingesting
any path of the machine)."""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hopgraph.core.settings import Settings
from hopgraph.graphdb.bolt.arcadedb_server import pid_alive
from hopgraph.vectors.registry import vector_backend

#: the header in which ``hopgraph ingest`` shows the server the owner token of ``serve.json``
OWNER_HEADER = "X-Hopgraph-Owner"


@dataclass(frozen=True)
class RunningServer:
    """A live ``hopgraph serve`` process."""

    pid: int
    url: str
    token: str = ""


def record_path(settings: Settings) -> Path:
    return settings.data_dir / "serve.json"


def running_server(settings: Settings) -> RunningServer | None:
    """The ``hopgraph serve`` process that owns this data dir, if one is running."""
    try:
        rec = json.loads(record_path(settings).read_text())
        server = RunningServer(int(rec["pid"]), str(rec["url"]), str(rec.get("token", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return server if server.pid != os.getpid() and pid_alive(server.pid) else None


def embedded_owner(settings: Settings) -> RunningServer | None:
    """The running ``hopgraph serve`` that owns these embedded stores (None unless the vector backend has
    a single writer: with server backends several processes may write)."""
    other = running_server(settings)
    return other if other is not None and vector_backend(settings.vectors.backend).single_writer else None


@contextlib.contextmanager
def owner_record(settings: Settings, url: str) -> Iterator[None]:
    """Record this process as the owner while the block runs; remove the record after (if still ours)."""
    record = record_path(settings)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.unlink(missing_ok=True)
    fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # the token: this user's only
    with os.fdopen(fd, "w") as fh:
        fh.write(json.dumps({"pid": os.getpid(), "url": url, "token": secrets.token_urlsafe(32)}))
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(record.read_text()).get("pid") == os.getpid():
                record.unlink()


def is_owner_token(settings: Settings, presented: str | None) -> bool:
    """Whether ``presented`` is the token this process recorded as the owner of the stores."""
    if not presented:
        return False
    try:
        rec = json.loads(record_path(settings).read_text())
    except (OSError, ValueError):
        return False
    token = str(rec.get("token", "")) if rec.get("pid") == os.getpid() else ""
    return bool(token) and hmac.compare_digest(token, presented)
