"""The dead-letter list of a data dir (``<data_dir>/dead-letters.json``): the documents whose parsing or
extraction failed and that no later run has written yet. Each ingest merges its own dead letters in
(a document that fails again counts one more attempt) and drops the earlier ones whose document is now
complete (written since, or back at content that was written); ``hopgraph status`` names what is left."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from hopgraph.core.records import DeadLetter
from hopgraph.graphdb.records import COMPLETE, DocumentState

log = logging.getLogger(__name__)

FILE_NAME = "dead-letters.json"


def dead_letters_path(data_dir: Path) -> Path:
    return data_dir / FILE_NAME


def load_dead_letters(data_dir: Path) -> list[DeadLetter]:
    """The data dir's dead letters (none where the file is missing or unreadable)."""
    path = dead_letters_path(data_dir)
    try:
        return [DeadLetter.model_validate(d) for d in json.loads(path.read_text(encoding="utf-8"))]
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        log.warning("%s cannot be read (%s): no dead letters listed", path, exc)
        return []


def record_dead_letters(data_dir: Path, new: Sequence[DeadLetter],
                        states: Callable[[list[str]], Mapping[str, DocumentState]]) -> list[DeadLetter]:
    """Merge a run's dead letters ``new`` into the data dir's list, drop the earlier ones whose document
    ``states`` says is complete, write the list and return it."""
    earlier = {d.document_id: d for d in load_dead_letters(data_dir)}
    merged = dict(earlier)
    for d in new:
        before = earlier.get(d.document_id)
        again = before is not None and before.content_hash == d.content_hash
        merged[d.document_id] = d.model_copy(update={"attempts": before.attempts + d.attempts}) if again and before \
            else d
    now = states(list(merged)) if merged else {}
    fresh = {d.document_id for d in new}
    kept = [d for d in merged.values()
            if d.document_id in fresh or (st := now.get(d.document_id)) is None or st.status != COMPLETE]
    path = dead_letters_path(data_dir)
    if kept or path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps([d.model_dump() for d in kept], indent=1), encoding="utf-8")
    return kept
