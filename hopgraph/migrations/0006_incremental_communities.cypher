// Entities whose neighbourhood changed since their communities were computed (clustered = false):
// the next community update re-clusters only around them.
CREATE INDEX entity_clustered IF NOT EXISTS FOR (e:Entity) ON (e.clustered);
