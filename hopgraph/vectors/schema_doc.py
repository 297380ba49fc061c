"""The vector collections as the code writes them: for each collection of ``vectors.store.COLLECTIONS``, the
payload fields its writers set, the fields indexed for filtering, its vector space and its names on each
backend.

``docs/vector-schema.md`` holds :func:`markdown` between ``<!-- vectors:begin -->`` and ``<!-- vectors:end
-->`` (``tests/test_vector_schema_page.py`` keeps the two equal), so a payload field added to a writer shows
on the page or fails the test.

The writers are found in the source of the package (read as syntax trees, nothing imported): every
``VectorPoint(id, vector, {...})`` call, the keys of its payload dict giving the fields, and every
``set_payload_where(collection, where, {...})`` call. A call's collection is the key of the dict entry it is
the value of (``{"chunks": [VectorPoint(...)]}``), the subscript it is assigned to (``points["images"] =
...``), the first argument of the ``upsert`` call it is inside, the collections a ``c in NAME`` test keeps,
or else those of every call of the function it is in. A dict spreading ``**p.payload`` inside a backend
(``hopgraph/vectors``) adds its keys to every collection: the hopgraph id each store keeps beside its UUID.
"""

from __future__ import annotations

import ast
import importlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from hopgraph.core.collections import placed
from hopgraph.core.errors import HopgraphError
from hopgraph.core.settings import Settings
from hopgraph.vectors.store import COLLECTIONS, CollectionSpec

PACKAGE = Path(__file__).resolve().parents[1]
#: the example collection name the naming table shows beside ``default``
EXAMPLE = "notes"


class ScanError(HopgraphError, ValueError):
    """A writer whose collection or payload keys the scan cannot resolve."""


@dataclass(frozen=True)
class Field:
    """A payload field of one collection and the functions that write it (``module.function``)."""

    collection: str
    name: str
    writers: tuple[str, ...]


@dataclass
class _Module:
    name: str  # dotted, relative to the package: "ingest.embedding"
    tree: ast.Module
    parents: dict[ast.AST, ast.AST]
    imports: dict[str, str]  # local name -> "module.attr"


def _load(path: Path, root: Path) -> _Module:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    imports = {a.asname or a.name: f"{n.module}.{a.name}" for n in ast.walk(tree)
               if isinstance(n, ast.ImportFrom) and n.module for a in n.names}
    rel = path.relative_to(root).with_suffix("")
    return _Module(".".join(rel.parts), tree, parents, imports)


def modules(root: Path = PACKAGE) -> list[_Module]:
    """Every module under ``root`` (the package), parsed; named by their dotted path relative to it."""
    return [_load(p, root) for p in sorted(root.rglob("*.py"))]


def _constant(mod: _Module, name: str) -> object:
    """The value of a module-level name that ``mod`` imports (``from hopgraph.x import NAME``)."""
    target = mod.imports.get(name)
    if target is None:
        raise ScanError(f"{mod.name}: cannot resolve {name!r} (not imported by name)")
    where, attr = target.rsplit(".", 1)
    return getattr(importlib.import_module(where), attr)


