"""spaCy extraction in a worker process, a batch ahead of the writer (``extraction.worker``, off by
default: on a 2-core machine the embedder already uses both cores, and parsing beside it gained
nothing — podcasts ingested in 470 s without the worker, 500 s with it at the same priority, 485 s
at the lowest).

While the ingest process embeds and writes batch *i*, the worker parses batch *i + 1* (bounded: the
pipeline submits one batch ahead and waits for it before submitting the next). The worker is a
spawned process (safe beside the threads of a server) that loads the spaCy model once and runs the
same ``SpacyExtractor`` code as the ingest process would, so the extraction is the same; aliases
(surface id -> canonical id) travel with each batch. A worker that dies is reported and the batch
is extracted in the ingest process instead: nothing is lost.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from hopgraph.core.records import Chunk
from hopgraph.core.settings import ExtractionSettings
from ingest.extraction import Extraction, Extractor, SpacyExtractor

log = logging.getLogger(__name__)

#: the worker's CPU priority: it takes the cores the ingest process leaves idle (between its embedding
#: batches, while it writes) and barely slows the embedder when it needs both cores (measured on 2
#: cores: at the same priority the embedder lost more time than parsing gained)
_NICE = 19
_worker: SpacyExtractor | None = None
_aliases: Mapping[str, str] = {}


def _start(cfg: dict[str, Any]) -> None:
    """In the worker: load the model once, and leave when the ingest process is gone (killed: nothing
    else would stop a worker waiting for its next batch)."""
    global _worker
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    with contextlib.suppress(OSError):
        os.nice(_NICE)
    _worker = SpacyExtractor(ExtractionSettings.model_validate(cfg), resolve=lambda eid: _aliases.get(eid, eid))
    _ = _worker.nlp


def _extract(chunks: list[Chunk], aliases: Mapping[str, str]) -> Extraction:
    """In the worker: one batch."""
    global _aliases
    assert _worker is not None
    _aliases = aliases
    return _worker.extract(chunks)


class ExtractionWorker:
    """One spaCy process; ``submit`` returns a future of the batch's ``Extraction``."""

    def __init__(self, cfg: ExtractionSettings) -> None:
        self.cfg = cfg
        self._pool: ProcessPoolExecutor | None = None

    def submit(self, chunks: Sequence[Chunk], aliases: Mapping[str, str]) -> Future[Extraction]:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=_start,
                                             initargs=(self.cfg.model_dump(),))
        try:
            return self._pool.submit(_extract, list(chunks), dict(aliases))
        except BrokenProcessPool as exc:  # it died while idle (a new pool is never broken: one retry)
            log.warning("the extraction worker died (%s): starting another", exc)
            self.close()
            return self.submit(chunks, aliases)

    def result(self, future: Future[Extraction], fallback: Extractor, chunks: Sequence[Chunk]) -> Extraction:
        """The batch's extraction; extracted by ``fallback`` (in this process) if the worker died (the
        next batch starts a new one)."""
        try:
            return future.result()
        except BrokenProcessPool as exc:
            log.warning("the extraction worker died (%s): extracting %d chunks in the ingest process",
                        exc, len(chunks))
            self.close()
            return fallback.extract(chunks)

    def close(self) -> None:
        """Stop the worker (pending batches are cancelled)."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.shutdown(wait=True, cancel_futures=True)
