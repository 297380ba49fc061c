"""The in-memory graph backend (``graph.backend = "memory"``): every role in dicts, nothing kept."""
