// Aliases and access groups: since this version entity resolution merges two entities only when every
// document that mentions either has the same access groups, an alias records them (`groups`: joined by
// ",", "" for public documents), and a later ingest maps a name straight to its entity by the aliases of
// public merges alone. An alias recorded before has no groups: one whose entity a document with groups
// mentions may come from a merge across groups and is marked "?" (never applied: resolution merges that
// name again, inside one group); the others are public. The documents with groups are found in their
// metadata as written (JSON with sorted keys), without a regular expression. The merges themselves are
// kept until their documents are ingested again (docs/security.md).
MATCH (d:Document) WHERE d.metadata_json CONTAINS '"groups": ["'
MATCH (d)-[:HAS_CHUNK]->(:Chunk)-[:MENTIONS]->(e:Entity)
WITH DISTINCT e.id AS eid
MATCH (a:Alias {entity_id: eid}) WHERE a.groups IS NULL
SET a.groups = '?';
MATCH (a:Alias) WHERE a.groups IS NULL SET a.groups = '';
