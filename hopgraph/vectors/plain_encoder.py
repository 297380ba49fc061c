"""A sentence-transformers folder of the plain kind run with ``transformers`` directly.

Most sentence embedding models (all-MiniLM-L6-v2 among them) are a transformer, a mean or CLS
pooling and a normalization. Importing sentence-transformers takes seconds (it pulls in
scikit-learn, its trainers and backends) where loading the same model with ``transformers`` takes
one less, and a server's start waits for it. ``plain_layout`` tells whether a folder is of that
kind; ``PlainEncoder`` computes what sentence-transformers' ``encode`` computes for it (the same
tokenization, truncation, pooling and normalization: equal vectors up to float rounding, tested).
Any other layout (dense layers, prompts, max pooling, tokenizer or model arguments) is loaded by
sentence-transformers itself.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"
_POOL_MODES = ("pooling_mode_cls_token", "pooling_mode_mean_tokens", "pooling_mode_max_tokens",
               "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens",
               "pooling_mode_lasttoken")


@dataclass(frozen=True)
class PlainLayout:
    """What ``PlainEncoder`` needs to know of a plain folder."""

    pooling: str  # "mean" | "cls"
    max_seq_length: int | None
    normalize: bool


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def plain_layout(folder: str) -> PlainLayout | None:
    """The layout of a local sentence-transformers folder made of a transformer, a mean or CLS pooling
    and optionally a normalization, with no prompts and no extra arguments; None for anything else."""
    root = Path(folder)
    try:
        modules = _read(root / "modules.json")
        kinds = [m["type"] for m in modules]
        if kinds not in ([_TRANSFORMER, _POOLING], [_TRANSFORMER, _POOLING, _NORMALIZE]) or modules[0]["path"]:
            return None
        bert = _read(root / "sentence_bert_config.json") if (root / "sentence_bert_config.json").is_file() else {}
        if set(bert) - {"max_seq_length", "do_lower_case"} or bert.get("do_lower_case"):
            return None
        st_config = root / "config_sentence_transformers.json"
        extra = _read(st_config) if st_config.is_file() else {}
        if extra.get("default_prompt_name") or any(extra.get("prompts", {}).values()):
            return None
        pool = _read(root / modules[1]["path"] / "config.json")
        modes = [m for m in _POOL_MODES if pool.get(m)]
        if modes not in (["pooling_mode_mean_tokens"], ["pooling_mode_cls_token"]):
            return None
        length = bert.get("max_seq_length")
        return PlainLayout("mean" if modes == ["pooling_mode_mean_tokens"] else "cls",
                           int(length) if length else None, len(kinds) == 3)
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


class PlainEncoder:
    """The transformer of a plain folder with its pooling (see the module docstring)."""

    def __init__(self, folder: str, layout: PlainLayout, device: str) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self._torch = torch
        self.tokenizing = threading.Lock()  # its tokenizer sets padding state per call: one thread at a time
        self.layout = layout
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.model = AutoModel.from_pretrained(folder).to(device).eval()
        self.device = self.model.device
        limit = layout.max_seq_length
        if limit is None:  # as sentence-transformers: the tokenizer's limit, within the model's positions
            positions = getattr(self.model.config, "max_position_embeddings", None)
            limit = min(self.tokenizer.model_max_length, positions or self.tokenizer.model_max_length)
        self.max_length = int(limit)
        self.dim = int(self.model.config.hidden_size)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Pooled (and, when the folder says so, normalized) vectors of one batch of texts."""
        torch = self._torch
        with self.tokenizing:
            features = self.tokenizer(texts, padding=True, truncation="longest_first", return_tensors="pt",
                                      max_length=self.max_length)
        features = {k: v.to(self.device) for k, v in features.items()}
        with torch.inference_mode():
            tokens = self.model(**features, return_dict=True).last_hidden_state
            if self.layout.pooling == "cls":
                pooled = tokens[:, 0]
            else:
                mask = features["attention_mask"].unsqueeze(-1).to(tokens.dtype)
                pooled = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            if self.layout.normalize:
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return pooled.float().cpu().numpy()
