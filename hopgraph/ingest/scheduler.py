"""Scheduled re-ingestion of named sources (APScheduler).

Each run is incremental: ``Ingestor.ingest_paths`` skips unchanged documents by content hash,
re-extracts changed ones and deletes documents whose file (or JSONL record) disappeared. Sources
may name files, directories or glob patterns; for a glob, documents of files that no longer
match are deleted too. A path that has disappeared (a file, a directory, a glob's folder) deletes
nothing: the run is recorded as a ``warning`` ("path missing: ..."). Every run's outcome is recorded
in the graph as an ``(:IngestRun)``.
"""

from __future__ import annotations

import glob
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from hopgraph.core.records import IngestReport
from hopgraph.core.service_settings import ScheduledSource, SchedulerSettings
from hopgraph.graphdb.protocols import RunLog
from hopgraph.graphdb.records import IngestRun
from hopgraph.ingest.selectors import matches, static_root

log = logging.getLogger(__name__)


class PathIngestor(Protocol):
    def ingest_paths(self, paths: list[Path], progress: bool = False, prune: bool = True, *,
                     groups: Sequence[str] = ()) -> IngestReport: ...

    def delete(self, document_ids: list[str], finish: bool = True) -> int: ...


@dataclass(frozen=True)
class SourcePaths:
    """A source's paths split into concrete paths and glob patterns (absolute)."""

    paths: list[Path]
    patterns: list[str]


def split_paths(source: ScheduledSource) -> SourcePaths:
    paths: list[Path] = []
    patterns: list[str] = []
    for p in source.paths:
        if glob.has_magic(p):
            patterns.append(str(Path(p).expanduser().absolute()))
        else:
            paths.append(Path(p).expanduser().absolute())
    return SourcePaths(paths, patterns)


def missing_paths(sp: SourcePaths) -> list[str]:
    """The paths of a source that do not exist: files and directories, and the folders of its globs."""
    roots = [Path(static_root(pat)) for pat in sp.patterns]
    return list(dict.fromkeys(str(p) for p in [*sp.paths, *roots] if not p.exists()))


def unchanged_id(source: str) -> str:
    """The id of a source's one record of runs that changed nothing (updated by each such run)."""
    return f"{source}-unchanged"


#: the key of an "unchanged" record's report that counts the runs that changed nothing since the last change
UNCHANGED_RUNS = "unchanged_runs"


def _quiet_runs_before(runs: RunLog, source: str) -> int:
    """How many runs that changed nothing the source's "unchanged" record stands for (0: none)."""
    quiet = [r for r in runs.ingest_runs(source=source, limit=5) if r.id == unchanged_id(source)]
    return int(quiet[0].report.get(UNCHANGED_RUNS, 1)) if quiet else 0


