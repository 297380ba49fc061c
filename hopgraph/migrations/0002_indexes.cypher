// Lookups by status (resume of interrupted ingests), source and entity name.
CREATE INDEX document_status IF NOT EXISTS FOR (d:Document) ON (d.status);
CREATE INDEX document_source IF NOT EXISTS FOR (d:Document) ON (d.source);
CREATE INDEX entity_name IF NOT EXISTS FOR (e:Entity) ON (e.name);
