"""Keys and schedules change without a restart: POST /admin/reload (in process) and SIGHUP (a real
`hopgraph serve`); other changed sections are named as needing a restart; a reload that would open
the API on a public address is refused and changes nothing."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx

from hopgraph.api.auth import hash_key
from hopgraph.app.platform import Platform
from hopgraph.core.service_settings import ApiKey, ApiSettings, ScheduledSource, SchedulerSettings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import ADMIN_KEY, KEYS, running_api
from tests.conftest import free_port, settings_for
from tests.serve_process import serve_process

NEW_KEY = "a-key-added-while-serving"


def test_admin_reload_applies_keys_and_schedules(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
                                                 tmp_path: Path) -> None:
    settings = settings_for(arcadedb, tmp_path / "data", api=ApiSettings(api_keys=KEYS, host="0.0.0.0"))
    current = {"settings": settings}
    with Platform(settings, embedder=embedder) as platform, \
            running_api(settings, platform, reread=lambda: current["settings"]) as url, \
            httpx.Client(base_url=url, headers={"X-API-Key": ADMIN_KEY}, timeout=60) as admin:
        assert httpx.post(f"{url}/query", json={"text": "x"}, headers={"X-API-Key": NEW_KEY}).status_code == 401
        keys = [*KEYS, ApiKey(name="new", sha256=hash_key(NEW_KEY), scope="read")]
        watched = ScheduledSource(name="watched", paths=[str(tmp_path / "docs")], interval_s=3600)
        current["settings"] = settings.model_copy(update={
            "api": settings.api.model_copy(update={"api_keys": keys}),
            "scheduler": SchedulerSettings(sources=[watched]),
            "retrieval": settings.retrieval.model_copy(update={"top_k": 7})})
        assert httpx.post(f"{url}/admin/reload", headers={"X-API-Key": NEW_KEY}).status_code == 401
        done = admin.post("/admin/reload")
        assert done.status_code == 200
        assert done.json() == {"keys": 3, "schedules": ["watched"], "restart_needed": ["retrieval"]}
        assert httpx.post(f"{url}/query", json={"text": "x"}, headers={"X-API-Key": NEW_KEY}).status_code == 200
        assert "watched" in admin.get("/jobs").json()["schedules"]
        current["settings"] = settings.model_copy(update={"api": settings.api.model_copy(update={"api_keys": []})})
        refused = admin.post("/admin/reload")  # no keys on 0.0.0.0: an open API on a public address
        assert refused.status_code == 400 and "without API keys" in refused.json()["detail"]
        assert httpx.post(f"{url}/query", json={"text": "x"}, headers={"X-API-Key": NEW_KEY}).status_code == 200
        narrowed = [*KEYS, ApiKey(name="new", sha256=hash_key(NEW_KEY), scope="read", groups=["hr"])]
        api = settings.api.model_copy(update={"api_keys": narrowed})
        current["settings"] = settings.model_copy(update={"api": api})
        assert admin.post("/admin/reload").status_code == 200  # the key now reads one group: from the next request
        assert httpx.post(f"{url}/query", json={"text": "x", "mode": "local"},
                          headers={"X-API-Key": NEW_KEY}).status_code == 403
        assert httpx.get(f"{url}/entities", params={"name": "x"}, headers={"X-API-Key": NEW_KEY}).status_code == 403
        current["settings"] = settings  # the key revoked
        assert admin.post("/admin/reload").status_code == 200
        assert httpx.post(f"{url}/query", json={"text": "x"}, headers={"X-API-Key": NEW_KEY}).status_code == 401


def test_sighup_reloads_the_config_file(arcadedb: ServerInfo, tmp_path: Path) -> None:
    import os

    config = tmp_path / "hopgraph.toml"
    entry = '[[api.api_keys]]\nname = "{0}"\nsha256 = "{1}"\nscope = "admin"\n'
    config.write_text(entry.format("admin", hash_key(ADMIN_KEY)))
    env = {**os.environ, "HOPGRAPH_DATA_DIR": str(tmp_path / "data"), "HOPGRAPH_GRAPH__URI": arcadedb.uri,
           "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
           "HOPGRAPH_GRAPH__DATABASE": "reloadtest", "HOPGRAPH_CONFIG": str(config)}
    port = free_port()
    with serve_process(env, port) as (proc, url):
        def status() -> int:
            return httpx.get(f"{url}/jobs", headers={"X-API-Key": NEW_KEY}, timeout=30).status_code

        assert status() == 401
        config.write_text(config.read_text() + entry.format("new", hash_key(NEW_KEY)))
        proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 180  # a guard against a hang, however busy the machine
        while status() != 200:
            assert proc.poll() is None and time.monotonic() < deadline, "SIGHUP did not reload the keys"
            time.sleep(0.2)
