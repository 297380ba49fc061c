"""How `make test` spreads the suite over pytest-xdist workers: each test module runs whole in one worker
(its module-scoped stores are built once), the Ray modules one after the other in the same worker, and the
modules that take minutes are handed out first, so that no worker is left alone with one at the end.

Grouping is by node id, not by ``xdist_group`` marks: pytest 9.2 no longer lets a plugin rename a node id,
and pytest-xdist's ``loadgroup`` relies on that (pytest-dev/pytest-xdist#1386), which would silently spread
a module's tests over every worker and build its stores once per worker."""

from __future__ import annotations

from typing import Any

import pytest

#: modules that must not run at the same time as each other: the Ray clusters
SERIAL_GROUPS = {"test_ray_ingest": "ray", "test_ray_pools": "ray"}

#: the modules that take longest (a minute or more of a worker each, minutes for the first ones), longest first
LONGEST_FIRST = ("test_ray_ingest", "test_ray_pools", "test_serve_faults", "test_kill_resume", "test_gpu_modes",
                 "test_cli", "test_incremental_ingest", "test_extraction_worker", "test_demo", "test_concurrency",
                 "test_raptor", "test_soak", "test_serve_cli", "test_collections")


def module_of(nodeid: str) -> str:
    """The test module's name of a node id (``tests/test_cli.py::test_x[a]`` -> ``test_cli``)."""
    return nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")


def work_unit(nodeid: str) -> str:
    """The unit of work a node id belongs to: its module, or its module's serial group."""
    module = module_of(nodeid)
    return SERIAL_GROUPS.get(module, nodeid.split("::", 1)[0])


def run_order(nodeid: str) -> int:
    """Where a test's module comes in the run: the longest modules first, in ``LONGEST_FIRST``'s order."""
    module = module_of(nodeid)
    return LONGEST_FIRST.index(module) if module in LONGEST_FIRST else len(LONGEST_FIRST)


def order_longest_first(items: list[pytest.Item]) -> None:
    """Put the longest modules first (a stable sort: each module's tests stay together and in order)."""
    items.sort(key=lambda item: run_order(item.nodeid))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """pytest-xdist's scope scheduling with ``work_unit`` as the scope, in the order of the collection, for
    every distribution mode but ``each`` (every test on every worker)."""
    if config.getvalue("dist") in ("each", "no"):
        return None
    from xdist.scheduler import LoadScopeScheduling  # only a run with worker processes has pytest-xdist

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    config.option.loadscopereorder = False  # not by their number of tests: the longest modules first
    return ModuleScheduling(config, log)
