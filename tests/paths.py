"""Paths of the source checkout the tests run in."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


def empty_config(folder: Path) -> str:
    """An empty hopgraph.toml in ``folder`` (for HOPGRAPH_CONFIG: defaults, whatever the working dir holds)."""
    path = folder / "empty.toml"
    path.write_text("", encoding="utf-8")
    return str(path)
