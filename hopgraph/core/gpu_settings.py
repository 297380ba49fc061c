"""Settings of gpu/: the PyG export of the entity graph, batched PPR, PCST subgraphs and the GNN scorer
(a part of ``hopgraph.core.settings.Settings``, kept apart to keep that module readable)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class GpuSettings(BaseModel):
    """gpu/: the PyG export of the entity graph, batched PPR, PCST subgraphs and the GNN scorer."""

    model_config = ConfigDict(frozen=True)

    device: Literal["auto", "cpu", "cuda"] = Field(default="auto", description="auto = cuda when torch sees one.")
    ppr_backend: Literal["auto", "torch", "scipy"] = Field(
        default="auto", description="PPR of graph mode: torch sparse (on the device) or scipy; auto = torch on cuda.")
    mixed_precision: bool = Field(default=True, description="bf16 autocast for GNN inference on cuda, on subgraphs "
                                  "of 2M edges or more (gpu.gnn.MIXED_PRECISION_MIN_EDGES: below, fp32 is faster).")
    similar_k: int = Field(default=5, ge=0, le=100, description="Similarity edges per candidate entity in a "
                           "query's subgraph (to its nearest other candidates).")
    similar_min: float = Field(default=0.75, ge=-1, le=1, description="Cosine of a similarity edge.")
    candidates: int = Field(default=300, ge=10, description="Expansion candidates the PCST and GNN modes score.")
    pcst_topk: int = Field(default=10, ge=0, description="PCST: entities with a prize (G-Retriever top-k).")
    pcst_topk_edges: int = Field(default=10, ge=0, description="PCST: relations with a prize.")
    pcst_edge_cost: float = Field(default=0.5, ge=0, description="PCST: cost of keeping an edge.")
    gnn_checkpoint: Path | None = Field(default=None, description="GNN scorer file (default: <data_dir>/gnn.pt).")
    allow_stale_checkpoint: bool = Field(
        default=False, description="Use a GNN trained on an older graph version (the model is inductive).")
    gnn_weight: float | None = Field(
        default=None, ge=0, description="Weight of the GNN signal in mode gnn's fusion (default: the checkpoint's, "
                                        "chosen on its validation queries).")
    pcst_weight: float = Field(default=1.0, ge=0, description="Weight of the PCST signal in mode pcst's fusion.")
    gnn_hidden: int = Field(default=64, ge=8, description="GNN scorer: hidden size (read by hopgraph train-gnn).")
    gnn_heads: int = Field(
        default=2, ge=1, description="GNN scorer: attention heads per GATv2 layer (read by hopgraph train-gnn).")
    gnn_layers: int = Field(
        default=2, ge=1, le=4, description="GNN scorer: message-passing layers (read by hopgraph train-gnn).")
