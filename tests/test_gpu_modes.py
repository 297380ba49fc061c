"""The pcst and gnn modes and GNN training on real hotpotqa-100 data in the real stores (CPU)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.gpu_settings import GpuSettings
from hopgraph.evaluation.evaluate import load_dataset
from hopgraph.evaluation.gnn_training import WEIGHTS, train_gnn
from hopgraph.gpu.train import TrainConfig
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.retrieval.registry import QueryError
from hopgraph.retrieval.retriever import Retriever
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.conftest import NO_CAPS, settings_for
from tests.paths import SHARED_DATA
from tests.processes import cli_env

HOTPOT = SHARED_DATA / "hotpotqa-100"
N_QUERIES, N_DISTRACTORS = 40, 80


def _subset(root: Path) -> Path:
    """The gold passages of the first N_QUERIES queries plus N_DISTRACTORS other passages."""
    qrels = [line.split("\t") for line in (HOTPOT / "qrels" / "test.tsv").read_text().splitlines()[1:] if line]
    queries = list(dict.fromkeys(q for q, _, _ in qrels))[:N_QUERIES]
    gold = {d for q, d, _ in qrels if q in queries}
    corpus = [json.loads(line) for line in (HOTPOT / "corpus.jsonl").read_text().splitlines() if line]
    others = [r for r in corpus if r["_id"] not in gold][:N_DISTRACTORS]
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in corpus if r["_id"] in gold or r in others))
    texts = {json.loads(line)["_id"]: line for line in (HOTPOT / "queries.jsonl").read_text().splitlines() if line}
    (root / "queries.jsonl").write_text("\n".join(texts[q] for q in queries))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        "\t".join(r) + "\n" for r in qrels if r[0] in queries))
    return root


@pytest.fixture(scope="module")
def hotpot(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Platform, Path]]:
    root = _subset(tmp_path_factory.mktemp("hotpot"))
    data = tmp_path_factory.mktemp("data")
    s = settings_for(arcadedb, data, retrieval=NO_CAPS.merged({"modes": {"gnn": {"checkpoint": data / "gnn.pt",
                                                                                "hidden": 32}}}))
    with Platform(s, embedder=embedder) as p:
        p.ingest([root / "corpus.jsonl"])
        yield p, root


def test_pcst_mode_returns_a_subgraph_its_triples_and_cited_chunks(hotpot: tuple[Platform, Path]) -> None:
    p, _ = hotpot
    res = p.query("Which magazine was started first, Arthur's Magazine or First for Women?", mode="pcst",
                  top_k=5, explain=True)
    assert res.results and all(r.citation.chunk_id and r.citation.document_id for r in res.results)
    sub = res.explain["pcst"]
    assert sub["nodes"] and sub["candidates"] >= len(sub["nodes"])
    assert sub["triples"] and "## Relations" in res.context
    assert "pcst" in res.timings_ms


def test_gnn_mode_without_a_checkpoint_is_a_clear_error(hotpot: tuple[Platform, Path]) -> None:
    p, _ = hotpot
    r = Retriever(p._store, p.vectors, p.embedder, p.settings.retrieval, gpu=p.settings.gpu,
                  gnn_checkpoint=Path(p.settings.data_dir) / "absent.pt")
    with pytest.raises(QueryError, match="train-gnn"):
        r.query("Who founded the magazine?", mode="gnn")


def test_gnn_trains_its_validation_loss_falls_and_mode_gnn_uses_it(hotpot: tuple[Platform, Path]) -> None:
    p, root = hotpot
    ds = load_dataset(root)
    path = p.settings.gnn_checkpoint_path
    rep = train_gnn(p.retriever, ds, p.corpus_ids(), path, TrainConfig(epochs=12, patience=12, seed=3),
                    hidden=32, heads=2, layers=2)
    assert rep.examples["train"] >= 15 and rep.examples["val"] >= 5
    assert min(rep.val_loss) < rep.untrained_val_loss  # it learned something that generalizes
    assert rep.train_loss[-1] < rep.train_loss[0]
    assert path.is_file()
    # the fusion weight is chosen on the validation queries and travels with the checkpoint
    assert set(rep.extra["val_sweep"]) == {"0.0", "0.25", "0.5", "1.0"}
    q = ds.queries[sorted(ds.queries)[0]]
    first = p.query(q, mode="gnn", top_k=5, explain=True)
    again = p.query(q, mode="gnn", top_k=5)
    assert [r.citation.chunk_id for r in first.results] == [r.citation.chunk_id for r in again.results]
    assert first.explain["gnn"]["entities"] and first.explain["gnn"]["triples"]
    assert "gnn" in first.timings_ms and "## Relations" in first.context
    from hopgraph.retrieval.modes.subgraph import gpu_parts  # torch: loaded where a gnn mode runs

    assert gpu_parts(p.retriever.res).gnn_weight(None) == rep.extra["gnn_weight"] in WEIGHTS


def test_torch_ppr_backend_ranks_like_scipy(hotpot: tuple[Platform, Path]) -> None:
    p, root = hotpot
    torch_r = Retriever(p._store, p.vectors, p.embedder, p.settings.retrieval,
                        gpu=GpuSettings(ppr_backend="torch", device="cpu"))
    scipy_r = Retriever(p._store, p.vectors, p.embedder, p.settings.retrieval,
                        gpu=GpuSettings(ppr_backend="scipy"))
    for q in list(load_dataset(root).queries.values())[:5]:
        a = [r.citation.chunk_id for r in torch_r.query(q, mode="graph", top_k=5).results]
        b = [r.citation.chunk_id for r in scipy_r.query(q, mode="graph", top_k=5).results]
        assert a == b


LOAD_PROBE = """
import json, sys
import hopgraph.gpu.export, hopgraph.gpu.gnn, hopgraph.gpu.pcst, hopgraph.gpu.train, hopgraph.gpu.graph_classifier
before = "torch_geometric" in sys.modules
from hopgraph.retrieval.registry import REGISTRY
REGISTRY.mode("pcst"), REGISTRY.mode("gnn")
print(json.dumps([before, "torch_geometric" in sys.modules]))
"""


@pytest.mark.integration  # it starts a process that loads torch and PyTorch Geometric
def test_pytorch_geometric_loads_with_the_pcst_and_gnn_modes_not_with_the_gpu_modules() -> None:
    """A process that imports the gpu modules alone (a test collection, a command that needs their config
    types) does not pay for PyTorch Geometric; loading the pcst or gnn mode does, before any stage of its
    first query is timed against ``stage_cap_ms``."""
    out = subprocess.run([sys.executable, "-c", LOAD_PROBE], capture_output=True, text=True, timeout=300, check=True,
                         env=cli_env())
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, True]
