"""How a caller watches and stops an ingest: progress after every batch, and a stop request that the
pipeline honours at its next checkpoint (between batches, and between the stages of a batch before
anything of it is written), so a stopped run leaves every document either complete or untouched."""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path

from hopgraph.core.errors import HopgraphError, StoreUnavailableError
from hopgraph.core.records import IngestReport


class IngestCancelled(HopgraphError):
    """The run stopped at a checkpoint because it was asked to; ``report`` says what was done."""

    def __init__(self, report: IngestReport) -> None:
        super().__init__(f"cancelled after {report.documents_ingested} document(s) were ingested")
        self.report = report


class DiskFullError(StoreUnavailableError):
    """Too little free space to write the next batch (nothing of it was written)."""


def check_free_space(folder: Path, min_free_mb: int) -> None:
    """Refuse to write when ``folder``'s file system has less than ``min_free_mb`` free."""
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if free < min_free_mb * 1_000_000:
        raise DiskFullError(f"only {free / 1e6:.0f} MB free in {folder} (ingest.min_free_mb={min_free_mb}): "
                            "nothing of the current batch was written; free some space and run it again")


@dataclass
class IngestControl:
    """Progress (documents seen so far, and the total when known) and a thread-safe stop flag."""

    done: int = 0
    total: int | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def advance(self, n: int) -> None:
        self.done += n


def unattended() -> IngestControl:
    """The control of a caller that neither watches nor stops."""
    return IngestControl()
