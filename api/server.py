"""Running the service: ``hopgraph serve`` (uvicorn) and the owner record other commands check.

In the embedded mode one process owns the stores. While ``hopgraph serve`` runs it records its pid
and URL in ``<data_dir>/serve.json``; CLI commands that write find it and say to use the API.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from api.app import create_app
from graphdb.arcadedb_server import pid_alive
from hopgraph.core.settings import Settings

log = logging.getLogger(__name__)


class ServeError(RuntimeError):
    """The service cannot start as configured, or another process serves the stores."""


@dataclass(frozen=True)
class RunningServer:
    pid: int
    url: str


def _record_path(settings: Settings) -> Path:
    return settings.data_dir / "serve.json"


def running_server(settings: Settings) -> RunningServer | None:
    """The ``hopgraph serve`` process that owns this data dir, if one is running."""
    try:
        rec = json.loads(_record_path(settings).read_text())
        server = RunningServer(int(rec["pid"]), str(rec["url"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return server if server.pid != os.getpid() and pid_alive(server.pid) else None


def embedded_owner(settings: Settings) -> RunningServer | None:
    """The running ``hopgraph serve`` that owns these embedded stores (None with server backends,
    where several processes may write)."""
    other = running_server(settings)
    return other if other is not None and settings.vectors.backend == "edge" else None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_config(settings: Settings) -> None:
    """Refuse an open API (no keys) on a non-loopback address."""
    if not settings.api.api_keys and not _is_loopback(settings.api.host):
        raise ServeError(f"refusing to serve on {settings.api.host} without API keys: add keys to "
                         "settings (hopgraph api-key makes one) or bind to 127.0.0.1")


@contextlib.contextmanager
def background_server(app: FastAPI, port: int, host: str = "127.0.0.1", start_timeout_s: float = 120.0
                      ) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a daemon thread (tests, benchmarks); yields the base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise ServeError(f"the API server did not start on {host}:{port}")
        time.sleep(0.05)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)


def serve(settings: Settings, scheduler: bool | None = None) -> None:
    """Serve until interrupted."""
    check_config(settings)
    other = running_server(settings)
    if other is not None:
        raise ServeError(f"hopgraph serve (pid {other.pid}) already serves {settings.data_dir} at {other.url}")
    host = settings.api.host
    url = f"http://{'[' + host + ']' if ':' in host else host}:{settings.api.port}"
    record = _record_path(settings)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"pid": os.getpid(), "url": url}))
    try:
        app = create_app(settings, scheduler=scheduler)
        log.info("serving on %s (OpenAPI docs at %s/docs)", url, url)
        uvicorn.run(app, host=host, port=settings.api.port, log_level=settings.log_level.lower(),
                    proxy_headers=False)
    finally:
        with contextlib.suppress(OSError):
            if json.loads(record.read_text()).get("pid") == os.getpid():
                record.unlink()
