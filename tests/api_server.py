"""A real uvicorn server on 127.0.0.1 in a background thread, for the API tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn

from api.app import create_app
from api.auth import hash_key
from hopgraph.platform import Platform
from hopgraph.settings import ApiKey, Settings
from tests.conftest import free_port

READ_KEY = "read-key-for-tests"
ADMIN_KEY = "admin-key-for-tests"
KEYS = [ApiKey(name="reader", sha256=hash_key(READ_KEY), scope="read"),
        ApiKey(name="admin", sha256=hash_key(ADMIN_KEY), scope="admin")]


@contextmanager
def running_api(settings: Settings, platform: Platform, **app_kwargs: Any) -> Iterator[str]:
    """Serve ``create_app`` with uvicorn on a free loopback port; yields the base URL."""
    port = free_port()
    app = create_app(settings, platform=platform, **app_kwargs)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the API server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)


def wait_job(client: httpx.Client, job_id: str, timeout: float = 300) -> dict[str, Any]:
    """Poll GET /jobs/{id} until the job is done."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job: dict[str, Any] = client.get(f"/jobs/{job_id}").json()
        if job["status"] in ("succeeded", "failed", "skipped"):
            return job
        time.sleep(0.1)
    raise TimeoutError(f"job {job_id} did not finish")
