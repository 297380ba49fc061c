"""Evaluation of the query modes on BEIR-layout folders (``hopgraph eval``): metrics per mode and ablation,
reports that resume, gains over the best baseline with bootstrap intervals, section-level metrics, and the
GNN's training on a dataset's questions (``hopgraph train-gnn``). It reads ``retrieval``; nothing in
``retrieval`` reads it."""
