"""Collections on real engines (ArcadeDB, qdrant-edge) and over a real HTTP server: each one a graph
database, vector collections and index state of its own; keys that may use one collection see nothing
of another, through every mode, the explorer's routes, the Cypher console, export and the jobs, even
where the two hold entities of the same name."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hopgraph.api.auth import hash_key
from hopgraph.app.collection_registry import list_collections
from hopgraph.app.collections import create_collection, delete_collection
from hopgraph.app.platform import Platform
from hopgraph.core.collections import CollectionNameError, check_name, placed
from hopgraph.core.errors import BadInputError, ConflictError, NotFoundError
from hopgraph.core.service_settings import ApiKey, ApiSettings
from hopgraph.core.settings import GraphSettings, RaptorSettings, Settings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.retrieval.registry import REGISTRY
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import running_api, wait_job
from tests.conftest import settings_for
from tests.paths import empty_config
from tests.processes import cli_env

ROOT, A_ADMIN, A_READ, D_READ = "root-key-all", "teama-admin-key", "teama-read-key", "default-read-key"
KEYS = [ApiKey(name="root", sha256=hash_key(ROOT), scope="admin", collections=["*"]),
        ApiKey(name="a-admin", sha256=hash_key(A_ADMIN), scope="admin", collections=["teama"]),
        ApiKey(name="a-read", sha256=hash_key(A_READ), scope="read", collections=["teama"]),
        ApiKey(name="d-read", sha256=hash_key(D_READ), scope="read")]
#: each side's canary: a unique word, and facts about an entity both sides name
SIDES = {
    "default": [{"id": "d1", "text": "Zorblax Quintana founded the Vexmoor Observatory in Kelderwick. The "
                 "observatory's logbook is sealed with the password quillfeatherdefault."}],
    "teama": [{"id": "a1", "text": "Zorblax Quintana painted the harbour of Kelderwick in the winter of 1901. "
               "The painting hangs in a vault opened by the phrase marigoldteamacanary."}],
}
CANARY = {"default": "quillfeatherdefault", "teama": "marigoldteamacanary"}
#: questions aimed at each side's canary (never containing it: answers echo their question)
AIMED = {"default": "What password seals the logbook of the Vexmoor Observatory?",
         "teama": "What phrase opens the vault where the painting of the harbour hangs?"}
MODES = [m for m in REGISTRY.entries if m not in ("image", "gnn")]  # gnn needs a trained checkpoint


def test_names_and_places() -> None:
    assert check_name("teama") == "teama"
    for bad in ("", "Team", "a_b", "1abc", "a" * 41, "../x", "default/x"):
        with pytest.raises(CollectionNameError):
            check_name(bad)
    base = Settings(data_dir=Path("/srv/hg"))
    a = placed(base, "teama")
    assert (a.collection, a.graph.database, a.vectors.prefix) == ("teama", "hopgraph_teama", "hopgraph_teama_")
    assert a.vectors_dir == Path("/srv/hg/collections/teama/vectors") and a.index_dir.parent == a.vectors_dir.parent
    assert placed(base, "default").graph.database == base.graph.database == "hopgraph"
    neo = placed(Settings(graph=GraphSettings(backend="neo4j", database="kg")), "teama")
    assert neo.graph.database == "kg.teama"  # Neo4j database names allow no underscore
    assert placed(a, "teama") is a
    with pytest.raises(BadInputError, match="address collection 'teama'"):
        placed(a, "teamb")


@pytest.fixture(scope="module")
def served(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    s = settings_for(arcadedb, tmp_path_factory.mktemp("coll") / "data", api=ApiSettings(api_keys=KEYS),
                     raptor=RaptorSettings(enabled=True))  # each collection has its own tree
    with Platform(s, embedder=embedder) as platform, running_api(s, platform) as url:
        with httpx.Client(base_url=url, headers={"X-API-Key": ROOT}, timeout=120) as root:
            assert root.post("/collections", json={"name": "teama"}).status_code == 201
            for name, docs in SIDES.items():
                r = root.post("/documents", params={"collection": name},
                              json={"documents": docs, "collection": "notes"})
                assert r.status_code == 202, r.text
                assert wait_job(root, r.json()["id"])["status"] == "succeeded"
        yield url


def _client(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=120)


def _reads(c: httpx.Client, collection: str) -> list[httpx.Response]:
    """Every read route a key may call on ``collection``: each mode, the explorer's routes, Cypher, jobs."""
    q = {"collection": collection}
    out = [c.post("/query", params=q, json={"text": text, "mode": m, "explain": True})
           for m in MODES for text in ("What did Zorblax Quintana do?", *AIMED.values())]
    out += [c.get("/documents", params=q), c.get("/entities", params={**q, "name": "Zorblax Quintana"}),
            c.get("/communities", params=q), c.get("/jobs", params=q), c.get("/status", params=q),
            c.post("/cypher", params=q, json={"query": "MATCH (n) RETURN properties(n) AS p LIMIT 500"})]
    for e in (out[-5].json() if out[-5].status_code == 200 else []):
        out += [c.get(f"/entities/{e['id']}", params=q), c.get(f"/entities/{e['id']}/chunks", params=q),
                c.get(f"/entities/{e['id']}/neighbors", params=q)]
    return out


