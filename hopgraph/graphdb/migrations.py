"""Versioned Cypher migrations: ``migrations/NNNN_name.cypher`` applied in order, once.

Each applied file is recorded as ``(:Migration {version, name, checksum, applied_at})``.
An edited already-applied file is refused. Statements must be idempotent (``IF NOT EXISTS``),
so two processes migrating at once both succeed and the record is MERGEd exactly once.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopgraph.core.errors import StoreUnavailableError

log = logging.getLogger(__name__)

_FILE = re.compile(r"^(\d{4})_([A-Za-z0-9_]+)\.cypher$")
_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)


class MigrationError(StoreUnavailableError):
    """A migration file is malformed, or an applied one was edited."""


@dataclass(frozen=True)
class Migration:
    """One migration file."""

    version: int
    name: str
    path: Path
    checksum: str

    @property
    def statements(self) -> list[str]:
        text = _COMMENT.sub("", self.path.read_text(encoding="utf-8"))
        return [s.strip() for s in text.split(";") if s.strip()]


def packaged() -> Path:
    """The migrations shipped with hopgraph (package data of ``migrations``, in a checkout or a wheel)."""
    return Path(str(importlib.resources.files("hopgraph.migrations")))


def discover(directory: Path) -> list[Migration]:
    """Migration files of a directory, ordered by version; duplicates or bad names are errors."""
    if not directory.is_dir():
        raise MigrationError(f"migrations directory {directory} does not exist")
    found: dict[int, Migration] = {}
    for p in sorted(directory.iterdir()):
        if p.suffix != ".cypher":
            continue
        m = _FILE.match(p.name)
        if not m:
            raise MigrationError(f"bad migration file name {p.name!r}: expected NNNN_name.cypher")
        version = int(m.group(1))
        if version in found:
            raise MigrationError(f"two migrations share version {version}: {found[version].path.name}, "
                                 f"{p.name}")
        checksum = hashlib.sha256(p.read_bytes()).hexdigest()
        found[version] = Migration(version, m.group(2), p, checksum)
    return [found[v] for v in sorted(found)]


class MigrationRunner:
    """Applies pending migrations through callables supplied by the adapter."""

    def __init__(
        self,
        directory: Path,
        run_statement: Callable[[str], None],
        read: Callable[[str, Mapping[str, Any] | None], list[dict[str, Any]]],
        record: Callable[[dict[str, Any]], str],
    ) -> None:
        self.directory = directory
        self._run = run_statement
        self._read = read
        self._record = record

    def applied(self) -> dict[int, str]:
        """Applied versions and their recorded checksums."""
        from hopgraph.graphdb.bolt.cypher import statements as cypher

        return {int(r["version"]): str(r["checksum"]) for r in self._read(cypher.APPLIED_MIGRATIONS, None)}

    def verify(self, migrations: list[Migration], applied: dict[int, str]) -> None:
        """Refuse an applied migration whose file changed or disappeared."""
        by_version = {m.version: m for m in migrations}
        for version, checksum in applied.items():
            m = by_version.get(version)
            if m is None:
                raise MigrationError(f"migration {version:04d} is recorded in the graph but its file is "
                                     f"missing from {self.directory}")
            if m.checksum != checksum:
                raise MigrationError(
                    f"migration {m.path.name} was edited after it was applied (checksum "
                    f"{checksum[:12]} in the graph, {m.checksum[:12]} on disk); add a new migration instead"
                )

    def apply_pending(self) -> list[str]:
        """Apply every pending migration in order; return the file names applied."""
        migrations = discover(self.directory)
        applied = self.applied()
        self.verify(migrations, applied)
        done: list[str] = []
        for m in migrations:
            if m.version in applied:
                continue
            log.info("applying migration %s", m.path.name)
            for statement in m.statements:
                self._run(statement)
            recorded = self._record({"version": m.version, "name": m.name, "checksum": m.checksum,
                                     "applied_at": time.time()})
            if recorded != m.checksum:
                raise MigrationError(f"migration {m.version:04d} was recorded concurrently with a "
                                     "different checksum")
            done.append(m.path.name)
        return done
