"""No code outside a backend's folder (``graphdb/bolt``, ``graphdb/memory``) and the registries asks which
backend it runs on: no string literal naming a graph backend, no comparison of a ``.backend`` setting,
no ``isinstance`` test against a backend's class. Callers ask the capability the backend declares
(``core.backends.GraphBackendSpec``, ``Backend``) instead."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the graph backends' names (and the adapter's)
NAMES = frozenset({"arcadedb", "neo4j", "bolt", "memory"})
#: where a backend may be named: its own folder, and the registries that list the built-ins
ALLOWED = ("hopgraph/graphdb/bolt/", "hopgraph/graphdb/memory/", "hopgraph/graphdb/registry.py",
           "hopgraph/vectors/registry.py")
#: literals spelled like a backend's name that name something else: (file, literal) -> what they name
NOT_BACKENDS = {
    ("hopgraph/cli/common.py", "neo4j"): "the neo4j driver's logger, which the CLI quietens",
    ("hopgraph/app/export.py", "neo4j"): "the database neo4j-admin imports the exported CSV into",
    ("hopgraph/core/settings.py", "arcadedb"): "graph.backend's default, and the embedded server's folder",
}
#: class names whose ``isinstance`` test asks which backend an object is
BACKEND_CLASSES = ("Bolt", "ArcadeDB", "Neo4j", "MemoryGraph")


def _compares_a_backend(node: ast.AST) -> bool:
    return isinstance(node, ast.Compare) and any(
        isinstance(side, ast.Attribute) and side.attr == "backend" for side in (node.left, *node.comparators))


def _isinstance_of_a_backend(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
        and len(node.args) == 2 and any(c in ast.unparse(node.args[1]) for c in BACKEND_CLASSES)


def backend_tests(source: str, where: str) -> list[str]:
    """Each place in ``source`` (the file ``where``, relative to the repository) that tests or names a
    backend, as ``where:line: what``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() in NAMES \
                and (where, node.value) not in NOT_BACKENDS:
            found.append(f"{where}:{node.lineno}: the literal {node.value!r}")
        elif _compares_a_backend(node) or _isinstance_of_a_backend(node):
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_outside_a_backend_folder_names_or_tests_a_backend() -> None:
    found = []
    for path in sorted((ROOT / "hopgraph").rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        if not where.startswith(ALLOWED):
            found += backend_tests(path.read_text(encoding="utf-8"), where)
    assert not found, "ask the backend's capability (graphdb.registry, vectors.registry) instead:\n" + "\n".join(found)


def test_the_exceptions_are_still_needed() -> None:
    """An exception the code no longer needs is removed, so that it cannot hide a new test of a name."""
    for where, literal in NOT_BACKENDS:
        text = (ROOT / where).read_text(encoding="utf-8")
        assert f'"{literal}"' in text, f"{where} no longer holds {literal!r}: drop it from NOT_BACKENDS"


def test_the_check_finds_each_way_of_asking_for_a_backend() -> None:
    """The questions the code asked before backends declared capabilities are each found."""
    asked = '''
def f(settings, cfg, store, BoltGraphStore):
    sep = "." if settings.graph.backend == "neo4j" else "_"
    if cfg.backend in ("arcadedb", "neo4j"):
        pass
    if settings.vectors.backend != "edge":
        pass
    if isinstance(store, BoltGraphStore):
        pass
    return {"neo4j": 1}["memory"]
'''
    found = backend_tests(asked, "hopgraph/app/example.py")
    lines = sorted({int(f.split(":")[1]) for f in found})
    assert lines == [3, 4, 6, 8, 10], found
    assert backend_tests('x = "neo4j"', "hopgraph/app/export.py") == []  # a listed exception
    assert backend_tests('x = "neo4j"', "hopgraph/app/other.py") == ["hopgraph/app/other.py:1: the literal 'neo4j'"]
