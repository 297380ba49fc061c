"""Soak: mixed query load on a running ``hopgraph serve`` for a bounded time and request count.

Several client threads send ``POST /query`` back to back over loopback, cycling through every text
mode of the registry (``gnn`` without a checkpoint is sent too and must answer its 400 naming the
checkpoint), with an ingest job of a few small text files posted halfway through. The server's RSS
(``VmRSS`` of its process) is sampled every second from the end of the warm-up to the end of the
ingest job. It reports requests, failures, p50/p95 latency and RSS after warm-up / min / peak.

    python -m benchmarks.soak --minutes 10 [--clients 4]

The full form starts an ArcadeDB server and ``hopgraph serve`` in a temp dir and ingests the sample
corpus through the API first; ``tests/test_soak.py`` runs ``run_soak`` on its own server, briefly.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.common import free_port, status_mb, throwaway_arcadedb
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.retrieval.registry import IMAGE, REGISTRY

SAMPLE = Path(__file__).resolve().parents[1] / "hopgraph" / "sample"
#: questions over the sample corpus: they name its entities, so the graph modes seed and expand
QUESTIONS = [
    "What did Ada Lovelace write about Charles Babbage's Analytical Engine?",
    "Who shared the 1903 Nobel Prize in Physics with Marie Curie?",
    "Where did Alan Turing work during the Second World War?",
    "Which programming language did Grace Hopper's FLOW-MATIC influence?",
    "Who founded the Vexmoor Observatory above Kelderwick?",
    "Why did Albert Einstein receive the Nobel Prize?",
    "radium polonium discovery",
    "Enigma cipher Bombe",
]
#: the files of the ingest job posted halfway through the load
INGEST_FILES = {
    "soak-babbage.txt": "Charles Babbage was an English mathematician who designed the Difference Engine and the "
                        "Analytical Engine. Ada Lovelace wrote the notes on his Analytical Engine.",
    "soak-menabrea.txt": "Luigi Menabrea was an Italian engineer and statesman whose article on the Analytical "
                         "Engine Ada Lovelace translated in 1843.",
    "soak-bletchley.txt": "Bletchley Park was the codebreaking centre where Alan Turing designed the Bombe to break "
                          "the German Enigma cipher.",
}
#: the answer a mode gives by design when it cannot serve here: (status, words its detail contains)
GNN_WITHOUT_CHECKPOINT = (400, "checkpoint")


def text_modes(gnn: bool = True) -> list[str]:
    """Every mode of the registry that answers text queries (image-only modes left out; ``gnn`` too
    unless ``gnn``)."""
    return [name for name, e in REGISTRY.entries.items()
            if e.evaluated_on != frozenset({IMAGE}) and (gnn or name != "gnn")]


def serve_env(info: ServerInfo, data_dir: Path, port: int, config: str, ingest_root: Path,
              database: str = "soak") -> dict[str, str]:
    """The ``HOPGRAPH_*`` variables of a ``hopgraph serve`` on ``port`` that uses ArcadeDB ``info``, builds
    the RAPTOR tree at every ingest (mode raptor answers) and reads server paths below ``ingest_root``
    (where the soak's ingest job writes its files)."""
    return {"HOPGRAPH_RAPTOR__ENABLED": "true", "HOPGRAPH_DATA_DIR": str(data_dir), "HOPGRAPH_GRAPH__URI": info.uri,
            "HOPGRAPH_GRAPH__PASSWORD": info.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(info.http_port),
            "HOPGRAPH_GRAPH__DATABASE": database, "HOPGRAPH_CONFIG": config, "HOPGRAPH_API__PORT": str(port),
            "HOPGRAPH_API__HOST": "127.0.0.1", "HOPGRAPH_API__INGEST_ROOTS": json.dumps([str(ingest_root)])}


def rss_mb(pid: int) -> float | None:
    """Resident memory of process ``pid`` (MB; None once it is gone)."""
    return status_mb("VmRSS", pid)


def wait_job(client: httpx.Client, job_id: str, timeout: float = 600) -> dict[str, Any]:
    """Poll ``GET /jobs/{id}`` until the job is done (or raise ``TimeoutError``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job: dict[str, Any] = client.get(f"/jobs/{job_id}").json()
        if job["status"] in ("succeeded", "failed", "skipped", "cancelled"):
            return job
        time.sleep(0.5)
    raise TimeoutError(f"job {job_id} did not finish in {timeout:g}s")


def ingest_sample(url: str) -> None:
    """Ingest the sample corpus through ``POST /documents`` and wait for the job."""
    docs = [{"id": p.stem, "title": p.stem.title(), "text": p.read_text()} for p in sorted(SAMPLE.glob("*.txt"))]
    with httpx.Client(base_url=url, timeout=120) as client:
        r = client.post("/documents", json={"documents": docs, "collection": "sample"})
        r.raise_for_status()
        job = wait_job(client, r.json()["id"])
        if job["status"] != "succeeded":
            raise RuntimeError(f"the sample ingest failed: {job}")


@dataclass
class SoakReport:
    """What a soak saw: requests answered as expected, failures (at most 20 kept), latencies (ms) and the
    server's RSS samples (MB)."""

    requests: int = 0
    deliberate: int = 0
    failures: int = 0
    failure_samples: list[str] = field(default_factory=list)
    per_mode: dict[str, int] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)
    rss_warm_mb: float = 0.0
    rss_mb: list[float] = field(default_factory=list)
    ingest: str = "not posted"
    ingest_posted_s: float = float("nan")
    seconds: float = 0.0

    def pct(self, q: float) -> float:
        """The ``q`` quantile of the latencies (ms)."""
        s = sorted(self.latencies_ms)
        return s[min(len(s) - 1, round(q * (len(s) - 1)))] if s else float("nan")

    @property
    def rss_peak_mb(self) -> float:
        return max(self.rss_mb, default=self.rss_warm_mb)

    @property
    def rss_min_mb(self) -> float:
        return min(self.rss_mb, default=self.rss_warm_mb)

    def summary(self) -> str:
        """The report in a few lines."""
        modes = " ".join(f"{m}={n}" for m, n in sorted(self.per_mode.items()))
        median = statistics.median(self.latencies_ms) if self.latencies_ms else float("nan")
        return (f"requests {self.requests} (deliberate errors {self.deliberate}) in {self.seconds:.0f}s, "
                f"failures {self.failures}; latency p50 {median:.0f} ms, p95 {self.pct(0.95):.0f} ms\n"
                f"RSS after warm-up {self.rss_warm_mb:.0f} MB, min {self.rss_min_mb:.0f} MB, "
                f"peak {self.rss_peak_mb:.0f} MB (+{self.rss_peak_mb - self.rss_warm_mb:.0f} MB), "
                f"{len(self.rss_mb)} samples; ingest job {self.ingest} (posted at {self.ingest_posted_s:.0f}s)\n"
                f"per mode: {modes}"
                + "".join(f"\n  failure: {f}" for f in self.failure_samples))


