"""Red team, issue 79 item 5: the probes need no key and tell nothing more than ready or not. Over a real
HTTP server (ArcadeDB, qdrant-edge), ``GET /ready`` once gave anyone the counts that ``GET /status``
refuses to a reader (chunks, graph version, each doctor check's counts, the index version), and
``GET /metrics`` every collection's request, query and ingest counters. Now /ready without a key says
``{"status": "ready"}`` alone, its counts need a key that may see /status, and /metrics needs a key over
every collection that reads every document, unless ``api.metrics_public`` opens it to a scraper."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from hopgraph.api.auth import hash_key
from hopgraph.app.platform import Platform
from hopgraph.core.service_settings import ApiKey, ApiSettings
from hopgraph.core.settings import Settings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import running_api
from tests.conftest import settings_for

ROOT, FULL, DEFAULT_ONLY, ENG, TEAMA = "h-root", "h-full", "h-default", "h-eng", "h-teama"
KEYS = [ApiKey(name="root", sha256=hash_key(ROOT), scope="admin", collections=["*"]),
        ApiKey(name="full", sha256=hash_key(FULL), scope="read", collections=["*"]),
        ApiKey(name="default", sha256=hash_key(DEFAULT_ONLY), scope="read"),
        ApiKey(name="eng", sha256=hash_key(ENG), scope="read", collections=["*"], groups=["eng"]),
        ApiKey(name="teama", sha256=hash_key(TEAMA), scope="read", collections=["teama"])]
COUNTS = {"graph_version", "chunks", "index", "checks"}


@pytest.fixture(scope="module")
def opened(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, Platform]]:
    s = settings_for(arcadedb, tmp_path_factory.mktemp("redteam-health") / "data", api=ApiSettings(api_keys=KEYS))
    with Platform(s, embedder=embedder) as platform:
        platform.ingest_records([{"id": "memo", "text": "The Brimfield office pays its staff every month."}])
        yield s, platform


def _get(base: str, path: str, key: str | None = None) -> httpx.Response:
    return httpx.get(f"{base}{path}", headers={"X-API-Key": key} if key else {}, timeout=60)


def test_probes_without_a_key_tell_ready_alone(opened: tuple[Settings, Platform]) -> None:
    s, platform = opened
    with running_api(s, platform) as base:
        assert _get(base, "/health").json() == {"status": "ok"}
        for key in (None, "not-a-key", ENG, TEAMA):  # no key, an unknown one, a reader with groups, another collection
            r = _get(base, "/ready", key)
            assert r.status_code == 200 and r.json() == {"status": "ready"}, (key, r.text)
        for key in (ROOT, FULL, DEFAULT_ONLY):  # keys that may see /status of `default` see the counts
            ready = _get(base, "/ready", key).json()
            assert set(ready) >= COUNTS and ready["chunks"] >= 1, (key, ready)
            assert _get(base, "/status", key).status_code == 200
        assert _get(base, "/status", ENG).status_code == 403  # /ready no longer shows what this refuses

        for key in (None, "not-a-key"):
            r = _get(base, "/metrics", key)
            assert r.status_code == 401 and "hopgraph_" not in r.text, (key, r.text)
        for key in (ENG, TEAMA, DEFAULT_ONLY):  # groups, or not every collection: the counters count all of them
            r = _get(base, "/metrics", key)
            assert r.status_code == 403 and "api.metrics_public" in r.json()["detail"], (key, r.text)
            assert "hopgraph_ingested" not in r.text
        for key in (ROOT, FULL):
            r = _get(base, "/metrics", key)
            assert r.status_code == 200 and "hopgraph_http_requests_total" in r.text, (key, r.text[:200])


def test_metrics_public_opens_metrics_to_a_scraper(opened: tuple[Settings, Platform]) -> None:
    s, platform = opened
    public = s.model_copy(update={"api": s.api.model_copy(update={"metrics_public": True})})
    with running_api(public, platform) as base:
        r = _get(base, "/metrics")
        assert r.status_code == 200 and "hopgraph_http_requests_total" in r.text
        assert _get(base, "/ready").json() == {"status": "ready"}  # /ready's counts stay behind a key
