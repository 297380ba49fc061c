// Outcomes of scheduled re-ingestion runs, listed newest first by GET /jobs.
CREATE CONSTRAINT ingest_run_id IF NOT EXISTS FOR (r:IngestRun) REQUIRE r.id IS UNIQUE;
CREATE INDEX ingest_run_started IF NOT EXISTS FOR (r:IngestRun) ON (r.started_at);