class _Load:
    """The shared state of the client threads."""

    def __init__(self, url: str, modes: list[str], expected: Mapping[str, tuple[int, str]], seconds: float,
                 max_requests: int) -> None:
        self.url, self.expected, self.max_requests = url, expected, max_requests
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.bodies = itertools.cycle([{"text": q, "mode": m, "top_k": 5} for q in QUESTIONS for m in modes])
        self.lock = threading.Lock()
        self.sent = 0
        self.report = SoakReport()

    def next_body(self) -> dict[str, Any] | None:
        """The next request to send, or None when the time or the request count is spent."""
        with self.lock:
            if time.monotonic() >= self.deadline or self.sent >= self.max_requests:
                return None
            self.sent += 1
            return next(self.bodies)

    def halfway(self) -> bool:
        """Half the time or half the requests are spent."""
        return time.monotonic() >= self.deadline - self.seconds / 2 or self.sent >= self.max_requests // 2

    def record(self, body: dict[str, Any], status: int | str, detail: str, ms: float) -> None:
        mode, rep = body["mode"], self.report
        want = self.expected.get(mode)
        with self.lock:
            rep.requests += 1
            rep.per_mode[mode] = rep.per_mode.get(mode, 0) + 1
            if want is None and status == 200:
                rep.latencies_ms.append(ms)
            elif want is not None and status == want[0] and want[1] in detail:
                rep.deliberate += 1
            else:
                rep.failures += 1
                if len(rep.failure_samples) < 20:
                    rep.failure_samples.append(f"{mode} {body['text'][:40]!r}: {status} {detail[:200]}")

    def client(self) -> None:
        """One client: requests back to back until the load is over."""
        with httpx.Client(base_url=self.url, timeout=300) as client:
            while (body := self.next_body()) is not None:
                t = time.perf_counter()
                try:
                    r = client.post("/query", json=body)
                    status: int | str = r.status_code
                    detail = "" if r.status_code == 200 else r.text
                except httpx.HTTPError as exc:
                    status, detail = type(exc).__name__, str(exc)
                self.record(body, status, detail, (time.perf_counter() - t) * 1000)


