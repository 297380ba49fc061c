"""The query modes, one package each (the mode's classes on its public face, its own helpers beside them),
registered in ``retrieval.registry``:

- ``baseline``: dense, BM25 and their reciprocal-rank fusion;
- ``lightrag``: local, global, hybrid and mix (LightRAG's modes);
- ``raptor``: RAPTOR's collapsed tree;
- ``sections``: documents, then their sections;
- ``graph``: the first pass, entity seeding and expansion (PPR, beam or none), fused;
- ``subgraph``: pcst and gnn, on graph mode's expansion candidates (their torch parts built by their first query);
- ``image``: text -> images through captions (or CLIP) and the entity graph;
- ``auto``: one of the above per query, chosen from the query's features.

Every mode runs on the in-memory snapshot and degrades to a cheaper mode when a stage overruns
``stage_cap_ms``, saying so in the result's notes.
"""
