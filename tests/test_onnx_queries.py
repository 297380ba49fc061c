"""Questions embedded from the model's ONNX copy: written once by the torch load, equal to the model's
vectors up to float rounding, opened without torch, and a broken copy leaves questions to the model."""

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hopgraph.gpu.presence import cuda_possible
from hopgraph.retrieval.parts.signals import entity_similarity, widened_product
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from hopgraph.vectors.onnx_queries import QueryEmbedder, copy_path
from tests.processes import cli_env

QUESTIONS = ["Who founded the Vexmoor Observatory?", "When did Melanie paint a sunrise?", "x",
             "What did Caroline say about the adoption agency she visited last week in the city?",
             # longer than the folder's fixed padding (128 word pieces), shorter than the model's limit (256);
             # then one past the limit: both truncated and padded like the model's
             " ".join(["The observatory's founder catalogued comets from the northern ridge."] * 14),
             " ".join(["Melanie painted the sunrise over the lake again."] * 40)]


@pytest.mark.integration
def test_the_torch_load_writes_a_copy_whose_vectors_equal_the_models(tmp_path: Path) -> None:
    model = SentenceTransformerEmbedder(device="cpu", onnx_queries=True, onnx_dir=str(tmp_path))
    questions = model.questions()
    assert isinstance(questions, QueryEmbedder)
    copy = copy_path(model._path, str(tmp_path))
    assert copy is not None and not copy.exists()
    questions.load()  # no copy yet: the model loads with torch and writes it
    assert copy.is_file() and questions._session.result() is not None
    got, want = questions.embed(QUESTIONS), model.embed(QUESTIONS)
    assert got.shape == want.shape == (len(QUESTIONS), 384)
    assert np.abs(got - want).max() < 1e-5
    assert np.array_equal(questions.embed(QUESTIONS[:1])[0], got[0])  # cached


