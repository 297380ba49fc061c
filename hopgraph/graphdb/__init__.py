"""Graph store: its roles (``graphdb.protocols``), one Bolt adapter for Neo4j and ArcadeDB, migrations."""
