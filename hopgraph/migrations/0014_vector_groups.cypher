// Access groups in vector payloads: since this version every vector of a document (chunk, section,
// caption, image) carries its document's access groups, and a key with groups searches inside them.
// The documents ingested before are marked (vector_groups = false); the next ingest writes their
// groups into their vectors' payloads and clears the mark (nothing is re-embedded).
CREATE INDEX document_vector_groups IF NOT EXISTS FOR (d:Document) ON (d.vector_groups);
MATCH (d:Document) SET d.vector_groups = false;