@contextmanager
def _sampling(pid: int, into: list[float]) -> Iterator[None]:
    """Append the RSS of ``pid`` to ``into`` every second while the block runs."""
    stop = threading.Event()

    def sample() -> None:
        while True:
            mb = rss_mb(pid)
            if mb is not None:
                into.append(mb)
            if stop.wait(1.0):
                return

    thread = threading.Thread(target=sample, name="rss-sampler", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def run_soak(url: str, pid: int, seconds: float, ingest_dir: Path, clients: int = 4, max_requests: int = 100_000,
             modes: list[str] | None = None, expected: Mapping[str, tuple[int, str]] | None = None,
             job_timeout: float = 600) -> SoakReport:
    """Warm every mode up, then ``clients`` threads query ``url`` for ``seconds`` (at most ``max_requests``
    requests) while ``ingest_dir``'s files (written here) are ingested by a job posted halfway; the RSS
    of ``pid`` is sampled until the job is done. ``expected``: the non-200 answer a mode gives by design."""
    modes = modes or text_modes()
    expected = dict(expected if expected is not None else {"gnn": GNN_WITHOUT_CHECKPOINT})
    with httpx.Client(base_url=url, timeout=300) as http:
        for mode in modes:  # warm-up: every mode's lazy parts (models, indexes) loaded before the baseline
            for q in QUESTIONS[:2]:
                http.post("/query", json={"text": q, "mode": mode, "top_k": 5})
        time.sleep(1.0)
        load = _Load(url, modes, expected, seconds, max_requests)
        rep = load.report
        rep.rss_warm_mb = rss_mb(pid) or 0.0
        ingest_dir.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, text in INGEST_FILES.items():
            (ingest_dir / name).write_text(text, encoding="utf-8")
            paths.append(str((ingest_dir / name).resolve()))
        t0 = time.monotonic()
        with _sampling(pid, rep.rss_mb):
            threads = [threading.Thread(target=load.client, name=f"soak-client-{i}") for i in range(clients)]
            for thread in threads:
                thread.start()
            while not load.halfway():  # the ingest job is posted halfway through the time or the requests
                time.sleep(0.05)
            rep.ingest_posted_s = time.monotonic() - t0
            r = http.post("/documents/paths", json={"paths": paths})
            if r.status_code != 202:
                rep.failures += 1
                rep.ingest = f"refused: {r.status_code} {r.text[:200]}"
            for thread in threads:
                thread.join()
            rep.seconds = time.monotonic() - t0
            if r.status_code == 202:
                job = wait_job(http, r.json()["id"], job_timeout)
                rep.ingest = job["status"]
                found = http.post("/query", json={"text": "Luigi Menabrea statesman", "mode": "bm25"})
                if job["status"] != "succeeded" or INGEST_FILES["soak-menabrea.txt"][:40] not in found.text:
                    rep.failures += 1
                    rep.failure_samples.append(f"ingest job: {job}; its document found: {found.text[:200]}")
    return rep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--max-requests", type=int, default=1_000_000)
    args = ap.parse_args()
    with throwaway_arcadedb() as (info, _cfg, tmp), tempfile.TemporaryDirectory(prefix="hopgraph-soak-") as work:
        port, root = free_port(), Path(work)
        config = root / "empty.toml"
        config.write_text("", encoding="utf-8")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
               **serve_env(info, tmp / "data", port, str(config), root / "ingest")}
        log = (root / "serve.log").open("w")
        proc = subprocess.Popen([sys.executable, "-m", "hopgraph.cli", "serve"], env=env,
                                stdout=subprocess.DEVNULL, stderr=log)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 300
            while not _healthy(url):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"hopgraph serve did not start:\n{(root / 'serve.log').read_text()[-3000:]}")
                time.sleep(0.5)
            ingest_sample(url)
            modes = text_modes()
            print(f"soak: {args.minutes:g} min, {args.clients} clients, modes {' '.join(modes)}", flush=True)
            rep = run_soak(url, proc.pid, args.minutes * 60, root / "ingest", args.clients, args.max_requests, modes)
            print(rep.summary())
        finally:
            proc.kill()
            proc.wait(timeout=30)
            log.close()


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


if __name__ == "__main__":
    main()
