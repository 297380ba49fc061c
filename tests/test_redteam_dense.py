"""Red team, dense search inside the view (issue 79, attack 3), over a real HTTP server, ArcadeDB and
qdrant-edge: a key that reads only the public documents asks about a topic that only hidden documents
cover. Dense search used to take the nearest chunks of the whole vector store and drop the hidden ones
after, so the count of results told how many hidden chunks outranked the visible ones; it must now
answer as a store of the public documents alone would: top_k results (or every visible chunk)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from hopgraph.api.auth import hash_key
from hopgraph.app.platform import Platform
from hopgraph.core.service_settings import ApiKey, ApiSettings
from hopgraph.core.settings import RetrievalSettings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import running_api, wait_job
from tests.conftest import settings_for

ROOT, ENG = "dense-root-key", "dense-eng-key"
KEYS = [ApiKey(name="root", sha256=hash_key(ROOT), scope="admin"),
        ApiKey(name="eng", sha256=hash_key(ENG), groups=["eng"])]
HIDDEN = [{"id": f"hr{i}", "groups": ["hr"], "text": f"Glacier drilling report {i}: the ice core sample number {i} "
           "was drilled from the glacier at a depth of several hundred metres."} for i in range(12)]
PUBLIC = [{"id": "p1", "text": "The bakery on Mill Street sells rye bread every morning."},
          {"id": "p2", "text": "Our football club trains on Tuesday evenings in the park."},
          {"id": "p3", "text": "The library lends books, films and board games to members."}]
QUESTION = "What did the glacier drilling of the ice core find?"


@pytest.fixture(scope="module")
def served(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("redteam-dense")
    s = settings_for(arcadedb, root / "data", api=ApiSettings(api_keys=KEYS),
                     retrieval=RetrievalSettings(candidate_k=8))  # fewer candidates than hidden chunks
    with Platform(s, embedder=embedder) as platform, running_api(s, platform) as base:
        with httpx.Client(base_url=base, headers={"X-API-Key": ROOT}, timeout=120) as admin:
            r = admin.post("/documents", json={"documents": HIDDEN + PUBLIC, "collection": "notes"})
            assert r.status_code == 202, r.text
            assert wait_job(admin, r.json()["id"])["status"] == "succeeded"
        yield base


@pytest.mark.parametrize("mode", ["dense", "naive", "rrf"])
def test_a_readers_result_count_says_nothing_of_hidden_chunks(served: str, mode: str) -> None:
    with httpx.Client(base_url=served, headers={"X-API-Key": ENG}, timeout=120) as c:
        for top_k in (1, 2, 3, 5, 70):
            r = c.post("/query", json={"text": QUESTION, "mode": mode, "top_k": top_k})
            assert r.status_code == 200, r.text
            found = r.json()["results"]
            assert len(found) == min(top_k, len(PUBLIC)), (mode, top_k, len(found))
            assert "Glacier" not in r.text


def test_graphs_dense_signal_holds_the_readers_nearest_chunks(served: str) -> None:
    with httpx.Client(base_url=served, headers={"X-API-Key": ENG}, timeout=120) as c:
        r = c.post("/query", json={"text": QUESTION, "mode": "graph", "top_k": 2, "explain": True})
        assert r.status_code == 200, r.text
        dense = r.json()["explain"]["signals"]["dense"]
        assert len(dense) == len(PUBLIC)  # every public chunk (explain shows 2 top_k), none hidden
        assert "Glacier" not in r.text
