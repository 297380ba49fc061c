"""Settings of modes ``pcst`` and ``gnn`` (``[retrieval.modes.pcst]``, ``[retrieval.modes.gnn]``): the candidate
subgraph each builds on graph mode's pass, and what each does with it. Where they run (device, precision) is
``gpu.*``."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field


class SubgraphOptions(BaseModel):
    """The candidate subgraph of a query: graph's expansion candidates and the edges among them."""

    model_config = ConfigDict(frozen=True)
    MODE: ClassVar[str] = ""

    candidates: int = Field(default=300, ge=10, description="Expansion candidates the mode scores (a query's "
                            "subgraph, and its memory, follows this, never the size of the corpus).")
    similar_k: int = Field(default=5, ge=0, le=100, description="Similarity edges per candidate entity in a "
                           "query's subgraph (to its nearest other candidates).")
    similar_min: float = Field(default=0.75, ge=-1, le=1, description="Cosine of a similarity edge.")


class PcstModeSettings(SubgraphOptions):
    """Mode ``pcst``: a prize-collecting Steiner tree (G-Retriever) over the candidate subgraph."""

    MODE: ClassVar[str] = "pcst"

    topk: int = Field(default=10, ge=0, description="Entities with a prize (G-Retriever top-k).")
    topk_edges: int = Field(default=10, ge=0, description="Relations with a prize.")
    edge_cost: float = Field(default=0.5, ge=0, description="Cost of keeping an edge.")
    weight: float = Field(default=1.0, ge=0, description="Weight of the PCST signal in the mode's fusion.")


class GnnModeSettings(SubgraphOptions):
    """Mode ``gnn``: the candidate subgraph scored by the trained GNN (``hopgraph train-gnn``)."""

    MODE: ClassVar[str] = "gnn"

    checkpoint: Path | None = Field(default=None, description="GNN scorer file (default: <data_dir>/gnn.pt).")
    allow_stale_checkpoint: bool = Field(
        default=False, description="Use a GNN trained on an older graph version (the model is inductive).")
    weight: float | None = Field(
        default=None, ge=0, description="Weight of the GNN signal in the mode's fusion (default: the checkpoint's, "
        "chosen on its validation queries).")
    hidden: int = Field(default=64, ge=8, description="GNN scorer: hidden size (read by hopgraph train-gnn).")
    heads: int = Field(
        default=2, ge=1, description="GNN scorer: attention heads per GATv2 layer (read by hopgraph train-gnn).")
    layers: int = Field(
        default=2, ge=1, le=4, description="GNN scorer: message-passing layers (read by hopgraph train-gnn).")


#: keys of ``gpu`` that moved under ``retrieval.modes`` (old key -> new keys, relative to ``retrieval.``)
GPU_MOVED_KEYS: dict[str, tuple[str, ...]] = {
    **{k: (f"modes.pcst.{k}", f"modes.gnn.{k}") for k in SubgraphOptions.model_fields},
    **{f"pcst_{k}": (f"modes.pcst.{k}",) for k in ("topk", "topk_edges", "edge_cost", "weight")},
    **{f"gnn_{k}": (f"modes.gnn.{k}",) for k in ("checkpoint", "weight", "hidden", "heads", "layers")},
    "allow_stale_checkpoint": ("modes.gnn.allow_stale_checkpoint",),
}
