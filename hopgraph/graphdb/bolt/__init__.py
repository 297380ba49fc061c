"""The Bolt backends: one adapter on the neo4j driver (``store``, its role mixins, the Cypher modules by
role in ``cypher``) for the embedded ArcadeDB server (``arcadedb_server``, its HTTP API in
``arcadedb_http``) and Neo4j 5, whose differences a ``dialect`` says; ``backend`` declares both."""
