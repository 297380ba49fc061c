"""How a caller watches and stops an ingest: progress after every batch, and a stop request that the
pipeline honours at its next checkpoint (between batches, and between the stages of a batch before
anything of it is written), so a stopped run leaves every document either complete or untouched."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from hopgraph.core.errors import HopgraphError
from hopgraph.core.records import IngestReport


class IngestCancelled(HopgraphError):
    """The run stopped at a checkpoint because it was asked to; ``report`` says what was done."""

    def __init__(self, report: IngestReport) -> None:
        super().__init__(f"cancelled after {report.documents_ingested} document(s) were ingested")
        self.report = report


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


#: the control of a caller that neither watches nor stops
def unattended() -> IngestControl:
    return IngestControl()
