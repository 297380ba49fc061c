"""The floor of hopgraph: records, settings, errors and shared text/number helpers.

Imports nothing of the project outside ``hopgraph.core`` (checked by the layer contract).
"""
