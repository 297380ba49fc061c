"""`hopgraph serve` as a real process: it serves, records itself as the owner of the stores, makes
writing CLI commands point at its API, and cleans up on SIGINT."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx

from hopgraph.app.platform import Platform
from hopgraph.core.service_settings import ApiKey
from hopgraph.core.settings import Settings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from tests.api_server import ADMIN_KEY, KEYS, READ_KEY, running_api, wait_job
from tests.conftest import free_port
from tests.fake_llm import fake_llm_server
from tests.paths import empty_config
from tests.processes import cli_env
from tests.serve_process import serve_process


def _env(arcadedb: ServerInfo, tmp_path: Path, port: int) -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", "HOPGRAPH_DATA_DIR": str(tmp_path / "data"),
            "HOPGRAPH_GRAPH__URI": arcadedb.uri, "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password,
            "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port), "HOPGRAPH_GRAPH__DATABASE": "servetest",
            "HOPGRAPH_CONFIG": empty_config(tmp_path), "HOPGRAPH_API__PORT": str(port)}


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hopgraph.cli", *args], capture_output=True, text=True,
                          env=cli_env(env), timeout=300)


def test_serve_owns_the_stores_and_cli_writes_point_to_its_api(arcadedb: ServerInfo, tmp_path: Path) -> None:
    port = free_port()
    with fake_llm_server() as (_, llm_url):  # `ask` is answered by the server, from its LLM
        env = {**_env(arcadedb, tmp_path, port), "HOPGRAPH_LLM__BASE_URL": llm_url}
        with serve_process(env, port) as (proc, url):
            assert httpx.get(f"{url}/ready", timeout=60).status_code == 200
            record = json.loads((tmp_path / "data" / "serve.json").read_text())
            assert {k: record[k] for k in ("pid", "url")} == {"pid": proc.pid, "url": url} and record["token"]
            assert (tmp_path / "data" / "serve.json").stat().st_mode & 0o777 == 0o600  # the token: this user's
            r = httpx.post(f"{url}/documents/paths", json={"paths": ["/etc/hostname"]})
            assert r.status_code == 403 and "api.ingest_roots" in r.json()["detail"]  # no key, no token: refused
            doc = tmp_path / "a.txt"
            doc.write_text("Grace Hopper wrote the first compiler.")
            r = httpx.post(f"{url}/query", json={"text": "compiler"})
            assert r.status_code == 200 and r.json()["results"] == []
            out = _cli(["ingest", str(doc)], env)  # the server ingests the file of this machine
            assert out.returncode == 0 and f"pid {proc.pid}" in out.stdout and "1 ingested" in out.stdout, out.stderr
            out = _cli(["serve", "--port", str(free_port())], env)
            assert out.returncode == 5 and "already serves" in out.stderr
            job = httpx.post(f"{url}/documents", json={"documents": [{"id": "gh", "text": doc.read_text()}]}).json()
            wait_job(httpx.Client(base_url=url, timeout=60), job["id"])
            out = _cli(["query", "Who wrote the first compiler?", "--mode", "bm25", "--json"], env)  # asks the server
            assert out.returncode == 0 and "Grace Hopper" in json.loads(out.stdout)["results"][0]["text"], out.stderr
            out = _cli(["ask", "Who wrote the first compiler?", "--mode", "bm25", "--json"], env)  # the server answers
            answer = json.loads(out.stdout) if out.returncode == 0 else {}
            assert answer.get("citations_valid") and "Grace Hopper" in answer["answer"], out.stderr
            docs = {d["source"]: d["id"] for d in httpx.get(f"{url}/documents").json()}
            assert set(docs) == {str(doc.resolve()), "api#gh"}
            out = _cli(["delete", str(doc)], env)  # a path needs the stores: by id while serve runs
            assert out.returncode == 5 and "by document id" in out.stderr
            out = _cli(["delete", *docs.values()], env)
            assert out.returncode == 0 and "deleted 2 documents" in out.stdout, out.stderr
            assert httpx.get(f"{url}/documents").json() == []
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
    assert not (tmp_path / "data" / "serve.json").exists()


def test_an_open_api_on_a_public_address_is_refused(arcadedb: ServerInfo, tmp_path: Path) -> None:
    env = _env(arcadedb, tmp_path, free_port())
    out = _cli(["serve", "--host", "0.0.0.0"], env)
    assert out.returncode == 2 and "without API keys" in out.stderr  # bad configuration


def test_api_key_prints_a_hash_for_the_settings() -> None:
    from hopgraph.api.auth import hash_key

    out = _cli(["api-key", "ci-bot", "--scope", "admin"], dict(os.environ))
    assert out.returncode == 0
    key = next(w for w in out.stdout.split() if w.startswith("hg_"))
    assert f'sha256 = "{hash_key(key)}"' in out.stdout and 'scope = "admin"' in out.stdout
    out = _cli(["api-key", "hr-team", "--groups", "hr,finance"], dict(os.environ))
    entry = tomllib.loads(out.stdout[out.stdout.index("[[api.api_keys]]"):])["api"]["api_keys"][0]
    assert ApiKey.model_validate(entry).groups == ["finance", "hr"]  # the printed entry is a valid setting
    bad = _cli(["api-key", "x", "--groups", "Not Valid"], dict(os.environ))
    assert bad.returncode == 2 and "invalid access group" in bad.stderr and "hg_" not in bad.stdout


def test_local_paths_are_ingested_only_by_a_loopback_server(settings: Settings, platform: Platform,
                                                            tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text("Ada Lovelace wrote the first published algorithm.")
    admin = {"X-API-Key": ADMIN_KEY}
    api = settings.api.model_copy(update={"api_keys": KEYS})
    with running_api(settings.model_copy(update={"api": api}), platform, scheduler=False) as url:  # no roots
        r = httpx.post(f"{url}/documents/paths", json={"paths": [str(note)]}, headers=admin)
        assert r.status_code == 403 and "api.ingest_roots" in r.json()["detail"]  # uploads only
    (tmp_path / "roots").mkdir()
    link = tmp_path / "roots" / "passwd"
    link.symlink_to("/etc/passwd")
    api = api.model_copy(update={"ingest_roots": [tmp_path]})
    with running_api(settings.model_copy(update={"api": api}), platform, scheduler=False) as url:
        for outside in ("/etc/passwd", str(link), str(tmp_path / ".." / "elsewhere.txt")):
            r = httpx.post(f"{url}/documents/paths", json={"paths": [outside]}, headers=admin)
            assert r.status_code == 403 and "outside api.ingest_roots" in r.json()["detail"], outside
        assert httpx.post(f"{url}/documents/paths", json={"paths": ["note.txt"]}, headers=admin).status_code == 400
        r = httpx.post(f"{url}/documents/paths", json={"paths": [str(tmp_path / "gone.txt")]}, headers=admin)
        assert r.status_code == 404 and "gone.txt" in r.json()["detail"]
        assert httpx.post(f"{url}/documents/paths", json={"paths": [str(note)]},
                          headers={"X-API-Key": READ_KEY}).status_code == 403  # an admin's work
        job = httpx.post(f"{url}/documents/paths", json={"paths": [str(note)]}, headers=admin).json()
        done = wait_job(httpx.Client(base_url=url, headers=admin, timeout=60), job["id"])
        assert done["status"] == "succeeded" and done["result"]["documents_ingested"] == 1
    public = settings.model_copy(update={"api": api.model_copy(update={"host": "0.0.0.0"})})
    with running_api(public, platform, scheduler=False) as url:  # (bound to loopback, configured as public)
        r = httpx.post(f"{url}/documents/paths", json={"paths": [str(note)]}, headers=admin)
        assert r.status_code == 403 and "loopback" in r.json()["detail"]


def test_status_and_doctor_ask_the_running_server(arcadedb: ServerInfo, tmp_path: Path) -> None:
    port = free_port()
    env = {**_env(arcadedb, tmp_path, port), "HOPGRAPH_GRAPH__DATABASE": "servestatus"}
    with serve_process(env, port) as (proc, url):
        job = httpx.post(f"{url}/documents", json={"documents": [{"id": "gh", "text": "Grace Hopper wrote the "
                                                                  "first compiler."}]}).json()
        wait_job(httpx.Client(base_url=url, timeout=60), job["id"])
        out = _cli(["status"], env)  # the stores are the server's: it counts
        assert out.returncode == 0 and f"pid {proc.pid}" in out.stdout and "Document" in out.stdout, out.stderr
        out = _cli(["status", "--json"], env)
        st = json.loads(out.stdout)
        assert out.returncode == 0 and st["graph"]["Document"] == 1 and st["vectors"]["chunks"] >= 1, out.stderr
        assert st["data_dir"] == str((tmp_path / "data").resolve()) and st["vector_backend"] == "edge"
        out = _cli(["doctor"], env)
        assert out.returncode == 0 and f"pid {proc.pid}" in out.stdout and "every document complete" in out.stdout, \
            out.stderr
        out = _cli(["doctor", "--json"], env)
        checks = {c["name"]: c for c in json.loads(out.stdout)}
        assert out.returncode == 0 and checks["chunks"]["ok"] and checks["migrations"]["ok"], out.stderr


def test_status_and_doctor_routes_need_a_read_key(settings: Settings, platform: Platform) -> None:
    api = settings.api.model_copy(update={"api_keys": KEYS})
    with running_api(settings.model_copy(update={"api": api}), platform, scheduler=False) as url:
        read = {"X-API-Key": READ_KEY}
        assert httpx.get(f"{url}/status").status_code == 401 and httpx.get(f"{url}/doctor").status_code == 401
        st = httpx.get(f"{url}/status", headers=read, timeout=60)
        assert st.status_code == 200 and set(st.json()) == {"graph_version", "graph", "vectors"}
        checks = httpx.get(f"{url}/doctor", headers=read, timeout=120)
        assert checks.status_code == 200 and checks.json()[0]["name"] == "graph store"
