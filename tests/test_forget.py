"""Deleting a document forgets it: no property, summary or vector payload of the graph still quotes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hopgraph.app.platform import Platform
from hopgraph.vectors.store import COLLECTIONS

GONE = "Ada Lovelace corresponded with Charles Babbage about the Analytical Engine in London"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _quotes(p: Platform, needle: str) -> list[str]:
    """Every string property of every node and relationship, and every vector payload, holding ``needle``."""
    found = [s for r in p._store.read("MATCH (n) RETURN properties(n) AS p") for s in _strings(r["p"])]
    found += [s for r in p._store.read("MATCH ()-[x]->() RETURN properties(x) AS p") for s in _strings(r["p"])]
    for name in COLLECTIONS:
        offset = None
        while True:
            page, offset = p.vectors.scroll(name, limit=500, offset=offset)
            found += [s for h in page for s in _strings(h.payload)]
            if offset is None:
                break
    return [s for s in found if needle in s]


def test_deleted_text_is_gone_from_every_property_summary_and_payload(platform: Platform, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a_first.txt").write_text(f"{GONE}. Ada Lovelace wrote the first program.")
    platform.ingest([docs / "a_first.txt"])  # Babbage's description, his relations and summaries quote it
    (docs / "b_second.txt").write_text("Charles Babbage designed the Difference Engine in London. "
                                       "Charles Babbage lived in London for decades.")
    platform.ingest([docs / "b_second.txt"])
    needle = "corresponded with Charles Babbage"
    assert _quotes(platform, needle)  # before: quoted
    doc = next(d.id for d in platform.documents() if d.source and d.source.endswith("a_first.txt"))
    assert platform.delete(doc)
    assert _quotes(platform, needle) == []
    babbage = platform._store.read("MATCH (e:Entity) WHERE e.name = 'Charles Babbage' RETURN e.description AS d")
    assert babbage and "Charles Babbage" in babbage[0]["d"] and "Difference Engine" in babbage[0]["d"]
    stale = platform._store.read("MATCH (n) WHERE n.stale_description = true OR n.stale_summary = true "
                                "RETURN count(n) AS n")
    assert stale[0]["n"] == 0
