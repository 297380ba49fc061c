"""Cypher of the chat contexts of conversation chunks (``Chunk.chat_json``) re-dated after the dating
rules changed: the documents a migration marked (``chats_dated = false``) and their chunks."""

UNDATED_CHATS = """
MATCH (d:Document) WHERE d.chats_dated = false
WITH d LIMIT $limit
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
RETURN d.id AS document_id, c.id AS id, c.text AS text, c.chat_json AS chat
"""

WRITE_CHAT_CONTEXTS = """
UNWIND $rows AS r
MATCH (c:Chunk {id: r.id})
SET c.chat_json = r.chat_json
"""

MARK_CHATS_DATED = """
UNWIND $ids AS id
MATCH (d:Document {id: id})
SET d.chats_dated = true
"""
