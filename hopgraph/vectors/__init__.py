"""Vectors: the Embedder protocol and implementations, the VectorStore over Qdrant, and the backends by
name (``vectors.registry``)."""
