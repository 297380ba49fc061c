"""Red team, paths (issue 79, item 1): what a key that may ingest server paths tries, each with its exact
request, over a real HTTP server, ArcadeDB and qdrant-edge. ``api.ingest_roots`` is ``<root>/allowed``;
links placed there lead to ``serve.json`` (the owner token), out of the root, and into the uploads of
another collection; an owner header shown with a key that is not a full admin; a re-ingest that would
make a document of group ``hr`` public. Every file a walk reaches is judged on its real path, the data
dir is never read by a path ingest, and a document's groups are never widened by a key without them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from hopgraph.api.auth import hash_key
from hopgraph.app.ownership import OWNER_HEADER, owner_record
from hopgraph.app.platform import Platform
from hopgraph.core.service_settings import ApiKey, ApiSettings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import running_api, wait_job
from tests.conftest import settings_for

ROOT, TEAMA, DEFAULT_ENG, DEFAULT_HR = "root-admin-key", "teama-admin-key", "default-eng-admin", "default-hr-admin"
KEYS = [ApiKey(name="root", sha256=hash_key(ROOT), scope="admin", collections=["*"]),
        ApiKey(name="teama", sha256=hash_key(TEAMA), scope="admin", collections=["teama"]),
        ApiKey(name="eng", sha256=hash_key(DEFAULT_ENG), scope="admin", collections=["default"], groups=["eng"]),
        ApiKey(name="hr", sha256=hash_key(DEFAULT_HR), scope="admin", collections=["default"], groups=["hr"])]
HR_UPLOAD = b"The payroll of Quillon Abernathy-Vex is kept under the phrase saffronhrcanary."
OUTSIDE = "The vault below the roots opens with plumoutsidecanary."


@dataclass(frozen=True)
class Served:
    base: str
    root: Path
    data: Path
    token: str

    def client(self, key: str) -> httpx.Client:
        return httpx.Client(base_url=self.base, headers={"X-API-Key": key}, timeout=120)

    def folder(self, name: str, files: dict[str, str]) -> Path:
        """A folder below the ingest root holding ``files`` (name -> text)."""
        here = self.root / "allowed" / name
        here.mkdir(parents=True)
        for n, text in files.items():
            (here / n).write_text(text, encoding="utf-8")
        return here


@pytest.fixture(scope="module")
def served(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("redteam-paths")
    (root / "allowed").mkdir()
    (root / "outside").mkdir()
    (root / "outside" / "vault.txt").write_text(OUTSIDE, encoding="utf-8")
    s = settings_for(arcadedb, root / "data", api=ApiSettings(api_keys=KEYS, ingest_roots=[root / "allowed"]))
    with owner_record(s, "http://127.0.0.1"), Platform(s, embedder=embedder) as platform, \
            running_api(s, platform, scheduler=False) as base:
        token = json.loads((root / "data" / "serve.json").read_text())["token"]
        with httpx.Client(base_url=base, headers={"X-API-Key": ROOT}, timeout=120) as admin:
            for name in ("teama", "teamb"):
                assert admin.post("/collections", json={"name": name}).status_code == 201
            for collection in ("teamb", "default"):  # an hr upload in each
                r = admin.post("/documents", params={"collection": collection}, data={"groups": "hr"},
                               files={"files": ("payroll.txt", HR_UPLOAD)})
                assert r.status_code == 202, r.text
                assert wait_job(admin, r.json()["id"])["status"] == "succeeded"
        yield Served(base, root, root / "data", token)


def _ingest(c: httpx.Client, paths: list[Path], collection: str = "default", **headers: str) -> dict[str, Any]:
    """``POST /documents/paths?collection=...`` and the job it queued, ended."""
    r = c.post("/documents/paths", params={"collection": collection}, json={"paths": [str(p) for p in paths]},
               headers=headers)
    assert r.status_code == 202, r.text
    return wait_job(c, r.json()["id"])


def _chunks(c: httpx.Client, collection: str) -> str:
    """Every chunk's text of ``collection``, read back with Cypher."""
    r = c.post("/cypher", params={"collection": collection}, json={"query": "MATCH (c:Chunk) RETURN c.text AS t"})
    assert r.status_code == 200, r.text
    return " ".join(str(row) for row in r.json()["rows"])


def _skipped(job: dict[str, Any]) -> dict[str, str]:
    return {Path(k).name: v for k, v in (job.get("result") or {}).get("skipped", {}).items()}


def test_a_link_to_serve_json_is_not_read(served: Served) -> None:
    here = served.folder("tok", {"note.txt": "Quillon Abernathy-Vex keeps bees."})
    (here / "tok.txt").symlink_to(served.data / "serve.json")
    with served.client(TEAMA) as c:
        job = _ingest(c, [served.root / "allowed" / "tok"], "teama")
        text = _chunks(c, "teama")
        assert "keeps bees" in text and served.token not in text
        assert job["status"] == "succeeded" and "data dir" in _skipped(job)["tok.txt"], job


