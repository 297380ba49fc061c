"""Document access groups over a real HTTP server, ArcadeDB and qdrant-edge: keys that read some groups
only, asking every mode, ``/answer`` (a local OpenAI-compatible server) and every read route with
questions aimed at the other groups' canaries, whose notes share entities with theirs."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from hopgraph.api.auth import hash_key
from hopgraph.app.platform import Platform
from hopgraph.core.service_settings import ApiKey, ApiSettings
from hopgraph.core.settings import LlmSettings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.retrieval.registry import REGISTRY
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import running_api, wait_job
from tests.conftest import settings_for
from tests.fake_llm import fake_llm_server

ROOT, HR, ENG, OPS, ALL = "root-admin-key", "hr-read-key", "eng-read-key", "ops-read-key", "plain-read-key"
KEYS = [ApiKey(name="root", sha256=hash_key(ROOT), scope="admin"),
        ApiKey(name="hr", sha256=hash_key(HR), groups=["hr"]),
        ApiKey(name="eng", sha256=hash_key(ENG), groups=["eng"]),
        ApiKey(name="ops", sha256=hash_key(OPS), groups=["ops"]),
        ApiKey(name="all", sha256=hash_key(ALL))]  # no groups: reads every document, as before groups existed
DOCS = [{"id": "pub", "text": "Zorblax Quintana founded the Vexmoor Observatory in Kelderwick in 1890."},
        {"id": "hr", "groups": ["hr"], "text": "Zorblax Quintana kept the Brimstone Ledger in Kelderwick. The "
         "ledger opens with the phrase saffronhrcanary."},
        {"id": "eng", "groups": ["eng"], "text": "Zorblax Quintana built the Copperline Engine in Kelderwick. "
         "The engine starts with the word cobaltengcanary."}]
#: what each group's documents hold that no other reader may see: canaries and the names only they use
SECRETS = {"hr": ["saffronhrcanary", "Brimstone", "velvethrupload", "amberhrfrontcanary"],
           "eng": ["cobaltengcanary", "Copperline", "mossengpathcanary"]}
QUESTIONS = ["What phrase opens the ledger Zorblax Quintana kept?", "Which word starts the engine in Kelderwick?",
             "What did Zorblax Quintana do in Kelderwick?", "Who wrote the payroll memo?",
             "What does the build runbook say?", "What does the ledger page say?"]


@pytest.fixture(scope="module")
def served(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("access-api")
    (root / "runbooks").mkdir()
    (root / "runbooks" / "build.txt").write_text("The build runbook of Zorblax Quintana ends with "
                                                 "mossengpathcanary.", encoding="utf-8")
    (root / "runbooks" / "ledger.md").write_text("---\ngroups: [hr]\n---\nThe ledger page of Zorblax Quintana "
                                                 "says amberhrfrontcanary.\n", encoding="utf-8")  # its own: hr
    with fake_llm_server() as (_, url):
        s = settings_for(arcadedb, root / "data", api=ApiSettings(api_keys=KEYS, ingest_roots=[root / "runbooks"]),
                         llm=LlmSettings(base_url=url, api_key="test-key", model="fake-4o"))
        with Platform(s, embedder=embedder) as platform, running_api(s, platform) as base:
            with httpx.Client(base_url=base, headers={"X-API-Key": ROOT}, timeout=120) as admin:
                jobs = [admin.post("/documents", json={"documents": DOCS, "collection": "notes"}),
                        admin.post("/documents", data={"groups": " hr, "},
                                   files={"files": ("payroll.txt", b"The payroll memo of Zorblax Quintana was "
                                                    b"written by velvethrupload.")}),
                        admin.post("/documents/paths", json={"paths": [str(root / "runbooks")], "groups": ["eng"]})]
                for r in jobs:
                    assert r.status_code == 202, r.text
                    assert wait_job(admin, r.json()["id"])["status"] == "succeeded"
            yield base


def _client(base: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers={"X-API-Key": key}, timeout=120)


def _text(responses: list[httpx.Response]) -> str:
    return " ".join(r.text for r in responses)


@pytest.mark.parametrize(("key", "mine", "theirs"), [(HR, ["hr"], ["eng"]), (ENG, ["eng"], ["hr"]),
                                                     (OPS, [], ["hr", "eng"])])
def test_a_key_with_groups_finds_its_documents_and_nothing_derived_from_others(
        served: str, key: str, mine: list[str], theirs: list[str]) -> None:
    with _client(served, key) as c:
        found = [c.post("/query", json={"text": q, "mode": m, "explain": True, "top_k": 10})
                 for m in REGISTRY.view_modes() for q in QUESTIONS]
        found += [c.post("/answer", json={"text": q, "mode": m}) for m in ("graph", "rrf") for q in QUESTIONS[:2]]
        found += [c.get("/documents")]
        assert {r.status_code for r in found} == {200}, [(r.url, r.text[:200]) for r in found if r.status_code != 200]
        text = _text(found)
        assert "Vexmoor" in text  # the public note
        for group in mine:
            assert all(s in text for s in SECRETS[group]), group
        for group in theirs:
            leaked = [s for s in SECRETS[group] if s in text]
            assert not leaked, (group, leaked)
        ids = {d["id"] for d in found[-1].json()}
        assert {d["groups"] for d in found[-1].json()} == {None}  # a key with groups is not told any
        assert len(ids) == 1 + sum({"hr": 3, "eng": 2}[g] for g in mine)  # the public note and its groups'
        refused = [c.post("/query", json={"text": QUESTIONS[2], "mode": m})
                   for m in REGISTRY.entries if m not in REGISTRY.view_modes() and m != "image"]
        refused += [c.post("/answer", json={"text": QUESTIONS[0], "mode": "local"})]
        refused += [c.get("/entities", params={"name": "Zorblax Quintana"}), c.get("/communities"),
                    c.post("/cypher", json={"query": "MATCH (n) RETURN properties(n) AS p LIMIT 500"}),
                    c.get("/status"), c.get("/doctor"), c.get("/jobs"), c.post("/mcp", json={})]
        assert {r.status_code for r in refused} == {403}, [(r.url, r.status_code) for r in refused
                                                         if r.status_code != 403]
        assert not any(s in _text(refused) for g in theirs for s in SECRETS[g])
        assert c.get("/documents/notes/hr" if "hr" in theirs else "/documents/notes/eng").status_code == 404
        assert c.get("/documents/notes/pub").status_code == 200


def test_keys_that_read_everything_see_everything(served: str) -> None:
    for key in (ALL, ROOT):
        with _client(served, key) as c:
            text = _text([c.post("/query", json={"text": q, "mode": "graph", "top_k": 10}) for q in QUESTIONS])
            assert all(s in text for g in SECRETS.values() for s in g[:1] + g[2:])
            assert c.get("/entities", params={"name": "Zorblax Quintana"}).status_code == 200
            assert c.post("/query", json={"text": QUESTIONS[2], "mode": "local"}).status_code == 200
            listed = {d["source"].rsplit("/", 1)[-1]: d["groups"] for d in c.get("/documents").json()}
            assert listed == {"notes#pub": [], "notes#hr": ["hr"], "notes#eng": ["eng"], "payroll.txt": ["hr"],
                              "build.txt": ["eng"], "ledger.md": ["hr"]}


def test_groups_must_be_names(served: str) -> None:
    with _client(served, ROOT) as c:
        bad = c.post("/documents", json={"documents": [{"id": "x", "text": "y", "groups": ["Not Valid"]}]})
        assert bad.status_code == 422 and "invalid access group" in bad.text
        upload = c.post("/documents", data={"groups": "a b"}, files={"files": ("x.txt", b"y")})
        assert upload.status_code == 422 and "invalid access group" in upload.text
        sidecar = c.post("/documents", files={"files": ("payroll.txt.groups", b"ops")})
        assert sidecar.status_code == 422 and "is a groups sidecar" in sidecar.text
        assert len(c.get("/documents").json()) == 6  # nothing was queued
