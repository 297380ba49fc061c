"""Cypher of document sections: ``(:Document)-[:HAS_SECTION]->(:Section)-[:HAS_CHUNK]->(:Chunk)``."""

DROP_SECTIONS = """
UNWIND $ids AS id
MATCH (:Document {id: id})-[:HAS_SECTION]->(s:Section)
DETACH DELETE s
"""

UPSERT_SECTIONS = """
UNWIND $rows AS r
MATCH (d:Document {id: r.document_id})
MERGE (s:Section {id: r.id})
SET s.document_id = r.document_id, s.title = r.title, s.path = r.path, s.level = r.level, s.ord = r.ord,
    s.embedded = true
MERGE (d)-[:HAS_SECTION]->(s)
"""

LINK_CHUNKS = """
UNWIND $rows AS r
MATCH (s:Section {id: r.section}), (c:Chunk {id: r.chunk})
MERGE (s)-[:HAS_CHUNK]->(c)
"""

SECTIONS_OF = """
UNWIND $ids AS id
MATCH (:Document {id: id})-[:HAS_SECTION]->(s:Section)
OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c:Chunk)
WITH s, c ORDER BY c.ord
RETURN s.id AS id, s.document_id AS document_id, s.title AS title, s.path AS path, s.level AS level,
       s.ord AS ord, collect(c.id) AS chunk_ids
"""

UNEMBEDDED = """
MATCH (s:Section) WHERE s.embedded = false
WITH s LIMIT $limit
OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c:Chunk)
RETURN s.id AS id, s.document_id AS document_id, s.title AS title, s.path AS path, s.level AS level,
       s.ord AS ord, collect(c.id) AS chunk_ids
"""

MARK_EMBEDDED = """
UNWIND $ids AS id
MATCH (s:Section {id: id})
SET s.embedded = true
"""

CHUNK_SECTIONS = "MATCH (s:Section)-[:HAS_CHUNK]->(c:Chunk) RETURN c.id AS chunk, s.ord AS ord"
