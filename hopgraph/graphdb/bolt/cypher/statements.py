"""Every Cypher statement of the Bolt adapter, in one module.

Properties are SET one by one rather than with ``SET n += map``: on ArcadeDB the map form is slower per
row.

Patterns start at the node they look up by id (``MATCH (c:Chunk {id: $id})<-[:HAS_CHUNK]-(d)``, not
``MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk {id: $id})``): ArcadeDB plans a pattern from its left end,
so the second form scans every Document per row, and its cost grows with the corpus instead of with
the ids looked up.

The statements run unchanged on Neo4j 5 and ArcadeDB. Writes are ``UNWIND $rows``
batches (rows de-duplicated in Python first) executed inside managed write transactions.
"""

# --- meta --------------------------------------------------------------------------------------
GET_VERSION = "MATCH (m:GraphMeta {id: 'graph'}) RETURN m.version AS version"

COUNT_LABEL = {
    label: f"MATCH (n:{label}) RETURN count(n) AS n"
    for label in ("Document", "Chunk", "Entity", "Community", "Summary")
}
COUNT_REL = {
    rel: f"MATCH ()-[r:{rel}]->() RETURN count(r) AS n"
    for rel in ("HAS_CHUNK", "MENTIONS", "RELATED", "IN_COMMUNITY")
}

# --- upserts -----------------------------------------------------------------------------------
UPSERT_DOCUMENTS = """
UNWIND $rows AS r
MERGE (d:Document {id: r.id})
SET d.source = r.source, d.title = r.title, d.kind = r.kind, d.uri = r.uri, d.metadata_json = r.metadata_json,
    d.status = r.status
"""

UPSERT_CHUNKS = """
UNWIND $rows AS r
MATCH (d:Document {id: r.document_id})
MERGE (c:Chunk {id: r.id})
SET c.text = r.text, c.ord = r.ord, c.n_tokens = r.n_tokens, c.chat_json = r.chat_json
MERGE (d)-[:HAS_CHUNK]->(c)
"""

UPSERT_ENTITIES = """
UNWIND $rows AS r
MERGE (e:Entity {id: r.id})
ON CREATE SET e.name = r.name, e.type = r.type, e.description = r.description,
    e.description_chunk = r.description_chunk, e.resolved = false
WITH e, r, r.description_chunk <> '' AND (coalesce(e.description_chunk, '') = ''
                                         OR r.description_chunk <= e.description_chunk) AS smaller
SET e.clustered = false, e.typed = false,
    e.description = CASE WHEN smaller THEN r.description ELSE e.description END,
    e.description_chunk = CASE WHEN smaller THEN r.description_chunk ELSE e.description_chunk END
"""

UPSERT_MENTIONS = """
UNWIND $rows AS r
MATCH (c:Chunk {id: r.chunk_id})
MATCH (e:Entity {id: r.entity_id})
MERGE (c)-[m:MENTIONS]->(e)
SET m.count = r.count, m.label = r.label
"""

SET_DOCUMENT_STATUS = """
UNWIND $rows AS r
MATCH (d:Document {id: r.id})
SET d.status = r.status, d.content_hash = r.content_hash
"""

# --- reads -------------------------------------------------------------------------------------
DOCUMENT_STATES = """
UNWIND $ids AS id
MATCH (d:Document {id: id})
RETURN d.id AS id, d.status AS status, d.content_hash AS content_hash, d.source AS source
"""

UNFINISHED_DOCUMENTS = """
MATCH (d:Document)
WHERE d.status IN ['pending', 'deleting']
RETURN d.id AS id, d.status AS status, d.source AS source
"""

DOCUMENTS_UNDER = """
MATCH (d:Document)
WHERE d.source STARTS WITH $prefix
RETURN d.id AS id, d.source AS source, d.status AS status, d.content_hash AS content_hash
"""

# chunks of the given documents that are not in the keep-list, with the entities they mention
STALE_CHUNKS = """
UNWIND $rows AS r
MATCH (d:Document {id: r.document_id})-[:HAS_CHUNK]->(c:Chunk)
WHERE NOT c.id IN r.keep
OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity)
RETURN c.id AS chunk_id, collect(e.id) AS entity_ids
"""

