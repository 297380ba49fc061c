"""How many times one ``graph`` query through the API enters each project file from another file.

A profile hook (``sys.setprofile`` in this thread, ``threading.setprofile`` for the server's threads, installed
before the server starts) counts a call event into a file under ``hopgraph/`` whose caller is in another file
(a generator resumed is no new entry). The server is the real API (uvicorn, loopback) over the sample corpus in
an embedded ArcadeDB server; one ``graph`` query warms the process up (models, lazy imports), the next one is
counted::

    python -m benchmarks.query_path [--mode graph] [--question "..."]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import hopgraph

ROOT = Path(hopgraph.__file__).resolve().parent
#: generator, coroutine and async-generator code: a call event with ``f_lasti > 0`` resumes one
_RESUMABLE = 0x20 | 0x80 | 0x200
QUESTION = "What did Ada Lovelace write about Charles Babbage's Analytical Engine?"


class EntryCounter:
    """Counts, per project file, the call events entering it from another file while ``recording``."""

    def __init__(self, root: Path = ROOT) -> None:
        self.root = str(root) + "/"
        self.counts: Counter[str] = Counter()
        self._on = False

    def _hook(self, frame: FrameType, event: str, arg: Any) -> None:
        if not self._on or event != "call":
            return
        code = frame.f_code
        name = code.co_filename
        if not name.startswith(self.root) or (code.co_flags & _RESUMABLE and frame.f_lasti > 0):
            return
        back = frame.f_back
        if back is None or back.f_code.co_filename != name:
            self.counts[name[len(self.root):]] += 1

    @contextmanager
    def installed(self) -> Iterator[EntryCounter]:
        """The hook in this thread and in every thread started inside the block (start the server inside)."""
        threading.setprofile(self._hook)
        sys.setprofile(self._hook)
        try:
            yield self
        finally:
            sys.setprofile(None)
            threading.setprofile(None)

    @contextmanager
    def recording(self) -> Iterator[Counter[str]]:
        """Count the entries made inside the block (from a fresh count)."""
        self.counts = Counter()
        self._on = True
        try:
            yield self.counts
        finally:
            self._on = False


def query_entries(url: str, counter: EntryCounter, mode: str = "graph", question: str = QUESTION
                  ) -> Counter[str]:
    """One warm-up query, then the counted one, through ``POST /query`` at ``url``."""
    import httpx

    with httpx.Client(base_url=url, timeout=300) as client:
        for counted in (False, True):
            if counted:
                with counter.recording() as counts:
                    r = client.post("/query", json={"text": question, "mode": mode})
            else:
                r = client.post("/query", json={"text": question, "mode": mode})
            r.raise_for_status()
            assert r.json()["results"], r.text
    return counts


def table(counts: Counter[str]) -> str:
    """The counts, most entered first."""
    return "\n".join(f"{n:4d}  {path}" for path, n in counts.most_common())


def main() -> None:
    from hopgraph.api.app import create_app
    from hopgraph.api.server import background_server
    from hopgraph.app.platform import Platform
    from hopgraph.core.settings import GraphSettings, RetrievalSettings, Settings
    from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", default="graph")
    ap.add_argument("--question", default=QUESTION)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        import socket

        def port() -> int:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                return int(s.getsockname()[1])

        server = EmbeddedArcadeDB(Path(tmp) / "arcadedb", GraphSettings(bolt_port=port(), http_port=port(),
                                                                         heap="512m"))
        info = server.ensure_running()
        try:
            graph = GraphSettings(uri=info.uri, password=info.password, http_port=info.http_port,
                                  database="querypath")
            settings = Settings(data_dir=Path(tmp) / "data", graph=graph,
                                retrieval=RetrievalSettings(stage_cap_ms=None))
            counter = EntryCounter()
            with Platform(settings) as p:
                p.ingest([ROOT / "sample"])
                with counter.installed(), background_server(create_app(settings, platform=p, scheduler=False),
                                                            port()) as url:
                    counts = query_entries(url, counter, args.mode, args.question)
        finally:
            server.stop()
    print(table(counts))
    print(f"files entered: {len(counts)}; most: {max(counts.values())}; entries beyond the first: "
          f"{sum(n - 1 for n in counts.values())}")


if __name__ == "__main__":
    main()
