"""How fresh and how fast the query path stays while the graph changes (the served index state).

On an ingested data dir (``--data-dir``; without it, ``--corpus`` is ingested into a throwaway one
first) it reports, graph mode, one process with the embedded stores:

- the cold start (no persisted state: a full build) and the restart (the persisted state loaded),
  each with its first query, and ``hopgraph serve`` restarted: seconds until ``/ready``;
- steady p50 / p95 over the corpus's questions (the baseline every ratio is against);
- a one-document change (a new document, then the same document edited; the run's end, resolution
  and communities, is left to the next part): the ingest, the refresh (a delta, on the writer's
  thread), when the change is visible and the first query after it;
- a running re-ingestion (``--writes`` documents, one commit each, then the run's end) with
  ``--clients`` concurrent query threads on a polling keeper: failed queries, p95 against idle p95,
  the served version's lag;
- the process RSS.

``--synthetic N_DOCS:N_ENTITIES:N_EDGES`` (e.g. 100000:1000000:10000000) times the same state at
scale from generated tables: full build, six successive deltas of 100 changed documents each, of two kinds (and
their median), RSS, query p50.

    python -m benchmarks.freshness [--data-dir D] [--corpus C --limit N] [--synthetic D:E:R]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from benchmarks.common import corpus_store, free_port, percentiles, rss_mb
from benchmarks.freshness_scale import scale_run
from benchmarks.paths import SHARED_DATA
from hopgraph.app.platform import Platform
from hopgraph.core.settings import Settings
from hopgraph.ingest.sources import record_to_source

QUESTIONS = SHARED_DATA / "2wiki-dev-500" / "queries.jsonl"


def questions(n: int) -> list[str]:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()[:n]
    return [json.loads(x)["text"] for x in lines]


def data_dir(args: argparse.Namespace) -> contextlib.AbstractContextManager[Settings]:
    """Settings on the given data dir, or on a throwaway one the corpus is ingested into."""
    corpus = Path(args.corpus) / "corpus.jsonl"
    return corpus_store(args.data_dir, lambda: corpus.read_text(encoding="utf-8").splitlines()[: args.limit],
                        "fresh")


def timed_query(p: Platform, text: str) -> float:
    t = time.perf_counter()
    p.query(text, mode="graph")
    return time.perf_counter() - t


def starts(settings: Settings, qs: list[str]) -> None:
    """Cold build and restart, each with its first query."""
    index = settings.index_dir
    shutil.rmtree(index, ignore_errors=True)
    for label in ("start without a persisted state (full build)", "restart (persisted state)"):
        with Platform(settings) as p:
            _ = p.embedder, p.admin, p.vectors
            t = time.perf_counter()
            state = p.retriever.keeper.refresh()
            ready = time.perf_counter() - t
            first = timed_query(p, qs[0])
            kind = p.retriever.keeper.freshness().last_refresh_kind
            print(f"{label}: state v{state.version} ready in {ready:.2f}s ({kind}; {state.seconds}), "
                  f"first query {first * 1000:.0f} ms")


def serve_restarts(settings: Settings, question: str, times: int = 3) -> None:
    """``serve_restart`` ``times`` over (the start varies by a few tenths of a second from run to run)."""
    took = [serve_restart(settings, question) for _ in range(times)]
    each = ", ".join(f"{t:.1f}" for t in took)
    print(f"hopgraph serve restart: serving after a median {statistics.median(took):.1f}s of {times} ({each})")


def graph_env(settings: Settings) -> dict[str, str]:
    """The environment that points ``hopgraph serve`` at the same graph (a throwaway server's database;
    the password in the environment, never on a command line)."""
    g = settings.graph
    env = {"HOPGRAPH_GRAPH__DATABASE": g.database, "HOPGRAPH_GRAPH__BOLT_PORT": str(g.bolt_port),
           "HOPGRAPH_GRAPH__HTTP_PORT": str(g.http_port)}
    if g.uri:
        env["HOPGRAPH_GRAPH__URI"] = g.uri
    if g.password is not None:
        env["HOPGRAPH_GRAPH__PASSWORD"] = g.password.get_secret_value()
    return env


def serve_restart(settings: Settings, question: str) -> float:
    """``hopgraph serve`` started on the data dir: seconds until /ready answers, then the first query;
    returns the seconds until it served."""
    port = free_port()
    env = {**os.environ, "HOPGRAPH_DATA_DIR": str(settings.data_dir), "HOPGRAPH_API__PORT": str(port),
           "HF_HUB_OFFLINE": "1", **graph_env(settings)}
    url = f"http://127.0.0.1:{port}"
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "hopgraph.cli", "serve"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        with httpx.Client(timeout=30) as poll:  # one client: a new one per try costs the start CPU time
            while True:  # the server accepts connections once its warm-up (the index state too) is done
                if proc.poll() is not None:
                    raise RuntimeError(f"hopgraph serve exited with {proc.returncode}")
                with contextlib.suppress(httpx.TransportError):
                    if poll.get(f"{url}/health").status_code == 200:
                        break
                time.sleep(0.05)
        serving_s = time.perf_counter() - t
        t = time.perf_counter()
        res = httpx.post(f"{url}/query", json={"text": question, "mode": "graph"}, timeout=60)
        first = time.perf_counter() - t
        t = time.perf_counter()
        ready = httpx.get(f"{url}/ready", timeout=60)
        ready_s = time.perf_counter() - t
        if "index" not in ready.json():
            raise RuntimeError(f"/ready answered {ready.status_code}: {ready.text}")
        index = ready.json()["index"]
        print(f"hopgraph serve restart: serving after {serving_s:.1f}s (process, models, stores, index state v"
              f"{index['served_version']} by {index['last_refresh_kind']} in {index['last_refresh_s']:.2f}s), "
              f"first /query {first * 1000:.0f} ms (HTTP {res.status_code}); /ready (the doctor's checks) "
              f"{ready_s:.1f}s")
        return serving_s
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def one_document(p: Platform, qs: list[str], p95: float) -> None:
    """A new document, then the same document edited: ingest, refresh, visibility, first query."""
    keeper = p.retriever.keeper
    for step, text in (("add", "Zorblax Quintana founded the Vexmoor Observatory in 1893 near Kelderwick."),
                       ("edit", "Zorblax Quintana founded the Vexmoor Observatory in 1894 near Kelderwick, "
                                "with money from a salt mine.")):
        t = time.perf_counter()
        rec = {"id": "vexmoor", "text": text, "title": "Vexmoor Observatory"}
        p._ingestor().ingest_sources([record_to_source("bench", rec, "bench#0")], total=1, finish=False)
        ingest_s = time.perf_counter() - t
        t = time.perf_counter()
        keeper.refresh()
        refresh_s = time.perf_counter() - t
        first = timed_query(p, "Who founded the Vexmoor Observatory?")
        top = p.query("Who founded the Vexmoor Observatory?", mode="graph", top_k=1).results
        seen = bool(top) and "Zorblax" in top[0].text
        print(f"one-document {step}: ingest {ingest_s:.1f}s, refresh {refresh_s:.2f}s "
              f"({keeper.freshness().last_refresh_kind}), visible {ingest_s + refresh_s:.1f}s after the ingest "
              f"started / {refresh_s:.2f}s after it completed: {seen}; first query {first * 1000:.0f} ms "
              f"= {first * 1000 / p95:.2f}x steady p95")


def with_clients(p: Platform, qs: list[str], clients: int, work: Callable[[], None]) -> dict[str, Any]:
    """Run ``work`` while ``clients`` threads query (graph mode); their latencies, failures and the
    served lag each saw."""
    stop = threading.Event()
    lat: list[float] = []
    lags: list[int] = []
    failed: list[str] = []
    lock = threading.Lock()

    def client(k: int) -> None:
        i = k
        while not stop.is_set():
            try:
                t = time.perf_counter()
                res = p.query(qs[i % len(qs)], mode="graph")
                with lock:
                    lat.append(time.perf_counter() - t)
                    lags.append(res.graph_version - res.index_version)
            except Exception as exc:  # counted, not raised: the figure is how many fail
                with lock:
                    failed.append(repr(exc))
            i += clients

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for th in threads:
        th.start()
    t = time.perf_counter()
    work()
    seconds = time.perf_counter() - t
    stop.set()
    for th in threads:
        th.join()
    p50, p95 = percentiles(lat)
    return {"seconds": seconds, "queries": len(lat), "failed": failed, "p50": p50, "p95": p95, "lags": lags}


def under_writes(p: Platform, qs: list[str], clients: int, writes: int) -> None:
    """Concurrent query threads on a polling keeper, idle and then while documents are written one
    commit each (then the run's end: resolution and communities), as a scheduled re-ingestion."""
    keeper = p.retriever.keeper
    keeper.start_polling(p.settings.index.poll_s, pregrow=p.settings.index.pregrow)

    def reingest() -> None:
        for n in range(writes):
            rec = {"id": f"w{n}", "title": f"Written {n}", "text": f"Hopgraph bench document {n} ({time.time()}) "
                   f"was written by Ada Lovelace in London while {clients} clients queried it."}
            p._ingestor().ingest_sources([record_to_source("bench", rec, f"bench#w{n}")], total=1, finish=False)
        p._ingestor().ingest_sources([], total=0)  # the run's end: resolution and communities
        time.sleep(2 * p.settings.index.poll_s)  # the poller's last refresh

    idle = with_clients(p, qs, clients, lambda: time.sleep(30))
    busy = with_clients(p, qs, clients, reingest)
    keeper.stop_polling()
    print(f"{clients} concurrent clients, idle: {idle['queries']} queries, {len(idle['failed'])} failed, "
          f"p50 {idle['p50']:.0f} ms, p95 {idle['p95']:.0f} ms")
    print(f"{clients} concurrent clients during a re-ingestion of {writes} documents ({busy['seconds']:.0f}s): "
          f"{busy['queries']} queries, {len(busy['failed'])} failed, p50 {busy['p50']:.0f} ms, p95 {busy['p95']:.0f} ms"
          f" = {busy['p95'] / idle['p95']:.2f}x idle p95; served lag max {max(busy['lags'], default=0)} "
          f"versions, mean {statistics.fmean(busy['lags'] or [0]):.2f}; last refresh "
          f"{keeper.freshness().last_refresh_s:.2f}s ({keeper.freshness().last_refresh_kind})")
    if busy["failed"]:
        print("  first failure:", busy["failed"][0])


def corpus_run(args: argparse.Namespace) -> None:
    qs = questions(args.queries)
    with data_dir(args) as settings:
        starts(settings, qs)
        serve_restarts(settings, qs[0])
        with Platform(settings) as p:
            p.retriever.keeper.refresh()
            for q in qs[:5]:
                timed_query(p, q)  # warm caches
            gc.freeze()  # as hopgraph serve does once started (api.app): what the start loaded is never rescanned
            p50, p95 = percentiles([timed_query(p, q) for q in qs])
            print(f"steady graph mode over {len(qs)} questions: p50 {p50:.0f} ms, p95 {p95:.0f} ms")
            one_document(p, qs, p95)
            under_writes(p, qs, args.clients, args.writes)
            print(f"process RSS {rss_mb():.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", help="an ingested data dir (its stores are changed: bench documents are added)")
    ap.add_argument("--corpus", default=str(SHARED_DATA / "2wiki-corpus"))
    ap.add_argument("--limit", type=int, default=None, help="records of the corpus to ingest (default all)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--writes", type=int, default=10)
    ap.add_argument("--synthetic", help="N_DOCS:N_ENTITIES:N_EDGES: time the index state at scale instead")
    ap.add_argument("--release-freed-memory", action="store_true",
                    help="synthetic run: hand freed memory back to the kernel (glibc's default) instead of keeping "
                    "it for the next refresh as the platform does (index.keep_freed_memory)")
    ap.add_argument("--no-pregrow", action="store_true",
                    help="synthetic run: do not set the state's size aside in the heap after the build, as a server "
                    "does at start (index.pregrow): the first refreshes grow the process")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.synthetic:
        n_docs, n_entities, n_edges = (int(x) for x in args.synthetic.split(":"))
        scale_run(n_docs, n_entities, n_edges, keep=not args.release_freed_memory, grow=not args.no_pregrow)
    else:
        corpus_run(args)


if __name__ == "__main__":
    main()
