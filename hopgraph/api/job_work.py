"""What a job does, from its stored spec: the same spec runs now and, after a restart, again.

Specs: ``{"op": "ingest_paths", "paths": [...], "uploads": bool, "roots": [...] | null}`` (a skipped
upload is removed), ``{"op": "ingest_records", "collection": ..., "records": <file of JSON records>}``,
``{"op": "delete", "ids": [...]}``, ``{"op": "reingest", "source": <scheduled source name>}``. An ingest's
``holds`` are the access groups of the key that asked (null: a full admin), ``roots`` the folders it may
read (null: the server's own user; absent: ``api.ingest_roots``); an upload job reads its uploads alone
(``caller_of``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hopgraph.api.jobs import JobFailed, JobWork, Unchanged, Warned
from hopgraph.api.metrics import Metrics
from hopgraph.app.platform import Platform
from hopgraph.core.collections import home
from hopgraph.core.records import IngestReport
from hopgraph.core.service_settings import ScheduledSource
from hopgraph.ingest.caller import Caller
from hopgraph.ingest.control import IngestControl


def records_file(platform: Platform, job_id: str, records: list[dict[str, Any]]) -> Path:
    """Where the JSON records of an ingest job wait for it (so a restart still has them)."""
    path = platform.settings.data_dir.absolute() / "jobs" / f"{job_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def uploads_dir(platform: Platform) -> Path:
    """Where the uploaded files of ``platform``'s collection are kept."""
    return platform.settings.data_dir.absolute() / home(platform.settings, platform.settings.collection) / "uploads"


def caller_of(platform: Platform, spec: dict[str, Any]) -> Caller:
    """The rights of a job's ingest (``ingest.caller``), from its spec: a spec without ``holds`` widens no
    document's groups, one without ``roots`` reads below ``api.ingest_roots``, an upload job reads its
    collection's uploads folder and nothing else."""
    given = spec.get("holds", [])
    holds = None if given is None else frozenset(given)
    if spec.get("uploads"):
        return Caller(roots=(), uploads=uploads_dir(platform), holds=holds)
    roots = spec.get("roots", [str(r) for r in platform.settings.api.ingest_roots])
    return Caller(roots=None if roots is None else tuple(Path(r) for r in roots), holds=holds)


def work_for(platform: Platform, metrics: Metrics, spec: dict[str, Any],
             sources: Sequence[ScheduledSource] | None = None) -> JobWork | None:
    """The work of a spec, or None for one this server cannot run (an unknown op or source);
    ``sources``: the scheduled sources as now configured (default: the platform's settings')."""
    op = spec.get("op")

    def observed(report: IngestReport) -> dict[str, Any]:
        metrics.observe_ingest(report)
        return report.model_dump()

    if op == "ingest_paths":
        paths = [Path(p) for p in spec["paths"]]

        def ingest_paths(ctl: IngestControl) -> dict[str, Any]:
            report = platform.ingest(paths, control=ctl, groups=spec.get("groups") or (),
                                     caller=caller_of(platform, spec))
            out = observed(report)
            if spec.get("uploads"):  # an uploaded file that is no document is not kept
                for p in paths:
                    if str(p.resolve()) in report.skipped:
                        p.unlink(missing_ok=True)
            if report.skipped and not (report.documents_ingested or report.documents_unchanged):
                why = "; ".join(f"{Path(k).name}: {v}" for k, v in list(report.skipped.items())[:10])
                raise JobFailed(f"every file was skipped: {why}", out)
            return out

        return ingest_paths
    if op == "ingest_records":
        path = Path(spec["records"])

        def ingest_records(ctl: IngestControl) -> dict[str, Any]:
            records = json.loads(path.read_text(encoding="utf-8"))
            out = observed(platform.ingest_records(records, collection=spec["collection"], control=ctl,
                                                   caller=caller_of(platform, spec)))
            path.unlink(missing_ok=True)
            return out

        return ingest_records if path.is_file() else None
    if op == "delete":
        ids = list(spec["ids"])
        return lambda ctl: {"deleted": sum(platform.delete(i) for i in ids)}
    if op == "reingest":
        known = platform.settings.scheduler.sources if sources is None else sources
        source = next((s for s in known if s.name == spec.get("source")
                       and s.collection == platform.settings.collection), None)
        if source is None:
            return None

        def reingest(ctl: IngestControl) -> dict[str, Any] | Unchanged | Warned:
            run = platform.reingest(source)
            result = {"run_id": run.id, "source": run.source, **run.report}
            if run.status == "unchanged":  # a success that is no job row: the source's record counts it
                return Unchanged(result)
            if run.status == "warning":  # a path is missing: its documents were kept
                return Warned(result, run.error or "")
            if run.status != "succeeded":
                raise JobFailed(run.error or "the run failed", result)
            return result

        return reingest
    return None
