"""The developer data sets' folder: where the tests look for it, and the clear stop when it is missing."""

from __future__ import annotations

import re
import subprocess
import sys
import types

import pytest

from tests import fake_llm
from tests.paths import REPO_ROOT, SHARED_DATA, missing_data_message, reads_shared_data
from tests.processes import cli_env


def test_a_module_reads_the_data_when_it_holds_the_folder_or_the_fake_llm() -> None:
    holds = types.ModuleType("holds")
    holds.DATA = SHARED_DATA / "hotpotqa-100"  # a path under it is not the folder itself
    assert not reads_shared_data(holds)
    holds.SHARED_DATA = SHARED_DATA
    assert reads_shared_data(holds)
    replays = types.ModuleType("replays")
    replays.fake_llm_server = fake_llm.fake_llm_server
    assert reads_shared_data(replays)
    assert not reads_shared_data(types.ModuleType("neither"))


def test_the_message_names_the_folder_the_modules_and_the_variable() -> None:
    text = missing_data_message([f"tests.test_{i}" for i in range(7)])
    assert str(SHARED_DATA) in text and "HOPGRAPH_SHARED_DATA" in text
    assert "tests.test_0, tests.test_1, tests.test_2, tests.test_3, tests.test_4 and 2 more" in text


def _pytest(module: str, data: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env({"HOPGRAPH_SHARED_DATA": data})
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, f"tests/{module}.py"],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)


def _collect(module: str, data: str) -> subprocess.CompletedProcess[str]:
    return _pytest(module, data, "--collect-only", "-p", "no:xdist")


@pytest.mark.integration  # three pytest processes
def test_a_run_without_the_data_stops_at_collection_saying_where_it_looked(tmp_path) -> None:
    missing = tmp_path / "no-such-folder"
    stopped = _collect("test_chunking_and_sources", str(missing))
    assert stopped.returncode == 4, stopped.stdout + stopped.stderr  # pytest's usage error
    out = stopped.stdout + stopped.stderr
    assert str(missing) in out and "tests.test_chunking_and_sources" in out and "HOPGRAPH_SHARED_DATA" in out
    assert _collect("test_spacy_without_torch", str(missing)).returncode == 0  # a module that reads no data set
    assert _collect("test_chunking_and_sources", str(SHARED_DATA)).returncode == 0


@pytest.mark.integration  # a pytest run with two xdist workers
def test_workers_without_the_data_stop_the_run_with_the_same_message(tmp_path) -> None:
    missing = tmp_path / "no-such-folder"
    stopped = _pytest("test_chunking_and_sources", str(missing), "-n", "2")
    out = stopped.stdout + stopped.stderr
    assert stopped.returncode != 0 and "Interrupted" in out and str(missing) in out, out[-2000:]
    assert "INTERNALERROR" not in out
    failed = re.search(r"(\d+) failed", out)
    assert failed is not None and int(failed[1]) <= 2  # each worker stops after its first test
