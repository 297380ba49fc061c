"""The application layer: the Platform facade over the stores, ingest and retrieval."""
