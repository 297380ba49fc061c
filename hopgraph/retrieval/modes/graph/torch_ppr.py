"""graph mode's PPR in torch (gpu/) when ``gpu.ppr_backend`` asks for it: the engine of the current walk, kept
between queries (``Resources.kept``), on the configured device."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hopgraph.core.gpu_settings import GpuSettings
from hopgraph.retrieval.parts.ppr import JointWalk

if TYPE_CHECKING:  # torch is imported when a query's walk runs on it
    import torch

    from hopgraph.gpu.ppr import TorchPPR


class PprEngines:
    """The torch PPR engine of the walk queries use now (one per graph version and link weight)."""

    def __init__(self, cfg: GpuSettings) -> None:
        self.cfg = cfg
        self._device: torch.device | None = None
        self._ppr: tuple[JointWalk, TorchPPR] | None = None

    @property
    def device(self) -> torch.device:
        """``gpu.device`` resolved (cuda when asked for or, with auto, present), on first use."""
        if self._device is None:
            from hopgraph.gpu.device import resolve

            self._device = resolve(self.cfg.device)
        return self._device

    def engine(self, walk: JointWalk) -> TorchPPR | None:
        """The torch PPR engine when ``gpu.ppr_backend`` asks for it (auto: on cuda)."""
        backend = self.cfg.ppr_backend
        if backend == "auto" and self.cfg.device == "auto":
            from hopgraph.gpu.presence import cuda_possible

            if not cuda_possible():  # no torch import for a cold process on a CPU-only machine
                return None
        if backend == "scipy" or (backend == "auto" and self.device.type != "cuda"):
            return None
        if self._ppr is None or self._ppr[0] is not walk:
            # keyed by the walk (one per graph version and link weight, a per-query setting)
            from hopgraph.gpu.ppr import TorchPPR

            self._ppr = (walk, TorchPPR(walk.matrix(), self.device))
        return self._ppr[1]
