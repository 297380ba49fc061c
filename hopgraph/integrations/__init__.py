"""Retrievers for LLM frameworks, over a local ``Platform`` or a running ``hopgraph serve``.

``hopgraph.integrations.langchain.HopgraphRetriever`` (extra ``langchain``) and
``hopgraph.integrations.llamaindex.HopgraphRetriever`` (extra ``llamaindex``). Each module imports its
framework itself; nothing else in hopgraph imports them.
"""
