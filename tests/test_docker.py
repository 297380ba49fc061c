"""docker/: the compose file validates with a real compose client (which works without an engine)
and configures the services so that hopgraph's own settings accept them; the image runs as non-root."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from hopgraph.core.settings import Settings
from tests.paths import REPO_ROOT

DOCKER = REPO_ROOT / "docker"


def _compose_command() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def _example_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for line in (DOCKER / ".env.example").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            env[key] = value
    return env


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    cmd = _compose_command()
    if cmd is None:
        pytest.skip("no compose client (docker compose plugin or docker-compose) on this machine")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOPGRAPH_")} | _example_env()
    out = subprocess.run([*cmd, "-f", str(DOCKER / "compose.yaml"), "config"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    parsed: dict[str, Any] = yaml.safe_load(out.stdout)
    return parsed


def test_compose_validates_with_healthchecks_and_volumes(config: dict[str, Any]) -> None:
    services = config["services"]
    assert set(services) == {"neo4j", "qdrant", "api", "worker", "ray-head", "ray-worker"}
    for name in ("neo4j", "qdrant", "api"):
        assert services[name]["healthcheck"]["test"], name
    assert services["api"]["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert services["worker"]["entrypoint"] == ["/bin/sh", "-c"]
    assert services["worker"]["environment"]["HOPGRAPH_INGEST__RAY_ADDRESS"] == "auto"
    assert services["ray-worker"]["command"][:2] == ["start", "--address=ray-head:6379"]
    assert {"neo4j-data", "qdrant-data", "hopgraph-data"} <= set(config["volumes"])


def test_the_ingest_worker_is_a_driver_on_a_cluster_node_not_a_ray_client() -> None:
    """Read as written (no compose client needed): the re-ingestion worker's container joins the Ray
    cluster as a node without task CPUs and runs ``hopgraph worker`` there, connecting to that node
    (``auto``); nothing goes through Ray Client (``ray://``, port 10001), which Ray deprecates."""
    text = (DOCKER / "compose.yaml").read_text()
    assert "ray://" not in text and "10001" not in text and "ray-client-server-port" not in text
    services = yaml.safe_load(text)["services"]
    worker = services["worker"]
    assert worker["entrypoint"] == ["/bin/sh", "-c"] and len(worker["command"]) == 1
    joins, _, then = worker["command"][0].partition("&&")
    assert joins.split()[:3] == ["ray", "start", "--address=ray-head:6379"] and "--num-cpus=0" in joins.split()
    assert then.split() == ["exec", "hopgraph", "worker"]
    assert worker["environment"]["HOPGRAPH_INGEST__RAY_ADDRESS"] == "auto"
    assert worker["depends_on"]["ray-head"]["condition"] == "service_healthy" and worker["init"] is True
    head = services["ray-head"]["command"]
    assert head[:2] == ["start", "--head"] and "--port=6379" in head and "--num-cpus=0" in head
    assert services["ray-worker"]["command"][:2] == ["start", "--address=ray-head:6379"]


def test_compose_environment_is_valid_hopgraph_settings(config: dict[str, Any], monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    for var in [v for v in os.environ if v.startswith("HOPGRAPH_")]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("HOPGRAPH_CONFIG", "/nonexistent.toml")
    for key, value in config["services"]["api"]["environment"].items():
        monkeypatch.setenv(key, str(value))
    s = Settings()
    assert s.graph.backend == "neo4j" and s.graph.uri == "bolt://neo4j:7687"
    assert s.vectors.backend == "server" and s.vectors.url == "http://qdrant:6333"
    assert s.api.api_keys and s.api.api_keys[0].scope == "admin" and s.scheduler.enabled is False
    assert [src.name for src in s.scheduler.sources] == [json.loads(_example_env()["HOPGRAPH_SOURCES"])[0]["name"]]


def test_dockerfile_is_slim_non_root_with_cpu_and_cuda_variants() -> None:
    text = (DOCKER / "Dockerfile").read_text()
    assert "slim" in text and "ARG VARIANT=cpu" in text and '"$VARIANT" = "cuda"' in text
    assert "USER hopgraph" in text and "HEALTHCHECK" in text
    assert Path(DOCKER / "README.md").exists()
