"""Vectors: the Embedder protocol and implementations, and the VectorStore over Qdrant."""
