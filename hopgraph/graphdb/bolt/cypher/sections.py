"""Cypher of document sections, ``(:Document)-[:HAS_SECTION]->(:Section)-[:HAS_CHUNK]->(:Chunk)``, and
of the image documents whose captions have no vectors yet."""

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

UNCAPTIONED = """
MATCH (d:Document) WHERE d.captions_embedded = false
WITH d LIMIT $limit
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
WITH d, c ORDER BY c.ord
RETURN d.id AS id, collect(c.text) AS texts
"""

MARK_CAPTIONED = """
UNWIND $ids AS id
MATCH (d:Document {id: id})
SET d.captions_embedded = true
"""

CHUNK_SECTIONS = "MATCH (s:Section)-[:HAS_CHUNK]->(c:Chunk) RETURN c.id AS chunk, s.ord AS ord"
