"""Paths of the source checkout the tests run in, and of the developer data sets they read."""

from pathlib import Path
from types import ModuleType

from benchmarks.paths import SHARED_DATA  # the one rule: HOPGRAPH_SHARED_DATA, else shared/data beside the checkout

REPO_ROOT = Path(__file__).resolve().parents[1]


def empty_config(folder: Path) -> str:
    """An empty hopgraph.toml in ``folder`` (for HOPGRAPH_CONFIG: defaults, whatever the working dir holds)."""
    path = folder / "empty.toml"
    path.write_text("", encoding="utf-8")
    return str(path)


def reads_shared_data(module: ModuleType) -> bool:
    """Whether a test module reads the developer data sets: it holds ``SHARED_DATA``, or something of
    ``tests.fake_llm`` (which replays the recorded answers kept there)."""
    return any(value is SHARED_DATA or getattr(value, "__module__", None) == "tests.fake_llm"
               for value in vars(module).values())


def missing_data_message(modules: list[str]) -> str:
    """Why a run whose ``modules`` read the developer data cannot start without it."""
    shown = ", ".join(modules[:5]) + (f" and {len(modules) - 5} more" if len(modules) > 5 else "")
    return (f"the developer data sets are not in {SHARED_DATA}: {shown} read them. Put the checkout beside "
            "shared/data, or set HOPGRAPH_SHARED_DATA to the folder holding hotpotqa-100/, locomo-dev/ and the "
            "others.")
