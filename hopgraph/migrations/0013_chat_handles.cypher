// Chat handles: an entity named by a CamelCase handle ("LiHua", "🌟 HaileyJohnson") merges into the
// person of that name ("Li Hua") since this version. The entities named so are marked for resolution
// again; the next ingest's resolve step merges those whose person exists and clears the mark.
MATCH (e:Entity) WHERE e.name =~ '.*[a-z][A-Z].*' SET e.resolved = false;
