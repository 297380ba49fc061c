"""The HTTP API, served by uvicorn on 127.0.0.1 and called over HTTP: every route, auth, the Cypher
guard, validation, size limits, and a scheduled job that picks up a changed file."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hopgraph.api.auth import hash_key
from hopgraph.app.platform import Platform
from hopgraph.core.service_settings import ApiKey, ApiSettings, ScheduledSource, SchedulerSettings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import ADMIN_KEY, KEYS, READ_KEY, running_api, wait_job
from tests.conftest import settings_for
from tests.paths import REPO_ROOT

SAMPLE = REPO_ROOT / "hopgraph" / "sample"
#: a read key over every collection: the one kind of key (besides such an admin) that may read /metrics
SCRAPER_KEY = "scraper-key-for-tests"
SCRAPER = ApiKey(name="scraper", sha256=hash_key(SCRAPER_KEY), scope="read", collections=["*"])


@pytest.fixture(scope="module")
def api_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("api")


@pytest.fixture(scope="module")
def api(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder, api_dir: Path) -> Iterator[str]:
    settings = settings_for(arcadedb, api_dir / "data", api=ApiSettings(api_keys=[*KEYS, SCRAPER],
                                                                        max_upload_bytes=4096))
    with Platform(settings, embedder=embedder) as platform, running_api(settings, platform) as url:
        yield url


@pytest.fixture(scope="module")
def admin(api: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api, headers={"X-API-Key": ADMIN_KEY}, timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def reader(api: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api, headers={"Authorization": f"Bearer {READ_KEY}"}, timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def ingested(admin: httpx.Client) -> dict[str, Any]:
    docs = [{"id": p.stem, "title": p.stem.title(), "text": p.read_text()} for p in sorted(SAMPLE.glob("*.txt"))]
    r = admin.post("/documents", json={"documents": docs, "collection": "sample"})
    assert r.status_code == 202, r.text
    job = wait_job(admin, r.json()["id"])
    assert job["status"] == "succeeded", job
    return job


def test_health_and_ready_need_no_key_and_the_counts_and_metrics_do(api: str, reader: httpx.Client) -> None:
    assert httpx.get(f"{api}/health").json() == {"status": "ok"}
    assert httpx.get(f"{api}/ready").json() == {"status": "ready"}  # ready alone, without a key
    ready = reader.get("/ready")  # a key that may see /status sees the checks and the index state
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    assert {c["name"] for c in ready.json()["checks"]} >= {"graph store", "chunks", "orphans"}
    index = ready.json()["index"]  # the state was served before the first request, and keeps up
    assert index["served_version"] == ready.json()["graph_version"] - index["lag"] and index["lag"] >= 0
    assert index["last_refresh_kind"] in ("rebuild", "load", "delta", "load+delta")
    assert httpx.get(f"{api}/metrics").status_code == 401
    assert reader.get("/metrics").status_code == 403  # a key over `default` only: metrics count every collection
    metrics = httpx.get(f"{api}/metrics", headers={"X-API-Key": SCRAPER_KEY})
    assert metrics.status_code == 200 and "hopgraph_http_requests_total" in metrics.text


def test_docs_pages_render_from_the_app_alone(api: str) -> None:
    """/docs and /redoc reference no other host: every script, style and icon comes from the app."""
    import re

    for page in ("/docs", "/redoc"):
        html = httpx.get(f"{api}{page}")
        assert html.status_code == 200 and "text/html" in html.headers["content-type"]
        refs = re.findall(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""", html.text)
        assert refs and not [r for r in refs if re.match(r"^(https?:)?//", r)], refs
        for ref in refs:
            got = httpx.get(f"{api}{ref}")
            assert got.status_code == 200 and got.content, ref
    swagger = httpx.get(f"{api}/docs").text
    assert "/docs-assets/swagger-ui-bundle.js" in swagger and "/openapi.json" in swagger


def test_auth_scopes(api: str, reader: httpx.Client) -> None:
    r = httpx.post(f"{api}/query", json={"text": "Ada Lovelace"})
    assert r.status_code == 401 and r.headers["content-type"] == "application/problem+json"
    assert "API key" in r.json()["detail"]
    assert httpx.post(f"{api}/query", json={"text": "x"}, headers={"X-API-Key": "wrong"}).status_code == 401
    r = reader.post("/documents", json={"documents": [{"id": "x", "text": "hello"}]})
    assert r.status_code == 403 and "admin" in r.json()["detail"]
    assert reader.delete("/documents/doc_whatever").status_code == 403


