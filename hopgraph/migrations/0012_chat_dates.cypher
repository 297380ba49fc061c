// Chat turn dates: "on the 15th" dates a turn since this version. The documents of conversations
// ingested before are marked (chats_dated = false); the next ingest resolves their chunks' turn dates
// again from the stored text and session, and clears the mark (nothing is re-chunked or re-embedded).
CREATE INDEX document_chats_dated IF NOT EXISTS FOR (d:Document) ON (d.chats_dated);
MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WHERE c.chat_json IS NOT NULL AND c.chat_json <> ''
SET d.chats_dated = false;
