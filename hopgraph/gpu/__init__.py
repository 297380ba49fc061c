"""GPU module: the entity graph as PyTorch Geometric data, batched PPR, PCST subgraphs and a
query-conditioned GNN scorer. Every path runs on CUDA when there is one and on the CPU otherwise."""
