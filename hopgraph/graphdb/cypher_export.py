"""Statements of ``hopgraph export``: every node of each label and every edge of each type, with the
properties a user's other tools need (not the internal bookkeeping: marks, chunk-id lists)."""

#: label -> the properties exported (``id`` first)
NODE_COLUMNS = {
    "Document": ("id", "source", "title", "kind", "uri", "status", "metadata_json"),
    "Chunk": ("id", "text", "ord", "n_tokens", "chat_json"),
    "Entity": ("id", "name", "type", "description"),
    "Community": ("id", "level", "title", "summary", "size"),
    "Section": ("id", "document_id", "title", "path", "level", "ord"),
    "Summary": ("id", "branch", "level", "text", "size"),
}
NODES = {label: f"MATCH (n:{label}) RETURN " + ", ".join(f"n.{c} AS {c}" for c in cols) + " ORDER BY id"
         for label, cols in NODE_COLUMNS.items()}

EDGES = {
    # from a document and from its section
    "HAS_CHUNK": "MATCH (a)-[:HAS_CHUNK]->(b:Chunk) RETURN a.id AS source, b.id AS target",
    "HAS_SECTION": "MATCH (a:Document)-[:HAS_SECTION]->(b:Section) RETURN a.id AS source, b.id AS target",
    "SUMMARIZES": "MATCH (a:Summary)-[:SUMMARIZES]->(b) RETURN a.id AS source, b.id AS target",
    "MENTIONS": "MATCH (a:Chunk)-[r:MENTIONS]->(b:Entity) RETURN a.id AS source, b.id AS target, r.count AS count",
    "RELATED": "MATCH (a:Entity)-[r:RELATED]->(b:Entity) RETURN a.id AS source, b.id AS target, r.id AS id, "
               "r.type AS type, r.weight AS weight, r.description AS description",
    "IN_COMMUNITY": "MATCH (a:Entity)-[:IN_COMMUNITY]->(b:Community) RETURN a.id AS source, b.id AS target",
    "PARENT": "MATCH (a:Community)-[:PARENT]->(b:Community) RETURN a.id AS source, b.id AS target",
}
