"""The data dir's disk nearly full: the ingest stops before writing a batch with a clear error,
nothing is half-written, and once space is freed a rerun completes with a clean store."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopgraph.app.doctor import diagnose
from hopgraph.app.platform import Platform
from hopgraph.core.settings import IngestSettings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.ingest.control import DiskFullError
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.conftest import settings_for
from tests.paths import SHARED_DATA


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """An 800 MB tmpfs (needs root and a kernel that lets this container mount one)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a size-limited tmpfs needs root")
    out = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=800m", "tmpfs", str(mount)], capture_output=True,
                         text=True)
    if out.returncode != 0:
        pytest.skip(f"cannot mount a size-limited tmpfs here: {out.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_stops_the_ingest_cleanly_and_a_rerun_completes(
        small_disk: Path, arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder) -> None:
    with (SHARED_DATA / "hotpotqa-100" / "corpus.jsonl").open() as fh:
        records = [{"id": r["_id"], "title": r["title"], "text": r["text"]}
                   for r in (json.loads(line) for _, line in zip(range(60), fh, strict=False))]
    s = settings_for(arcadedb, small_disk / "data", ingest=IngestSettings(doc_batch=20, min_free_mb=200))
    filler = small_disk / "filler"
    with Platform(s, embedder=embedder) as p:
        p.ingest_records(records[:20], collection="hp")
        free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
        filler.write_bytes(b"\0" * (free - 120_000_000))  # 120 MB left: under the 200 MB floor
        with pytest.raises(DiskFullError, match=r"MB free in .*nothing of the current batch was written"):
            p.ingest_records(records, collection="hp")
        states = p._store.read("MATCH (d:Document) RETURN d.status AS s, count(d) AS n")
        assert states == [{"s": "complete", "n": 20}]  # nothing half-written
        assert p.vectors.count("chunks") == p._store.read("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
    filler.unlink()
    with Platform(s, embedder=embedder) as p:
        report = p.ingest_records(records, collection="hp")
        assert (report.documents_ingested, report.documents_unchanged) == (40, 20)
        assert [c for c in diagnose(p) if not c.ok] == []
