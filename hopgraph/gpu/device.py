"""Device choice and mixed precision for gpu/ (``auto`` = cuda when torch sees one)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

from hopgraph.core.errors import BadInputError


class DeviceError(BadInputError):
    """The configured device cannot be used."""


def resolve(device: str) -> torch.device:
    """``auto``, ``cpu`` or ``cuda`` (an error when torch sees no GPU)."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise DeviceError(f"device {device!r} was asked for but torch sees no GPU; use 'auto' or 'cpu'")
    if device not in ("cpu",) and not device.startswith("cuda"):
        raise DeviceError(f"unknown device {device!r}; choose auto, cpu or cuda")
    return torch.device(device)


@contextlib.contextmanager
def autocast(device: torch.device, enabled: bool) -> Iterator[None]:
    """bf16 autocast on cuda when enabled; a no-op on the CPU (fp32 is faster there for small GNNs)."""
    if enabled and device.type == "cuda":
        with torch.autocast("cuda", dtype=torch.bfloat16):
            yield
    else:
        yield
