"""Background jobs. Every write (ingest, delete, scheduled re-ingestion) runs on ONE writer thread,
so writes never interleave while queries keep running on the request threads.

Jobs are durable (``api.job_store``: a job with a spec survives a restart and is re-queued), report
their progress (documents done / total), and can be cancelled: a queued job at once, a running one at
its next checkpoint (``ingest.control``), leaving every document complete or untouched. Shutting
down stops the running job at its next checkpoint and keeps it, and the queued ones, for the next start.
"""

from __future__ import annotations

import builtins
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from dataclasses import dataclass
from typing import Any

from hopgraph.api.job_store import JobStore
from hopgraph.api.schemas import JobOut
from hopgraph.ingest.control import IngestCancelled, IngestControl

log = logging.getLogger(__name__)

JobWork = Callable[[IngestControl], "dict[str, Any] | Unchanged | Warned"]
ACTIVE = ("queued", "running", "cancelling")


class JobFailed(Exception):
    """Raised by work that failed but has a result to report (a recorded scheduled run)."""

    def __init__(self, message: str, result: dict[str, Any]) -> None:
        super().__init__(message)
        self.result = result


@dataclass(frozen=True)
class Unchanged:
    """Returned by work that succeeded and changed nothing (a quiet scheduled run): the job is then
    forgotten, kept neither in ``GET /jobs`` nor in the store (the run's record in the graph counts it)."""

    result: dict[str, Any]


@dataclass(frozen=True)
class Warned:
    """Returned by work that succeeded with a warning (a scheduled source's path is missing)."""

    result: dict[str, Any]
    warning: str