# entities among $ids whose every mention comes from a chunk in $chunk_ids
ORPHANED_BY = """
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})
OPTIONAL MATCH (e)<-[:MENTIONS]-(c:Chunk)
WITH e, collect(c.id) AS chunks
WHERE all(x IN chunks WHERE x IN $chunk_ids)
RETURN e.id AS id
"""

# --- deletes -----------------------------------------------------------------------------------
DELETE_CHUNKS = """
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
DETACH DELETE c
"""

DELETE_ENTITIES = """
UNWIND $ids AS id
MATCH (e:Entity {id: id})
DETACH DELETE e
"""

DELETE_DOCUMENTS = """
UNWIND $ids AS id
MATCH (d:Document {id: id})
DETACH DELETE d
"""

# --- migrations --------------------------------------------------------------------------------
APPLIED_MIGRATIONS = """
MATCH (m:Migration)
RETURN m.version AS version, m.name AS name, m.checksum AS checksum
ORDER BY m.version
"""

RECORD_MIGRATION = """
MERGE (m:Migration {version: $version})
ON CREATE SET m.name = $name, m.checksum = $checksum, m.applied_at = $applied_at
RETURN m.checksum AS checksum
"""

# --- relations and communities -----------------------------------------------------------------
# support (chunk ids) accumulates across documents; weight = number of supporting chunks; the
# description is the one from the smallest supporting chunk (the same whatever the ingest order)
UPSERT_RELATIONS = """
UNWIND $rows AS r
MATCH (a:Entity {id: r.source_id})
MATCH (b:Entity {id: r.target_id})
MERGE (a)-[x:RELATED {id: r.id}]->(b)
ON CREATE SET x.type = r.type, x.description = r.description, x.label = r.label, x.chunk_ids = r.chunk_ids
ON MATCH SET x.label = CASE WHEN r.description_chunk <> ''
                       AND all(c IN x.chunk_ids WHERE r.description_chunk <= c)
                       THEN r.label ELSE x.label END,
    x.description = CASE WHEN r.description_chunk <> ''
                    AND all(c IN x.chunk_ids WHERE r.description_chunk <= c)
                    THEN r.description ELSE x.description END,
    x.chunk_ids = [c IN x.chunk_ids WHERE NOT c IN r.chunk_ids] + r.chunk_ids
SET x.weight = size(x.chunk_ids)
"""

UPSERT_COMMUNITIES = """
UNWIND $rows AS r
MERGE (c:Community {id: r.id})
SET c.level = r.level, c.title = r.title, c.summary = r.summary, c.size = r.size, c.key_ids = r.key_ids,
    c.quoted = r.quoted, c.stale_summary = null
"""

LINK_COMMUNITY_PARENTS = """
UNWIND $rows AS r
MATCH (c:Community {id: r.id})
MATCH (p:Community {id: r.parent_id})
MERGE (c)-[:PARENT]->(p)
"""

LINK_COMMUNITY_MEMBERS = """
UNWIND $rows AS r
MATCH (e:Entity {id: r.entity_id})
MATCH (c:Community {id: r.community_id})
MERGE (e)-[:IN_COMMUNITY]->(c)
"""

# relations touching the given entities, and whether removing $chunk_ids leaves them unsupported
RELATIONS_SUPPORTED_BY = """
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})-[r:RELATED]-()
WITH DISTINCT r
WHERE any(c IN r.chunk_ids WHERE c IN $chunk_ids)
RETURN r.id AS id, startNode(r).id AS source_id, endNode(r).id AS target_id,
       all(c IN r.chunk_ids WHERE c IN $chunk_ids) AS dead
"""

COMMUNITIES_OF = """
UNWIND $ids AS eid
MATCH (:Entity {id: eid})-[:IN_COMMUNITY]->(c:Community)
RETURN DISTINCT c.id AS id
"""

