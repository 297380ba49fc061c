"""The graph store's schema as the code writes it: the node labels, relationship types and properties
named by the Cypher statement modules (``graphdb.bolt.cypher.*``, ``graphdb.cypher_export``) and the
migrations, with the endpoints of each relationship type and the constraints and indexes the migrations create.

``docs/schema.md`` holds :func:`markdown` between ``<!-- schema:begin -->`` and ``<!-- schema:end -->``
(``tests/test_schema_page.py`` keeps the two equal), so a label or property added to a statement shows on
the page or fails the test.

A property counts when a statement names it on a bound variable (``SET d.status = ...``, ``RETURN
c.text``, ``WHERE e.typed = false``) or in a pattern's map (``MERGE (d:Document {id: r.id})``): the RAPTOR
summaries are written with ``SET s += r.props``, a map no scan can read, and their properties are found
in the statements that read them back.
"""

from __future__ import annotations

import importlib
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from hopgraph.graphdb.migrations import discover, packaged

#: the modules holding every Cypher statement of the store (module-level strings, and dicts of them)
STATEMENT_MODULES = ("bolt.cypher.statements", "bolt.cypher.browse", "bolt.cypher.communities", "cypher_export",
                     "bolt.cypher.index", "bolt.cypher.sections", "bolt.cypher.tree")

_NODE = r"\(\s*(\w*)\s*(?::\s*([A-Z]\w*))?\s*(\{[^{}()]*\})?\s*\)"
_NODE_RE = re.compile(_NODE)
_REL_RE = re.compile(r"\[\s*(\w*)\s*:\s*([A-Z][A-Z_]*)\s*(\{[^{}]*\})?[^\]]*\]")
_EDGE_RE = re.compile(_NODE + r"\s*(<?)-\s*\[\s*\w*\s*:\s*([A-Z][A-Z_]*)[^\]]*\]\s*-(>?)\s*(?=" + _NODE + ")")
_PROPERTY_RE = re.compile(r"(?<![\w$.])([A-Za-z_]\w*)\.([A-Za-z_]\w*)\b")
_MAP_KEY_RE = re.compile(r"[{,]\s*(\w+)\s*:")
_CONSTRAINT_RE = re.compile(r"CREATE CONSTRAINT (\w+) IF NOT EXISTS FOR \(\w+:(\w+)\) REQUIRE \w+\.(\w+) IS UNIQUE")
_INDEX_RE = re.compile(r"CREATE INDEX (\w+) IF NOT EXISTS FOR \(\w+:(\w+)\) ON \(\w+\.(\w+)\)")
_DROP_RE = re.compile(r"DROP INDEX (\w+)")


@dataclass(frozen=True)
class StoreIndex:
    """A constraint or index of a migration, and the migration that dropped it (if one did)."""

    name: str
    kind: str  # "unique" or "index"
    label: str
    property: str
    migration: str
    dropped_by: str = ""


@dataclass(frozen=True)
class Schema:
    """Labels and relationship types with their sorted properties, the endpoints of each type, and the
    constraints and indexes in migration order."""

    labels: dict[str, tuple[str, ...]]
    relationships: dict[str, tuple[str, ...]]
    endpoints: dict[str, tuple[tuple[str, str], ...]]
    indexes: tuple[StoreIndex, ...]


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def statements() -> list[str]:
    """Every Cypher statement of the statement modules, then every statement of the packaged migrations."""
    found = []
    for name in STATEMENT_MODULES:
        module = importlib.import_module(f"hopgraph.graphdb.{name}")
        for attr, value in vars(module).items():
            if attr.isupper():
                found += [s for s in _strings(value) if re.search(r"\b(MATCH|MERGE|CREATE)\b", s)]
    return found + [s for m in discover(packaged()) for s in m.statements]


def _keys(pattern_map: str | None) -> list[str]:
    return _MAP_KEY_RE.findall(pattern_map or "")