def test_a_key_sees_its_collection_and_nothing_of_the_other(served: str) -> None:
    with _client(served, A_READ) as a, _client(served, D_READ) as d:
        for client, mine, theirs in ((a, "teama", "default"), (d, "default", "teama")):
            answers = _reads(client, mine)
            assert all(r.status_code == 200 for r in answers), [(r.url, r.status_code, r.text[:200])
                                                                 for r in answers if r.status_code != 200]
            text = " ".join(r.text for r in answers)
            assert CANARY[mine] in text  # the collection's own text is found
            assert CANARY[theirs] not in text
            refused = _reads(client, theirs)
            assert {r.status_code for r in refused} == {403}
            assert CANARY[theirs] not in " ".join(r.text for r in refused)


def test_ids_of_another_collection_and_traversal_in_ids_find_nothing(served: str) -> None:
    """A document or entity id of one collection, asked for in another (by a key that may use both), is
    unknown there; an entity both name has each collection's facts only; ids that climb out of their path
    find nothing; and nothing is read or removed."""
    with _client(served, ROOT) as root:
        theirs = {"collection": "teama"}
        doc = root.get("/documents/notes/a1", params=theirs).json()
        assert root.get("/documents/notes/a1").status_code == 404  # asked for in default
        assert root.delete(f"/documents/{doc['id']}").status_code == 404
        assert root.delete("/documents/notes/a1").status_code == 404
        observatory = root.get("/entities", params={"name": "Vexmoor Observatory"}).json()[0]["id"]  # default's
        assert root.get(f"/entities/{observatory}", params=theirs).status_code == 404
        assert root.get(f"/entities/{observatory}/chunks", params=theirs).status_code == 404
        shared = root.get("/entities", params={**theirs, "name": "Zorblax Quintana"}).json()[0]["id"]
        pages = [root.get(f"/entities/{shared}{tail}", params={"collection": c})
                 for tail in ("", "/chunks", "/neighbors") for c in ("default", "teama")]
        assert [r.status_code for r in pages] == [200] * 6
        assert not any(CANARY["teama"] in r.text or "harbour" in r.text for r in pages[0::2])
        assert not any("Vexmoor" in r.text for r in pages[1::2])
        for path in ("/documents/..%2F..%2F..%2Fetc%2Fpasswd", "/documents/%2e%2e/%2e%2e/etc/passwd",
                     "/entities/..%2F..%2Fetc%2Fpasswd", "/documents/notes/..%2F..%2Fetc%2Fpasswd"):
            r = root.get(path)
            assert r.status_code in (404, 405, 422) and "root:" not in r.text, (path, r.status_code, r.text[:200])
        assert root.get("/documents/notes/a1", params=theirs).json() == doc  # still there


