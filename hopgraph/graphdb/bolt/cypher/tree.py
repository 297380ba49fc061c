"""Cypher of the RAPTOR tree: ``(:Summary {level})-[:SUMMARIZES]->(:Chunk|:Summary)``; a branch is the
summaries sharing a ``branch`` id, complete once its root (``root = true``) is written."""

BRANCHES = "MATCH (s:Summary) WHERE s.root = true RETURN s.branch AS id, s.leaves AS leaves, s.centroid AS centroid"

CHUNK_IDS = "MATCH (c:Chunk) RETURN c.id AS id"

CHUNK_TEXTS = """
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
RETURN c.id AS id, c.text AS text
"""

DROP_BRANCHES = """
UNWIND $ids AS b
MATCH (s:Summary {branch: b})
DETACH DELETE s
"""

UPSERT_SUMMARIES = """
UNWIND $rows AS r
MERGE (s:Summary {id: r.id})
SET s += r.props
"""

LINK_CHUNKS = """
UNWIND $rows AS r
MATCH (s:Summary {id: r.parent}), (c:Chunk {id: r.child})
MERGE (s)-[:SUMMARIZES]->(c)
"""

LINK_SUMMARIES = """
UNWIND $rows AS r
MATCH (s:Summary {id: r.parent}), (c:Summary {id: r.child})
MERGE (s)-[:SUMMARIZES]->(c)
"""

NODES = """
UNWIND $ids AS id
MATCH (s:Summary {id: id})
OPTIONAL MATCH (s)-[:SUMMARIZES]->(c)
RETURN s.id AS id, s.branch AS branch, s.level AS level, s.text AS text, s.size AS size,
       s.central AS central, s.root AS root, collect(c.id) AS children
"""
