"""Red team, issue 79 item 4: a name that only group-restricted documents use never reaches a key that
cannot read them. Over a real HTTP server, ArcadeDB and qdrant-edge, a public note names "Dr. Quillon"
and the `hr` notes name "Quillon Abernathy-Vex"; entity resolution once merged the two (the public
mention then carried the hr name), in one ingest, and through the alias an hr-only merge left for a
later ingest. A key without `hr` asks every view mode and ``/answer`` about Dr. Quillon: the hr name is
in no response and in no prompt sent to the LLM; an `hr` key still finds its notes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from hopgraph.api.auth import hash_key
from hopgraph.app.platform import Platform
from hopgraph.core.service_settings import ApiKey, ApiSettings
from hopgraph.core.settings import LlmSettings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import running_api, wait_job
from tests.conftest import settings_for
from tests.fake_llm import FakeLlm, fake_llm_server

ROOT, HR, ENG = "names-root-key", "names-hr-key", "names-eng-key"
KEYS = [ApiKey(name="root", sha256=hash_key(ROOT), scope="admin", collections=["*"]),
        ApiKey(name="hr", sha256=hash_key(HR), groups=["hr"], collections=["*"]),
        ApiKey(name="eng", sha256=hash_key(ENG), groups=["eng"], collections=["*"])]
PUBLIC: dict[str, Any] = {"id": "survey", "text": "Dr. Quillon reviewed the harbor survey of Marrowick in 1921."}
HR_NAME: dict[str, Any] = {"id": "warning", "groups": ["hr"],
                           "text": "Quillon Abernathy-Vex received a salary warning in the Brimfield office."}
HR_ALIAS: dict[str, Any] = {"id": "review", "groups": ["hr"],
                            "text": "Dr. Quillon signed the salary review in the Brimfield office."}
#: each collection and the ingests it gets, in order: both notes resolved together ("direct"); an hr-only
#: merge ("Quillon" into "Quillon Abernathy-Vex"), then the public note ("alias")
COLLECTIONS = {"direct": [[PUBLIC, HR_NAME]], "alias": [[HR_NAME, HR_ALIAS], [PUBLIC]]}
SECRET = "Abernathy"
QUESTIONS = ["What did Dr. Quillon review?", "Who is Quillon?", "Quillon harbor survey Marrowick"]
MODES = ("graph", "dense", "bm25", "rrf", "naive")


@pytest.fixture(scope="module")
def served(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, FakeLlm]]:
    with fake_llm_server() as (fake, url):
        s = settings_for(arcadedb, tmp_path_factory.mktemp("names") / "data", api=ApiSettings(api_keys=KEYS),
                         llm=LlmSettings(base_url=url, api_key="test-key", model="fake-4o"))
        with Platform(s, embedder=embedder) as platform, running_api(s, platform) as base:
            with httpx.Client(base_url=base, headers={"X-API-Key": ROOT}, timeout=120) as admin:
                for name, ingests in COLLECTIONS.items():
                    assert admin.post("/collections", json={"name": name}).status_code == 201
                    for docs in ingests:
                        r = admin.post("/documents", params={"collection": name},
                                       json={"documents": docs, "collection": "notes"})
                        assert r.status_code == 202, r.text
                        assert wait_job(admin, r.json()["id"])["status"] == "succeeded"
            yield base, fake


def _client(base: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers={"X-API-Key": key}, timeout=120)


def _entities(r: httpx.Response) -> set[str]:
    """The entity names that led to a query's results."""
    return {e for x in r.json()["results"] for e in x["entities"]}


def _names(c: httpx.Client, collection: str, name: str) -> list[str]:
    r = c.get("/entities", params={"collection": collection, "name": name, "match": "prefix"})
    assert r.status_code == 200, r.text
    return sorted(e["name"] for e in r.json())


@pytest.mark.parametrize("collection", list(COLLECTIONS))
def test_the_public_quillon_is_not_merged_into_the_hr_name(served: tuple[str, FakeLlm], collection: str) -> None:
    with _client(served[0], ROOT) as admin:  # the whole graph: two people, not one
        assert _names(admin, collection, "Quillon") == ["Quillon", "Quillon Abernathy-Vex"]
        rows = admin.post("/cypher", params={"collection": collection}, json={
            "query": "MATCH (d:Document)-[:HAS_CHUNK]->(:Chunk)-[:MENTIONS]->(e:Entity) WHERE e.name = $name "
                     "RETURN DISTINCT d.source AS source ORDER BY source", "params": {"name": "Quillon"}}).json()
        assert rows["rows"] == [["notes#survey"]]  # "alias": the hr "Dr. Quillon" joined the hr name, inside hr


@pytest.mark.parametrize("collection", list(COLLECTIONS))
def test_a_key_without_hr_never_gets_the_hr_name(served: tuple[str, FakeLlm], collection: str) -> None:
    base, fake = served
    q = {"collection": collection}
    with _client(base, ENG) as c:
        asked = len(fake.requests)
        found = [c.post("/query", params=q, json={"text": t, "mode": m, "explain": True, "top_k": 10})
                 for m in MODES for t in QUESTIONS]
        found += [c.post("/answer", params=q, json={"text": t, "mode": m}) for m in ("graph", "rrf")
                  for t in QUESTIONS[:2]]
        assert {r.status_code for r in found} == {200}, [(r.url, r.text[:200]) for r in found if r.status_code != 200]
        prompts = " ".join(m["content"] for req in fake.requests[asked:] for m in req)
    text = " ".join(r.text for r in found)
    assert SECRET not in text, [(r.request.content[:80], r.text[r.text.index(SECRET) - 60:][:120])
                                for r in found if SECRET in r.text][:3]
    assert SECRET not in prompts
    assert "Brimfield" not in text  # nothing else of the hr notes either
    assert "Marrowick" in text and "Quillon" in _entities(found[0])  # the public note and its own Quillon


@pytest.mark.parametrize("collection", list(COLLECTIONS))
def test_an_hr_key_still_finds_its_notes(served: tuple[str, FakeLlm], collection: str) -> None:
    with _client(served[0], HR) as c:
        r = c.post("/query", params={"collection": collection},
                   json={"text": "Who received a salary warning in the Brimfield office?", "mode": "graph",
                         "top_k": 10})
    assert r.status_code == 200, r.text
    assert "notes#warning" in [x["citation"]["source"] for x in r.json()["results"]]
    assert "Quillon Abernathy-Vex" in _entities(r)
