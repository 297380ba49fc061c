"""Durable, cancellable jobs (the writer thread of the API), with a real SQLite job log."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from hopgraph.api.job_store import JobStore
from hopgraph.api.jobs import JobManager, Unchanged
from hopgraph.api.schemas import JobOut
from hopgraph.core.records import IngestReport
from hopgraph.ingest.control import IngestCancelled, IngestControl


def _stoppable(started: threading.Event, steps: int = 400) -> Any:
    """Work that advances its progress and stops at a checkpoint when asked, like an ingest."""
    def work(ctl: IngestControl) -> dict[str, Any]:
        ctl.total = steps
        started.set()
        for _ in range(steps):
            if ctl.stopping:
                raise IngestCancelled(IngestReport(documents_ingested=ctl.done))
            ctl.advance(1)
            threading.Event().wait(0.01)
        return {"done": ctl.done}
    return work


def test_queued_jobs_survive_a_restart_and_run_again(tmp_path: Path) -> None:
    first_started, block = threading.Event(), threading.Event()
    jobs = JobManager(store=JobStore(tmp_path / "jobs.sqlite"))
    running = jobs.submit("ingest", "a", _stoppable(first_started), spec={"op": "x", "n": 1})
    queued = jobs.submit("ingest", "b", lambda ctl: {"never": block.wait(0)}, spec={"op": "x", "n": 2})
    assert first_started.wait(10)
    began = time.monotonic()
    jobs.shutdown(grace_s=300)  # the running one stops at a checkpoint and is kept with the queued one
    assert time.monotonic() - began < 60  # (it returns once the running one stopped, not after the grace)
    again = JobManager(store=JobStore(tmp_path / "jobs.sqlite"))
    ran: list[dict[str, Any]] = []

    def work_for(job: Any, spec: dict[str, Any]) -> Any:
        ran.append(spec)
        return lambda ctl: {"n": spec["n"]}

    resumed = again.resume(work_for)
    assert [j.id for j in resumed] == [running.id, queued.id] and [s["n"] for s in ran] == [1, 2]
    assert again.wait(queued.id, timeout=10).result == {"n": 2}  # type: ignore[union-attr]
    assert again.get(running.id).status == "succeeded"  # type: ignore[union-attr]
    again.shutdown()
    assert JobManager(store=JobStore(tmp_path / "jobs.sqlite")).resume(work_for) == []  # nothing left


def test_cancel_a_queued_and_a_running_job_with_progress(tmp_path: Path) -> None:
    started = threading.Event()
    jobs = JobManager(store=JobStore(tmp_path / "jobs.sqlite"))
    running = jobs.submit("ingest", "long", _stoppable(started), spec={"op": "x"})
    queued = jobs.submit("ingest", "later", lambda ctl: {"ok": True}, spec={"op": "x"})
    assert started.wait(10)
    assert jobs.cancel(queued.id).status == "cancelled"  # type: ignore[union-attr]
    while (jobs.get(running.id).done or 0) < 5:  # type: ignore[union-attr]
        threading.Event().wait(0.01)
    live = jobs.get(running.id)
    assert live is not None and live.total == 400 and 5 <= live.done < 400
    assert jobs.cancel(running.id).status == "cancelling"  # type: ignore[union-attr]
    done = jobs.wait(running.id, timeout=10)
    assert done is not None and done.status == "cancelled" and done.done < 400
    assert jobs.cancel(running.id).status == "cancelled"  # type: ignore[union-attr]  # already over
    jobs.shutdown()
    assert [j.status for j in JobManager(store=JobStore(tmp_path / "jobs.sqlite")).list()] == ["cancelled",
                                                                                               "cancelled"]


def test_a_job_that_changed_nothing_is_forgotten_not_failed(tmp_path: Path) -> None:
    done: list[JobOut] = []
    jobs = JobManager(store=JobStore(tmp_path / "jobs.sqlite"), on_done=done.append)
    kept = jobs.submit("reingest", "src", lambda ctl: {"documents_ingested": 1}, spec={"op": "x"})
    assert jobs.wait(kept.id, timeout=10).status == "succeeded"  # type: ignore[union-attr]

    noop = jobs.submit("reingest", "src", lambda ctl: Unchanged({"documents_unchanged": 1}), spec={"op": "x"})
    assert jobs.wait(noop.id, timeout=10) is None  # no row: neither in GET /jobs nor in the store
    assert [j.id for j in jobs.list()] == [kept.id]
    assert [(j.status, j.result) for j in done] == [("succeeded", {"documents_ingested": 1}),
                                                    ("succeeded", {"documents_unchanged": 1})]
    jobs.shutdown()
    assert [j.id for j in JobManager(store=JobStore(tmp_path / "jobs.sqlite")).list()] == [kept.id]
