"""gpu/ on the configured device: export round-trip and incremental refresh, batched PPR against a
dense reference, PCST connectivity, the GNN (HeteroConv path = attention path), checkpoints.

The device is ``HOPGRAPH_GPU__DEVICE`` (the variable of ``Settings.gpu.device``): ``auto`` by default,
i.e. the CPU in CI (no GPU) and cuda where torch sees one; ``cpu`` or ``cuda`` force one."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from hopgraph.gpu import gnn
from hopgraph.gpu.device import DeviceError, resolve
from hopgraph.gpu.export import CO_OCCURS, ENTITY, RELATED, SIMILAR, EntityGraph, export
from hopgraph.gpu.gnn import (
    CheckpointError,
    CheckpointMeta,
    GnnConfig,
    GnnScorer,
    RelevanceGNN,
    load_checkpoint,
    save_checkpoint,
)
from hopgraph.gpu.graph_classifier import ClassifierConfig, GraphExample, edge_attention, predict, train_classifier
from hopgraph.gpu.pcst import extract, fold, g_retriever_pcst
from hopgraph.gpu.ppr import TorchPPR, k_hop, sparse_tensor
from hopgraph.gpu.train import Example, TrainConfig, train
from hopgraph.gpu.verbalize import ranked_triples
from hopgraph.retrieval.parts.ppr import personalized_pagerank

CPU = torch.device("cpu")
DEVICE = resolve(os.environ.get("HOPGRAPH_GPU__DEVICE", "auto"))


def _unit(rng: np.random.Generator, n: int, dim: int = 16) -> np.ndarray:
    x = rng.normal(size=(n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _graph(rng: np.random.Generator, n: int = 60, version: int = 1, ids: list[str] | None = None) -> EntityGraph:
    pairs = {(int(a), int(b)) for a, b in rng.integers(0, n, size=(4 * n, 2)) if a != b}
    pairs = {(min(p), max(p)) for p in pairs}
    ordered = sorted(pairs)
    typed, co = ordered[: len(ordered) // 3], ordered[len(ordered) // 3 :]
    dim = 16
    return EntityGraph(
        version=version, entity_ids=ids or [f"e{i}" for i in range(n)], x=_unit(rng, n, dim),
        typed_src=np.array([p[0] for p in typed]), typed_dst=np.array([p[1] for p in typed]),
        typed_type=rng.integers(0, 3, len(typed)), type_names=["born_in", "founded", "located_in"],
        typed_weight=rng.random(len(typed)).astype(np.float32) + 0.5, typed_attr=_unit(rng, len(typed), dim),
        co_src=np.array([p[0] for p in co]), co_dst=np.array([p[1] for p in co]),
        co_weight=rng.random(len(co)).astype(np.float32) + 0.1)


def _edge_set(ex_data, etype) -> dict[tuple[int, int], float]:  # type: ignore[no-untyped-def]
    ei, w = ex_data[etype].edge_index.cpu().numpy(), ex_data[etype].edge_weight.cpu().numpy()
    return {(int(s), int(t)): float(v) for s, t, v in zip(ei[0], ei[1], w, strict=True)}


def test_device_resolution() -> None:
    assert resolve("cpu") == CPU
    assert resolve("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if torch.cuda.is_available():
        assert resolve("cuda").type == "cuda"
    else:
        with pytest.raises(DeviceError, match="no GPU"):
            resolve("cuda")
    with pytest.raises(DeviceError, match="unknown device"):
        resolve("tpu")


def test_export_round_trip_equals_the_graph() -> None:
    g = _graph(np.random.default_rng(0))
    ex = export(g, DEVICE, similar_k=3, similar_min=0.2)
    data = ex.data
    assert torch.equal(data[ENTITY].x.cpu(), torch.from_numpy(g.x))
    related = _edge_set(data, RELATED)
    for s, t, w in zip(g.typed_src, g.typed_dst, g.typed_weight, strict=True):
        assert related[(s, t)] == pytest.approx(w) and related[(t, s)] == pytest.approx(w)  # both directions
    assert len(related) == 2 * len(g.typed_src)
    types = {(int(s), int(t)): ex.relation_types[int(k)] for s, t, k in zip(
        *data[RELATED].edge_index.cpu().numpy(), data[RELATED].edge_type.cpu().numpy(), strict=True)}
    assert all(types[(s, t)] == g.type_names[k] for s, t, k in zip(g.typed_src, g.typed_dst, g.typed_type, strict=True))
    attr = data[RELATED].edge_attr.cpu().numpy()
    assert np.allclose(attr[: len(g.typed_src)], g.typed_attr)
    co = _edge_set(data, CO_OCCURS)
    assert {k for k in co if k[0] < k[1]} == set(zip(g.co_src.tolist(), g.co_dst.tolist(), strict=True))
    # similarity edges: symmetric, above the threshold, at most k chosen per entity
    sim = _edge_set(data, SIMILAR)
    assert sim and all(sim[(t, s)] == v for (s, t), v in sim.items())
    cos = g.x @ g.x.T
    assert all(v >= 0.2 - 1e-6 and abs(cos[s, t] - v) < 1e-5 for (s, t), v in sim.items())


def test_incremental_refresh_matches_a_fresh_export() -> None:
    rng = np.random.default_rng(1)
    old = _graph(rng, n=50)
    first = export(old, DEVICE, similar_k=3, similar_min=0.1)
    # version 2: entities e0..e9 deleted, ten new ones, the rest kept (in another order)
    ids = [f"e{i}" for i in range(10, 50)][::-1] + [f"n{i}" for i in range(10)]
    x = np.concatenate([old.x[10:][::-1], _unit(rng, 10)])
    new = _graph(np.random.default_rng(2), n=50, version=2, ids=ids)
    new.x = x
    inc = export(new, DEVICE, similar_k=3, similar_min=0.1, previous=first)
    fresh = export(new, DEVICE, similar_k=3, similar_min=0.1)
    assert inc.stats["reused_rows"] == 40 and inc.stats["new_rows"] == 10
    assert inc.stats["similar_rows_computed"] == 10
    assert torch.allclose(inc.data[ENTITY].x, fresh.data[ENTITY].x)
    for et in (RELATED, CO_OCCURS):
        assert _edge_set(inc.data, et) == _edge_set(fresh.data, et)
    # kept similarity pairs carry over under their new indices; new entities got theirs
    old_sim = {(old.entity_ids[s], old.entity_ids[t]) for s, t in _edge_set(first.data, SIMILAR)}
    inc_sim = {(ids[s], ids[t]) for s, t in _edge_set(inc.data, SIMILAR)}
    assert {p for p in old_sim if p[0] in ids and p[1] in ids} <= inc_sim
    assert any(a.startswith("n") or b.startswith("n") for a, b in inc_sim)


def test_subgraph_slicing_keeps_only_edges_inside() -> None:
    ex = export(_graph(np.random.default_rng(3)), DEVICE, similar_k=2, similar_min=0.0)
    nodes = torch.tensor([1, 4, 7, 9, 20, 33])
    sub = ex.subgraph(nodes)
    assert torch.equal(sub[ENTITY].node_idx.cpu(), nodes)
    full = _edge_set(ex.data, RELATED)
    inside = {(s, t) for s, t in full if s in nodes.tolist() and t in nodes.tolist()}
    got = {(int(nodes[s]), int(nodes[t])) for s, t in sub[RELATED].edge_index.T.tolist()}
    assert got == inside


def _reference_ppr(P: np.ndarray, p: np.ndarray, d: float) -> np.ndarray:
    """Exact solution: dangling columns jump to the personalization, then x = d P' x + (1 - d) p."""
    p = p / p.sum()
    Pp = P.copy()
    dangling = P.sum(axis=0) == 0
    Pp[:, dangling] = p[:, None]
    return np.linalg.solve(np.eye(len(p)) - d * Pp, (1 - d) * p)


