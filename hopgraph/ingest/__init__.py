"""Ingestion: sources → chunks → entities → graph and vector writes, resumable and incremental."""