PRUNE_RELATION_SUPPORT = """
UNWIND $ids AS eid
MATCH (:Entity {id: eid})-[r:RELATED]-()
WITH DISTINCT r
WHERE any(c IN r.chunk_ids WHERE c IN $chunk_ids)
SET r.chunk_ids = [c IN r.chunk_ids WHERE NOT c IN $chunk_ids]
SET r.weight = size(r.chunk_ids), r.stale_description = true
"""

# entities that lose chunks may quote them: their descriptions, and the summaries of their
# communities, are rewritten from what remains (ingest.graph_edits.refreshed_description)
MARK_STALE_DESCRIPTIONS = """
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})
SET e.stale_description = true, e.clustered = false, e.typed = false
WITH e
OPTIONAL MATCH (e)-[:IN_COMMUNITY]->(c:Community)
SET c.stale_summary = true
"""

STALE_ENTITIES = """
MATCH (e:Entity)
WHERE e.stale_description = true
OPTIONAL MATCH (e)<-[:MENTIONS]-(c:Chunk)
WITH e, c ORDER BY c.id
WITH e, collect(c.text) AS texts, collect(c.id) AS ids
RETURN e.id AS id, e.name AS name, e.description AS description, texts[0..3] AS texts, ids[0..3] AS ids
"""

STALE_RELATIONS = """
MATCH (a:Entity)
WHERE a.stale_description = true
MATCH (a)-[r:RELATED]-(:Entity)
WHERE r.stale_description = true
WITH DISTINCT r
RETURN r.id AS id, startNode(r).id AS source_id, endNode(r).id AS target_id, startNode(r).name AS source,
       endNode(r).name AS target, r.type AS type, r.description AS description, r.chunk_ids AS chunk_ids
"""

CHUNK_TEXTS = """
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
RETURN c.id AS id, c.text AS text
"""

SET_ENTITY_DESCRIPTIONS = """
UNWIND $rows AS r
MATCH (e:Entity {id: r.id})
OPTIONAL MATCH (e)<-[:MENTIONS]-(c:Chunk)
WITH e, r, min(c.id) AS first
SET e.description = r.description, e.description_chunk = first, e.stale_description = null
"""

SET_RELATION_DESCRIPTIONS = """
UNWIND $rows AS r
MATCH (:Entity {id: r.source_id})-[x:RELATED {id: r.id}]->(:Entity {id: r.target_id})
SET x.description = r.description, x.stale_description = null
"""

STALE_SUMMARIES = "MATCH (c:Community) WHERE c.stale_summary = true RETURN c.id AS id"

# relations are reached through their indexed endpoints: ArcadeDB does not use relationship
# property indexes, and MATCH ()-[r {id: $id}]->() scans every edge (about 1 s per id at 300k edges)
DELETE_RELATIONS = """
UNWIND $rows AS r
MATCH (:Entity {id: r.source_id})-[x:RELATED {id: r.id}]->(:Entity {id: r.target_id})
DELETE x
"""

REFRESH_COMMUNITIES = """
UNWIND $ids AS cid
MATCH (c:Community {id: cid})
OPTIONAL MATCH (c)<-[m:IN_COMMUNITY]-(:Entity)
WITH c, count(m) AS n
SET c.size = n
WITH c, n WHERE n = 0 AND NOT (c)<-[:PARENT]-()
DETACH DELETE c
"""

TOPOLOGY_NODES = "MATCH (e:Entity) RETURN e.id AS id, e.name AS name, e.type AS type ORDER BY e.id"

TOPOLOGY_EDGES = """
MATCH (a:Entity)-[r:RELATED]->(b:Entity)
RETURN a.id AS source, b.id AS target, r.id AS id, r.type AS type, r.weight AS weight, r.label AS label
"""

RELATION_DESCRIPTIONS = """
UNWIND $rows AS ref
MATCH (:Entity {id: ref.source_id})-[r:RELATED {id: ref.id}]->(:Entity {id: ref.target_id})
RETURN r.id AS id, r.description AS description
"""

COMMUNITY_IDS = "MATCH (c:Community) RETURN c.id AS id, c.level AS level"

