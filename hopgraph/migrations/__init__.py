"""Versioned Cypher migrations (``NNNN_name.cypher``), shipped as package data so an installed
wheel migrates without a source checkout; ``graphdb.migrations`` applies them."""
