"""The parts several modes (and the retriever) share: the first pass's weights (``first_pass``), the chunk and
entity signals (``signals``: dense, BM25, seeds, PPR), the PPR walk (``ppr``), fusion, title and entity
bridges, BM25 (``keyword``), question splitting (``decompose``), reranking, diversity, confidence, NLI
clusters, the cited context and answer prompts, and the explanation subgraph. A mode's own helpers live in
its folder, ``modes/<mode>/``."""
