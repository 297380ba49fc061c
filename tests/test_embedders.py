"""Real embedders: packaged MiniLM (fp32), its int8 ONNX twin, caching, clear load errors."""

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from hopgraph.vectors.cached import CPU_BATCH, GPU_BATCH, length_batches
from hopgraph.vectors.embedders import OnnxInt8Embedder, SentenceTransformerEmbedder, declared_dim
from hopgraph.vectors.packaged_models import EmbedderError, resolve_model_path

TEXTS = ["Ebenezer Scrooge is a miser.", "Bob Cratchit is his clerk.", "Marley's ghost visits on Christmas Eve."]


def test_vectors_are_normalized_and_meaningful(embedder: SentenceTransformerEmbedder) -> None:
    v = embedder.embed([*TEXTS, "A stingy old man named Scrooge."])
    assert v.shape == (4, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = v[:3] @ v[3]
    assert int(np.argmax(sims)) == 0


def test_cache_returns_identical_vectors(embedder: SentenceTransformerEmbedder) -> None:
    first = embedder.embed(TEXTS)
    again = embedder.embed([TEXTS[2], TEXTS[0], TEXTS[2]])
    assert np.array_equal(again[0], first[2]) and np.array_equal(again[1], first[0])
    assert TEXTS[0] in embedder._cache


def test_onnx_int8_agrees_with_fp32(embedder: SentenceTransformerEmbedder) -> None:
    int8 = OnnxInt8Embedder()
    assert int8.dim == embedder.dim
    cos = np.sum(int8.embed(TEXTS) * embedder.embed(TEXTS), axis=1)
    assert cos.min() > 0.97
    assert int8.count_tokens(TEXTS) == embedder.count_tokens(TEXTS)


def test_batch_size_defaults_to_the_device(embedder: SentenceTransformerEmbedder) -> None:
    assert embedder.batch_size == (GPU_BATCH if embedder._on_gpu() else CPU_BATCH)
    assert OnnxInt8Embedder(batch_size=3).batch_size == 3  # a configured size wins


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError, match="cannot load sentence-transformers model"):
        SentenceTransformerEmbedder(str(tmp_path / "no-such-model"), device="cpu")


def _folder(root: Path, modules: list[tuple[str, str, dict[str, object]]]) -> Path:
    """A sentence-transformers folder layout: modules.json and each module's config (no weights)."""
    root.mkdir()
    entries = []
    for i, (kind, path, config) in enumerate(modules):
        entries.append({"idx": i, "name": str(i), "path": path, "type": f"sentence_transformers.models.{kind}"})
        if path:
            (root / path).mkdir()
            (root / path / "config.json").write_text(json.dumps(config))
    (root / "modules.json").write_text(json.dumps(entries))
    return root


def test_declared_dim_reads_the_folder(tmp_path: Path) -> None:
    packaged = resolve_model_path("all-MiniLM-L6-v2")
    assert declared_dim(packaged) == 384
    two_modes = _folder(tmp_path / "a", [("Transformer", "", {}), ("Pooling", "1_Pooling", {
        "word_embedding_dimension": 8, "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": True,
        "pooling_mode_cls_token": False})])
    assert declared_dim(str(two_modes)) == 16
    dense = _folder(tmp_path / "b", [("Transformer", "", {}), ("Pooling", "1_Pooling", {
        "word_embedding_dimension": 8, "pooling_mode_mean_tokens": True}), ("Dense", "2_Dense", {"out_features": 4})])
    assert declared_dim(str(dense)) == 4
    assert declared_dim(str(tmp_path / "missing")) is None
    assert declared_dim("sentence-transformers/some-hub-name") is None


def test_a_model_that_fails_to_load_in_the_background_fails_its_first_use(tmp_path: Path) -> None:
    """The folder declares its size, so construction returns at once; the load (no weights here)
    fails on its thread, and the first embedding raises that error."""
    folder = _folder(tmp_path / "broken", [("Transformer", "", {}), ("Pooling", "1_Pooling", {
        "word_embedding_dimension": 384, "pooling_mode_mean_tokens": True})])
    emb = SentenceTransformerEmbedder(str(folder), device="cpu")
    assert emb.dim == 384
    with pytest.raises(EmbedderError, match="cannot load sentence-transformers model"):
        emb.embed(["anything"])
    with pytest.raises(EmbedderError):
        emb.count_tokens(["anything"])


def test_length_batches_group_by_length_under_a_token_budget() -> None:
    texts = ["x" * 800, "short", "y" * 400, "name", "z" * 40] + [f"n{i}" for i in range(50)]
    batches = list(length_batches(texts, batch_size=2, max_batch=16))
    assert sorted(t for b in batches for t in b) == sorted(texts)  # every text once
    assert batches[0] == ["x" * 800]  # 202 padded tokens: alone under a 256-token budget
    lengths = [len(t) for b in batches for t in b]
    assert lengths == sorted(lengths, reverse=True)
    assert max(len(b) for b in batches) == 16  # short names fill the largest batches


def test_batched_vectors_equal_one_at_a_time() -> None:
    """Length-sorted batching puts every vector back at its text's position."""
    emb = SentenceTransformerEmbedder(device="cpu", batch_size=2, cache_size=0)
    texts = ["Scrooge", "A very long sentence about the ghost of Christmas past and the chains of Marley.",
             "Bob Cratchit", "Tiny Tim", "London in the snow, long ago."]
    together = emb.embed(texts)
    alone = np.stack([emb.embed([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_a_declared_model_loads_only_when_needed(tmp_path: Path) -> None:
    """Construction reads the folder's declared size and loads nothing (``status`` or a BM25 query never
    pay for the model); ``warm()`` starts the load in the background, the first embedding waits for it."""
    emb = SentenceTransformerEmbedder(device="cpu")
    assert emb.dim == 384 and not emb._loaded.running() and not emb._loaded.done()
    emb.warm()
    emb.warm()  # a second call starts nothing more
    assert emb.embed(["a query"]).shape == (1, 384) and emb._loaded.done()


def test_token_counts_match_the_models_tokenizer_and_are_safe_beside_embedding(
        embedder: SentenceTransformerEmbedder) -> None:
    """The chunker counts tokens on one thread while the embedding thread encodes: counts equal the
    model tokenizer's, and neither thread sees the other's padding state."""
    texts = [*TEXTS, "Zorblax Quintana-Müller (1893-1951)", "x", "word " * 400]
    want = [len(x) for x in embedder._tokenizer(texts, add_special_tokens=False)["input_ids"]]
    assert embedder.count_tokens(texts) == want
    errors: list[BaseException] = []
    stop = threading.Event()

    def count() -> None:
        try:
            while not stop.is_set():
                assert embedder.count_tokens(texts) == want
        except BaseException as exc:  # reported below
            errors.append(exc)

    counter = threading.Thread(target=count)
    counter.start()
    try:
        for k in range(30):
            embedder.embed([f"{t} {k}" for t in texts])
    finally:
        stop.set()
        counter.join()
    assert errors == []
