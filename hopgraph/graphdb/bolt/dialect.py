"""The few things that differ between Neo4j 5 and ArcadeDB behind the same Bolt driver."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    """Per-backend differences; everything else is shared Cypher."""

    name: str
    #: whether a READ session really refuses writes (ArcadeDB does not enforce it)
    enforces_read_mode: bool
    #: statement that creates the database, run on the ``system`` database, or None
    create_database: str | None


NEO4J = Dialect(name="neo4j", enforces_read_mode=True,
                create_database="CREATE DATABASE $name IF NOT EXISTS")
ARCADEDB = Dialect(name="arcadedb", enforces_read_mode=False, create_database=None)


def dialect_for(backend: str) -> Dialect:
    """The dialect of a configured backend name."""
    return {"neo4j": NEO4J, "arcadedb": ARCADEDB}[backend]