def _transition(rng: np.random.Generator, n: int) -> np.ndarray:
    A = (rng.random((n, n)) < 0.08).astype(float) * rng.random((n, n))
    A[:, :3] = 0  # three dangling nodes (no out-edges: column j is where j goes)
    A[np.arange(n), np.arange(n)] = 0
    cols = A.sum(axis=0)
    return np.divide(A, cols, out=np.zeros_like(A), where=cols > 0)


def test_batched_ppr_matches_the_dense_reference() -> None:
    rng = np.random.default_rng(4)
    n, batch = 80, 6
    P = _transition(rng, n)
    pers = np.zeros((n, batch))
    for b in range(batch):
        pers[rng.choice(n, 3, replace=False), b] = rng.random(3) + 0.1
    pers[0, 0] = 1.0  # a dangling seed
    engine = TorchPPR(sp.csr_matrix(P), DEVICE)
    exact = engine.run(pers, damping=0.5, iterations=100, tol=1e-9).cpu().numpy()
    pushed = engine.push(pers, damping=0.5, eps=1e-7).cpu().numpy()
    for b in range(batch):
        ref = _reference_ppr(P, pers[:, b], 0.5)
        assert np.allclose(exact[:, b], ref, atol=1e-5)
        assert np.abs(pushed[:, b] - ref).max() < 1e-7 * n  # within eps * degree
        scipy_x = personalized_pagerank(sp.csr_matrix(P), pers[:, b], damping=0.5, iterations=100, tol=1e-12)
        assert np.allclose(scipy_x, ref, atol=1e-5)  # the CPU path of retrieval agrees
    other = TorchPPR(sp.csr_matrix(P), DEVICE, fused=not engine.fused)  # fused (one addmm) is cuda's default
    assert np.allclose(other.run(pers, damping=0.5, iterations=100, tol=1e-9).cpu().numpy(), exact, atol=1e-6)
    vec = engine.run(pers[:, 1], damping=0.5, iterations=100, tol=1e-9).cpu().numpy()
    assert vec.shape == (n,) and np.allclose(vec, exact[:, 1], atol=1e-6)
    assert engine.run(np.zeros(n)).sum() == 0  # no seeds, no mass


