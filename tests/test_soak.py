"""A short soak of ``hopgraph serve`` (``benchmarks/soak.py``): a minute of concurrent queries in every
text mode with an ingest job posted halfway; no request fails and the server's memory stays bounded.
Latency is reported, never asserted."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from benchmarks.soak import GNN_WITHOUT_CHECKPOINT, ingest_sample, run_soak, serve_env, text_modes
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from tests.conftest import drop_database, free_port
from tests.paths import empty_config
from tests.serve_process import serve_process

#: seconds of load and the most requests sent in them (whichever comes first ends the load)
SECONDS, MAX_REQUESTS, CLIENTS = 60, 6000, 4
#: how far the server's RSS may grow above its RSS after the warm-up (every mode queried, the sample
#: corpus ingested): the in-flight queries of CLIENTS clients, the ingest job and the index state it
#: refreshes (MB; some 20 MB were seen); a leak of 25 kB per request over MAX_REQUESTS, or an old
#: index state kept, outgrows it
RSS_GROWTH_MB = 128


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_serve_under_mixed_load_fails_nothing_and_keeps_its_memory(arcadedb: ServerInfo, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    port, database = free_port(), f"soak{uuid.uuid4().hex[:10]}"
    env = serve_env(arcadedb, tmp_path / "data", port, empty_config(tmp_path), tmp_path / "ingest", database)
    try:
        with serve_process(env, port) as (proc, url):
            ingest_sample(url)
            report = run_soak(url, proc.pid, SECONDS, tmp_path / "ingest", CLIENTS, MAX_REQUESTS)
    finally:
        drop_database(arcadedb, database)
    with capsys.disabled():
        print(f"\n{report.summary()}")
    assert report.failures == 0, report.summary()
    assert report.ingest == "succeeded" and report.ingest_posted_s < report.seconds  # (posted during the load)
    assert set(report.per_mode) == set(text_modes()) and report.deliberate == report.per_mode["gnn"]
    assert GNN_WITHOUT_CHECKPOINT[0] == 400
    assert report.rss_mb and report.rss_peak_mb <= report.rss_warm_mb + RSS_GROWTH_MB, report.summary()
