"""Cypher of incremental community maintenance: which entities changed since their communities
were computed, the community chains of entities, and membership edits."""

# entities whose neighbourhood changed since communities were last computed (``clustered = false``
# is set when an entity is written by an ingest, loses chunks, or gains a merged alias)
UNCLUSTERED = "MATCH (e:Entity) WHERE e.clustered = false RETURN e.id AS id"

MARK_UNCLUSTERED = """
UNWIND $ids AS id
MATCH (e:Entity {id: id})
SET e.clustered = false, e.typed = false
"""

MARK_CLUSTERED = """
UNWIND $ids AS id
MATCH (e:Entity {id: id})
SET e.clustered = true
"""

MARK_ALL_CLUSTERED = "MATCH (e:Entity) WHERE e.clustered = false SET e.clustered = true"

# every community an entity belongs to, with its level, parent and whether it has children
CHAINS = """
UNWIND $ids AS eid
MATCH (:Entity {id: eid})-[:IN_COMMUNITY]->(c:Community)
OPTIONAL MATCH (c)-[:PARENT]->(p:Community)
OPTIONAL MATCH (k:Community)-[:PARENT]->(c)
WITH eid, c, p, count(k) AS children
RETURN eid AS entity_id, c.id AS community_id, c.level AS level, p.id AS parent_id, children
"""

MEMBERS = """
UNWIND $ids AS cid
MATCH (c:Community {id: cid})<-[:IN_COMMUNITY]-(e:Entity)
RETURN cid AS community_id, e.id AS entity_id
"""

DESCRIPTIONS = """
UNWIND $ids AS cid
MATCH (c:Community {id: cid})
OPTIONAL MATCH (c)-[:PARENT]->(p:Community)
RETURN c.id AS id, c.level AS level, c.size AS size, c.title AS title, c.summary AS summary,
       c.key_ids AS key_ids, c.quoted AS quoted, p.id AS parent_id
"""

REMOVE_MEMBERS = """
UNWIND $rows AS r
MATCH (:Entity {id: r.entity_id})-[m:IN_COMMUNITY]->(:Community {id: r.community_id})
DELETE m
"""

CLEAR_STALE_SUMMARIES = """
UNWIND $ids AS id
MATCH (c:Community {id: id})
SET c.stale_summary = null
"""