def scan(texts: Iterable[str]) -> Schema:
    """The labels, relationship types, properties and endpoints that ``texts`` (Cypher statements) name;
    a variable's label is the one its pattern gives it within the same statement."""
    labels: dict[str, set[str]] = defaultdict(set)
    rels: dict[str, set[str]] = defaultdict(set)
    ends: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for text in texts:
        bound: dict[str, tuple[dict[str, set[str]], str]] = {}
        for var, label, props in _NODE_RE.findall(text):
            if label:
                labels[label].update(_keys(props))
                if var:
                    bound.setdefault(var, (labels, label))
        for var, rel, props in _REL_RE.findall(text):
            rels[rel].update(_keys(props))
            if var:
                bound.setdefault(var, (rels, rel))
        for var, prop in _PROPERTY_RE.findall(text):
            if var in bound:
                table, name = bound[var]
                table[name].add(prop)
        for m in _EDGE_RE.finditer(text):
            left = m.group(2) or bound.get(m.group(1), ({}, ""))[1]
            right = m.group(8) or bound.get(m.group(7), ({}, ""))[1]
            if left and right and bool(m.group(4)) != bool(m.group(6)):  # a direction, one way
                ends[m.group(5)].add((right, left) if m.group(4) else (left, right))
    return Schema(labels={k: tuple(sorted(v)) for k, v in sorted(labels.items())},
                  relationships={k: tuple(sorted(v)) for k, v in sorted(rels.items())},
                  endpoints={k: tuple(sorted(ends.get(k, ()))) for k in sorted(rels)},
                  indexes=migration_indexes())


def migration_indexes() -> tuple[StoreIndex, ...]:
    """The constraints and indexes the packaged migrations create, each with the migration dropping it."""
    made: dict[str, StoreIndex] = {}
    for m in discover(packaged()):
        step = f"{m.version:04d}_{m.name}"
        for statement in m.statements:
            if c := _CONSTRAINT_RE.search(statement):
                made[c.group(1)] = StoreIndex(c.group(1), "unique", c.group(2), c.group(3), step)
            elif i := _INDEX_RE.search(statement):
                made[i.group(1)] = StoreIndex(i.group(1), "index", i.group(2), i.group(3), step)
            elif (d := _DROP_RE.search(statement)) and d.group(1) in made:
                old = made[d.group(1)]
                made[old.name] = StoreIndex(old.name, old.kind, old.label, old.property, old.migration, step)
    return tuple(made.values())


def schema() -> Schema:
    """The schema of the store, scanned from its statements and migrations."""
    return scan(statements())


def labels() -> list[str]:
    """Every node label, sorted."""
    return list(schema().labels)


def relationship_types() -> list[str]:
    """Every relationship type, sorted."""
    return list(schema().relationships)


def _codes(names: Iterable[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) or "—"


def markdown(found: Schema | None = None) -> str:
    """The inventory of ``docs/schema.md``: labels, relationship types, constraints and indexes."""
    s = found or schema()
    lines = ["### Node labels", "", "| label | properties |", "|---|---|"]
    lines += [f"| `{label}` | {_codes(props)} |" for label, props in s.labels.items()]
    lines += ["", "### Relationship types", "", "| type | from → to | properties |", "|---|---|---|"]
    lines += [f"| `{rel}` | {', '.join(f'`{a}` → `{b}`' for a, b in s.endpoints[rel])} | {_codes(props)} |"
              for rel, props in s.relationships.items()]
    lines += ["", "### Constraints and indexes", "", "| name | kind | on | created by | dropped by |",
              "|---|---|---|---|---|"]
    lines += [f"| `{i.name}` | {i.kind} | `{i.label}.{i.property}` | `{i.migration}` | "
              f"{f'`{i.dropped_by}`' if i.dropped_by else ''} |" for i in s.indexes]
    return "\n".join(lines)
