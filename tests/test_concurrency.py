"""What the API's threads share, hammered from many threads at once: no exception, same answers."""

from __future__ import annotations

import hashlib
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from hopgraph.vectors.cached import CachedEmbedder


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


def test_16_query_threads_and_an_ingest_thread(platform: Any, tmp_path: Any, arcadedb: Any,
                                              embedder: Any) -> None:
    """16 threads query every mode while another platform ingests with the same embedder (its cache
    and model shared): no exception, and every ranking equals the single-threaded one."""
    import json
    import random
    import time

    from hopgraph.app.platform import Platform
    from tests.conftest import settings_for
    from tests.paths import SHARED_DATA

    with (SHARED_DATA / "hotpotqa-100" / "corpus.jsonl").open() as fh:
        rows = [json.loads(line) for line in fh]
    records = [{"id": r["_id"], "title": r["title"], "text": r["text"]} for r in rows]
    platform.ingest_records(records[:80], collection="hp")
    with (SHARED_DATA / "hotpotqa-100" / "queries.jsonl").open() as fh:
        queries = [json.loads(line)["text"] for _, line in zip(range(12), fh, strict=False)]
    modes = ("graph", "rrf", "local", "global", "pcst")
    want = {(q, m): [r.citation.chunk_id for r in platform.query(q, mode=m, top_k=8).results]
            for q in queries for m in modes}
    stop = time.monotonic() + 45
    errors: list[BaseException] = []
    done = {"queries": 0, "ingested": 0}

    def ingest() -> None:
        with Platform(settings_for(arcadedb, tmp_path / "other"), embedder=embedder) as other:
            for i in range(80, len(records), 5):
                if time.monotonic() > stop:
                    break
                done["ingested"] += other.ingest_records(records[i : i + 5], collection="hp").documents_ingested

    def query(seed: int) -> None:
        rng = random.Random(seed)
        while time.monotonic() < stop:
            q, m = rng.choice(queries), rng.choice(modes)
            got = [r.citation.chunk_id for r in platform.query(q, mode=m, top_k=8).results]
            assert got == want[(q, m)], (q, m)
            done["queries"] += 1

    def guarded(fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(query, i)) for i in range(16)]
    threads.append(threading.Thread(target=guarded, args=(ingest,)))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors[0]
    assert done["queries"] > 16 and done["ingested"] > 0