def test_collections_are_listed_created_and_deleted_by_keys_allowed_to(served: str) -> None:
    with _client(served, A_ADMIN) as a, _client(served, ROOT) as root:
        assert [c["name"] for c in a.get("/collections").json()] == ["teama"]
        assert [c["name"] for c in root.get("/collections").json()] == ["default", "teama"]
        assert a.post("/collections", json={"name": "teamb"}).status_code == 403  # needs '*'
        assert a.post("/query", params={"collection": "nosuch"}, json={"text": "x"}).status_code == 403
        assert root.post("/query", params={"collection": "nosuch"}, json={"text": "x"}).status_code == 404
        assert root.post("/query", params={"collection": "../etc"}, json={"text": "x"}).status_code == 422
        assert root.post("/collections", json={"name": "Bad_Name"}).status_code == 422
        assert root.post("/collections", json={"name": "teama"}).status_code == 409
        assert root.post("/collections", json={"name": "scratch"}).status_code == 201
        r = root.post("/documents", params={"collection": "scratch"}, json={"documents": SIDES["teama"]})
        job: dict[str, Any] = wait_job(root, r.json()["id"])
        assert job["collection"] == "scratch" and job["status"] == "succeeded"
        assert a.get(f"/jobs/{job['id']}").status_code == 404  # another collection's job: unknown to this key
        hits = root.post("/query", params={"collection": "scratch"}, json={"text": "harbour painting", "mode": "bm25"})
        assert CANARY["teama"] in hits.text
        assert root.delete("/collections/default").status_code == 400
        assert root.delete("/collections/scratch").status_code == 204
        assert root.post("/query", params={"collection": "scratch"}, json={"text": "x"}).status_code == 404
        assert [c["name"] for c in root.get("/collections").json()] == ["default", "teama"]


def test_platforms_of_collections_are_isolated_and_deleted_whole(arcadedb: ServerInfo, tmp_path: Path,
                                                                   embedder: SentenceTransformerEmbedder) -> None:
    s = settings_for(arcadedb, tmp_path / "data")
    with pytest.raises(NotFoundError, match="no collection 'teamb'"):
        Platform(s, collection="teamb")
    create_collection(s, "teamb")
    with pytest.raises(ConflictError):
        create_collection(s, "teamb")
    assert [c.name for c in list_collections(s)] == ["default", "teamb"]
    with Platform(s, embedder=embedder, collection="teamb") as b:
        b.ingest_records(SIDES["teama"])
        assert CANARY["teama"] in " ".join(r.text for r in b.query("harbour painting", mode="bm25").results)
    with Platform(s, embedder=embedder) as d:
        assert d.query("harbour painting", mode="bm25").results == []
        assert d.status()["graph"].get("Document", 0) == 0
    home = s.data_dir / "collections" / "teamb"
    assert (home / "vectors").is_dir()
    delete_collection(s, "teamb")
    assert not home.exists() and [c.name for c in list_collections(s)] == ["default"]
    with httpx.Client(auth=("root", arcadedb.password), timeout=30) as c:
        gone = c.get(f"http://{arcadedb.host}:{arcadedb.http_port}/api/v1/exists/{s.graph.database}_teamb").json()
    assert gone["result"] is False


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hopgraph.cli", *args], capture_output=True, text=True,
                          env=cli_env(env), timeout=300)


def test_the_cli_creates_uses_and_deletes_a_collection(arcadedb: ServerInfo, tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "note.txt").write_text(SIDES["teama"][0]["text"], encoding="utf-8")
    env = {"HOPGRAPH_DATA_DIR": str(tmp_path / "data"), "HOPGRAPH_GRAPH__URI": arcadedb.uri,
           "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
           "HOPGRAPH_GRAPH__DATABASE": "clicoll", "HOPGRAPH_CONFIG": empty_config(tmp_path)}
    assert _cli(["--collection", "teamc", "status"], env).returncode == 4  # not created yet: not found
    made = _cli(["collections", "create", "teamc"], env)
    assert made.returncode == 0 and "created collection teamc" in made.stdout, made.stderr
    assert _cli(["-C", "teamc", "ingest", "--no-progress", str(tmp_path / "c")], env).returncode == 0
    found = _cli(["-C", "teamc", "query", "vault phrase painting", "--mode", "bm25", "--json"], env)
    assert CANARY["teama"] in found.stdout, found.stderr
    alone = _cli(["query", "vault phrase painting", "--mode", "bm25", "--json"], env)  # default: empty
    assert alone.returncode == 0 and CANARY["teama"] not in alone.stdout
    listed = _cli(["collections", "list", "--json"], env)
    assert [c["name"] for c in json.loads(listed.stdout)] == ["default", "teamc"]
    assert _cli(["collections", "delete", "teamc", "--yes"], env).returncode == 0
    assert _cli(["-C", "teamc", "status"], env).returncode == 4
    assert _cli(["-C", "Bad_Name", "status"], env).returncode == 2
