"""`make test`'s spread of the suite over pytest-xdist workers: a module whole in one worker, the Ray
modules in the same one, the longest modules first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT
from tests.processes import cli_env
from tests.scheduling import LONGEST_FIRST, SERIAL_GROUPS, module_of, run_order, work_unit

INNER_CONFTEST = '''
from tests.scheduling import order_longest_first, pytest_xdist_make_scheduler

def pytest_collection_modifyitems(config, items):
    order_longest_first(items)
'''

INNER_MODULE = '''
import os, pathlib, time, pytest

@pytest.mark.parametrize("i", range({n}))
def test_records_its_worker(i):
    time.sleep(0.2)
    with open(pathlib.Path(__file__).parent / "workers.log", "a") as fh:
        fh.write(f"{{__name__}} {{os.environ['PYTEST_XDIST_WORKER']}}\\n")
'''


def test_a_module_is_one_unit_and_the_ray_modules_share_one() -> None:
    assert work_unit("tests/test_cli.py::test_a") == work_unit("tests/test_cli.py::test_b[x::y]") == "tests/test_cli.py"
    assert work_unit("tests/test_ray_ingest.py::test_a") == work_unit("tests/test_ray_pools.py::test_b") == "ray"
    order = [run_order(f"tests/{module}.py::t") for module in ("test_ray_ingest", "test_cli", "test_x")]
    assert order == sorted(order) and len(set(order)) == 3


def test_every_named_module_exists() -> None:
    for module in (*LONGEST_FIRST, *SERIAL_GROUPS):
        assert (REPO_ROOT / "tests" / f"{module}.py").is_file(), module


def _pytest(folder: Path, *args: str) -> str:
    """Run pytest over ``folder`` in a process of its own (with this repository importable); its output."""
    # only pytest-xdist of the installed plugins: the others (schemathesis, hypothesis, ...) cost each process
    # seconds of imports and play no part here
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "xdist", *args,
                          str(folder)], cwd=folder, capture_output=True, text=True, timeout=300,
                         env=cli_env({"PYTHONPATH": str(REPO_ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}))
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


@pytest.mark.integration  # it runs pytest with two worker processes
def test_two_workers_run_each_module_whole(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(INNER_CONFTEST)
    for name, n in (("test_alpha", 6), ("test_beta", 6), ("test_ray_ingest", 2), ("test_ray_pools", 2)):
        (tmp_path / f"{name}.py").write_text(INNER_MODULE.format(n=n))
    listed = _pytest(tmp_path, "--collect-only")
    modules = [module_of(line) for line in listed.splitlines() if ".py::" in line]
    assert list(dict.fromkeys(modules)) == ["test_ray_ingest", "test_ray_pools", "test_alpha", "test_beta"]
    _pytest(tmp_path, "-n", "2")  # plain -n: pytest-xdist's "load" distribution, grouped all the same
    seen: dict[str, set[str]] = {}
    for line in (tmp_path / "workers.log").read_text().splitlines():
        module, worker = line.split()
        seen.setdefault(module, set()).add(worker)
    assert set(seen) == {"test_alpha", "test_beta", "test_ray_ingest", "test_ray_pools"}
    assert all(len(workers) == 1 for workers in seen.values()), seen  # never split over two workers
    assert seen["test_ray_ingest"] == seen["test_ray_pools"]
    assert len(set().union(*seen.values())) == 2  # and both workers had work
