"""A plain sentence-transformers folder runs on ``transformers`` alone and gives sentence-transformers'
vectors; any other layout is left to sentence-transformers (real models: the packaged MiniLM and tiny
ones the tests build and save)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from hopgraph.vectors.packaged_models import resolve_model_path
from hopgraph.vectors.plain_encoder import PlainEncoder, PlainLayout, plain_layout

TEXTS = ["Ebenezer Scrooge", "Bob Cratchit is his clerk.", "x", "", "London " * 400, "Ünïcödé 東京"]


def _st_vectors(folder: str, texts: list[str], normalize: bool) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(folder, device="cpu")
    return np.asarray(st.encode(texts, batch_size=len(texts), normalize_embeddings=normalize,
                                convert_to_numpy=True, show_progress_bar=False))


def _bert(folder: Path) -> Path:
    """A tiny BERT with the packaged MiniLM's tokenizer, saved by ``transformers``."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    tok = BertTokenizerFast.from_pretrained(resolve_model_path("all-MiniLM-L6-v2"))
    BertModel(BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64)).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def _legacy(folder: Path, pooling: str, normalize: bool = False) -> Path:
    """A tiny BERT in the classic sentence-transformers layout (the packaged MiniLM's, most hub models')."""
    _bert(folder)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
        (folder / "2_Normalize").mkdir()
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64, "do_lower_case": False}))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": 32, "pooling_mode_cls_token": pooling == "cls",
        "pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_max_tokens": pooling == "max"}))
    return folder


def _saved(folder: Path, dense: bool) -> Path:
    """A tiny model saved by sentence-transformers itself (its current layout), with a Dense layer."""
    from sentence_transformers import SentenceTransformer, models

    mods = [models.Transformer(str(_bert(folder.with_name(folder.name + "-bert"))), max_seq_length=64),
            models.Pooling(32, pooling_mode="mean")]
    if dense:
        mods.append(models.Dense(32, 8))
    SentenceTransformer(modules=[*mods, models.Normalize()], device="cpu").save(str(folder))
    return folder


def test_the_packaged_minilm_is_plain_and_gives_sentence_transformers_vectors() -> None:
    folder = resolve_model_path("all-MiniLM-L6-v2")
    layout = plain_layout(folder)
    assert layout == PlainLayout("mean", 256, True)
    plain = PlainEncoder(folder, layout, "cpu")
    assert plain.dim == 384 and plain.max_length == 256
    assert np.abs(plain.encode(TEXTS) - _st_vectors(folder, TEXTS, True)).max() < 1e-5
    emb = SentenceTransformerEmbedder(folder, device="cpu", cache_size=0)  # the embedder takes this path
    assert np.abs(emb.embed(TEXTS) - _st_vectors(folder, TEXTS, True)).max() < 1e-5


def test_cls_pooling_without_normalization_matches(tmp_path: Path) -> None:
    folder = str(_legacy(tmp_path / "cls", "cls"))
    layout = plain_layout(folder)
    assert layout == PlainLayout("cls", 64, False)
    assert np.abs(PlainEncoder(folder, layout, "cpu").encode(TEXTS) - _st_vectors(folder, TEXTS, False)).max() < 1e-5


def test_other_layouts_are_left_to_sentence_transformers(tmp_path: Path) -> None:
    dense = str(_saved(tmp_path / "dense", dense=True))
    assert plain_layout(dense) is None
    emb = SentenceTransformerEmbedder(dense, device="cpu", cache_size=0)
    assert emb.dim == 8
    assert np.abs(emb.embed(TEXTS) - _st_vectors(dense, TEXTS, True)).max() < 1e-5
    assert plain_layout(str(_saved(tmp_path / "current", dense=False))) is None  # a layout not read here
    assert plain_layout(str(_legacy(tmp_path / "max", "max"))) is None


@pytest.mark.parametrize("edit", [
    lambda d: (d / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64, "do_lower_case": True})),
    lambda d: (d / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64,
                                                                       "tokenizer_args": {"x": 1}})),
    lambda d: (d / "config_sentence_transformers.json").write_text(json.dumps({"prompts": {"query": "q: "},
                                                                               "default_prompt_name": "query"})),
    lambda d: (d / "modules.json").write_text("not json"),
])
def test_what_the_plain_encoder_would_compute_differently_is_not_plain(tmp_path: Path, edit) -> None:  # type: ignore[no-untyped-def]
    folder = _legacy(tmp_path / "mean", "mean", normalize=True)
    assert plain_layout(str(folder)) == PlainLayout("mean", 64, True)
    edit(folder)
    assert plain_layout(str(folder)) is None
