"""hopgraph: graph-database-backed retrieval (composition root)."""

__version__ = "0.1.0"
