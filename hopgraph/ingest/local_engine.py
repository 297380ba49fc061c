"""Local ingest as a pipeline: each stage with its own share of the cores.

Extraction runs in the spaCy worker processes (``extraction.processes``, at the lowest CPU priority),
embedding on one thread of the ingest process with a fixed number of torch threads
(``ingest.embed_threads``, one per core by default), and writing on the caller's thread. Batch i is
written while batch i + 1 is embedded and batch i + 2 parsed, so the stages overlap instead of taking
turns on every core; the stage that is busy all the time bounds the throughput (``IngestReport.bound``).
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

from hopgraph.core.records import IngestReport
from hopgraph.ingest.batches import Prepared
from hopgraph.ingest.extraction_worker import cores
from hopgraph.ingest.source_text import SourceText

#: batches computed ahead of the one being written (one embedding, one waiting for its parse)
AHEAD = 2
#: the stages that run on the writer's thread, after the batches (the run's serial part)
WRITER_STAGES = ("graph_write", "vector_write", "image_embed", "resolve", "forget", "chat_dates", "types",
                 "communities", "tree")

Batch = tuple[list[SourceText], Prepared | None]


def embed_threads(configured: int) -> int:
    """``ingest.embed_threads``, or one per core: the parse workers run at the lowest priority and the
    writer mostly waits for the stores, so the embedder takes the cores they leave (``python -m
    benchmarks.ingest_bound --embed-threads N`` compares counts)."""
    return configured or cores()


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """torch's intra-op threads set to ``n`` for the block (the setting is per process), then restored."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def pipelined(batches: Iterable[Batch], compute: Callable[[Prepared, IngestReport], Prepared],
              report: IngestReport, threads: int) -> Iterator[Batch]:
    """The ``batches`` (prepared lazily by the iterable, which also sends them to the parse workers)
    with ``compute`` run on the embedding thread up to ``AHEAD`` batches ahead, yielded in order; the
    caller writes each. The writer's waits for the embedding thread are ``report.stage_wait["write"]``."""
    window: deque[tuple[list[SourceText], Future[Prepared] | None]] = deque()
    with torch_threads(threads), ThreadPoolExecutor(1, thread_name_prefix="ingest-embed") as pool:
        try:
            for batch, prepared in batches:
                window.append((batch, pool.submit(compute, prepared, report) if prepared is not None else None))
                if len(window) > AHEAD:
                    yield _taken(window, report)
            while window:
                yield _taken(window, report)
        finally:
            for _, future in window:  # a failed or stopped run: what was not started is dropped
                if future is not None:
                    future.cancel()


def _taken(window: deque[tuple[list[SourceText], Future[Prepared] | None]], report: IngestReport) -> Batch:
    batch, future = window.popleft()
    if future is None:
        return batch, None
    t = time.perf_counter()
    done = future.result()
    report.stage_wait["write"] = report.stage_wait.get("write", 0.0) + time.perf_counter() - t
    return batch, done


def busiest(report: IngestReport, wall: float) -> str:
    """The stage that bounded the run: the writer (its stages), embedding, or extraction (parsing in
    the ingest process, or waiting for the workers), whichever was busy longest; '' for an empty run."""
    st = report.stage_seconds
    busy = {"write": sum(st.get(k, 0.0) for k in WRITER_STAGES), "embed": st.get("embed", 0.0),
            "extract": st.get("extract", 0.0)}
    name, seconds = max(busy.items(), key=lambda kv: kv[1])
    return name if seconds > 0.01 * wall else ""
