"""Cypher of the documents whose vectors a migration marked for their access groups (``vector_groups =
false``, ``graphdb.access_edits``)."""

UNTAGGED_DOCUMENTS = """
MATCH (d:Document) WHERE d.vector_groups = false
RETURN d.id AS id, d.metadata_json AS metadata_json
ORDER BY d.id LIMIT $limit
"""

MARK_TAGGED = """
UNWIND $ids AS id
MATCH (d:Document {id: id})
SET d.vector_groups = true
"""