LEVEL0_MEMBERSHIP = """
MATCH (e:Entity)-[:IN_COMMUNITY]->(c:Community {level: 0})
RETURN e.id AS entity_id, c.id AS community_id
"""

DELETE_COMMUNITIES = """
UNWIND $ids AS id
MATCH (c:Community {id: id})
DETACH DELETE c
"""

MIGRATION_CHECKSUM = "MATCH (m:Migration {version: $version}) RETURN m.checksum AS checksum"

# --- entity resolution -------------------------------------------------------------------------
# the aliases of public merges (groups '': no document of theirs has access groups; those recorded before
# aliases kept groups were given theirs by migration 0015_alias_groups)
ALIASES = "MATCH (a:Alias) WHERE a.groups = '' RETURN a.id AS id, a.entity_id AS entity_id"

# the documents mentioning each entity, by their metadata (its access groups: core.access.groups_of)
MENTION_DOCUMENTS = """
UNWIND $ids AS eid
MATCH (:Entity {id: eid})<-[:MENTIONS]-(:Chunk)<-[:HAS_CHUNK]-(d:Document)
RETURN DISTINCT eid AS entity_id, d.metadata_json AS metadata_json
"""

MENTIONS_OF_ENTITIES = """
UNWIND $ids AS eid
MATCH (:Entity {id: eid})<-[m:MENTIONS]-(c:Chunk)
RETURN eid AS entity_id, c.id AS chunk_id, m.count AS count, m.label AS label
"""

# the labels an entity's mentions vote with (``hopgraph.core.records.majority_label``)
TYPE_VOTES = """
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})<-[m:MENTIONS]-(:Chunk)
WHERE m.label IS NOT NULL AND m.label <> ''
RETURN eid AS id, e.type AS type, m.label AS label, m.count AS count
"""

SET_ENTITY_TYPES = """
UNWIND $rows AS r
MATCH (e:Entity {id: r.id})
SET e.type = r.type
"""

# entities whose mentions changed since their type was last voted (``typed = false`` is set where
# ``clustered = false`` is: written by an ingest, losing chunks, gaining a merged alias)
UNTYPED = "MATCH (e:Entity) WHERE e.typed = false RETURN e.id AS id"

MARK_TYPED = """
UNWIND $ids AS id
MATCH (e:Entity {id: id})
SET e.typed = true
"""

RELATIONS_OF_ENTITIES = """
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})-[r:RELATED]-(:Entity)
RETURN DISTINCT r.id AS id, startNode(r).id AS source_id, endNode(r).id AS target_id, r.type AS type,
       r.description AS description, r.chunk_ids AS chunk_ids, r.label AS label
"""

ADD_MENTIONS = """
UNWIND $rows AS r
MATCH (c:Chunk {id: r.chunk_id})
MATCH (e:Entity {id: r.entity_id})
MERGE (c)-[m:MENTIONS]->(e)
SET m.count = coalesce(m.count, 0) + r.count
"""

RECORD_ALIASES = """
UNWIND $rows AS r
MERGE (a:Alias {id: r.id})
SET a.entity_id = r.entity_id, a.name = r.name, a.groups = r.groups
WITH a, r
MATCH (e:Entity {id: r.entity_id})
SET e.aliases = [x IN coalesce(e.aliases, []) WHERE x <> r.name] + r.name
"""

# aliases that pointed at a merged-away entity now point at its canonical entity, with its merge's groups
REPOINT_ALIASES = """
UNWIND $rows AS r
MATCH (a:Alias {entity_id: r.old})
SET a.entity_id = r.new, a.groups = r.groups
"""

UNRESOLVED_ENTITIES = """
MATCH (e:Entity)
WHERE e.resolved = false
RETURN e.id AS id, e.name AS name, e.type AS type
"""

MARK_RESOLVED = """
UNWIND $ids AS id
MATCH (e:Entity {id: id})
SET e.resolved = true
"""

COMMUNITY_STATE = "MATCH (m:GraphMeta {id: 'graph'}) RETURN m.version AS version, m.communities_version AS built"
