"""Graph store: its roles (``graphdb.protocols``), the backends by name (``graphdb.registry``), one Bolt
adapter for Neo4j and ArcadeDB, migrations."""
