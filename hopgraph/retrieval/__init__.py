"""Retrieval: query modes built from small parts (seeding, expansion, fusion, citations)."""
