"""Load on POST /query: concurrent clients on loopback for a bounded time, per mode.

Ingests the hotpotqa-100 corpus into fresh embedded stores, serves the API with uvicorn on
127.0.0.1, then for each mode runs ``--clients`` concurrent HTTP clients (asyncio, in a separate
process so they do not compete with the server for the GIL) for ``--seconds`` and
prints throughput and p50/p95/p99 latency, with errors counted. Baselines measured in the same run:
the same queries called in-process (``Platform.query``, no HTTP: the API's overhead is the ratio)
and ``GET /health`` (the server's floor). A last phase repeats the graph-mode load while a
background ingest job (2wiki passages through ``POST /documents``) runs, and reports failed queries.

    python -m benchmarks.api_load [--modes graph dense bm25 rrf local] [--clients 8] [--seconds 15]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import statistics
import time
from typing import Any

import httpx

from benchmarks.common import free_port, throwaway_arcadedb
from benchmarks.paths import SHARED_DATA
from hopgraph.api.app import create_app
from hopgraph.api.server import background_server
from hopgraph.app.platform import Platform
from hopgraph.core.settings import Settings

DATA = SHARED_DATA


def _pct(ms: list[float], q: float) -> float:
    s = sorted(ms)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] if s else float("nan")


async def _load(url: str, path: str, bodies: list[dict[str, Any]] | None, clients: int, seconds: float
                ) -> dict[str, Any]:
    """``clients`` workers send requests back to back until the time is up."""
    latencies: list[float] = []
    errors: dict[str, int] = {}
    stop = time.monotonic() + seconds

    async def worker(i: int, client: httpx.AsyncClient) -> None:
        n = i
        while time.monotonic() < stop:
            t = time.perf_counter()
            try:
                if bodies is None:
                    r = await client.get(path)
                else:
                    r = await client.post(path, json=bodies[n % len(bodies)])
                ok = r.status_code == 200
                key = str(r.status_code)
            except httpx.HTTPError as exc:
                ok, key = False, type(exc).__name__
            if ok:
                latencies.append((time.perf_counter() - t) * 1000)
            else:
                errors[key] = errors.get(key, 0) + 1
            n += clients

    t0 = time.perf_counter()
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        await asyncio.gather(*(worker(i, client) for i in range(clients)))
    wall = time.perf_counter() - t0
    return {"requests": len(latencies), "rps": len(latencies) / wall, "p50": _pct(latencies, 0.5),
            "p95": _pct(latencies, 0.95), "p99": _pct(latencies, 0.99), "errors": errors}


def _load_in_child(url: str, path: str, bodies: list[dict[str, Any]] | None, clients: int, seconds: float
                   ) -> dict[str, Any]:
    """Run the load generator in a separate process."""
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        return pool.apply(_load_sync, (url, path, bodies, clients, seconds))


def _load_sync(url: str, path: str, bodies: list[dict[str, Any]] | None, clients: int, seconds: float
               ) -> dict[str, Any]:
    return asyncio.run(_load(url, path, bodies, clients, seconds))


def _row(name: str, r: dict[str, Any], extra: str = "") -> None:
    errs = sum(r["errors"].values())
    print(f"{name:<22} {r['rps']:>8.1f} {r['p50']:>8.1f} {r['p95']:>8.1f} {r['p99']:>8.1f} {r['requests']:>7d} "
          f"{errs:>6d}  {extra}{'' if not errs else json.dumps(r['errors'])}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", nargs="+", default=["graph", "dense", "bm25", "rrf", "local"])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--ingest-docs", type=int, default=300, help="2wiki passages ingested during the last phase")
    ap.add_argument("--corpus-limit", type=int, default=0, help="Only the first N hotpotqa passages (0 = all).")
    args = ap.parse_args()

    hotpot = DATA / "hotpotqa-100"
    queries = [json.loads(line)["text"] for line in (hotpot / "queries.jsonl").read_text().splitlines()]
    with throwaway_arcadedb() as (_info, graph_cfg, tmp):
        settings = Settings(data_dir=tmp / "data", graph=graph_cfg.model_copy(update={"database": "apiload"}))
        with Platform(settings) as platform:
            t = time.perf_counter()
            corpus = hotpot / "corpus.jsonl"
            if args.corpus_limit:
                corpus = tmp / "corpus.jsonl"
                lines = (hotpot / "corpus.jsonl").read_text().splitlines()[: args.corpus_limit]
                corpus.write_text("\n".join(lines) + "\n")
            report = platform.ingest([corpus])
            print(f"corpus: {report.documents_ingested} passages, {report.chunks} chunks "
                  f"in {time.perf_counter() - t:.0f}s; {len(queries)} queries; {args.clients} clients, "
                  f"{args.seconds:g}s per mode, {settings.api.host} loopback")
            app = create_app(settings, platform=platform, scheduler=False)
            with background_server(app, free_port()) as url:
                _run_phases(url, platform, queries, args)


def _run_phases(url: str, platform: Platform, queries: list[str], args: argparse.Namespace) -> None:
    platform.embedder.embed(queries)  # in-process and HTTP runs both find the query vectors cached
    print(f"\n{'phase':<22} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'n':>7} {'errors':>6}")
    health = _load_in_child(url, "/health", None, args.clients, min(args.seconds, 5))
    _row("GET /health (floor)", health)
    for mode in args.modes:
        platform.query(queries[0], mode=mode)  # warm the mode's caches
        inproc = [platform.query(q, mode=mode).timings_ms["total"] for q in queries[:50]]
        bodies = [{"text": q, "mode": mode, "top_k": 10} for q in queries]
        r = _load_in_child(url, "/query", bodies, args.clients, args.seconds)
        base = statistics.median(inproc)
        _row(f"POST /query {mode}", r, f"in-process p50 {base:.1f} ms (HTTP+queueing x{r['p50'] / base:.1f}) ")

    # queries while an ingest job writes
    corpus = DATA / "2wiki-corpus" / "corpus.jsonl"
    docs = []
    for line in corpus.read_text().splitlines()[:args.ingest_docs]:
        rec = json.loads(line)
        docs.append({"id": str(rec["_id"]), "title": rec.get("title") or None, "text": rec["text"]})
    job = httpx.post(f"{url}/documents", json={"documents": docs, "collection": "load"}, timeout=60).json()
    bodies = [{"text": q, "mode": "graph", "top_k": 10} for q in queries]
    t0 = time.perf_counter()
    r = _load_in_child(url, "/query", bodies, args.clients, args.seconds)
    status = httpx.get(f"{url}/jobs/{job['id']}").json()["status"]
    _row("graph during ingest", r, f"(ingest job {status} after {time.perf_counter() - t0:.0f}s) ")
    while status in ("queued", "running"):
        time.sleep(1)
        status = httpx.get(f"{url}/jobs/{job['id']}").json()["status"]
    print(f"ingest job {status}; queries failed during ingest: {sum(r['errors'].values())}")


if __name__ == "__main__":
    main()
