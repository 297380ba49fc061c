// Entity types are re-voted only where mentions changed (typed = false), a mark of their own: the vote
// used to read the community marks (clustered = false), which only a community update clears, so with
// communities disabled every ingest re-voted every entity. Pending votes carry over from those marks.
CREATE INDEX entity_typed IF NOT EXISTS FOR (e:Entity) ON (e.typed);
MATCH (e:Entity) WHERE e.clustered = false SET e.typed = false;
