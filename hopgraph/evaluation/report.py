"""The report of ``hopgraph eval`` as a file: built from the modes' reports (a failed mode keeps only its
error), written atomically after every mode, read back by ``--resume`` to skip the modes a run that died
had finished, and merged with the modes the rerun adds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopgraph.core.errors import BadInputError, HopgraphError

#: the key of a report that says which run it belongs to (``run_identity``)
RUN_KEY = "run"


class EvaluationIncomplete(HopgraphError):
    """Some modes of an evaluation failed; the report records each one's error."""


@dataclass
class ModeReport:
    mode: str
    metrics: dict[str, float] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)
    per_query: list[dict[str, Any]] = field(default_factory=list)
    notes: int = 0
    diversity: dict[str, float] = field(default_factory=dict)  # ratio@5 over the query set, mean ILD@5
    selective: list[dict[str, float]] = field(default_factory=list)  # precision@1 when answering the surest share
    error: str | None = None  # "<exception type>: <message>" when the mode failed (then nothing else is set)


def error_text(exc: BaseException) -> str:
    """How a mode's exception is recorded: its type and message."""
    return f"{type(exc).__name__}: {exc}"


def report_data(dataset: Path, reports: Sequence[ModeReport], extra: Mapping[str, Any]) -> dict[str, Any]:
    """The report of one evaluation run, as ``--out`` writes it and ``--html`` draws it; a failed mode is
    ``{"error": ...}`` in ``modes`` and has no ``queries``."""
    return {
        "dataset": str(dataset), **extra,
        "modes": {r.mode: {"error": r.error} if r.error is not None else
                  {"metrics": r.metrics, "latency_ms": r.latency_ms, "degraded_queries": r.notes,
                   "diversity": r.diversity, "selective": r.selective}
                  for r in reports},
        "queries": {r.mode: r.per_query for r in reports if r.error is None},
    }


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``: a reader
    (or a run killed mid-write) sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_report(path: Path, dataset: Path, reports: Sequence[ModeReport], extra: Mapping[str, Any]) -> None:
    write_atomic(path, json.dumps(report_data(dataset, reports, extra), indent=1))


def run_identity(dataset: Path, queries: Mapping[str, str], limit: int, **options: Any) -> dict[str, Any]:
    """What a resumed run must share with the report it adds to: the dataset (resolved path), the query
    set (a digest of the ids and texts, in order; ``limit`` is kept to explain a difference) and
    ``options`` (settings that change every mode's figures)."""
    digest = hashlib.sha256(json.dumps(list(queries.items()), ensure_ascii=False).encode()).hexdigest()[:16]
    return {"dataset": str(dataset.resolve()), "queries": len(queries), "query_set": digest, "limit": limit,
            **options}


def check_resumable(previous: Mapping[str, Any], identity: Mapping[str, Any], path: Path) -> None:
    """Refuse to resume into a report of another dataset, query set or options."""
    old = previous.get(RUN_KEY)
    if not isinstance(old, Mapping):
        raise BadInputError(f"{path} does not say which run wrote it (no {RUN_KEY!r}): cannot resume it; "
                            "choose another --out or run without --resume")
    if old.get("dataset") != identity["dataset"]:
        raise BadInputError(f"{path} is the report of dataset {old.get('dataset')}, not {identity['dataset']}: "
                            "choose another --out or run without --resume")
    if old.get("query_set") != identity["query_set"]:
        raise BadInputError(
            f"{path} was written for another query set ({old.get('queries')} queries, "
            f"--limit {old.get('limit') or 'none'}) than this run's ({identity['queries']} queries, "
            f"--limit {identity['limit'] or 'none'}): use the same --limit and --holdout, or run without --resume")
    changed = [k for k in identity if k not in ("dataset", "query_set", "queries", "limit")
               and old.get(k) != identity[k]]
    if changed:
        raise BadInputError(f"{path} was written with other options ("
                            + ", ".join(f"{k}: {old.get(k)!r}, now {identity[k]!r}" for k in changed)
                            + "): run without --resume, or with the same options")


def load_report(path: Path) -> dict[str, Any] | None:
    """The report at ``path`` (None when there is none); a file that is not a report is refused."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInputError(f"{path} is not a readable evaluation report ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("modes"), dict):
        raise BadInputError(f"{path} is not an evaluation report (no 'modes')")
    return data


def reports_from(data: Mapping[str, Any]) -> list[ModeReport]:
    """The modes of a written report, back as ``ModeReport`` (failed ones with their error only)."""
    queries = data.get("queries") or {}
    out = []
    for mode, m in data["modes"].items():
        if "error" in m:
            out.append(ModeReport(mode, error=str(m["error"])))
        else:
            out.append(ModeReport(mode, metrics=m["metrics"], latency_ms=m["latency_ms"],
                                  per_query=queries.get(mode, []), notes=m.get("degraded_queries", 0),
                                  diversity=m.get("diversity", {}), selective=m.get("selective", [])))
    return out


def merge(previous: Sequence[ModeReport], new: Sequence[ModeReport]) -> list[ModeReport]:
    """``previous`` with ``new`` added: a mode of both takes its new report in its old place."""
    by_mode = {r.mode: r for r in previous}
    by_mode.update((r.mode, r) for r in new)
    return list(by_mode.values())


def to_run(chosen: Sequence[str], previous: Sequence[ModeReport]) -> list[str]:
    """The chosen modes a resumed run still has to run: all but those ``previous`` finished (a failed
    mode runs again)."""
    done = {r.mode for r in previous if r.error is None}
    return [m for m in chosen if m not in done]
