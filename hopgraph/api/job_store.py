"""The job log on disk (SQLite in the data dir): queued work survives a restart or a killed process.

A job is stored with its spec (what to do, as JSON: the paths of uploaded files, a file of JSON
records, document ids, a scheduled source), so a restarted server re-queues what was queued or
running; ingest is idempotent, so re-running an interrupted job completes it without duplicates.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from hopgraph.api.schemas import JobOut

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL, detail TEXT NOT NULL,
    created_at REAL NOT NULL, started_at REAL, finished_at REAL, result TEXT, error TEXT,
    done INTEGER NOT NULL DEFAULT 0, total INTEGER, spec TEXT
)
"""


class JobStore:
    """Jobs by id; each write is its own committed transaction."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._lock = threading.Lock()
        self._closed = False

    def save(self, job: JobOut, spec: dict[str, Any] | None = None) -> None:
        row = (job.id, job.kind, job.status, job.detail, job.created_at, job.started_at, job.finished_at,
               json.dumps(job.result), job.error, job.done, job.total)
        with self._lock:
            if self._closed:  # a job that outlived the shutdown's grace: it runs again at the next start
                return
            if spec is None:
                self._db.execute("UPDATE jobs SET kind=?, status=?, detail=?, created_at=?, started_at=?, "
                                 "finished_at=?, result=?, error=?, done=?, total=? WHERE id=?", (*row[1:], row[0]))
            else:
                self._db.execute("INSERT OR REPLACE INTO jobs VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                                 (*row, json.dumps(spec)))

    def unfinished(self) -> list[tuple[JobOut, dict[str, Any] | None]]:
        """Jobs a stopped server left queued or running, oldest first, with their specs."""
        with self._lock:
            rows = self._db.execute("SELECT * FROM jobs WHERE status IN ('queued', 'running', 'cancelling') "
                                    "ORDER BY created_at").fetchall()
        return [(_job(r), json.loads(r[11]) if r[11] else None) for r in rows]

    def recent(self, limit: int) -> list[JobOut]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM jobs ORDER BY created_at DESC LIMIT ?", (limit,)).fetchall()
        return [_job(r) for r in rows]

    def delete(self, job_id: str) -> None:
        with self._lock:
            if not self._closed:
                self._db.execute("DELETE FROM jobs WHERE id=?", (job_id,))

    def prune(self, keep: int) -> None:
        """Forget finished jobs beyond the newest ``keep``."""
        with self._lock:
            self._db.execute("DELETE FROM jobs WHERE status NOT IN ('queued', 'running', 'cancelling') AND id NOT IN "
                             "(SELECT id FROM jobs ORDER BY created_at DESC LIMIT ?)", (keep,))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._db.close()


def _job(r: tuple[Any, ...]) -> JobOut:
    return JobOut(id=r[0], kind=r[1], status=r[2], detail=r[3], created_at=r[4], started_at=r[5], finished_at=r[6],
                  result=json.loads(r[7] or "{}"), error=r[8], done=r[9], total=r[10])
