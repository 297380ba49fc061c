"""`hopgraph serve` under faults, as a real process: an upload of 4 MB of random base64 does not block
the queue, SIGTERM stops the server at the running job's next checkpoint (not after the job) and the
interrupted job runs again at the next start,
and after SIGKILL a restart completes the job with the counts of a clean ingest, no duplicates."""

from __future__ import annotations

import base64
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx

from hopgraph.api.job_store import JobStore
from hopgraph.app.platform import Platform
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import ENDED
from tests.conftest import free_port, settings_for
from tests.paths import SHARED_DATA, empty_config
from tests.serve_process import serve_process

HOTPOT = SHARED_DATA / "hotpotqa-100" / "corpus.jsonl"
#: documents per write batch (the unit of resume): the jobs below run in enough batches (at least four) to be
#: parsed by the spaCy worker processes, and to be interrupted with batches written and batches still to do
BATCH = 4
#: records of the job SIGTERM interrupts (eight batches): the signal comes once one to four batches are
#: written, so that at least three are still to do when it arrives (the next may already be past its check)
TERM_RECORDS = 32
#: records of the job SIGKILL interrupts (six batches): the kill comes once one to three batches are written
KILL_RECORDS = 24
#: seconds between two looks at a job waited for in a window of its progress (GET /jobs/{id} reads memory)
WINDOW_POLL = 0.02


def _records(n: int) -> list[dict[str, Any]]:
    with HOTPOT.open() as fh:
        return [{"id": r["_id"], "title": r["title"], "text": r["text"]}
                for r in (json.loads(line) for _, line in zip(range(n), fh, strict=False))]


def _job(url: str, job_id: str) -> dict[str, Any]:
    return httpx.get(f"{url}/jobs/{job_id}", timeout=10).json()


def _wait(url: str, job_id: str, until: Any, timeout: float = 300, poll: float = 0.2) -> dict[str, Any]:
    """The job once ``until`` holds for it (looked at every ``poll`` seconds); a job that ended without it
    fails at once."""
    deadline = time.monotonic() + timeout
    while True:
        job = _job(url, job_id)
        if until(job):
            return job
        assert job["status"] not in ENDED and time.monotonic() < deadline, job
        time.sleep(poll)


def _env(arcadedb: ServerInfo, tmp_path: Path, database: str) -> dict[str, str]:
    return {**os.environ, "HOPGRAPH_DATA_DIR": str(tmp_path / "data"), "HOPGRAPH_GRAPH__URI": arcadedb.uri,
            "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
            "HOPGRAPH_GRAPH__DATABASE": database, "HOPGRAPH_CONFIG": empty_config(tmp_path),
            "HOPGRAPH_INGEST__DOC_BATCH": str(BATCH), "HOPGRAPH_SCHEDULER__ENABLED": "false"}


def _counts(url: str) -> dict[str, Any]:
    rows = httpx.post(f"{url}/cypher", json={"query": "MATCH (d:Document) RETURN count(d) AS d, "
                                                      "count(DISTINCT d.source) AS s"}, timeout=30).json()["rows"]
    return {"documents": rows[0][0], "sources": rows[0][1]}


