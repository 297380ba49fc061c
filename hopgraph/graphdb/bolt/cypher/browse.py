"""The Cypher of the exploration look-ups (``graphdb.bolt.browse``): documents, entities, neighbourhoods,
communities, provenance and the log of scheduled runs. Ingest and retrieval use ``graphdb.cypher``."""

from hopgraph.core.records import CO_OCCURS

LIST_DOCUMENTS = """
MATCH (d:Document)
RETURN d.id AS id, d.source AS source, d.status AS status, d.content_hash AS content_hash,
       d.metadata_json AS metadata_json
ORDER BY d.source
SKIP $skip LIMIT $limit
"""

DOCUMENT_METADATA = """
UNWIND $ids AS id
MATCH (d:Document {id: id})
RETURN d.id AS id, d.metadata_json AS metadata_json
"""

CHUNKS_OF_ENTITIES = """
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})<-[m:MENTIONS]-(c:Chunk)<-[:HAS_CHUNK]-(d:Document)
WHERE d.status = 'complete'
RETURN eid AS entity_id, e.name AS name, c.id AS chunk_id, c.text AS text, c.ord AS ord,
       d.id AS document_id, d.source AS source, m.count AS count
"""

# --- provenance and neighbourhoods -------------------------------------------------------------
PROVENANCE_OF_RELATIONS = """
UNWIND $rows AS ref
MATCH (:Entity {id: ref.source_id})-[r:RELATED {id: ref.id}]->(:Entity {id: ref.target_id})
UNWIND r.chunk_ids AS cid
MATCH (c:Chunk {id: cid})<-[:HAS_CHUNK]-(d:Document)
RETURN ref.id AS relation_id, c.id AS chunk_id, c.text AS text, c.ord AS ord, d.id AS document_id,
       d.source AS source
"""

# one hop of a breadth-first expansion: the distinct neighbours of a frontier
NEIGHBOUR_IDS = """
UNWIND $ids AS eid
MATCH (:Entity {id: eid})-[:RELATED]-(n:Entity)
RETURN DISTINCT n.id AS id
"""

# (4-5x faster than two round trips, and than a variable-length pattern by far)
TWO_HOP_IDS = """
UNWIND $ids AS eid
MATCH (:Entity {id: eid})-[:RELATED]-(n1:Entity)
WITH DISTINCT n1
OPTIONAL MATCH (n1)-[:RELATED]-(n2:Entity)
RETURN collect(DISTINCT n1.id) AS first, collect(DISTINCT n2.id) AS second
"""

# --- API look-ups --------------------------------------------------------------------------------
ENTITY = """
MATCH (e:Entity {id: $id})
OPTIONAL MATCH (e)<-[m:MENTIONS]-(c:Chunk)
WITH e, count(c) AS chunks, sum(m.count) AS mentions
OPTIONAL MATCH (e)-[:IN_COMMUNITY]->(k:Community)
RETURN e.id AS id, e.name AS name, e.type AS type, e.description AS description,
       chunks, mentions, collect(k.id) AS communities
"""

DOCUMENT_NODES = """
MATCH (:Document {id: $id})-[:HAS_CHUNK]->(:Chunk)-[:MENTIONS]->(e:Entity)
RETURN DISTINCT e.id AS id, e.name AS name, e.type AS type, e.description AS description
ORDER BY id
"""

RELATIONS_AMONG = """
MATCH (a:Entity)-[r:RELATED]->(b:Entity)
WHERE a.id IN $ids AND b.id IN $ids
RETURN a.id AS source, b.id AS target, r.type AS type, r.description AS description, r.id AS id
ORDER BY id
"""

ENTITY_NEIGHBOURS = """
MATCH (e:Entity {id: $id})-[r:RELATED]-(n:Entity)
RETURN n.id AS id, n.name AS name, n.type AS type, r.type AS relation, r.weight AS weight,
       r.description AS description, startNode(r).id = $id AS outgoing
ORDER BY r.weight DESC, n.id
SKIP $skip LIMIT $limit
"""

LIST_COMMUNITIES = """
MATCH (c:Community)
WHERE $level IS NULL OR c.level = $level
RETURN c.id AS id, c.level AS level, c.title AS title, c.summary AS summary, c.size AS size
ORDER BY c.level, c.size DESC, c.id
SKIP $skip LIMIT $limit
"""

COMMUNITY = """
MATCH (c:Community {id: $id})
OPTIONAL MATCH (c)-[:PARENT]->(p:Community)
OPTIONAL MATCH (c)<-[:PARENT]-(k:Community)
RETURN c.id AS id, c.level AS level, c.title AS title, c.summary AS summary, c.size AS size,
       p.id AS parent_id, collect(k.id) AS children
"""

COMMUNITY_MEMBER_ENTITIES = """
MATCH (:Community {id: $id})<-[:IN_COMMUNITY]-(e:Entity)
RETURN e.id AS id, e.name AS name, e.type AS type
ORDER BY e.name, e.id
LIMIT $limit
"""

# --- scheduled re-ingestion runs (not graph content: no version bump) ---------------------------
RECORD_INGEST_RUN = """
MERGE (r:IngestRun {id: $id})
SET r.source = $source, r.status = $status, r.started_at = $started_at, r.finished_at = $finished_at,
    r.started = $started, r.finished = $finished,
    r.duration_s = $duration_s, r.report_json = $report_json, r.error = $error
"""

DELETE_INGEST_RUN = "MATCH (r:IngestRun {id: $id}) DELETE r"

PRUNE_INGEST_RUNS = """
MATCH (r:IngestRun {source: $source})
WITH r ORDER BY r.started_at DESC
SKIP $keep
DELETE r
"""

LIST_INGEST_RUNS = """
MATCH (r:IngestRun)
WHERE $source IS NULL OR r.source = $source
RETURN r.id AS id, r.source AS source, r.status AS status, r.started_at AS started_at,
       r.finished_at AS finished_at, r.duration_s AS duration_s, r.report_json AS report_json, r.error AS error
ORDER BY r.started_at DESC
LIMIT $limit
"""

# the counts hopgraph doctor compares
HEALTH_COUNTS = {
    "chunks": "MATCH (c:Chunk) RETURN count(c) AS n",
    "typed_relations": f"MATCH ()-[r:RELATED]->() WHERE r.type <> '{CO_OCCURS}' RETURN count(r) AS n",
    "all_relations": "MATCH ()-[r:RELATED]->() RETURN count(r) AS n",
    "image_documents": "MATCH (d:Document) WHERE d.kind = 'image' AND d.status = 'complete' RETURN count(d) AS n",
    "orphan_entities": "MATCH (e:Entity) WHERE NOT (e)<-[:MENTIONS]-() RETURN count(e) AS n",
    "orphan_chunks": "MATCH (c:Chunk) WHERE NOT (c)<-[:HAS_CHUNK]-() RETURN count(c) AS n",
    "empty_communities": "MATCH (c:Community) WHERE NOT (c)<-[:IN_COMMUNITY]-() AND NOT (c)<-[:PARENT]-() "
                         "RETURN count(c) AS n",
}
