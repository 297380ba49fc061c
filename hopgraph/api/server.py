"""Running the service: ``hopgraph serve`` (uvicorn) and the owner record other commands check.

In the embedded mode one process owns the stores: ``hopgraph.app.ownership`` records it.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from collections.abc import Iterator

import uvicorn
from fastapi import FastAPI

from hopgraph.api.app import create_app
from hopgraph.api.auth import check_config
from hopgraph.app.ownership import owner_record, running_server
from hopgraph.core.errors import ConflictError
from hopgraph.core.settings import Settings

log = logging.getLogger(__name__)


class ServeError(ConflictError):
    """The service cannot start as configured, or another process serves the stores."""


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
    # uvicorn shuts the app down on SIGTERM/SIGINT, then raises the signal again with the handler
    # it found: make that handler an exit, so the owner record is removed on the way out
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _exit_on_signal)
    with owner_record(settings, url):
        app = create_app(settings, scheduler=scheduler, freeze_after_start=True)
        log.info("serving on %s (OpenAPI docs at %s/docs)", url, url)
        try:
            uvicorn.run(app, host=host, port=settings.api.port, log_level=settings.log_level.lower(),
                        proxy_headers=False)
        except SystemExit as exc:
            log.info("stopped by a signal (%s)", exc.code)


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(signal.Signals(signum).name)