def test_noise_upload_sigterm_and_restart(arcadedb: ServerInfo, tmp_path: Path) -> None:
    env = _env(arcadedb, tmp_path, "faultterm")
    port = free_port()
    with serve_process(env, port) as (proc, url):
        noise = base64.b64encode(os.urandom(3_000_000))  # 4 MB of random base64, one "word"
        first = httpx.post(f"{url}/documents", files=[("files", ("noise.txt", noise, "text/plain"))], timeout=60)
        behind = [httpx.post(f"{url}/documents", json={"documents": [{"id": f"n{i}", "text": f"Note {i} about "
                                                       "Keswick Dam."}]}, timeout=30).json()["id"] for i in range(4)]
        job = _wait(url, first.json()["id"], lambda j: j["status"] not in ("queued", "running"))
        assert job["status"] == "failed" and "every file was skipped" in job["error"]  # it says so, and why
        assert "too long" in next(iter(job["result"]["skipped"].values()))
        for job_id in behind:
            assert _wait(url, job_id, lambda j: j["status"] == "succeeded")["result"]["documents_ingested"] == 1
        big = httpx.post(f"{url}/documents", json={"documents": _records(TERM_RECORDS), "collection": "hp"},
                         timeout=30).json()
        job = _wait(url, big["id"], lambda j: j["status"] == "running" and BATCH <= j["done"] <= 4 * BATCH,
                    poll=WINDOW_POLL)
        assert job["total"] == TERM_RECORDS
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=300)  # a guard against a hang, not a measure of speed
    # the server stopped without finishing the job first: queued again at a checkpoint, or still "running"
    # when no checkpoint came within the shutdown's grace (a busy machine); either way it runs at the next start
    store = JobStore(tmp_path / "data" / "jobs.sqlite")
    left = {job.id: job for job, _ in store.unfinished()}
    store.close()
    assert big["id"] in left, left
    stopped = left[big["id"]]
    assert stopped.status == "running" or (stopped.status == "queued" and BATCH <= stopped.done < TERM_RECORDS), stopped
    assert not (tmp_path / "data" / "serve.json").exists()
    with serve_process(env, port) as (_, url):  # the interrupted job runs again and completes
        job = _wait(url, big["id"], lambda j: j["status"] in ("succeeded", "failed"))
        assert job["status"] == "succeeded", job
        assert _counts(url) == {"documents": TERM_RECORDS + 4, "sources": TERM_RECORDS + 4}
        assert httpx.get(f"{url}/ready", timeout=60).status_code == 200


GRAPH_COUNTS = ("MATCH (d:Document) RETURN 'Document' AS k, count(d) AS n UNION ALL "
                "MATCH (c:Chunk) RETURN 'Chunk' AS k, count(c) AS n UNION ALL "
                "MATCH (e:Entity) RETURN 'Entity' AS k, count(e) AS n UNION ALL "
                "MATCH ()-[m:MENTIONS]->() RETURN 'MENTIONS' AS k, count(m) AS n UNION ALL "
                "MATCH ()-[r:RELATED]->() RETURN 'RELATED' AS k, count(r) AS n")


def test_sigkill_during_a_job_then_restart_equals_a_clean_ingest(arcadedb: ServerInfo, tmp_path: Path,
                                                                 embedder: SentenceTransformerEmbedder) -> None:
    env = _env(arcadedb, tmp_path, "faultkill")
    port = free_port()
    records = _records(KILL_RECORDS)
    with serve_process(env, port) as (proc, url):
        big = httpx.post(f"{url}/documents", json={"documents": records, "collection": "hp"}, timeout=30).json()
        _wait(url, big["id"], lambda j: j["status"] == "running" and BATCH <= j["done"] <= 3 * BATCH,
              poll=WINDOW_POLL)
        proc.kill()  # SIGKILL: no shutdown, no flush
        proc.wait(timeout=30)
    with serve_process(env, port) as (_, url):
        hits = httpx.post(f"{url}/query", json={"text": records[-1]["text"][:80], "mode": "dense"}, timeout=60)
        assert hits.status_code == 200  # answered after a kill mid-job (while or after the job runs again)
        job = _wait(url, big["id"], lambda j: j["status"] in ("succeeded", "failed"))
        assert job["status"] == "succeeded", job
        ready = httpx.get(f"{url}/ready", timeout=60)
        assert ready.status_code == 200, ready.text  # doctor: counts agree, nothing unfinished, no orphans
        rows = httpx.post(f"{url}/cypher", json={"query": GRAPH_COUNTS}, timeout=60).json()["rows"]
        recovered = {k: n for k, n in rows}
    with Platform(settings_for(arcadedb, tmp_path / "clean"), embedder=embedder) as p:
        p.ingest_records(records, collection="hp")
        clean = {r["k"]: r["n"] for r in p._store.read(GRAPH_COUNTS)}
    assert recovered == clean and clean["Document"] == KILL_RECORDS
