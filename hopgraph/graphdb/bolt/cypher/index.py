"""Statements of the change log and of the index state's exports (whole, or only what changed).

A committed change bumps the graph version once and records a ``GraphChange`` node naming the
documents and entities it changed; readers ask for the changes since the version they hold.
"""

# --- the change log ----------------------------------------------------------------------------
COMMIT = """
MERGE (m:GraphMeta {id: 'graph'})
SET m.version = coalesce(m.version, 0) + 1
WITH m
CREATE (c:GraphChange {version: m.version, documents: $documents, entities: $entities,
                       communities: $communities, regrouped: $regrouped, at: $at})
RETURN m.version AS version
"""

# communities describe the graph as of the version that recorded them
MARK_COMMUNITIES_BUILT = "MATCH (m:GraphMeta {id: 'graph'}) SET m.communities_version = m.version"

PRUNE_CHANGES = "MATCH (c:GraphChange) WHERE c.version <= $below DELETE c"

CHANGES_SINCE = """
MATCH (c:GraphChange) WHERE c.version > $version
RETURN c.version AS version, c.documents AS documents, c.entities AS entities, c.communities AS communities,
       c.regrouped AS regrouped
ORDER BY version
"""

# --- exports: everything -----------------------------------------------------------------------
CHUNKS = """
MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk)
WHERE d.status = 'complete'
RETURN c.id AS id, c.text AS text, d.id AS document_id, d.source AS source, d.title AS title,
       d.metadata_json AS metadata, d.kind AS kind, d.uri AS uri, c.chat_json AS chat
"""

MENTIONS = """
MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity)
RETURN c.id AS chunk_id, e.id AS entity_id, m.count AS count, m.label AS label
"""

ENTITIES = "MATCH (e:Entity) RETURN e.id AS id, e.name AS name, e.type AS type"

EDGES = """
MATCH (a:Entity)-[r:RELATED]->(b:Entity)
RETURN a.id AS source, b.id AS target, r.id AS id, r.type AS type, r.weight AS weight, r.label AS label,
       r.chunk_ids AS chunk_ids
"""

MEMBERSHIPS = """
MATCH (e:Entity)-[:IN_COMMUNITY]->(c:Community)
RETURN e.id AS entity_id, c.id AS community_id
"""

# --- exports: what changed ---------------------------------------------------------------------
CHUNKS_OF_DOCUMENTS = """
UNWIND $ids AS id
MATCH (d:Document {id: id})-[:HAS_CHUNK]->(c:Chunk)
WHERE d.status = 'complete'
RETURN c.id AS id, c.text AS text, d.id AS document_id, d.source AS source, d.title AS title,
       d.metadata_json AS metadata, d.kind AS kind, d.uri AS uri, c.chat_json AS chat
"""

MENTIONS_OF_CHUNKS = """
UNWIND $ids AS id
MATCH (c:Chunk {id: id})-[m:MENTIONS]->(e:Entity)
RETURN c.id AS chunk_id, e.id AS entity_id, m.count AS count, m.label AS label
"""

MENTIONS_OF_ENTITIES = """
UNWIND $ids AS id
MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity {id: id})
RETURN c.id AS chunk_id, e.id AS entity_id, m.count AS count, m.label AS label
"""

ENTITIES_OF = """
UNWIND $ids AS id
MATCH (e:Entity {id: id})
RETURN e.id AS id, e.name AS name, e.type AS type
"""

EDGES_FROM = """
UNWIND $ids AS id
MATCH (a:Entity {id: id})-[r:RELATED]->(b:Entity)
RETURN a.id AS source, b.id AS target, r.id AS id, r.type AS type, r.weight AS weight, r.label AS label,
       r.chunk_ids AS chunk_ids
"""

EDGES_TO = """
UNWIND $ids AS id
MATCH (a:Entity)-[r:RELATED]->(b:Entity {id: id})
RETURN a.id AS source, b.id AS target, r.id AS id, r.type AS type, r.weight AS weight, r.label AS label,
       r.chunk_ids AS chunk_ids
"""

MEMBERSHIPS_OF = """
UNWIND $ids AS id
MATCH (e:Entity {id: id})-[:IN_COMMUNITY]->(c:Community)
RETURN e.id AS entity_id, c.id AS community_id
"""