def test_ingest_job_and_query(ingested: dict[str, Any], reader: httpx.Client) -> None:
    assert ingested["result"]["documents_ingested"] == 6 and ingested["result"]["chunks"] >= 6
    r = reader.post("/query", json={"text": "Who wrote the first program for the Analytical Engine?", "top_k": 3})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["results"][0]["citation"]["source"] == "sample#lovelace"
    assert body["context"] and "timings_ms" in body and body["degraded"] is False
    docs = [d for d in reader.get("/documents").json() if d["source"].startswith("sample#")]  # other tests add more
    assert len(docs) == 6 and {d["status"] for d in docs} == {"complete"}
    turing = next(d["id"] for d in docs if d["source"] == "sample#turing")
    filtered = reader.post("/query", json={"text": "Analytical Engine", "mode": "dense",
                                           "filters": {"document_ids": [turing]}}).json()
    assert filtered["results"] and {x["citation"]["document_id"] for x in filtered["results"]} == {turing}


def test_bad_bodies_get_422_problems(ingested: dict[str, Any], reader: httpx.Client, admin: httpx.Client) -> None:
    r = reader.post("/query", json={"text": "x", "top_k": 0})
    assert r.status_code == 422
    problem = r.json()
    assert problem["status"] == 422 and "top_k" in problem["detail"] and problem["errors"][0]["loc"][-1] == "top_k"
    r = reader.post("/query", json={"text": "x", "mode": "telepathy"})
    assert r.status_code == 422 and "mode" in r.json()["detail"]
    assert reader.post("/query", json={"text": "   "}).status_code == 422
    r = reader.post("/query", json={"text": "x", "nli": True})  # no NLI model configured: said so
    assert r.status_code == 400 and "retrieval.nli.model" in r.json()["detail"]
    assert reader.post("/query", json={"text": "Analytical Engine", "nli": False}).status_code == 200
    r = admin.post("/documents", json={"documents": [{"id": "a"}]})
    assert r.status_code == 422 and "text" in r.json()["detail"]
    r = admin.post("/documents", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["detail"]
    assert admin.post("/documents", content=b"x", headers={"content-type": "text/plain"}).status_code == 415


def test_entities_neighbours_and_communities(ingested: dict[str, Any], reader: httpx.Client) -> None:
    rows = reader.post("/cypher", json={
        "query": "MATCH (e:Entity)-[:RELATED]-() RETURN e.id AS id, e.name AS name, count(*) AS d "
                 "ORDER BY d DESC, id LIMIT 1"}).json()["rows"]
    eid, name = rows[0][0], rows[0][1]
    entity = reader.get(f"/entities/{eid}").json()
    assert entity["name"] == name and entity["chunks"] >= 1 and entity["mentions"] >= 1
    neighbours = reader.get(f"/entities/{eid}/neighbors", params={"limit": 5}).json()
    assert 1 <= len(neighbours) <= 5 and all(n["id"] != eid for n in neighbours)
    assert reader.get("/entities/ent_nope").status_code == 404
    assert reader.get("/entities/ent_nope/neighbors").status_code == 404
    chunks = reader.get(f"/entities/{eid}/chunks", params={"limit": 3}).json()
    assert chunks and len(chunks) <= 3 and all(c["chunk_id"].startswith("chk_") and c["count"] >= 1 for c in chunks)
    assert reader.get("/entities/ent_nope/chunks").status_code == 404
    communities = reader.get("/communities", params={"level": 0}).json()
    assert communities and all(c["level"] == 0 for c in communities)
    one = reader.get(f"/communities/{communities[0]['id']}").json()
    assert one["members"] and len(one["members"]) == communities[0]["size"]
    assert reader.get("/communities/nope").status_code == 404


def test_cypher_guard_limits_and_errors(ingested: dict[str, Any], reader: httpx.Client) -> None:
    r = reader.post("/cypher", json={"query": "MATCH (d:Document) WHERE d.source = $s RETURN d.title AS t",
                                     "params": {"s": "sample#curie"}})
    assert r.status_code == 200 and r.json() == {"columns": ["t"], "rows": [["Curie"]], "truncated": False}
    r = reader.post("/cypher", json={"query": "MATCH (c:Chunk) RETURN c.id", "limit": 2})
    assert r.json()["truncated"] is True and len(r.json()["rows"]) == 2
    t0 = time.monotonic()  # a runaway statement: 504 at its limit, and stopped on the server (test_arcadedb_server)
    r = reader.post("/cypher", json={"query": "UNWIND range(1, 3000) AS a UNWIND range(1, 3000) AS b "
                                              "UNWIND range(1, 3000) AS c RETURN count(*) AS n", "timeout_s": 1})
    assert r.status_code == 504 and "longer than 1s" in r.json()["detail"] and time.monotonic() - t0 < 120  # not hours
    assert reader.post("/cypher", json={"query": "RETURN 1 AS x", "limit": 10**8}).status_code == 422
    assert reader.post("/cypher", json={"query": "RETURN 1 AS x", "timeout_s": 1e-300}).status_code == 422
    count = {"query": "MATCH (d:Document) RETURN count(d) AS n"}
    before = reader.post("/cypher", json=count).json()["rows"]
    assert before[0][0] >= 6
    for write in ("MATCH (d:Document) DETACH DELETE d", "CREATE (x:Evil) RETURN x",
                  "MATCH (d:Document) SET d.title = 'x' RETURN d"):
        r = reader.post("/cypher", json={"query": write})
        assert r.status_code == 400, write
        assert "read-only" in r.json()["detail"] or "write" in r.json()["detail"].lower()
    assert reader.post("/cypher", json=count).json()["rows"] == before  # nothing was written
    r = reader.post("/cypher", json={"query": "MATCH (n) RETURN n.id AS"})
    assert r.status_code == 400


def test_cypher_errors_say_what_they_are(reader: httpx.Client) -> None:
    """A typo is the database rejecting the statement, not a parameter problem (issue 54, bug 9); the
    guard refuses a hidden write and a writing procedure itself, whatever the database would do."""
    r = reader.post("/cypher", json={"query": "MATCH (n) RETURN n LIMT 1"})
    assert r.status_code == 400, r.text
    detail = r.json()["detail"]
    assert "parameter" not in detail and "rejected the statement" in detail, detail
    for query, said in (("MATCH (n) // x\rCREATE (m:Evil) RETURN n", "CREATE is a write clause"),
                        ("RETURN apoc.create.node(['X'], {}) AS n", "function 'apoc.create.node'"),
                        ("CALL apoc.create.node(['X'], {}) YIELD node RETURN node", "procedure 'apoc.create.node'")):
        r = reader.post("/cypher", json={"query": query})
        assert r.status_code == 400 and said in r.json()["detail"], (query, r.text)
    r = reader.post("/cypher", json={"query": "RETURN 'CREATE' AS `SET` // DELETE\n"})
    assert r.status_code == 200 and r.json()["rows"] == [["CREATE"]], r.text


def test_upload_files_limits_and_delete(ingested: dict[str, Any], admin: httpx.Client, api_dir: Path) -> None:
    r = admin.post("/documents", files=[("files", ("zorblax.txt", b"The Quillon Brewery was founded by "
                                                   b"Zorblax Quintana in 1893.", "text/plain"))])
    assert r.status_code == 202, r.text
    job = wait_job(admin, r.json()["id"])
    assert job["status"] == "succeeded" and job["result"]["documents_ingested"] == 1
    r = admin.post("/documents", files=[("files", ("big.txt", b"word " * 2000, "text/plain"))])
    assert r.status_code == 413 and r.json()["status"] == 413
    big_json = {"documents": [{"id": f"j{i}", "text": "word " * 1000} for i in range(500)]}  # ~2.5 MB of JSON
    r = admin.post("/documents", json=big_json)
    assert r.status_code == 413  # the JSON body limit holds for documents sent as JSON too
    r = admin.post("/documents", json={"documents": [{"id": "mid", "text": "Marrowind dams. " * 600}]})
    assert r.status_code == 202  # 10 KB: over the (tiny, 4 KB) upload limit, under the JSON one
    docs = admin.get("/documents").json()
    doc = next(d for d in docs if d["source"].endswith("zorblax.txt"))
    hit = admin.post("/query", json={"text": "Who founded the Quillon Brewery?"}).json()
    assert hit["results"][0]["citation"]["document_id"] == doc["id"]
    r = admin.delete(f"/documents/{doc['id']}")
    assert r.status_code == 202
    assert wait_job(admin, r.json()["id"])["status"] == "succeeded"
    assert all(d["id"] != doc["id"] for d in admin.get("/documents").json())
    assert admin.delete(f"/documents/{doc['id']}").status_code == 404
    jobs = admin.get("/jobs").json()["jobs"]
    assert {"ingest", "delete"} <= {j["kind"] for j in jobs}


def test_uploads_are_identified_by_their_path_and_never_silently_replaced(ingested: dict[str, Any],
                                                                         admin: httpx.Client) -> None:
    def upload(name: str, text: bytes, **params: str) -> httpx.Response:
        return admin.post("/documents", files=[("files", (name, text, "text/markdown"))], params=params)

    for name, text in (("upload_note.md", b"Marrowind Engineering builds dams."),
                       ("other/upload_note.md", b"Keswick Dam was built by Marrowind Engineering.")):
        r = upload(name, text)
        assert r.status_code == 202 and wait_job(admin, r.json()["id"])["result"]["documents_ingested"] == 1
    sources = [d["source"] for d in admin.get("/documents", params={"limit": 1000}).json()]
    assert sum(s.endswith("upload_note.md") for s in sources) == 2  # two documents, not one replacing the other
    r = upload("upload_note.md", b"Something else entirely.")
    assert r.status_code == 409 and "replace=true" in r.json()["detail"]
    r = upload("upload_note.md", b"Marrowind Engineering builds dams.")  # the same bytes: fine, unchanged
    assert r.status_code == 202 and wait_job(admin, r.json()["id"])["result"]["documents_unchanged"] == 1
    r = upload("upload_note.md", b"Something else entirely.", replace="true")
    assert r.status_code == 202 and wait_job(admin, r.json()["id"])["result"]["documents_ingested"] == 1
    r = admin.post("/documents", files=[("files", ("d/x.md", b"1", "text/plain")),
                                        ("files", ("d/./x.md", b"2", "text/plain"))])
    assert r.status_code == 409 and "both called d/x.md" in r.json()["detail"]


def test_upload_paths_stay_inside_the_uploads_folder() -> None:
    from hopgraph.api.routes.documents import upload_path

    assert upload_path("other/upload_note.md", 0) == Path("other/upload_note.md")
    assert upload_path("../../etc/passwd", 0) == Path("etc/passwd")
    assert upload_path("/abs/a b.md", 0) == Path("abs/a_b.md")
    assert upload_path("C:\\docs\\n.txt", 0) == Path("C_/docs/n.txt")
    assert upload_path("", 3) == Path("upload-3") and upload_path("..", 4) == Path("upload-4")


def test_metrics_count_routes_and_modes(ingested: dict[str, Any], api: str, reader: httpx.Client) -> None:
    reader.post("/query", json={"text": "radium", "mode": "bm25"})
    text = httpx.get(f"{api}/metrics", headers={"X-API-Key": SCRAPER_KEY}).text
    assert 'hopgraph_http_requests_total{method="POST",route="/query",status="200"}' in text
    assert 'hopgraph_queries_total{degraded="false",mode="bm25"}' in text
    assert "hopgraph_ingested_chunks_total" in text


def test_scheduled_job_picks_up_a_changed_file(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
                                               tmp_path: Path) -> None:
    folder = tmp_path / "watched"
    folder.mkdir()
    note = folder / "note.md"
    note.write_text("# Ledger\nThe Quillfeather Ledger was kept by Marnie Oskarsdottir.")
    sched = SchedulerSettings(sources=[ScheduledSource(name="watched", paths=[str(folder)], interval_s=1.0)])
    settings = settings_for(arcadedb, tmp_path / "data", scheduler=sched)
    with Platform(settings, embedder=embedder) as platform, running_api(settings, platform) as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        first = _wait_run(client, lambda r: r["result"].get("documents_ingested") == 1)
        note.write_text("# Ledger\nThe Quillfeather Ledger was kept by Tobias Wrenfield in Lisbon.")
        _wait_run(client, lambda r: r["result"].get("documents_ingested") == 1
                  and r["result"].get("run_id", r["id"]) != first["result"].get("run_id", first["id"])
                  and r["created_at"] > first["created_at"])
        hit = client.post("/query", json={"text": "Who kept the Quillfeather Ledger?", "mode": "local"}).json()
        assert "Tobias Wrenfield" in hit["results"][0]["text"] and len(hit["results"]) == 1
        listing = client.get("/jobs").json()
        assert "watched" in listing["schedules"]
        runs = [j for j in listing["jobs"] if j["kind"] == "reingest"]
        assert any(j["result"].get("documents_unchanged") == 1 for j in runs) or len(runs) >= 2
        assert all(j["created_at"].endswith("+00:00") and "T" in j["created_at"] for j in listing["jobs"])  # ISO
        assert all(v is None or v.endswith("+00:00") for v in listing["schedules"].values())
        time.sleep(3)  # a few more runs at a 1 s interval that change nothing
        recorded = client.post("/cypher", json={
            "query": "MATCH (r:IngestRun {source: 'watched'}) RETURN r.status AS s, r.duration_s AS d"}).json()
        statuses = [row[0] for row in recorded["rows"]]
        assert statuses and set(statuses) <= {"succeeded", "running", "unchanged"}
        assert len(statuses) <= 4 and statuses.count("unchanged") <= 1, statuses  # two changes, one quiet record


def _wait_run(client: httpx.Client, done: Any, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for job in client.get("/jobs").json()["jobs"]:
            if job["kind"] == "reingest" and job["status"] == "succeeded" and done(job):
                return dict(job)
        time.sleep(0.2)
    raise TimeoutError("no scheduled run finished as expected")


def test_a_record_is_found_and_deleted_by_the_id_it_was_sent_with(ingested: dict[str, Any], reader: httpx.Client,
                                                                   admin: httpx.Client) -> None:
    r = admin.post("/documents", json={"documents": [{"id": "memo-7", "text": "Orla Vint tuned the carillon."}],
                                       "collection": "memos"})
    assert wait_job(admin, r.json()["id"])["status"] == "succeeded"
    doc = reader.get("/documents/memos/memo-7")
    assert doc.status_code == 200 and doc.json()["source"] == "memos#memo-7" and doc.json()["status"] == "complete"
    assert reader.get("/documents/sample/memo-7").status_code == 404  # ids live within their collection
    assert reader.delete("/documents/memos/memo-7").status_code == 403  # deleting needs an admin key
    gone = admin.delete("/documents/memos/memo-7")
    assert gone.status_code == 202 and wait_job(admin, gone.json()["id"])["status"] == "succeeded"
    assert reader.get("/documents/memos/memo-7").status_code == 404
    assert admin.delete("/documents/memos/memo-7").status_code == 404


def test_entities_are_found_by_name(ingested: dict[str, Any], reader: httpx.Client) -> None:
    exact = reader.get("/entities", params={"name": "Ada Lovelace", "match": "exact"}).json()
    assert [e["name"] for e in exact] == ["Ada Lovelace"] and exact[0]["chunks"] >= 1
    loose = reader.get("/entities", params={"name": "  ada LOVELACE's "}).json()  # normalized by default
    assert [e["id"] for e in loose] == [exact[0]["id"]]
    assert reader.get("/entities", params={"name": "ada lovelace", "match": "exact"}).json() == []
    prefix = reader.get("/entities", params={"name": "ada", "match": "prefix", "limit": 50}).json()
    assert exact[0]["id"] in {e["id"] for e in prefix} and all(e["name"].lower().startswith("ada") for e in prefix)
    assert reader.get("/entities", params={"name": "x", "match": "fuzzy"}).status_code == 422
    assert reader.get(f"/entities/{exact[0]['id']}").json()["name"] == "Ada Lovelace"  # and its page


def test_admins_export_the_graph(ingested: dict[str, Any], reader: httpx.Client, admin: httpx.Client) -> None:
    import io
    import json
    import zipfile

    assert reader.get("/export").status_code == 403  # every text of the corpus: admin keys only
    lines = admin.get("/export", params={"format": "jsonl"})
    assert lines.status_code == 200 and lines.headers["content-type"].startswith("application/x-ndjson")
    kinds = {json.loads(x)["kind"] for x in lines.text.splitlines()}
    assert kinds == {"node", "edge"}
    packed = admin.get("/export", params={"format": "neo4j-csv"})
    names = set(zipfile.ZipFile(io.BytesIO(packed.content)).namelist())
    assert {"Document.csv", "Entity.csv", "MENTIONS.csv", "RELATED.csv", "import.sh"} <= names
    assert admin.get("/export", params={"format": "gexf"}).status_code == 422
