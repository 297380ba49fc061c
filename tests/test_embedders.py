"""Real embedders: packaged MiniLM (fp32), its int8 ONNX twin, caching, clear load errors."""

from pathlib import Path

import numpy as np
import pytest

from vectors.embedders import EmbedderError, OnnxInt8Embedder, SentenceTransformerEmbedder, length_batches

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


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError, match="cannot load sentence-transformers model"):
        SentenceTransformerEmbedder(str(tmp_path / "no-such-model"), device="cpu")


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