def test_k_hop_matches_breadth_first_search() -> None:
    rng = np.random.default_rng(5)
    n = 40
    A = sp.random(n, n, density=0.05, random_state=5, format="csr")
    A = ((A + A.T) > 0).astype(np.float32)
    seeds = np.zeros((n, 2), dtype=bool)
    seeds[[0, 5], 0] = True
    seeds[rng.integers(0, n), 1] = True
    dist = k_hop(sparse_tensor(A, DEVICE), torch.from_numpy(seeds).to(DEVICE), hops=3).cpu().numpy()
    bfs = sp.csgraph.shortest_path(A, unweighted=True, directed=False)
    for b in range(2):
        ref = bfs[seeds[:, b]].min(axis=0)
        ref = np.where(ref <= 3, ref, -1)
        assert np.array_equal(dist[:, b], ref.astype(int))


def test_pcst_returns_a_connected_subgraph_with_the_top_prize_nodes() -> None:
    rng = np.random.default_rng(6)
    g = _graph(rng, n=40)
    ex = export(g, DEVICE, similar_k=2, similar_min=0.3)
    q = g.x[7] + 0.8 * g.x[21]
    q = q / np.linalg.norm(q)
    sub = ex.subgraph(torch.arange(40))
    res = extract(sub, ex.relation_types, q, topk=5, topk_edges=5, edge_cost=0.5)
    assert res.nodes and len(res.nodes) < 40
    top = int(np.argmax(g.x @ q))
    assert top in res.nodes
    # connected: the returned triples link every returned node
    adj = {v: set() for v in res.nodes}
    for t in res.triples:
        adj[t.source].add(t.target)
        adj[t.target].add(t.source)
    seen, todo = {res.nodes[0]}, [res.nodes[0]]
    while todo:
        for m in adj[todo.pop()]:
            if m not in seen:
                seen.add(m)
                todo.append(m)
    assert seen == set(res.nodes)
    assert all(t.relation in (*ex.relation_types, CO_OCCURS[1], SIMILAR[1]) for t in res.triples)


