"""CLIP text and image embeddings with open_clip (extra ``clip``).

The model is an open_clip architecture name (``ViT-B-32``) or the path of a model-config JSON
(registered with open_clip under its file stem), and the weights a local checkpoint file or an
open_clip pretrained tag. Nothing is downloaded when ``HF_HUB_OFFLINE=1`` and the checkpoint is a
file. Images that cannot be read are reported per file, never fatal.

open_clip needs torchvision; keep it in its own environment (see the Makefile's ``clip-venv``).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hopgraph.core.linalg import unit
from hopgraph.core.settings import ClipSettings
from hopgraph.vectors.embedders import pick_device
from hopgraph.vectors.packaged_models import EmbedderError

log = logging.getLogger(__name__)


class ClipError(EmbedderError):
    """open_clip is missing, or the model or checkpoint cannot be loaded."""


@dataclass(frozen=True)
class ImageEmbeddings:
    """Unit vectors of the images that could be read, and why the others could not."""

    paths: list[str]
    vectors: np.ndarray
    errors: dict[str, str]


def import_open_clip() -> Any:
    """Import open_clip. torchvision builds whose C++ ops do not load (its only build for a CPU torch
    2.13 is a CUDA one) fail at import while registering fake kernels for ``torchvision::nms`` and
    friends; CLIP needs only torchvision's image transforms, so those op names are declared (without
    kernels) and the import retried. A torchvision whose ops load is imported untouched."""
    import torch

    lib: Any = None
    for _ in range(64):
        try:
            import open_clip

            return open_clip
        except RuntimeError as exc:
            m = re.search(r"operator torchvision::(\w+) does not exist", str(exc))
            if m is None:
                raise
            lib = lib or torch.library.Library("torchvision", "FRAGMENT")
            lib.define(f"{m.group(1)}(Tensor x) -> Tensor")
            _KEEP.append(lib)
            log.info("torchvision has no native ops here; declared torchvision::%s for the import", m.group(1))
            for name in [k for k in sys.modules if k.startswith(("torchvision", "open_clip", "timm"))]:
                del sys.modules[name]
    raise ClipError("cannot import open_clip: torchvision keeps failing to register its operators")


_KEEP: list[Any] = []  # the op declarations must outlive the import


class ClipEmbedder:
    """Text and image towers of one open_clip model, normalized, batched, on the chosen device."""

    def __init__(self, cfg: ClipSettings) -> None:
        try:
            open_clip = import_open_clip()
        except ImportError as exc:
            raise ClipError("CLIP needs the extra 'clip' (pip install 'hopgraph[clip]'): " + str(exc)) from exc
        self.cfg = cfg
        name = cfg.model
        if name.endswith(".json"):
            config = Path(name)
            if not config.exists():
                raise ClipError(f"no open_clip model config at {config}")
            open_clip.add_model_config(config)
            name = config.stem
        self.device = pick_device(cfg.device)
        try:
            model, _, preprocess = open_clip.create_model_and_transforms(
                name, pretrained=cfg.checkpoint, device=self.device)
        except (RuntimeError, ValueError, FileNotFoundError, OSError) as exc:
            raise ClipError(f"cannot load open_clip model {cfg.model!r} with checkpoint {cfg.checkpoint!r}: {exc}"
                            ) from exc
        model.eval()
        self.model: Any = model
        self.preprocess: Any = preprocess
        self.tokenizer: Any = open_clip.get_tokenizer(name)
        self.name = f"open_clip:{name}:{Path(cfg.checkpoint).name if cfg.checkpoint else 'random'}"
        self.dim = int(self.embed_texts(["a photo"]).shape[1])

    @staticmethod
    def _unit(x: Any) -> np.ndarray:
        return unit(x.float().cpu().numpy())

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Unit text vectors in CLIP space (for text -> image search)."""
        import torch

        out: list[np.ndarray] = []
        with torch.inference_mode():
            for i in range(0, len(texts), self.cfg.batch_size):
                tokens = self.tokenizer(list(texts[i:i + self.cfg.batch_size])).to(self.device)
                out.append(self._unit(self.model.encode_text(tokens)))
        return np.concatenate(out) if out else np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)

    def embed_images(self, paths: Sequence[str | Path]) -> ImageEmbeddings:
        """Unit image vectors; unreadable files go to ``errors`` with the reason."""
        import torch
        from PIL import Image, UnidentifiedImageError

        ok: list[str] = []
        errors: dict[str, str] = {}
        vecs: list[np.ndarray] = []
        batch: list[Any] = []

        def flush() -> None:
            if batch:
                with torch.inference_mode():
                    vecs.append(self._unit(self.model.encode_image(torch.stack(batch).to(self.device))))
                batch.clear()

        for p in paths:
            try:
                with Image.open(p) as img:
                    batch.append(self.preprocess(img.convert("RGB")))
                ok.append(str(p))
            except (OSError, UnidentifiedImageError, ValueError) as exc:
                errors[str(p)] = f"unreadable image: {exc}"
                continue
            if len(batch) >= self.cfg.batch_size:
                flush()
        flush()
        matrix = np.concatenate(vecs) if vecs else np.zeros((0, self.dim), dtype=np.float32)
        return ImageEmbeddings(ok, matrix, errors)
