// Caption vectors: image documents ingested before each caption had its own vector are marked
// (captions_embedded = false); the next ingest writes their caption vectors and clears the mark.
CREATE INDEX document_captions IF NOT EXISTS FOR (d:Document) ON (d.captions_embedded);
MATCH (d:Document) WHERE d.kind = 'image' SET d.captions_embedded = false;
