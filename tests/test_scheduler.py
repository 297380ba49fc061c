"""Scheduled re-ingestion: glob sources, incremental runs recorded in the graph, no overlap."""

from __future__ import annotations

import logging
import shutil
import threading
import time
from pathlib import Path

import httpx
import pytest

from hopgraph.api.job_store import JobStore
from hopgraph.api.job_work import work_for
from hopgraph.api.jobs import JobManager
from hopgraph.api.metrics import Metrics
from hopgraph.app.collections import create_collection, delete_collection
from hopgraph.app.platform import Platform
from hopgraph.core.service_settings import ScheduledSource, SchedulerSettings
from hopgraph.core.times import iso_time
from hopgraph.ingest.scheduler import UNCHANGED_RUNS, ReingestScheduler, run_source, unchanged_id
from tests.api_server import running_api


def test_glob_source_runs_incrementally_and_is_recorded(platform: Platform, tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# Alpha\nAda Lovelace wrote about the Analytical Engine.")
    (root / "sub" / "b.md").write_text("# Beta\nCharles Babbage designed the Difference Engine.")
    (root / "c.txt").write_text("Not matched by the pattern.")
    source = ScheduledSource(name="notes", paths=[f"{root}/**/*.md"], interval_s=60)  # (a missing path: below)
    first = platform.reingest(source)
    assert first.status == "succeeded", first.error
    assert first.report["documents_ingested"] == 2
    second = platform.reingest(source)
    assert second.report["documents_ingested"] == 0 and second.report["documents_unchanged"] == 2
    assert (second.status, second.id) == ("unchanged", unchanged_id("notes"))
    (root / "sub" / "b.md").unlink()
    third = platform.reingest(source)
    assert third.report["documents_deleted"] == 1 and third.status == "succeeded"
    sources = {d.source for d in platform._store.list_documents()}
    assert sources == {str(root / "a.md")}
    quiet = [platform.reingest(source) for _ in range(3)]  # runs that change nothing add no record
    runs = platform._store.ingest_runs(source="notes")
    assert [r.id for r in runs] == [unchanged_id("notes"), third.id, first.id]
    assert runs[0].started_at == quiet[-1].started_at and runs[0].status == "unchanged"
    assert runs[0].report[UNCHANGED_RUNS] == 3  # the quiet runs since the last change, counted
    assert all(r.duration_s is not None for r in runs)
    stamped = platform._store.read("MATCH (r:IngestRun {id: $id}) RETURN r.started AS s", {"id": first.id})
    assert stamped[0]["s"] == iso_time(first.started_at) and stamped[0]["s"].endswith("+00:00")
    (root / "a.md").write_text("# Alpha\nAda Lovelace wrote the first published algorithm.")
    latest = run_source(platform._ingestor(), platform._store, source, keep=2)  # history kept to 2 runs
    assert [r.id for r in platform._store.ingest_runs(source="notes")] == [latest.id, third.id]


def test_bad_files_are_reported_and_a_failing_run_is_recorded(platform: Platform, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.jsonl"
    big.write_text('{"_id": "1", "text": "fine"}\n')
    source = ScheduledSource(name="src", paths=[str(big)], interval_s=60)
    platform.close()  # the same stores, with a 1-byte file limit: the file is skipped, not a failure
    tiny = platform.settings.model_copy(update={"ingest": platform.settings.ingest.model_copy(
        update={"max_file_bytes": 1})})
    with Platform(tiny, embedder=platform.embedder) as small:
        run = small.reingest(source)
    assert run.status == "unchanged" and "too large" in " ".join(run.report["skipped"].values())  # nothing to do

    def disk_full(*_: object, **__: object) -> None:  # a fault inside the ingest (the disk filled up)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(type(platform._ingestor()), "ingest_paths", disk_full)
    run = platform.reingest(source)
    assert run.status == "failed" and "No space left" in (run.error or "")
    assert platform._store.ingest_runs(source="src")[0].status == "failed"


def test_a_schedule_never_overlaps_itself() -> None:
    release = threading.Event()
    started = threading.Event()
    jobs = JobManager()

    def slow(ctl: object) -> dict[str, object]:
        started.set()
        release.wait(30)
        return {"ok": True}

    first = jobs.submit("reingest", "docs", slow, exclusive=True)
    assert started.wait(10)
    second = jobs.submit("reingest", "docs", slow, exclusive=True)
    other = jobs.submit("reingest", "other", lambda ctl: {"ok": True}, exclusive=True)
    assert second.status == "skipped" and "still queued or running" in (second.error or "")
    assert other.status == "queued"
    release.set()
    assert jobs.wait(first.id, timeout=30).status == "succeeded"  # type: ignore[union-attr]
    assert jobs.wait(other.id, timeout=30).status == "succeeded"  # type: ignore[union-attr]
    jobs.shutdown()


def test_scheduler_triggers_interval_sources() -> None:
    calls: list[str] = []
    cfg = SchedulerSettings(sources=[ScheduledSource(name="fast", paths=["/x"], interval_s=0.2),
                                     ScheduledSource(name="nightly", paths=["/y"], cron="0 3 * * *")])
    sched = ReingestScheduler(cfg, lambda s: calls.append(s.name))
    sched.start()
    try:
        deadline = time.monotonic() + 10
        while calls.count("fast") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        nxt = sched.next_runs()
    finally:
        sched.shutdown()
    assert calls.count("fast") >= 2 and "nightly" not in calls
    assert nxt["nightly"] is not None and nxt["nightly"] > time.time()


def test_a_scheduled_run_that_changes_nothing_is_a_count_not_a_failed_job(platform: Platform,
                                                                         tmp_path: Path) -> None:
    folder = tmp_path / "watched"
    folder.mkdir()
    (folder / "note.md").write_text("# Ledger\nThe Quillfeather Ledger was kept by Marnie Oskarsdottir.")
    source = ScheduledSource(name="watched", paths=[str(folder)], interval_s=3600)
    spec = {"op": "reingest", "source": "watched"}
    jobs = JobManager(store=JobStore(tmp_path / "jobs.sqlite"))
    work = work_for(platform, Metrics(), spec, [source])
    assert work is not None
    first = jobs.wait(jobs.submit("reingest", "watched", work, spec=spec).id, timeout=300)
    assert first is not None and first.status == "succeeded" and first.result["documents_ingested"] == 1
    for _ in range(2):  # the same file again: succeeded, and no job row (not a failed one)
        assert jobs.wait(jobs.submit("reingest", "watched", work, spec=spec).id, timeout=300) is None
    assert [(j.id, j.status) for j in jobs.list()] == [(first.id, "succeeded")]
    jobs.shutdown()
    with running_api(platform.settings, platform, scheduler=False) as url:
        listing = httpx.get(f"{url}/jobs", timeout=60).json()
    assert [j["id"] for j in listing["jobs"]] == [first.result["run_id"]]  # the recorded run, no quiet one
    assert listing["unchanged"]["watched"]["runs"] == 2 and listing["unchanged"]["watched"]["skipped"] == {}


def test_a_source_whose_path_disappeared_keeps_its_documents_and_warns(platform: Platform, tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    folder, notes = tmp_path / "watched", tmp_path / "notes"
    folder.mkdir()
    notes.mkdir()
    (folder / "a.md").write_text("# Ledger\nThe Quillfeather Ledger was kept by Marnie Oskarsdottir.")
    (notes / "b.md").write_text("# Beacon\nThe Harrowgate beacon was lit by Tobias Wren.")
    source = ScheduledSource(name="gone", paths=[str(folder), f"{notes}/**/*.md"], interval_s=3600)
    spec = {"op": "reingest", "source": "gone"}
    jobs = JobManager()
    work = work_for(platform, Metrics(), spec, [source])
    assert work is not None
    first = jobs.wait(jobs.submit("reingest", "gone", work, spec=spec).id, timeout=300)
    assert first is not None and first.result["documents_ingested"] == 2 and first.warning is None
    shutil.rmtree(folder)
    shutil.rmtree(notes)  # a glob's folder gone: not "every file deleted"
    with caplog.at_level(logging.WARNING, logger="hopgraph.ingest.scheduler"):
        second = jobs.wait(jobs.submit("reingest", "gone", work, spec=spec).id, timeout=300)
    warning = f"path missing: {folder}, {notes}"
    assert second is not None and second.warning == warning and second.result["documents_deleted"] == 0
    assert {d.source for d in platform._store.list_documents()} == {str(folder / "a.md"), str(notes / "b.md")}
    assert warning in caplog.text
    run = platform._store.ingest_runs(source="gone")[0]
    assert (run.id, run.status, run.error) == (second.result["run_id"], "warning", warning)
    jobs.shutdown()
    with running_api(platform.settings, platform, scheduler=False) as url:  # the graph's record, as a job row
        listing = httpx.get(f"{url}/jobs", timeout=60).json()
    rows = {j["id"]: j for j in listing["jobs"]}
    assert rows[run.id]["warning"] == warning and rows[run.id]["error"] is None and "gone" not in listing["unchanged"]


def test_serve_runs_a_source_into_its_collection_as_that_collections_job(platform: Platform, tmp_path: Path) -> None:
    folder = tmp_path / "memos"
    folder.mkdir()
    (folder / "memo.txt").write_text("Quorlan Vesk signed the indigoschedcanary memo.", encoding="utf-8")
    create_collection(platform.settings, "sched")
    source = ScheduledSource(name="memos", paths=[str(folder)], interval_s=3600, collection="sched", groups=["hr"])
    settings = platform.settings.model_copy(update={"scheduler": SchedulerSettings(sources=[source],
                                                                                    run_on_start=True)})
    try:
        with running_api(settings, platform, scheduler=True) as url, httpx.Client(base_url=url, timeout=60) as c:
            deadline = time.monotonic() + 300
            while not (jobs := c.get("/jobs", params={"collection": "sched"}).json()["jobs"]) or \
                    jobs[0]["status"] in ("queued", "running"):
                assert time.monotonic() < deadline, jobs
                time.sleep(0.2)
            assert jobs[0]["status"] == "succeeded" and jobs[0]["collection"] == "sched"
            assert c.get("/jobs", params={"collection": "sched"}).json()["schedules"].keys() == {"memos"}
            default = c.get("/jobs").json()
            assert "memos" not in default["schedules"] and all(j["detail"] != "memos" for j in default["jobs"])
            found = c.post("/query", params={"collection": "sched"}, json={"text": "memo", "mode": "bm25"}).text
            assert "indigoschedcanary" in found
            assert "indigoschedcanary" not in c.post("/query", json={"text": "memo", "mode": "bm25"}).text
    finally:
        delete_collection(platform.settings, "sched")