def _strings(mod: _Module, node: ast.AST, expr: ast.expr) -> set[str]:
    """The strings ``expr`` stands for: a literal, a loop variable over a resolvable name, or such a name."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}
    if isinstance(expr, ast.Name):
        up: ast.AST | None = node
        while up is not None:
            if isinstance(up, ast.For) and isinstance(up.target, ast.Name) and up.target.id == expr.id:
                return _strings(mod, up, up.iter)
            up = mod.parents.get(up)
        value = _constant(mod, expr.id)
        if isinstance(value, str):
            return {value}
        if isinstance(value, tuple | list | set | frozenset | dict) and all(isinstance(v, str) for v in value):
            return set(value)
    raise ScanError(f"{mod.name}:{getattr(expr, 'lineno', '?')}: cannot resolve {ast.unparse(expr)!r}")


def _keys(mod: _Module, payload: ast.expr) -> set[str]:
    """The keys a payload dict literal sets (a ``**`` spread keeps the fields already there)."""
    if not isinstance(payload, ast.Dict):
        raise ScanError(f"{mod.name}:{payload.lineno}: a payload that is not a dict literal")
    return {k for key in payload.keys if key is not None for k in _strings(mod, payload, key)}


def _function(mod: _Module, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    up = mod.parents.get(node)
    while up is not None and not isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef):
        up = mod.parents.get(up)
    return up


def _calls_of(mods: list[_Module], name: str) -> list[tuple[_Module, ast.Call]]:
    return [(m, n) for m in mods for n in ast.walk(m.tree) if isinstance(n, ast.Call)
            and ((isinstance(n.func, ast.Name) and n.func.id == name)
                 or (isinstance(n.func, ast.Attribute) and n.func.attr == name))]


def _targets(mods: list[_Module], mod: _Module, node: ast.AST, seen: frozenset[str] = frozenset()) -> set[str]:
    """The collections the value made at ``node`` is written to (see the module docstring)."""
    child, up = node, mod.parents.get(node)
    while up is not None:
        if isinstance(up, ast.Dict) and child in up.values:
            key = up.keys[up.values.index(child)]
            if key is not None:
                return _strings(mod, up, key)
        if isinstance(up, ast.IfExp) and child is up.body and isinstance(up.test, ast.Compare) \
                and isinstance(up.test.ops[0], ast.In):
            return _strings(mod, up, up.test.comparators[0])
        if isinstance(up, ast.Call) and isinstance(up.func, ast.Attribute) and up.func.attr == "upsert" \
                and up.args and child is not up.args[0]:
            return _strings(mod, up, up.args[0])
        if isinstance(up, ast.Assign) and len(up.targets) == 1 and isinstance(up.targets[0], ast.Subscript):
            return _strings(mod, up, up.targets[0].slice)
        if isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef):
            if up.name in seen:
                return set()
            found = set()
            for m, call in _calls_of(mods, up.name):
                if _function(m, call) is not up:
                    found |= _targets(mods, m, call, seen | {up.name})
            if not found:
                raise ScanError(f"{mod.name}.{up.name}: no call of it names a collection")
            return found
        child, up = up, mod.parents.get(up)
    raise ScanError(f"{mod.name}:{getattr(node, 'lineno', '?')}: a vector write outside any function")


def _writer(mod: _Module, node: ast.AST) -> str:
    """``module.function`` (``module.Class.method``) of the function holding ``node``."""
    names = []
    up = mod.parents.get(node)
    while up is not None:
        if isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(up.name)
        up = mod.parents.get(up)
    return ".".join([mod.name, *reversed(names)])


def scan(mods: list[_Module] | None = None) -> list[Field]:
    """Every payload field of every collection with its writers, sorted by collection and field."""
    mods = modules() if mods is None else mods
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for mod in mods:
        backend = mod.name.startswith("vectors.")
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "VectorPoint":
                payload = node.args[2] if len(node.args) > 2 else next(
                    (k.value for k in node.keywords if k.arg == "payload"), None)
                if payload is None:
                    continue
                for c in _targets(mods, mod, node):
                    for key in _keys(mod, payload):
                        found[(c, key)].add(_writer(mod, node))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "set_payload_where" and len(node.args) == 3:
                for c in _strings(mod, node, node.args[0]):
                    for key in _keys(mod, node.args[2]):
                        found[(c, key)].add(_writer(mod, node))
            elif backend and isinstance(node, ast.Dict) and any(
                    k is None and isinstance(v, ast.Attribute) and v.attr == "payload"
                    for k, v in zip(node.keys, node.values, strict=True)):
                for c in COLLECTIONS:
                    for key in _keys(mod, node):
                        found[(c, key)].add(mod.name)
    unknown = sorted({c for c, _ in found} - set(COLLECTIONS))
    if unknown:
        raise ScanError(f"writes to collections that vectors.store.COLLECTIONS lacks: {unknown}")
    order = list(COLLECTIONS)
    return [Field(c, k, tuple(sorted(w))) for (c, k), w in sorted(found.items(), key=lambda i: (
        order.index(i[0][0]), i[0][1]))]


def fields(found: list[Field] | None = None) -> dict[str, list[str]]:
    """Each collection's payload fields, sorted."""
    out: dict[str, list[str]] = {c: [] for c in COLLECTIONS}
    for f in scan() if found is None else found:
        out[f.collection].append(f.name)
    return out


def _space(collection: str) -> str:
    probe = CollectionSpec(dim=1, model="text", image_dim=2, image_model="image")
    if probe.of(collection)[1] == "image":
        return "the image embedder (`clip.model`) with `clip.enabled`, else the text embedder"
    return "the text embedder (`embedder.model`)"


def _codes(names: list[str] | tuple[str, ...]) -> str:
    return ", ".join(f"`{n}`" for n in names) or "—"


def markdown(found: list[Field] | None = None) -> str:
    """The inventory of ``docs/vector-schema.md``: collections, payload fields with their writers, names."""
    found = scan() if found is None else found
    per = fields(found)
    lines = ["### Collections", "", "| collection | vectors of | payload fields | indexed (kind) |",
             "|---|---|---|---|"]
    lines += [f"| `{c}` | {_space(c)} | {_codes(per[c])} | "
              f"{', '.join(f'`{k}` ({kind})' for k, kind in sorted(COLLECTIONS[c].items()))} |" for c in COLLECTIONS]
    lines += ["", "### Writers", "", "| collection | field | written by |", "|---|---|---|"]
    lines += [f"| `{f.collection}` | `{f.name}` | {_codes(f.writers)} |" for f in found]
    base = Settings.model_construct(data_dir=Path("<data_dir>"))  # the defaults, not this environment's
    lines += ["", "### Names", "", "| hopgraph collection | qdrant-edge folder (`vectors.backend = \"edge\"`) | "
              "Qdrant server collection (`\"server\"`, `\"memory\"`) |", "|---|---|---|"]
    for name in ("default", EXAMPLE):
        v = placed(base, name)
        lines.append(f"| `{name}` | `{v.vectors_dir}/<collection>/` | `{v.vectors.prefix}<collection>` |")
    return "\n".join(lines)