def run_source(ingestor: PathIngestor, runs: RunLog, source: ScheduledSource, keep: int = 500) -> IngestRun:
    """Ingest one source incrementally and record the outcome (failures are recorded, not raised;
    a missing path is a ``warning`` run whose ``error`` names it). A run that changed nothing
    replaces its record by the source's one "unchanged" record (when it last checked, and in its
    report under ``UNCHANGED_RUNS`` how many such runs there were since the last change) instead of
    adding one more; the ``keep`` newest runs of the source are kept."""
    started = time.time()
    run_id = f"{source.name}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime(started))}-{uuid.uuid4().hex[:6]}"
    runs.record_ingest_run(IngestRun(run_id, source.name, "running", started))
    report = IngestReport()
    status, error = "succeeded", None
    try:
        sp = split_paths(source)
        missing = missing_paths(sp)
        present = [pat for pat in sp.patterns if Path(static_root(pat)).exists()]
        matched = sorted({Path(f) for pat in present for f in glob.glob(pat, recursive=True) if Path(f).is_file()})
        report = ingestor.ingest_paths([p for p in sp.paths if p.exists()] + matched, groups=source.groups)
        gone = _unmatched_documents(runs, present, {str(f) for f in matched})
        if gone:
            report.documents_deleted += ingestor.delete(gone)
        if missing:  # a vanished root: its documents stay until it is back or deleted by hand
            report.skipped.update({m: "path does not exist" for m in missing})
            status, error = "warning", f"path missing: {', '.join(missing)}"
            log.warning("scheduled source %s: %s (its documents are kept)", source.name, error)
    except Exception as exc:  # recorded and logged: a scheduled job must not take the worker down
        log.exception("scheduled ingest of %s failed", source.name)
        status, error = "failed", f"{type(exc).__name__}: {exc}"
    finished = time.time()
    # files skipped again (a bad file) change nothing: the unchanged record says so; a missing path warns
    changed = status != "succeeded" or bool(report.documents_ingested or report.documents_deleted)
    if not changed:
        runs.delete_ingest_run(run_id)
        quiet = {**report.model_dump(exclude={"stage_seconds"}),
                 UNCHANGED_RUNS: _quiet_runs_before(runs, source.name) + 1}
        run = IngestRun(unchanged_id(source.name), source.name, "unchanged", started, finished,
                        round(finished - started, 3), quiet, None)
    else:
        run = IngestRun(run_id, source.name, status, started, finished, round(finished - started, 3),
                        report.model_dump(exclude={"stage_seconds"}), error)
        runs.delete_ingest_run(unchanged_id(source.name))  # the next quiet spell starts its own count
    runs.record_ingest_run(run)
    runs.prune_ingest_runs(source.name, keep)
    log.info("scheduled ingest %s %s: %d ingested, %d unchanged, %d deleted, %d skipped in %.1fs", source.name,
             status, report.documents_ingested, report.documents_unchanged, report.documents_deleted,
             len(report.skipped), run.duration_s or 0.0)
    return run


def _unmatched_documents(runs: RunLog, patterns: list[str], matched: set[str]) -> list[str]:
    """Documents that came from files matching a pattern which no longer match (or exist)."""
    gone: dict[str, None] = {}
    for pat in patterns:
        for d in runs.documents_under(static_root(pat)):
            src_file = (d.source or "").split("#", 1)[0]
            if matches(src_file, pat) and src_file not in matched and not Path(src_file).exists():
                gone[d.id] = None
    return list(gone)


def trigger_for(source: ScheduledSource, timezone: str) -> CronTrigger | IntervalTrigger:
    if source.cron is not None:
        return CronTrigger.from_crontab(source.cron, timezone=timezone)
    return IntervalTrigger(seconds=float(source.interval_s or 0), timezone=timezone)


class ReingestScheduler:
    """Runs ``submit(source)`` for each scheduled source on its trigger, never two at once per source.

    ``blocking=True`` (``hopgraph worker``) runs in the calling thread until interrupted."""

    def __init__(self, cfg: SchedulerSettings, submit: Callable[[ScheduledSource], object],
                 blocking: bool = False) -> None:
        self.cfg = cfg
        self._submit = submit
        cls = BlockingScheduler if blocking else BackgroundScheduler
        self.scheduler: BaseScheduler = cls(timezone=cfg.timezone, job_defaults={
            "max_instances": 1, "coalesce": True, "misfire_grace_time": 3600})
        for source in cfg.sources:
            self.scheduler.add_job(self._submit, trigger_for(source, cfg.timezone), args=[source],
                                   id=source.name, name=f"reingest {source.name}")
            if cfg.run_on_start:
                self.scheduler.add_job(self._submit, args=[source], id=f"{source.name}-start",
                                       name=f"reingest {source.name} (start)")

    def start(self) -> None:
        log.info("scheduler: %d source(s): %s", len(self.cfg.sources),
                 ", ".join(f"{s.name} ({s.cron or f'every {s.interval_s:g}s'})" for s in self.cfg.sources) or "none")
        self.scheduler.start()

    def shutdown(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    def next_runs(self) -> dict[str, float | None]:
        """Source name -> next run time (epoch seconds)."""
        out: dict[str, float | None] = {}
        for job in self.scheduler.get_jobs():
            nxt = getattr(job, "next_run_time", None)
            out[job.id] = nxt.timestamp() if nxt else None
        return out