def test_vectorized_pcst_chooses_what_pyg_retrieval_via_pcst_chooses() -> None:
    import pandas as pd
    from torch_geometric.llm.utils.backend_utils import retrieval_via_pcst

    for seed in range(4):
        rng = np.random.default_rng(seed)
        ex = export(_graph(rng, n=50), DEVICE, similar_k=2, similar_min=0.2)
        data, labels = fold(ex.subgraph(torch.arange(50)), ex.relation_types)
        q = torch.from_numpy(_unit(rng, 1)[0])
        nodes, edges = g_retriever_pcst(data.x, data.edge_index, data.edge_attr, q, 5, 5, 0.5)
        tn = pd.DataFrame({"node_id": range(50), "node_attr": [f"n{i}" for i in range(50)]})
        te = pd.DataFrame({"src": [a for a, _, _ in labels], "edge_attr": [r for _, r, _ in labels],
                           "dst": [b for _, _, b in labels]})
        ref, _ = retrieval_via_pcst(data, q, tn, te, topk=5, topk_e=5, cost_e=0.5)
        assert sorted(nodes.tolist()) == sorted(np.asarray(ref.node_idx).tolist())
        assert sorted(edges.tolist()) == sorted(np.asarray(ref.edge_idx).tolist())


def _scalars(n: int, rng: np.random.Generator) -> torch.Tensor:
    return torch.from_numpy(rng.random((n, 5)).astype(np.float32))


def test_gnn_hetero_path_equals_the_attention_path_and_verbalizes() -> None:
    rng = np.random.default_rng(7)
    ex = export(_graph(rng, n=30), DEVICE, similar_k=2, similar_min=0.0)
    torch.manual_seed(0)
    model = RelevanceGNN(GnnConfig(dim=16, relation_dim=16, hidden=16, heads=2, layers=2)).to(DEVICE).eval()
    q, s = torch.from_numpy(_unit(rng, 1)[0]), _scalars(30, rng)
    with torch.no_grad():
        a, _ = model(ex.data, q, s)
        b, attn = model(ex.data, q, s, attention=True)
    assert torch.allclose(a, b, atol=1e-5)
    assert set(attn) == {RELATED, CO_OCCURS, SIMILAR} and all(len(v) == 2 for v in attn.values())
    labels = {k: ex.relation_types[int(t)] for k, t in enumerate(ex.data[RELATED].edge_type.tolist())}
    triples = ranked_triples(attn, torch.sigmoid(b), [f"E{i}" for i in range(30)], labels, budget=40)
    assert triples and sum(len(t.split()) * 1.3 + 1 for t, _ in triples) <= 40
    assert [v for _, v in triples] == sorted((v for _, v in triples), reverse=True)


