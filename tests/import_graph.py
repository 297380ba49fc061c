"""The project's module graph from its sources, every ``import`` at any depth, and its cycles.

import-linter sees only what the interpreter would import at module level of a package; a function-level
import hides a cycle from it (``a`` imports ``b`` at the top, ``b`` imports ``a`` inside a function) and
so does a relative import it cannot attribute. This walker reads each file's syntax tree and records every
``import x`` and ``from x import y`` wherever it stands: module level, functions, methods, ``try`` blocks.

One kind is left out: imports under ``if TYPE_CHECKING:``. They never run; with
``from __future__ import annotations`` they only name types for mypy, so they cannot make a module load
half-initialised, and type-only references back up a layer (a protocol's argument type) are how the
project keeps a lower module unaware of a higher one's code. Modules named in strings (the mode
registry's ``"module:Class"``) are plugin look-ups, not imports, and are not edges either.

Module names come from the files (``root/a/b.py`` -> ``a.b``, ``root/a/__init__.py`` -> ``a``), so moving
a package under another (``ingest`` -> ``hopgraph.ingest``) needs no change here: an imported dotted name
resolves to the longest known module it starts with, whatever its spelling.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import networkx as nx


def module_files(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under ``root/<package>`` for each package
    (following links: ``hopgraph/ingest`` links the ``ingest`` folder in as ``hopgraph.ingest``)."""
    found: dict[str, Path] = {}
    for package in packages:
        files = [Path(d, f) for d, _, names in os.walk(root / package, followlinks=True) for f in names]
        for path in sorted(f for f in files if f.suffix == ".py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement below ``node``, at any depth, except the bodies of ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:          # the ``else:`` branch does run
                if isinstance(other, ast.Import | ast.ImportFrom):
                    yield other
                yield from _imports(other)
        else:
            yield from _imports(child)


def _package_of(module: str, path: Path) -> str:
    """The package a relative import in ``module`` starts from (itself for an ``__init__.py``)."""
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _resolve(name: str, known: set[str]) -> str | None:
    """The longest known module that dotted ``name`` is or starts with; None for third-party names."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return None


def imported_modules(module: str, path: Path, known: set[str]) -> set[str]:
    """The project's modules that ``module`` (file ``path``) imports anywhere in its code."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    targets: set[str] = set()
    for node in _imports(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                package = _package_of(module, path).split(".")
                package = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                base = ".".join([*package, *([base] if base else [])])
            # ``from pkg import name``: name is a submodule, or a member of pkg
            names = [f"{base}.{alias.name}" if base else alias.name for alias in node.names]
            names = [n if _resolve(n, known) == n else base for n in names]
        targets.update(found for n in names if (found := _resolve(n, known)) is not None)
    return targets


def import_graph(root: Path, packages: Iterable[str]) -> nx.DiGraph:
    """Modules as nodes, ``a -> b`` when ``a`` imports ``b`` anywhere (see the module docstring)."""
    files = module_files(root, packages)
    known = set(files)
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for module, path in files.items():
        graph.add_edges_from((module, target) for target in imported_modules(module, path, known))
    return graph


def cycles(graph: nx.DiGraph) -> list[list[str]]:
    """Each group of modules that import each other (a strongly connected component of two or more, or a
    module that imports itself), sorted, for a readable failure message."""
    found = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    found += [[m] for m in graph.nodes if graph.has_edge(m, m)]
    return sorted(found)


def describe(graph: nx.DiGraph, cycle: list[str]) -> str:
    """One cycle as its edges, e.g. ``a -> b, b -> a``."""
    members = set(cycle)
    edges = sorted((a, b) for a, b in graph.edges(members) if b in members)
    return ", ".join(f"{a} -> {b}" for a, b in edges)
