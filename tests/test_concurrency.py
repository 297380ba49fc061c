"""What the API's threads share, hammered from many threads at once: no exception, same answers."""

from __future__ import annotations

import hashlib
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from hopgraph.vectors.cached import CachedEmbedder
from tests.paths import SHARED_DATA


class _HashEmbedder(CachedEmbedder):
    """A deterministic stand-in encoder (vectors from the text's hash) to drive the real cache."""

    name, dim = "hash", 8

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.stack([np.frombuffer(hashlib.sha256(t.encode()).digest()[:8], dtype=np.uint8).astype(np.float32)
                         + 1.0 for t in texts])


def test_embedder_cache_is_safe_under_16_threads() -> None:
    texts = [f"text {i % 13}" for i in range(4000)]
    expected = _HashEmbedder(batch_size=3, cache_size=0).embed(texts)
    shared = _HashEmbedder(batch_size=3, cache_size=6)  # smaller than the vocabulary: constant eviction
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show up at once

    def work(start: int) -> bool:
        return all(np.allclose(shared.embed(texts[i : i + 5]), expected[i : i + 5]) for i in range(start, start + 400))

    try:
        with ThreadPoolExecutor(16) as pool:
            assert all(pool.map(work, [i * 100 for i in range(32)]))
    finally:
        sys.setswitchinterval(interval)
    assert len(shared._cache) <= 6


#: records the queried platform holds, and the records the other platform ingests (one write batch) meanwhile
BASE, INGESTED = 40, 5
#: query threads, and the queries each runs at least (they go on until the ingest is done)
THREADS, QUERIES_EACH = 16, 3
#: seconds the threads may take in all: a guard against a hang, not a measure of speed
GUARD_S = 300


def test_16_query_threads_and_an_ingest_thread(platform: Any, tmp_path: Any, arcadedb: Any,
                                              embedder: Any) -> None:
    """16 threads query every mode while another platform ingests with the same embedder (the queries
    read its cache, the ingest runs its model): no exception, and every ranking equals the single-threaded
    one. The work is counted, not timed (all start at once, and the queries go on until the ingest is done),
    so that the outcome does not depend on how busy the machine is."""
    import json
    import random
    import time

    from hopgraph.app.platform import Platform
    from tests.conftest import settings_for

    with (SHARED_DATA / "hotpotqa-100" / "corpus.jsonl").open() as fh:
        rows = [json.loads(line) for line in fh]
    records = [{"id": r["_id"], "title": r["title"], "text": r["text"]} for r in rows]
    platform.ingest_records(records[:BASE], collection="hp")
    with (SHARED_DATA / "hotpotqa-100" / "queries.jsonl").open() as fh:
        queries = [json.loads(line)["text"] for _, line in zip(range(12), fh, strict=False)]
    modes = ("graph", "rrf", "local", "global", "pcst")
    want = {(q, m): [r.citation.chunk_id for r in platform.query(q, mode=m, top_k=8).results]
            for q in queries for m in modes}
    start, ingested, stop = threading.Barrier(THREADS + 1, timeout=GUARD_S), threading.Event(), threading.Event()
    errors: list[BaseException] = []
    done = {"ingested": 0}
    counts: list[int] = [0] * THREADS

    def ingest() -> None:
        try:
            start.wait()
            with Platform(settings_for(arcadedb, tmp_path / "other"), embedder=embedder) as other:
                report = other.ingest_records(records[BASE : BASE + INGESTED], collection="hp")
                done["ingested"] = report.documents_ingested
        finally:
            ingested.set()

    def query(seed: int) -> None:
        rng = random.Random(seed)
        start.wait()
        while not (ingested.is_set() and counts[seed] >= QUERIES_EACH) and not errors and not stop.is_set():
            q, m = rng.choice(queries), rng.choice(modes)
            got = [r.citation.chunk_id for r in platform.query(q, mode=m, top_k=8).results]
            assert got == want[(q, m)], (q, m)
            counts[seed] += 1

    def guarded(fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)
            start.abort()  # no thread waits for one that failed before the start

    threads = [threading.Thread(target=guarded, args=(query, i), daemon=True) for i in range(THREADS)]
    threads.append(threading.Thread(target=guarded, args=(ingest,), name="ingest", daemon=True))
    deadline = time.monotonic() + GUARD_S
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        stop.set()  # the query threads end even if the ingest hangs
        for t in threads[:-1]:
            t.join(timeout=30)
    assert not errors, errors[0]
    assert not [t.name for t in threads if t.is_alive()], "still running after the guard's seconds"
    assert done["ingested"] == INGESTED
