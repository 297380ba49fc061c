// Document sections: MERGEd by id, found by document; documents ingested before sections existed get
// one section holding all their chunks (embedded = false: the next ingest writes its vector).
CREATE CONSTRAINT section_id IF NOT EXISTS FOR (s:Section) REQUIRE s.id IS UNIQUE;
CREATE INDEX section_document IF NOT EXISTS FOR (s:Section) ON (s.document_id);
CREATE INDEX section_embedded IF NOT EXISTS FOR (s:Section) ON (s.embedded);
MATCH (d:Document) WHERE NOT (d)-[:HAS_SECTION]->() AND (d)-[:HAS_CHUNK]->()
MERGE (s:Section {id: 'sec_' + d.id})
SET s.document_id = d.id, s.title = '', s.path = '', s.level = 0, s.ord = 0, s.embedded = false
MERGE (d)-[:HAS_SECTION]->(s)
WITH d, s
MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
MERGE (s)-[:HAS_CHUNK]->(c);
