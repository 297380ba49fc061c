"""Settings of gpu/: where its torch engines run (device, PPR backend, precision); a part of
``hopgraph.core.settings.Settings``. What modes pcst and gnn do is in ``retrieval.modes.pcst``/``gnn``."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hopgraph.core.subgraph_settings import GPU_MOVED_KEYS


class GpuSettings(BaseModel):
    """gpu/: the device of the torch engines (PPR, the PCST/GNN subgraphs, the GNN scorer) and its precision."""

    model_config = ConfigDict(frozen=True)
    #: keys that moved under ``retrieval.modes`` (new keys relative to ``retrieval.``; read by ``Settings``)
    MOVED_KEYS: ClassVar[dict[str, tuple[str, ...]]] = GPU_MOVED_KEYS

    device: Literal["auto", "cpu", "cuda"] = Field(default="auto", description="auto = cuda when torch sees one.")
    ppr_backend: Literal["auto", "torch", "scipy"] = Field(
        default="auto", description="PPR of graph mode: torch sparse (on the device) or scipy; auto = torch on cuda.")
    mixed_precision: bool = Field(default=True, description="bf16 autocast for GNN inference on cuda, on subgraphs "
                                  "of 2M edges or more (gpu.gnn.MIXED_PRECISION_MIN_EDGES: below, fp32 is faster).")

    @model_validator(mode="before")
    @classmethod
    def _moved(cls, data: Any) -> Any:
        """Refuse the keys that moved under ``retrieval.modes`` (``Settings`` reads them there, with a warning)."""
        moved = sorted(GPU_MOVED_KEYS.keys() & data.keys()) if isinstance(data, dict) else []
        if moved:
            raise ValueError("gpu keys moved: " + ", ".join(
                f"{k} (now {' and '.join('retrieval.' + t for t in GPU_MOVED_KEYS[k])})" for k in moved))
        return data
