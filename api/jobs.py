"""Background jobs. Every write (ingest, delete, scheduled re-ingestion) runs on ONE writer thread,
so writes never interleave while queries keep running on the request threads."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from api.schemas import JobOut

log = logging.getLogger(__name__)

JobWork = Callable[[], dict[str, Any]]


class JobFailed(Exception):
    """Raised by work that failed but has a result to report (a recorded scheduled run)."""

    def __init__(self, message: str, result: dict[str, Any]) -> None:
        super().__init__(message)
        self.result = result


class JobManager:
    """Queues work on the writer thread and keeps the recent jobs for ``GET /jobs``."""

    def __init__(self, history: int = 200, on_done: Callable[[JobOut], None] | None = None) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hopgraph-writer")
        self._jobs: OrderedDict[str, JobOut] = OrderedDict()
        self._futures: dict[str, Future[None]] = {}
        self._lock = threading.Lock()
        self._history = history
        self._on_done = on_done

    def submit(self, kind: str, detail: str, work: JobWork, exclusive: bool = False) -> JobOut:
        """Queue ``work``; with ``exclusive``, a job of the same kind and detail still queued or
        running makes this one 'skipped' instead (a schedule never overlaps itself)."""
        with self._lock:
            if exclusive and any(j.kind == kind and j.detail == detail and j.status in ("queued", "running")
                                 for j in self._jobs.values()):
                job = JobOut(id=uuid.uuid4().hex, kind=kind, status="skipped", detail=detail,
                             created_at=time.time(), error="the previous run is still queued or running")
                self._remember(job)
                return job
            job = JobOut(id=uuid.uuid4().hex, kind=kind, status="queued", detail=detail,
                         created_at=time.time())
            self._remember(job)
            self._futures[job.id] = self._executor.submit(self._run, job.id, work)
        return job

    def _remember(self, job: JobOut) -> None:
        self._jobs[job.id] = job
        while len(self._jobs) > self._history:
            oldest = next(iter(self._jobs))
            if self._jobs[oldest].status in ("queued", "running"):
                break
            self._jobs.pop(oldest)
            self._futures.pop(oldest, None)

    def _update(self, job_id: str, **changes: Any) -> JobOut:
        with self._lock:
            job = self._jobs[job_id].model_copy(update=changes)
            self._jobs[job_id] = job
            return job

    def _run(self, job_id: str, work: JobWork) -> None:
        self._update(job_id, status="running", started_at=time.time())
        try:
            result = work()
            job = self._update(job_id, status="succeeded", result=result, finished_at=time.time())
        except JobFailed as exc:
            job = self._update(job_id, status="failed", result=exc.result, error=str(exc), finished_at=time.time())
        except Exception as exc:  # a failed job is reported on GET /jobs/{id}, never lost
            log.exception("job %s failed", job_id)
            job = self._update(job_id, status="failed", error=f"{type(exc).__name__}: {exc}",
                               finished_at=time.time())
        if self._on_done is not None:
            self._on_done(job)

    def get(self, job_id: str) -> JobOut | None:
        with self._lock:
            return self._jobs.get(job_id)

    def list(self) -> list[JobOut]:
        with self._lock:
            return sorted(self._jobs.values(), key=lambda j: -j.created_at)

    def wait(self, job_id: str, timeout: float | None = None) -> JobOut | None:
        """Block until a job is done (tests, the CLI)."""
        fut = self._futures.get(job_id)
        if fut is not None:
            fut.result(timeout=timeout)
        return self.get(job_id)

    def shutdown(self, wait: bool = True) -> None:
        self._executor.shutdown(wait=wait, cancel_futures=not wait)
