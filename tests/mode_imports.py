"""The imports of a mode's internals that a module's source makes, found by its syntax tree (the house rule: a
mode is a folder, ``retrieval/modes/<mode>/``, and nothing outside it imports its submodules; others use the
package's public face, ``hopgraph.retrieval.modes.<mode>``)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

MODES = "hopgraph.retrieval.modes"
#: a module path inside a mode's package, in a string: "module:Class" (the registry's), a dotted name alone, or
#: an import statement in code run from text (``python -c``)
_IN_TEXT = re.compile(rf"(?:^|[\s;\"'])(?:from\s+|import\s+)?{re.escape(MODES)}\.(\w+)\.(\w+)")
_WHOLE = re.compile(rf"{re.escape(MODES)}\.(\w+)\.(\w+)(?:[.:]\w+)*")


def _imported(tree: ast.Module, package: str) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every import in ``tree`` (function-level ones included); for ``from m import n``
    both ``m`` and ``m.n``, since ``n`` may be a submodule. ``package``: the module's package, for relative
    imports."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            yield node.lineno, base
            yield from ((node.lineno, f"{base}.{a.name}") for a in node.names)


def _strings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def mode_internal_imports(source: str, owner: str | None, package: str = "",
                          submodules: dict[str, set[str]] | None = None) -> list[str]:
    """The imports in ``source`` of a module inside a mode's package other than mode ``owner``'s (None: the
    source is in no mode's folder), as "line: name". ``submodules``: per mode, its modules and subpackages
    (``from hopgraph.retrieval.modes.graph import facts`` imports one; ``import ... GraphMode`` does not);
    without it, any name after the package counts. Strings naming such a module count too."""
    tree = ast.parse(source)
    found: list[str] = []

    def internal(mode: str, name: str) -> bool:
        return mode != owner and (submodules is None or name in submodules.get(mode, set()))

    for line, name in _imported(tree, package):
        parts = name.split(".")
        if name.startswith(MODES + ".") and len(parts) > 4 and internal(parts[3], parts[4]):
            found.append(f"{line}: {'.'.join(parts[:5])}")
    for line, text in _strings(tree):
        matches = [_WHOLE.fullmatch(text.strip())] if _WHOLE.fullmatch(text.strip()) else list(_IN_TEXT.finditer(text))
        for m in matches:
            if m is not None and internal(m.group(1), m.group(2)):
                found.append(f"{line}: {m.group(0).strip()}")
    return list(dict.fromkeys(found))


def mode_folders(modes_dir: Path) -> dict[str, set[str]]:
    """Per mode package under ``modes_dir``: the names of its modules and subpackages."""
    return {d.name: {p.stem for p in d.iterdir() if p.suffix == ".py" or (p.is_dir() and p.name != "__pycache__")}
            - {"__init__"} for d in modes_dir.iterdir() if (d / "__init__.py").is_file()}
