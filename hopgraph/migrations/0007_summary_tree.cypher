// The RAPTOR tree: summaries are MERGEd by id and dropped by branch.
CREATE CONSTRAINT summary_id IF NOT EXISTS FOR (s:Summary) REQUIRE s.id IS UNIQUE;
CREATE INDEX summary_branch IF NOT EXISTS FOR (s:Summary) ON (s.branch);
