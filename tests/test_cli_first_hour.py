"""What a new user meets first on the command line: ``--version``, quiet logs unless ``-v``, and a
``--help`` grouped by what the commands are for. Real CLI processes."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

from tests.processes import cli_env


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hopgraph.cli", *args], capture_output=True, text=True,
                          env=cli_env(env), timeout=300)


def test_version_prints_the_package_version() -> None:
    out = _run(["--version"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"hopgraph {version('hopgraph')}"
