"""Whether this machine can have a CUDA device, answered without importing torch."""

from __future__ import annotations

import os
import sys

_NVIDIA_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia/version")


def cuda_possible() -> bool:
    """False where no NVIDIA driver is present (no device node, no driver entry) and torch is not loaded
    yet: ``auto`` then means the CPU without the second torch's import costs a cold process. Otherwise
    whatever torch says."""
    if "torch" not in sys.modules and not any(os.path.exists(p) for p in _NVIDIA_NODES):
        return False
    import torch

    return bool(torch.cuda.is_available())