@pytest.mark.integration
def test_a_new_process_embeds_questions_from_the_copy_without_torch(tmp_path: Path) -> None:
    SentenceTransformerEmbedder(device="cpu", onnx_queries=True, onnx_dir=str(tmp_path)).questions().load()
    code = ("import sys\nfrom hopgraph.vectors.embedders import SentenceTransformerEmbedder\n"
            f"q = SentenceTransformerEmbedder(onnx_queries=True, onnx_dir={str(tmp_path)!r}).questions()\n"
            f"v = q.embed({QUESTIONS[:2]!r})\n"
            "assert v.shape == (2, 384), v.shape\n"
            "assert 'torch' not in sys.modules and 'transformers' not in sys.modules\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=cli_env())
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok" and out.stderr == ""  # quiet


def test_a_broken_copy_leaves_questions_to_the_model(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    model = SentenceTransformerEmbedder(device="cpu", onnx_queries=True, onnx_dir=str(tmp_path))
    copy = copy_path(model._path, str(tmp_path))
    assert copy is not None
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(b"not an onnx model")
    questions = model.questions()
    with caplog.at_level("INFO"):
        got = questions.embed(QUESTIONS)
    assert "cannot be used" in caplog.text
    assert np.abs(got - model.embed(QUESTIONS)).max() < 1e-5  # the model's (batched apart: float rounding)


def test_without_onnx_queries_the_model_embeds_questions(tmp_path: Path) -> None:
    model = SentenceTransformerEmbedder(device="cpu", onnx_queries=False, onnx_dir=str(tmp_path))
    assert model.questions() is model


def test_cuda_possible_needs_no_torch_on_a_machine_without_a_driver() -> None:
    code = ("import sys\nfrom hopgraph.gpu.presence import cuda_possible\n"
            "print(cuda_possible(), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=cli_env())
    assert out.returncode == 0, out.stderr
    if Path("/dev/nvidiactl").exists() or Path("/proc/driver/nvidia/version").exists():
        pytest.skip("this machine has an NVIDIA driver: torch is asked")
    assert out.stdout.split() == ["False", "False"]
    assert cuda_possible() is False  # torch loaded in this process: it says so too


def test_widened_float16_product_equals_the_exact_one() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((40_000, 16)).astype(np.float16)
    q = rng.standard_normal(16).astype(np.float32)
    want = vectors.astype(np.float64) @ q.astype(np.float64)
    got = widened_product(vectors, q)
    assert got.dtype == np.float32 and got.shape == (40_000,)
    assert np.abs(got - want).max() < 1e-3


def test_entity_similarity_in_torch_is_the_exact_product() -> None:
    """Where torch is loaded (a server) the cosine with every entity is torch's product, in float32 or in
    half precision as the state stores the vectors; it equals the exact one to their precision."""
    import torch  # noqa: F401  (loaded, as in a server: the product takes the torch path)

    class NoNumpyProduct(np.ndarray):
        def __matmul__(self, other: object) -> np.ndarray:
            raise AssertionError("numpy's product was used")

    rng = np.random.default_rng(4)
    q = rng.standard_normal(16).astype(np.float32)
    for dtype, tol in ((np.float32, 1e-4), (np.float16, 2e-2)):
        vectors = rng.standard_normal((5_000, 16)).astype(dtype)
        snap = SimpleNamespace(n_entities=len(vectors), entity_vectors=vectors.view(NoNumpyProduct))
        got = entity_similarity(snap, q)  # type: ignore[arg-type]
        want = vectors.astype(np.float64) @ q.astype(np.float64)
        assert got.dtype == np.float32 and got.shape == (5_000,)
        assert np.abs(got - want).max() < tol
    assert entity_similarity(SimpleNamespace(n_entities=0), q).size == 0  # type: ignore[arg-type]


@pytest.mark.parametrize(("dtype", "imported"), [("float16", True), ("float32", False)])
def test_load_torch_for_half_precision_entity_vectors_only(dtype: str, imported: bool) -> None:
    """A long-lived process without the embedding model (the MCP server) loads torch at its warm-up where
    the state holds float16 entity vectors, so that their products are torch's; float32 ones keep numpy."""
    code = ("import sys; from types import SimpleNamespace; import numpy as np\n"
            "from hopgraph.retrieval.parts.signals import load_torch_for\n"
            "assert 'torch' not in sys.modules\n"
            f"load_torch_for(SimpleNamespace(n_entities=3, entity_vectors=np.zeros((3, 4), dtype=np.{dtype})))\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=cli_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(imported)


def test_an_unwritable_cache_leaves_questions_to_the_model(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")
    model = SentenceTransformerEmbedder(device="cpu", onnx_queries=True, onnx_dir=str(blocked / "onnx"))
    got = model.questions().embed(QUESTIONS[:2])  # the export fails (a file where a folder should be)
    assert np.abs(got - model.embed(QUESTIONS[:2])).max() < 1e-6


def tiny_model_without_token_types(folder: Path) -> Path:
    """A two-layer DistilBERT sentence-transformers folder in the layout the hub's models ship (its
    inputs, like MPNet's, have no token_type_ids), with MiniLM's word pieces."""
    import json

    from transformers import BertTokenizerFast, DistilBertConfig, DistilBertModel

    from hopgraph.vectors.packaged_models import resolve_model_path

    tok = BertTokenizerFast.from_pretrained(resolve_model_path("all-MiniLM-L6-v2"))
    tok.model_input_names = ["input_ids", "attention_mask"]
    tok.save_pretrained(folder)
    DistilBertModel(DistilBertConfig(vocab_size=tok.vocab_size, dim=32, hidden_dim=64, n_layers=2,
                                     n_heads=2)).save_pretrained(folder)
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64, "do_lower_case": False}))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 32, "pooling_mode_mean_tokens": True}))
    (folder / "2_Normalize").mkdir()
    return folder


def test_a_model_without_token_types_gets_a_copy_too(tmp_path: Path) -> None:
    folder = tiny_model_without_token_types(tmp_path / "model")
    model = SentenceTransformerEmbedder(str(folder), device="cpu", onnx_queries=True, onnx_dir=str(tmp_path / "onnx"))
    questions = model.questions()
    assert isinstance(questions, QueryEmbedder)
    questions.load()
    session = questions._session.result()
    assert session is not None and session.inputs == ("input_ids", "attention_mask")
    got, want = questions.embed(QUESTIONS), model.embed(QUESTIONS)
    assert got.shape == want.shape == (len(QUESTIONS), 32)
    assert np.abs(got - want).max() < 1e-5
