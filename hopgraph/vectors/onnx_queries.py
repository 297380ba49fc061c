"""Questions embedded from an ONNX copy of the model, without torch.

Importing torch and transformers and reading the weights take seconds, and a one-shot process (a
``hopgraph query`` run from a shell) spends most of its life waiting for them. The transformer of a
plain folder (``plain_layout``) is exported once to ONNX, into ``embedder.onnx_dir``, by the first
process that loads the model with torch. ``QueryEmbedder`` then embeds questions with onnxruntime
and ``tokenizers`` from that copy: it loads in a fraction of a second, and one question embeds in
milliseconds on one thread. Documents are still embedded by the model itself (onnxruntime is slower
than torch on large CPU batches); the two agree to float rounding (tested).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import warnings
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hopgraph.vectors.cached import CachedEmbedder
from hopgraph.vectors.plain_encoder import PlainLayout

log = logging.getLogger(__name__)

_WEIGHTS = ("model.safetensors", "pytorch_model.bin")
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def default_onnx_dir() -> Path:
    """``$XDG_CACHE_HOME/hopgraph/onnx`` (``~/.cache/hopgraph/onnx`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hopgraph" / "onnx"


def copy_path(folder: str, onnx_dir: str | None) -> Path | None:
    """Where the ONNX copy of the model in ``folder`` lives: named by the folder and its weights file's
    size and modification time, so changed weights get a new copy. None without a weights file."""
    root = Path(folder).resolve()
    for name in _WEIGHTS:
        weights = root / name
        if weights.is_file():
            st = weights.stat()
            key = hashlib.sha1(f"{root}|{name}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:16]
            return Path(onnx_dir or default_onnx_dir()) / f"{root.name}-{key}.onnx"
    return None


def export_copy(model: Any, tokenizer: Any, target: Path) -> bool:
    """Export a loaded ``transformers`` model (on the CPU) to ``target``, atomically (a process racing
    this one writes the same bytes); whether it worked. A model torch cannot export is logged and left
    to torch."""
    import torch

    sample = tokenizer(["an example question", "a second, longer example sentence"], padding=True,
                       return_tensors="pt")
    names = [k for k in _INPUTS if k in sample]  # MPNet and DistilBERT take no token_type_ids
    if names[:2] != ["input_ids", "attention_mask"]:
        return False

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: Any) -> Any:
            return self.inner(**dict(zip(names, inputs, strict=True))).last_hidden_state

    axes = {name: {0: "batch", 1: "tokens"} for name in (*names, "hidden")}
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)  # (a read-only home: logged, questions use torch)
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(_Hidden(model).eval(), tuple(sample[k] for k in names), str(tmp),
                              input_names=names, output_names=["hidden"], dynamic_axes=axes,
                              opset_version=17, dynamo=False)
        os.replace(tmp, target)
        log.info("embedder: ONNX copy for questions written to %s", target)
        return True
    except Exception as exc:
        log.info("embedder: no ONNX copy for questions (%s); questions use the model itself", exc)
        return False
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


@dataclass
class _Session:
    run: Any
    tokenizer: Any
    layout: PlainLayout
    inputs: tuple[str, ...]


def _open(copy: Path, folder: str, layout: PlainLayout, max_length: int, threads: int = 1) -> _Session:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
    tok.enable_truncation(max_length)
    pad = tok.padding or {}  # to the batch's longest: a folder's fixed length (MiniLM's 128) is shorter than
    tok.enable_padding(pad_id=pad.get("pad_id", 0), pad_type_id=pad.get("pad_type_id", 0),  # max_length
                       pad_token=pad.get("pad_token", "[PAD]"), direction=pad.get("direction", "right").lower())
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads  # a question at a time: by default one thread leaves the cores to the rest
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    session = ort.InferenceSession(str(copy), opts, providers=["CPUExecutionProvider"])
    return _Session(session.run, tok, layout, tuple(i.name for i in session.get_inputs()))


class QueryEmbedder(CachedEmbedder):
    """Embeds questions from the ONNX copy of ``model`` (a ``SentenceTransformerEmbedder`` of a plain
    folder); while there is no copy yet, ``model`` itself loads, writes it, and questions then use it.
    Where the copy cannot be made, every question goes to ``model``. Everything but embedding (name,
    size, token counts) is ``model``'s; it keeps its own cache of embedded questions."""

    def __init__(self, model: Any, folder: str, layout: PlainLayout, copy: Path, max_length: int,
                 threads: int = 1) -> None:
        super().__init__(None, model.cache_size)
        self.model = model
        self.name: str = model.name
        self.dim: int = model.dim
        self._folder, self._layout, self._copy, self._max_length = folder, layout, copy, max_length
        self.threads = threads  # onnxruntime's intra-op threads
        self._session: Future[_Session | None] = Future()
        self._started = threading.Lock()

    def warm(self) -> None:
        """Start opening the copy (or loading the model that writes it) on a background thread."""
        if self._started.acquire(blocking=False):
            threading.Thread(target=self._load, name="query-embedder-load", daemon=True).start()

    def load(self) -> bool:
        """Open the copy now (or wait for it); whether it was not open yet."""
        self.warm()
        waiting = not self._session.done()
        if self._session.result() is None:
            return self.model.load() or waiting
        return waiting

    def _load(self) -> None:
        try:
            if not self._copy.is_file():
                self.model.load()  # loading with torch writes the copy
            session = (_open(self._copy, self._folder, self._layout, self._max_length, self.threads)
                       if self._copy.is_file() else None)
            self._session.set_result(session)
        except Exception as exc:
            log.info("embedder: the ONNX copy %s cannot be used (%s); questions use the model itself", self._copy, exc)
            self._session.set_result(None)

    def _encode(self, texts: list[str]) -> np.ndarray:
        self.warm()
        session = self._session.result()
        if session is None:
            return np.asarray(self.model.embed(texts), dtype=np.float32)
        enc = session.tokenizer.encode_batch(list(texts))
        columns = {"input_ids": [e.ids for e in enc], "attention_mask": [e.attention_mask for e in enc],
                   "token_type_ids": [e.type_ids for e in enc]}
        feed = {name: np.array(columns[name], dtype=np.int64) for name in session.inputs}
        hidden = session.run(None, feed)[0]
        if session.layout.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            mask = feed["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        return np.asarray(pooled, dtype=np.float32)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        counted: list[int] = self.model.count_tokens(texts)
        return counted
