"""The Bolt adapter's part of migrations: running their statements and recording them."""

from __future__ import annotations

import time
from typing import Any

import neo4j
from neo4j.exceptions import ClientError, ConstraintError, DatabaseError, TransientError

from hopgraph.graphdb.bolt.access import Bolt
from hopgraph.graphdb.bolt.cypher import statements as cypher
from hopgraph.graphdb.migrations import MigrationRunner, discover, packaged


class SchemaMixin:
    """Migrations, for ``BoltGraphStore``."""

    def migrate(self: Bolt) -> list[str]:
        return _runner(self).apply_pending()

    def pending_migrations(self: Bolt) -> list[str]:
        """Migration files not yet applied to this graph."""
        runner = _runner(self)
        applied = runner.applied()
        return [m.path.name for m in discover(runner.directory) if m.version not in applied]


def _runner(db: Bolt) -> MigrationRunner:
    """The runner of the configured migrations (the packaged ones by default)."""
    return MigrationRunner(db.cfg.migrations_dir or packaged(), lambda statement: _run_schema(db, statement),
                           db.read, lambda params: _record(db, params))


def _run_schema(db: Bolt, statement: str, attempts: int = 5) -> None:
    """Run an (idempotent) migration statement, again where an index a concurrent runner builds fails it."""
    for attempt in range(1, attempts + 1):
        try:
            with db._session() as s:
                s.run(statement).consume()
            return
        except ClientError as exc:  # a concurrent runner created the same index a moment earlier
            if "already exists" not in (exc.message or "").lower() and "Equivalent" not in (exc.code or ""):
                raise
            return
        except (DatabaseError, TransientError):
            if attempt == attempts:
                raise
            time.sleep(0.2 * attempt)


def _record(db: Bolt, params: dict[str, Any]) -> str:
    """Record a migration; if a concurrent runner won the MERGE race, return its checksum."""
    def work(tx: neo4j.ManagedTransaction) -> str:
        rec = tx.run(cypher.RECORD_MIGRATION, **params).single()
        return str(rec["checksum"]) if rec else ""

    try:
        return db._write(work)
    except ConstraintError:
        rows = db.read(cypher.MIGRATION_CHECKSUM, {"version": params["version"]})
        if not rows:
            raise
        return str(rows[0]["checksum"])
