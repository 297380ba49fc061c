"""GPU module: graph snapshots to PyTorch Geometric, PPR, PCST and GNN scoring (not built yet)."""
