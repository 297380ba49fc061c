"""A real uvicorn server on 127.0.0.1 in a background thread, for the API tests."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from hopgraph.api.app import create_app
from hopgraph.api.auth import hash_key
from hopgraph.api.server import background_server
from hopgraph.app.platform import Platform
from hopgraph.core.service_settings import ApiKey
from hopgraph.core.settings import Settings
from tests.conftest import free_port

READ_KEY = "read-key-for-tests"
ADMIN_KEY = "admin-key-for-tests"
KEYS = [ApiKey(name="reader", sha256=hash_key(READ_KEY), scope="read"),
        ApiKey(name="admin", sha256=hash_key(ADMIN_KEY), scope="admin")]
#: job states that do not change any more
ENDED = ("succeeded", "failed", "cancelled", "skipped")


@contextmanager
def running_api(settings: Settings, platform: Platform, **app_kwargs: Any) -> Iterator[str]:
    """Serve ``create_app`` with uvicorn on a free loopback port; yields the base URL."""
    with background_server(create_app(settings, platform=platform, **app_kwargs), free_port()) as url:
        yield url


def wait_job(client: httpx.Client, job_id: str, timeout: float = 300) -> dict[str, Any]:
    """Poll GET /jobs/{id} until the job has ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job: dict[str, Any] = client.get(f"/jobs/{job_id}").json()
        if job["status"] in ENDED:
            return job
        time.sleep(0.1)
    raise TimeoutError(f"job {job_id} did not finish")
