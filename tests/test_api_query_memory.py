"""``retrieval.query_memory_mb`` over HTTP: a server whose per-query memory bound is tiny answers a pcst
query over the bound with a 400 problem naming the setting, and goes on serving other queries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.settings import RetrievalSettings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import running_api, wait_job
from tests.conftest import settings_for
from tests.paths import REPO_ROOT

SAMPLE = REPO_ROOT / "hopgraph" / "sample"
#: a question naming entities of the sample corpus: graph's pass seeds them and pcst gets candidates
QUESTION = "What did Ada Lovelace write about Charles Babbage's Analytical Engine?"
TINY_MB = 0.001


@pytest.fixture(scope="module")
def api_url(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An open loopback API over the sample corpus, its queries bounded to ``TINY_MB``."""
    data: Path = tmp_path_factory.mktemp("query-memory") / "data"
    settings = settings_for(arcadedb, data, retrieval=RetrievalSettings(stage_cap_ms=None, query_memory_mb=TINY_MB))
    with Platform(settings, embedder=embedder) as platform, running_api(settings, platform, scheduler=False) as url:
        with httpx.Client(base_url=url, timeout=120) as client:
            docs = [{"id": p.stem, "title": p.stem.title(), "text": p.read_text()}
                    for p in sorted(SAMPLE.glob("*.txt"))]
            r = client.post("/documents", json={"documents": docs, "collection": "sample"})
            assert r.status_code == 202, r.text
            assert wait_job(client, r.json()["id"])["status"] == "succeeded"
        yield url


def test_a_query_over_the_memory_bound_is_a_400_and_the_server_goes_on(api_url: str) -> None:
    with httpx.Client(base_url=api_url, timeout=120) as client:
        graph = client.post("/query", json={"text": QUESTION, "mode": "graph", "explain": True})
        assert graph.status_code == 200, graph.text  # graph's own pass is not bounded: it seeds entities
        assert graph.json()["results"] and graph.json()["explain"]["seeds"], graph.json()["explain"]
        r = client.post("/query", json={"text": QUESTION, "mode": "pcst"})
        assert r.status_code == 400, r.text
        assert r.headers["content-type"].startswith("application/problem+json")
        body = r.json()
        assert body["status"] == 400 and body["instance"] == "/query"
        detail = body["detail"]
        assert "retrieval.query_memory_mb" in detail and "retrieval.modes.pcst.candidates" in detail, body
        for mode in ("bm25", "graph", "dense"):  # the refusal left nothing behind: the server still answers
            after = client.post("/query", json={"text": QUESTION, "mode": mode})
            assert after.status_code == 200 and after.json()["results"], (mode, after.text)
        assert client.post("/query", json={"text": QUESTION, "mode": "pcst"}).status_code == 400  # (again)
        assert client.get("/health").json() == {"status": "ok"}
        ready = client.get("/ready")
        assert ready.status_code == 200 and ready.json()["status"] == "ready", ready.text
