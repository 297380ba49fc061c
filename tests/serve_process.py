"""`hopgraph serve` as a child process for tests: started, waited for, killed if still running."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.processes import cli_env


@contextmanager
def serve_process(env: dict[str, str], port: int) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Start ``hopgraph serve`` on ``port`` (its stderr in a log beside the data dir) and yield it and
    its URL once /health answers; a server still running at the end is killed."""
    log = Path(env["HOPGRAPH_DATA_DIR"]).parent / f"serve-{port}-{time.monotonic_ns()}.log"
    proc = subprocess.Popen([sys.executable, "-m", "hopgraph.cli", "serve"],
                            env=cli_env({**env, "HOPGRAPH_API__PORT": str(port)}), stdout=subprocess.DEVNULL,
                            stderr=log.open("w"), text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "hopgraph serve did not start"
            time.sleep(0.3)
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
