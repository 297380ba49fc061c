"""No import cycles among the project's modules, function-level imports included (``tests/import_graph.py``);
the check itself is shown finding cycles in a small package built for it."""

from __future__ import annotations

from pathlib import Path

from tests.import_graph import cycles, describe, import_graph
from tests.paths import REPO_ROOT

PACKAGES = ("hopgraph", "benchmarks")  # hopgraph/ links ingest/, graphdb/, ... in (hopgraph.ingest, ...)


def _cycle_report(root: Path, packages: tuple[str, ...]) -> list[str]:
    graph = import_graph(root, packages)
    return [describe(graph, c) for c in cycles(graph)]


def test_the_project_has_no_import_cycles() -> None:
    found = _cycle_report(REPO_ROOT, PACKAGES)
    assert found == [], "import cycles (move the shared piece down a module; a function-level import " \
                        "does not break a cycle):\n" + "\n".join(found)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_check_finds_cycles_hidden_in_functions_relative_and_self_imports(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "import os\n\ndef helper() -> None:\n    from pkg.high import top  # hidden\n",
        "pkg/high.py": "from pkg import low\n\ndef top() -> None: ...\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/a.py": "from .b import f\n",
        "pkg/sub/b.py": "class C:\n    def m(self) -> None:\n        from ..sub import a\n",
        "pkg/selfish.py": "def f() -> None:\n    import pkg.selfish\n",
        "pkg/typed.py": "from typing import TYPE_CHECKING\nimport pkg.typed2\nif TYPE_CHECKING:\n    import pkg.low\n",
        "pkg/typed2.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import typed\n"
                         "else:\n    import pkg.fine\n",
        "pkg/fine.py": "import json\nimport pkg.low\n",
    })
    assert _cycle_report(tmp_path, ("pkg",)) == [
        "pkg.high -> pkg.low, pkg.low -> pkg.high",           # one import inside a function body
        "pkg.selfish -> pkg.selfish",
        "pkg.sub.a -> pkg.sub.b, pkg.sub.b -> pkg.sub.a",     # relative imports, one of them in a method
    ]                                                         # typed <-> typed2 only under TYPE_CHECKING


def test_module_names_follow_the_files_so_a_nested_layout_reads_the_same(tmp_path: Path) -> None:
    """Packages moved under one root (``hopgraph.ingest``...) are checked with no change to the walker."""
    _write(tmp_path, {
        "root/__init__.py": "",
        "root/ingest/__init__.py": "",
        "root/ingest/a.py": "from root.ingest.b import x\n",
        "root/ingest/b.py": "def x() -> None:\n    from root.ingest import a\n",
        "root/retrieval/__init__.py": "from root.ingest import b\n",
    })
    graph = import_graph(tmp_path, ("root",))
    assert graph.has_edge("root.retrieval", "root.ingest.b")
    found = [describe(graph, c) for c in cycles(graph)]
    assert found == ["root.ingest.a -> root.ingest.b, root.ingest.b -> root.ingest.a"]
