"""What a new user meets first on the command line: ``--version``, quiet logs unless ``-v``, and a
``--help`` grouped by what the commands are for. Real CLI processes."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from hopgraph.cli import common
from hopgraph.core.settings import Settings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.retrieval.registry import REGISTRY
from tests.paths import empty_config
from tests.processes import cli_env


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hopgraph.cli", *args], capture_output=True, text=True,
                          env=cli_env(env), timeout=300)


def test_version_prints_the_package_version() -> None:
    out = _run(["--version"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"hopgraph {version('hopgraph')}"


def _info_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if " INFO " in f" {line} "]


def test_commands_log_info_only_with_verbose(arcadedb: ServerInfo, tmp_path: Path) -> None:
    """``status`` on a new data dir logs the stores it creates at INFO: hidden by default, shown with
    ``-v``; an explicit ``log_level`` setting still counts, and ``-q`` wins over it."""
    def fresh(name: str, **extra: str) -> dict[str, str]:
        return {"HOPGRAPH_DATA_DIR": str(tmp_path / name), "HOPGRAPH_GRAPH__URI": arcadedb.uri,
                "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
                "HOPGRAPH_GRAPH__DATABASE": f"cli{name}", "HOPGRAPH_CONFIG": empty_config(tmp_path), **extra}

    quiet = _run(["status"], fresh("quiet"))
    assert quiet.returncode == 0, quiet.stderr
    assert _info_lines(quiet.stderr) == [], quiet.stderr
    loud = _run(["-v", "status"], fresh("loud"))
    assert loud.returncode == 0, loud.stderr
    assert _info_lines(loud.stderr), loud.stderr
    assert _info_lines(_run(["status"], fresh("setting", HOPGRAPH_LOG_LEVEL="INFO")).stderr)
    assert _info_lines(_run(["-q", "status"], fresh("q", HOPGRAPH_LOG_LEVEL="INFO")).stderr) == []


@pytest.mark.parametrize("verbosity, service, setting, level", [
    (0, False, None, "WARNING"),  # a command, nothing asked
    (0, False, "DEBUG", "DEBUG"),  # an explicit setting counts
    (0, True, None, "INFO"),  # a service keeps the setting's default
    (0, True, "ERROR", "ERROR"),
    (1, False, "ERROR", "INFO"),  # -v wins over the setting
    (1, False, "DEBUG", "DEBUG"),  # ... but does not hide the debug logs asked for
    (-1, True, "DEBUG", "ERROR"),  # -q wins over everything, services too
])
def test_the_log_level_of_an_invocation(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, verbosity: int,
                                        service: bool, setting: str | None, level: str) -> None:
    monkeypatch.delenv("HOPGRAPH_LOG_LEVEL", raising=False)
    monkeypatch.setenv("HOPGRAPH_CONFIG", empty_config(tmp_path))
    monkeypatch.setattr(common, "VERBOSITY", verbosity)
    monkeypatch.setattr(common, "SERVICE", service)
    s = Settings() if setting is None else Settings(log_level=setting)
    assert ("log_level" in s.model_fields_set) == (setting is not None)
    assert common.log_level(s) == level


def test_help_groups_the_commands() -> None:
    """``hopgraph --help`` shows the commands in panels by purpose, research commands apart."""
    out = _run(["--help"], {"COLUMNS": "80"})
    assert out.returncode == 0, out.stderr
    panels = {line.strip("╭─ ").split(" ")[0]: n for n, line in enumerate(out.stdout.splitlines())
              if line.startswith("╭─ ")}
    assert list(panels) == ["Options", "Documents", "Query", "Explore", "Serve", "Research"]
    lines = out.stdout.splitlines()

    def panel_of(command: str) -> str:
        row = next(n for n, line in enumerate(lines) if line.startswith(f"│ {command} "))
        return max((name for name, at in panels.items() if at < row), key=panels.__getitem__)

    assert {c: panel_of(c) for c in ("ingest", "query", "cypher", "serve", "db", "eval", "train-gnn")} == {
        "ingest": "Documents", "query": "Query", "cypher": "Explore", "serve": "Serve", "db": "Serve",
        "eval": "Research", "train-gnn": "Research"}
    assert all(len(line) <= 80 for line in lines)


def test_query_help_names_the_modes_in_a_few_lines_of_80_columns() -> None:
    out = _run(["query", "--help"], {"COLUMNS": "80"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    start = next(n for n, line in enumerate(lines) if line.startswith("│ --mode "))
    end = next(n for n, line in enumerate(lines) if n > start and line.startswith("│ --"))
    cell = " ".join(line.strip("│ ").split("  ")[-1].strip() for line in lines[start:end])
    assert end - start <= 8, "\n".join(lines[start:end])
    assert all(f" {name}," in f" {cell}" or f" {name} " in f" {cell}" for name in REGISTRY.names), cell
    assert "hopgraph modes" in cell and "<str>" not in cell
