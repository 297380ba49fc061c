// The change log: one GraphChange per committed graph version, naming the documents and entities it
// changed, so that a reader at version v can fetch only what changed since (the index state's deltas).
CREATE CONSTRAINT graph_change_version IF NOT EXISTS FOR (c:GraphChange) REQUIRE c.version IS UNIQUE;