def test_checkpoint_reloads_identically_and_refuses_a_mismatch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(8)
    ex = export(_graph(rng, n=30), DEVICE, similar_k=2, similar_min=0.0)
    cfg = GnnConfig(dim=16, relation_dim=16, hidden=16, heads=2, layers=2)
    torch.manual_seed(1)
    model = RelevanceGNN(cfg).eval()
    path = tmp_path / "gnn.pt"
    save_checkpoint(path, model, CheckpointMeta(graph_version=5, embedder="minilm", config=vars(cfg).copy()))
    q, s = torch.from_numpy(_unit(rng, 1)[0]), _scalars(30, rng)
    loaded, meta = load_checkpoint(path, DEVICE, graph_version=5, embedder="minilm")
    before = GnnScorer(model, meta, DEVICE).score(ex.data, q, s)[0]
    after = GnnScorer(loaded, meta, DEVICE).score(ex.data, q, s)[0]
    assert all(torch.equal(v, loaded.state_dict()[k].to(v.device)) for k, v in model.state_dict().items())
    # the same weights, the same scores: bitwise on the CPU; cuda's scatter-adds (atomics) sum in any order
    assert torch.equal(before, after) if DEVICE.type == "cpu" else torch.allclose(before, after, rtol=0, atol=1e-5)
    monkeypatch.setattr(gnn, "MIXED_PRECISION_MIN_EDGES", 0)  # bf16 autocast (cuda only) even for a small graph
    mixed = GnnScorer(loaded, meta, DEVICE).score(ex.data, q, s)[0]
    assert torch.allclose(before, mixed, atol=2e-2)
    with pytest.raises(CheckpointError, match="embedder 'minilm'"):
        load_checkpoint(path, DEVICE, graph_version=5, embedder="other-model")
    with pytest.raises(CheckpointError, match="graph version 5"):
        load_checkpoint(path, DEVICE, graph_version=6, embedder="minilm")
    assert load_checkpoint(path, DEVICE, graph_version=6, embedder="minilm", allow_stale=True)[1].graph_version == 5
    with pytest.raises(CheckpointError, match="no GNN checkpoint"):
        load_checkpoint(tmp_path / "missing.pt", DEVICE, 5, "minilm")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="not a hopgraph GNN checkpoint"):
        load_checkpoint(tmp_path / "junk.pt", DEVICE, 5, "minilm")


@pytest.mark.slow
def test_gnn_training_lowers_the_loss_on_the_device() -> None:
    rng = np.random.default_rng(9)
    ex = export(_graph(rng, n=40), DEVICE, similar_k=2, similar_min=0.0)
    x = ex.data[ENTITY].x.cpu().numpy()
    examples = []
    for i in range(6):
        q = _unit(rng, 1)[0]
        labels = torch.from_numpy((x @ q > 0.25).astype(np.float32))  # learnable: the entities near the query
        examples.append(Example(f"q{i}", ex.data, torch.from_numpy(q), _scalars(40, rng), labels))
    cfg = GnnConfig(dim=16, relation_dim=16, hidden=16, heads=2, layers=2)
    res = train(examples[:4], examples[4:], cfg, TrainConfig(epochs=15, patience=15, seed=0), DEVICE)
    assert all(np.isfinite(res.train_loss)) and res.train_loss[-1] < res.train_loss[0]
    assert next(res.model.parameters()).device.type == DEVICE.type


def test_graph_classifier_trains_predicts_and_attends_on_the_device() -> None:
    rng = np.random.default_rng(10)

    def example(label: int) -> GraphExample:
        n = int(rng.integers(3, 7))
        src = np.arange(n - 1)
        question = rng.normal(size=8).astype(np.float32) * 0.1
        question[0] = 1.0 if label else -1.0  # the answer is in the question: a learnable toy
        return GraphExample(x=_unit(rng, n, 8), edge_index=np.stack([src, src + 1]),
                            edge_attr=_unit(rng, n - 1, 4), question=question, label=label)

    examples = [example(i % 2) for i in range(40)]
    cfg = ClassifierConfig(hidden=16, heads=2, epochs=15, lr=1e-2, batch_size=8, dropout=0.0)
    model = train_classifier(examples[:30], cfg, DEVICE, val=examples[30:])
    probs = predict(model, examples, DEVICE)
    assert probs.shape == (40,) and ((probs >= 0.5) == np.array([e.label for e in examples])).mean() >= 0.9
    attn = edge_attention(model, examples[0], DEVICE)
    assert attn.shape == (examples[0].edge_index.shape[1],) and np.all(attn > 0)