class JobManager:
    """Queues work on the writer thread and keeps the recent jobs for ``GET /jobs``."""

    def __init__(self, history: int = 200, on_done: Callable[[JobOut], None] | None = None,
                 store: JobStore | None = None) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hopgraph-writer")
        self._jobs: OrderedDict[str, JobOut] = OrderedDict()
        self._futures: dict[str, Future[None]] = {}
        self._controls: dict[str, IngestControl] = {}
        self._lock = threading.Lock()
        self._history = history
        self._on_done = on_done
        self._store = store
        self._closing = False
        if store is not None:
            for job in reversed(store.recent(history)):
                self._jobs[job.id] = job

    def submit(self, kind: str, detail: str, work: JobWork, exclusive: bool = False,
               spec: dict[str, Any] | None = None, job: JobOut | None = None) -> JobOut:
        """Queue ``work``; with ``exclusive``, a job of the same kind and detail still queued or
        running makes this one 'skipped' instead (a schedule never overlaps itself). ``spec``
        (JSON) is stored so the job is re-queued after a restart; ``job`` re-queues a stored one."""
        with self._lock:
            if exclusive and any(j.kind == kind and j.detail == detail and j.status in ACTIVE
                                 for j in self._jobs.values()):
                skipped = JobOut(id=uuid.uuid4().hex, kind=kind, status="skipped", detail=detail,
                                 created_at=time.time(), error="the previous run is still queued or running")
                self._remember(skipped)
                return skipped
            queued = (job or JobOut(id=uuid.uuid4().hex, kind=kind, status="queued", detail=detail,
                                    created_at=time.time())).model_copy(update={"status": "queued"})
            self._remember(queued)
            if self._store is not None and spec is not None:
                self._store.save(queued, spec)
            ctl = IngestControl()
            self._controls[queued.id] = ctl
            self._futures[queued.id] = self._executor.submit(self._run, queued.id, work, ctl)
        return queued

    def _remember(self, job: JobOut) -> None:
        self._jobs[job.id] = job
        while len(self._jobs) > self._history:
            oldest = next(iter(self._jobs))
            if self._jobs[oldest].status in ACTIVE:
                break
            self._jobs.pop(oldest)
            self._futures.pop(oldest, None)
            self._controls.pop(oldest, None)

    def _forget(self, job_id: str) -> JobOut:
        """Drop a job from memory and from the store; return it as it was."""
        with self._lock:
            job = self._jobs.pop(job_id)
            self._futures.pop(job_id, None)
            self._controls.pop(job_id, None)
        if self._store is not None:
            self._store.delete(job_id)
        return job

    def _update(self, job_id: str, **changes: Any) -> JobOut:
        with self._lock:
            job = self._jobs[job_id].model_copy(update=changes)
            self._jobs[job_id] = job
        if self._store is not None:
            self._store.save(job)
        return job

    def _run(self, job_id: str, work: JobWork, ctl: IngestControl) -> None:
        job = self._update(job_id, status="running", started_at=time.time())
        try:
            result = work(ctl)
            if isinstance(result, Unchanged):
                job = self._forget(job_id).model_copy(update={"status": "succeeded", "result": result.result,
                                                              "finished_at": time.time()})
            else:
                warned = result.warning if isinstance(result, Warned) else None
                job = self._update(job_id, status="succeeded", finished_at=time.time(), done=ctl.done,
                                   total=ctl.total, warning=warned,
                                   result=result.result if isinstance(result, Warned) else result)
        except IngestCancelled as exc:
            if self._closing:  # stopped by a shutdown, not by a user: run it again at the next start
                job = self._update(job_id, status="queued", done=ctl.done, total=ctl.total)
                return
            job = self._update(job_id, status="cancelled", result=exc.report.model_dump(), error=str(exc),
                               finished_at=time.time(), done=ctl.done, total=ctl.total)
        except JobFailed as exc:
            job = self._update(job_id, status="failed", result=exc.result, error=str(exc), finished_at=time.time())
        except Exception as exc:  # a failed job is reported on GET /jobs/{id}, never lost
            log.exception("job %s failed", job_id)
            job = self._update(job_id, status="failed", error=f"{type(exc).__name__}: {exc}",
                               finished_at=time.time(), done=ctl.done, total=ctl.total)
        if self._store is not None:
            self._store.prune(self._history)
        if self._on_done is not None:
            self._on_done(job)

    def _live(self, job: JobOut) -> JobOut:
        """A running job with its current progress."""
        ctl = self._controls.get(job.id)
        if job.status in ("running", "cancelling") and ctl is not None:
            return job.model_copy(update={"done": ctl.done, "total": ctl.total})
        return job

    def get(self, job_id: str) -> JobOut | None:
        with self._lock:
            job = self._jobs.get(job_id)
            return self._live(job) if job is not None else None

    def list(self) -> list[JobOut]:
        with self._lock:
            return sorted((self._live(j) for j in self._jobs.values()), key=lambda j: -j.created_at)

    def cancel(self, job_id: str) -> JobOut | None:
        """Cancel a queued job, or stop a running one at its next checkpoint; None if unknown."""
        with self._lock:
            job = self._jobs.get(job_id)
            future, ctl = self._futures.get(job_id), self._controls.get(job_id)
        if job is None or job.status not in ACTIVE:
            return job
        if future is not None and future.cancel():
            done = self._update(job_id, status="cancelled", finished_at=time.time(), error="cancelled before it ran")
            if self._on_done is not None:
                self._on_done(done)
            return done
        if ctl is not None:
            ctl.stop()
        return self._update(job_id, status="cancelling")

    def resume(self, work_for: Callable[[JobOut, dict[str, Any]], JobWork | None]) -> builtins.list[JobOut]:
        """Re-queue the jobs a stopped server left queued or running (``work_for`` None: forget it)."""
        if self._store is None:
            return []
        again = []
        for job, spec in self._store.unfinished():
            work = work_for(job, spec) if spec is not None else None
            if work is None:
                self._update(job.id, status="failed", finished_at=time.time(),
                             error="interrupted, and cannot be run again (its work is unknown)")
                continue
            again.append(self.submit(job.kind, job.detail, work, spec=spec, job=job))
        if again:
            log.info("re-queued %d job(s) left by the previous server", len(again))
        return again

    def wait(self, job_id: str, timeout: float | None = None) -> JobOut | None:
        """Block until a job is done (tests, the CLI)."""
        fut = self._futures.get(job_id)
        if fut is not None and not fut.cancelled():
            fut.result(timeout=timeout)
        return self.get(job_id)

    def shutdown(self, grace_s: float = 8.0) -> None:
        """Stop: queued jobs stay queued (in the store), the running one stops at its next checkpoint
        (waited for up to ``grace_s``) and is run again at the next start."""
        self._closing = True
        with self._lock:
            running = [f for f in self._futures.values() if not f.done()]
            for ctl in self._controls.values():
                ctl.stop()
        self._executor.shutdown(wait=False, cancel_futures=True)
        running = [f for f in running if not f.cancelled()]  # (a cancelled queued one never counts as done)
        if running:
            wait_all(running, timeout=grace_s)
        if self._store is not None:
            self._store.close()