def test_a_folder_link_out_of_the_root_is_not_entered(served: Served) -> None:
    here = served.folder("out", {"note.txt": "Quillon Abernathy-Vex keeps goats."})
    (here / "elsewhere").symlink_to(served.root / "outside", target_is_directory=True)
    with served.client(TEAMA) as c:
        job = _ingest(c, [here], "teama")
        text = _chunks(c, "teama")
        assert "keeps goats" in text and "plumoutsidecanary" not in text
        assert job["status"] == "succeeded" and "outside api.ingest_roots" in _skipped(job)["elsewhere"], job


def test_an_owner_header_grants_nothing_to_a_scoped_admin(served: Served) -> None:
    with served.client(TEAMA) as c:
        r = c.post("/documents/paths", params={"collection": "teama"}, json={"paths": ["/etc/passwd"]},
                   headers={OWNER_HEADER: served.token})
        assert r.status_code == 403 and "outside api.ingest_roots" in r.json()["detail"], r.text
        assert "root:" not in _chunks(c, "teama")
    with served.client(ROOT) as c:  # the server's own user (a full admin with the token) reads outside
        assert c.post("/documents/paths", json={"paths": [str(served.root / "outside")]}).status_code == 403
        job = _ingest(c, [served.root / "outside"], **{OWNER_HEADER: served.token})
        assert job["status"] == "succeeded" and job["result"]["documents_ingested"] == 1, job


def test_a_link_to_another_collections_upload_is_not_read(served: Served) -> None:
    here = served.folder("upl", {"note.txt": "Quillon Abernathy-Vex keeps hens."})
    (here / "pay.txt").symlink_to(served.data / "collections" / "teamb" / "uploads" / "payroll.txt")
    with served.client(TEAMA) as c:
        job = _ingest(c, [here], "teama")
        text = _chunks(c, "teama")
        assert "keeps hens" in text and "saffronhrcanary" not in text
        assert job["status"] == "succeeded" and "data dir" in _skipped(job)["pay.txt"], job


def _groups(c: httpx.Client, name: str) -> list[list[str]]:
    return [d["groups"] for d in c.get("/documents").json() if Path(d["source"]).name == name]


def test_a_link_into_the_uploads_of_default_leaves_an_hr_upload_as_it_was(served: Served) -> None:
    here = served.folder("again", {"note.txt": "Quillon Abernathy-Vex keeps ducks."})
    (here / "again.txt").symlink_to(served.data / "uploads" / "payroll.txt")  # the hr upload, its own source path
    with served.client(ROOT) as root:  # even a full admin
        job = _ingest(root, [here])
        assert _groups(root, "payroll.txt") == [["hr"]]
        assert job["result"]["documents_ingested"] == 1 and "data dir" in _skipped(job)["again.txt"], job


def test_a_reingest_never_widens_a_documents_groups_silently(served: Served) -> None:
    memo = served.folder("memo", {"memo.md": "---\ngroups: [hr]\n---\nThe memo ends with ochrememocanary.\n"})
    with served.client(ROOT) as root:
        assert _ingest(root, [memo])["result"]["documents_ingested"] == 1
        assert _groups(root, "memo.md") == [["hr"]]
        (memo / "memo.md").write_text("The memo ends with ochrememocanary.\n", encoding="utf-8")  # no groups now
        with served.client(DEFAULT_ENG) as eng:  # an admin of default holding eng, not hr
            job = _ingest(eng, [memo])
        assert _groups(root, "memo.md") == [["hr"]]
        assert job["status"] == "failed" and "stored with groups hr" in _skipped(job)["memo.md"], job
        assert "stored with groups hr" in job["error"]
        with served.client(DEFAULT_HR) as hr:  # a key holding hr may make it public
            job = _ingest(hr, [memo])
            assert job["status"] == "succeeded" and job["result"]["documents_ingested"] == 1, job
        assert _groups(root, "memo.md") == [[]]


def test_the_mcp_tool_reads_no_link_out_of_the_roots(served: Served) -> None:
    pytest.importorskip("mcp")
    import anyio
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    here = served.folder("mcp", {"note.txt": "Quillon Abernathy-Vex keeps geese."})
    (here / "tok.txt").symlink_to(served.data / "serve.json")
    (here / "vault.txt").symlink_to(served.root / "outside" / "vault.txt")

    async def call() -> Any:
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TEAMA}"}, timeout=httpx2.Timeout(60, read=240))
        async with client, streamable_http_client(f"{served.base}/mcp", http_client=client) as (read, write), \
                ClientSession(read, write) as s:
            await s.initialize()
            return await s.call_tool("ingest_paths", {"paths": [str(here)], "collection": "teama"})

    done = anyio.run(call)
    assert not done.is_error, done.content
    with served.client(TEAMA) as c:
        text = _chunks(c, "teama")
    assert "keeps geese" in text and served.token not in text and "plumoutsidecanary" not in text
    job = done.structured_content
    assert job["status"] == "succeeded" and set(_skipped(job)) == {"tok.txt", "vault.txt"}, job
