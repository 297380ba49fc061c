// Entities awaiting entity resolution (a killed ingest leaves some; the next run resolves them).
CREATE INDEX entity_resolved IF NOT EXISTS FOR (e:Entity) ON (e.resolved);
CREATE INDEX alias_entity IF NOT EXISTS FOR (a:Alias) ON (a.entity_id);
CREATE CONSTRAINT alias_id IF NOT EXISTS FOR (a:Alias) REQUIRE a.id IS UNIQUE;
