"""Graph store: the GraphStore protocol, one Bolt adapter for Neo4j and ArcadeDB, migrations."""
