"""The RAPTOR tree: clustering and extractive summaries (pure), and the stored forest on the real
engines: built at ingest, kept by an incremental re-ingest where untouched, rebuilt where touched,
free of deleted chunks after a deletion, and searched by mode raptor."""

from __future__ import annotations

import importlib
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from hopgraph.app.doctor import diagnose
from hopgraph.app.platform import Platform
from hopgraph.core.settings import LlmSettings
from hopgraph.core.summary_settings import RaptorSettings
from hopgraph.ingest.raptor_cluster import partition, soft_clusters
from hopgraph.ingest.raptor_summary import extractive
from hopgraph.retrieval.registry import QueryError
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from hopgraph.vectors.store import VectorPoint
from tests.conftest import settings_for
from tests.fake_llm import fake_llm_server
from tests.paths import SHARED_DATA
from tests.processes import cli_env

TREE = RaptorSettings(enabled=True, branch_size=20, branch_max=40)


def _blobs(n: int = 14, seed: int = 0) -> tuple[np.ndarray, list[int]]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(3, 64)) * 5
    vecs = np.concatenate([c + rng.normal(size=(n, 64)) * 0.3 for c in centres]).astype(np.float32)
    return vecs, [i // n for i in range(3 * n)]


@pytest.mark.slow
def test_soft_clusters_recover_separated_groups_and_are_deterministic() -> None:
    vecs, label = _blobs()
    cfg = RaptorSettings(umap_dim=4)
    clusters = soft_clusters(vecs, cfg)
    assert clusters == soft_clusters(vecs, cfg)
    assert sorted({i for c in clusters for i in c}) == list(range(len(vecs)))  # every node somewhere
    for c in clusters:  # no cluster mixes two groups, and none is larger than a summary's children
        assert len({label[i] for i in c}) == 1 and len(c) <= 10


#: a fresh process fits UMAP through ``soft_clusters`` and prints how the fit compiled umap's numba functions
#: (those umap compiles at import, for a declared signature, are left out: they never reach the cache)
_FIT_AND_COUNT = """
import json, sys
import numpy as np
import umap
from numba.core.dispatcher import Dispatcher
from hopgraph.core.summary_settings import RaptorSettings
from hopgraph.ingest.raptor_cluster import soft_clusters

def counts():
    stats = [v.stats for name, m in list(sys.modules.items()) if name.split(".")[0] == "umap"
             for v in vars(m).values() if isinstance(v, Dispatcher)]
    return [sum(sum(s.cache_hits.values()) for s in stats), sum(sum(s.cache_misses.values()) for s in stats)]

before = counts()
soft_clusters(np.random.default_rng(0).normal(size=(30, 16)).astype(np.float32), RaptorSettings(umap_dim=4))
after = counts()
print(json.dumps({"hits": after[0] - before[0], "misses": after[1] - before[1]}))
"""


@pytest.mark.integration
def test_umaps_compiled_functions_are_cached_for_the_next_process() -> None:
    """The first process to fit UMAP compiles its numba functions and caches them; the next loads them all."""
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _FIT_AND_COUNT], capture_output=True, text=True,
                             env=cli_env(), timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        runs.append(json.loads(out.stdout.splitlines()[-1]))
    assert runs[0]["hits"] + runs[0]["misses"] > 0, runs  # the fit's functions went through the cache
    assert runs[1]["hits"] > 0 and runs[1]["misses"] == 0, runs


@pytest.mark.slow
def test_of_two_dispatchers_wrapping_one_function_only_the_serial_one_caches() -> None:
    """numba keys a cache entry by the Python function: umap's parallel layout step, which wraps the serial
    one's function, must not read or write the serial one's entry."""
    from hopgraph.ingest.raptor_cluster import _umap

    _umap()
    layouts = importlib.import_module("umap.layouts")
    assert layouts._nb_optimize_layout_euclidean_single_epoch.stats.cache_path is not None
    assert layouts._nb_optimize_layout_euclidean_single_epoch_parallel.stats.cache_path is None


def _plus_one(x: float) -> float:
    return x + 1


def test_a_corrupt_cache_file_costs_a_compile_not_the_call(caplog: pytest.LogCaptureFixture,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache index that cannot be read (here: garbage, as a crash during its first write could leave) is
    logged once as a warning; the function is compiled and answers."""
    import numba

    from hopgraph.ingest import raptor_cluster

    monkeypatch.setattr(raptor_cluster, "_CACHE_FAILED", set())  # this process's first failure
    dispatcher = numba.njit(_plus_one)
    raptor_cluster.cache_on_disk(dispatcher)
    index = Path(dispatcher._cache._cache_file._index_path)
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_bytes(b"not a pickle")
    try:
        with caplog.at_level(logging.DEBUG, logger="hopgraph.ingest.raptor_cluster"):
            assert dispatcher(1.5) == 2.5
    finally:
        index.unlink(missing_ok=True)
    failed = [r for r in caplog.records if "numba's cache failed" in r.getMessage()]
    assert [r.getMessage().split(" of ")[0].split("(")[1] for r in failed] == ["load_overload", "save_overload"]
    assert [r.levelno for r in failed] == [logging.WARNING, logging.DEBUG]


def test_partition_covers_every_row_once_in_bounded_groups() -> None:
    vecs, _ = _blobs(n=30)
    groups = partition(vecs, size=20, seed=1)
    flat = sorted(i for g in groups for i in g)
    assert flat == list(range(len(vecs))) and all(len(g) <= 40 for g in groups) and len(groups) >= 3
    assert partition(vecs[:5], size=20, seed=1) == [[0, 1, 2, 3, 4]] and partition(vecs[:0], 20, 1) == []


def test_extractive_summary_takes_central_sentences_once_within_the_limits() -> None:
    texts = ["The comet returned in 1910. The comet was seen from the observatory. Bread is baked daily.",
             "Astronomers at the observatory tracked the comet. The comet returned in 1910."]
    out = extractive(texts, sentences=2, chars=200)
    assert out.count("The comet returned in 1910.") <= 1 and "Bread" not in out
    assert len(out) <= 200 and out.count(".") == 2
    assert extractive(["One sentence only"], 3, 100) == "One sentence only" and extractive([], 3, 100) == ""
    with pytest.raises(ValidationError, match="branch_max"):
        RaptorSettings(branch_size=50, branch_max=20)


def _tree(p: Platform) -> dict[str, Any]:
    """Branches (root id -> leaves), every summary's children, and the summary vectors' payloads."""
    nodes = {r["id"]: r for r in p._store.read(
        "MATCH (s:Summary) OPTIONAL MATCH (s)-[:SUMMARIZES]->(c) RETURN s.id AS id, s.branch AS branch, "
        "s.level AS level, s.root AS root, s.leaves AS leaves, collect(c.id) AS children")}
    payloads, offset = {}, None
    while True:
        page, offset = p.vectors.scroll("summaries", limit=500, offset=offset)
        payloads.update({h.id: h.payload for h in page})
        if offset is None:
            break
    return {"nodes": nodes, "payloads": payloads,
            "branches": {n["branch"]: sorted(n["leaves"]) for n in nodes.values() if n["root"]}}


def _by_branch(tree: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    out: dict[str, dict[str, list[str]]] = {}
    for n in tree["nodes"].values():
        out.setdefault(n["branch"], {})[n["id"]] = sorted(n["children"])
    return out


@pytest.mark.timeout(900)
def test_tree_is_built_kept_where_untouched_and_free_of_deleted_chunks(
        arcadedb: Any, embedder: SentenceTransformerEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = (SHARED_DATA / "2wiki-corpus" / "corpus.jsonl").read_text().splitlines()[:90]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines))
    with Platform(settings_for(arcadedb, tmp_path / "data", raptor=TREE), embedder=embedder) as p:
        report = p.ingest([corpus])
        tree = _tree(p)
        chunks = set(p._store.chunk_ids())
        assert len(tree["branches"]) >= 3 and report.summaries == len(tree["nodes"]) == len(tree["payloads"])
        leaves = [c for ls in tree["branches"].values() for c in ls]
        assert sorted(leaves) == sorted(chunks)  # every chunk in exactly one branch
        assert any(n["level"] >= 2 for n in tree["nodes"].values())  # clusters of clusters
        for n in tree["nodes"].values():
            assert n["children"] and (n["level"] > 1 or set(n["children"]) <= chunks)

        # edit one passage: only the branches that held it (and the one its new chunk joins) change; the
        # new summaries are written before the dropped ones go (a query meanwhile never finds no tree)
        recs = [json.loads(x) for x in lines]
        recs[10]["text"] += " It was later restored by the Vexmoor Trust of Kelderwick."
        corpus.write_text("\n".join(json.dumps(r) for r in recs))
        writes: list[str] = []
        for name in ("upsert", "delete_where"):
            real = getattr(p.vectors, name)
            monkeypatch.setattr(p.vectors, name, lambda c, *a, _r=real, _n=name, **k: (
                writes.append(_n) if c == "summaries" else None, _r(c, *a, **k))[1])
        p.ingest([corpus])
        assert "delete_where" in writes and "upsert" not in writes[writes.index("delete_where"):]
        after = _tree(p)
        gone = chunks - set(p._store.chunk_ids())
        assert gone and sorted(c for ls in after["branches"].values() for c in ls) == sorted(p._store.chunk_ids())
        before_b, after_b = _by_branch(tree), _by_branch(after)
        touched = {b for b, ls in tree["branches"].items() if gone & set(ls)}
        kept = set(before_b) & set(after_b)
        assert kept and kept.isdisjoint(touched) and len(kept) >= len(before_b) - 2
        assert all(before_b[b] == after_b[b] for b in kept)  # untouched subtrees: same nodes and members
        for b in set(after_b) - kept:  # rebuilt ones equal a fresh build of their chunks
            ids = after["branches"][b]
            vecs = p.vectors.vectors("chunks", ids)
            texts = p._store.chunk_texts(ids)
            fresh = p._ingestor().tree.build_branch(ids, np.stack([vecs[c] for c in ids]), [texts[c] for c in ids])
            assert {n.id: n.children for n in fresh.nodes} == after_b[b]

        # a summary vector of a branch the graph lacks (left by a killed update) is swept by the next
        # update that writes; then delete a document: no summary, root or vector keeps one of its chunks
        p.vectors.upsert("summaries", [VectorPoint("sum1_orphan", np.ones(384, dtype=np.float32),
                                                   {"branch": "br_orphan", "level": 1, "chunks": []})])
        before = set(p._store.chunk_ids())
        victim = sorted(d.id for d in p.documents(limit=1000))[40]
        assert p.delete_documents([victim]) == 1
        removed = before - set(p._store.chunk_ids())
        final = _tree(p)
        assert removed
        for n in final["nodes"].values():
            assert removed.isdisjoint(n["children"]) and removed.isdisjoint(n["leaves"] or [])
        for payload in final["payloads"].values():
            assert removed.isdisjoint(payload["chunks"])
        assert set(final["payloads"]) == set(final["nodes"]) and "sum1_orphan" not in final["payloads"]
        assert {c.name: c.ok for c in diagnose(p)}["tree"]  # summaries and their vectors agree

        assert p.update_tree().built == 0  # nothing changed: nothing rebuilt

        res = p.query("Who restored it, the Vexmoor Trust of Kelderwick?", mode="raptor", explain=True)
        assert res.results and res.explain["tree"] and res.explain["tree"][0]["level"] >= 1
        assert "## Summaries" in res.context


def test_mode_raptor_without_a_tree_says_how_to_build_one(platform: Platform, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("The Vexmoor Observatory stands above Kelderwick.")
    platform.ingest([tmp_path / "a.txt"])
    overview = "Give me an overview of what these documents cover."
    with pytest.raises(QueryError, match="hopgraph tree"):
        platform.query("observatory", mode="raptor")
    assert platform.query(overview, mode="auto", explain=True).explain["auto"]["mode"] == "global"
    assert platform.update_tree().built == 1
    assert platform.query("observatory", mode="raptor").results
    assert platform.query(overview, mode="auto", explain=True).explain["auto"]["mode"] == "raptor"
    # raptor.enabled is off here, but a tree once built is kept current: a new document joins it, and
    # a deleted one leaves it
    (tmp_path / "b.txt").write_text("Zorblax Quintana paid for the telescope with a salt mine.")
    platform.ingest([tmp_path / "b.txt"])
    leaves = sorted(c for b in platform._store.tree_branches() for c in b.leaves)
    assert leaves == sorted(platform._store.chunk_ids()) and len(leaves) == 2
    platform.delete_documents([d.id for d in platform.documents() if d.source and d.source.endswith("a.txt")])
    assert sorted(c for b in platform._store.tree_branches() for c in b.leaves) == platform._store.chunk_ids()


def test_llm_tree_summaries_and_a_failed_request_keeps_the_extractive_one(
        arcadedb: Any, embedder: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    texts = [f"The Vexmoor Observatory catalogued variable star number {i}. It was seen from Kelderwick."
             for i in range(14)] + [f"Salt mine {i} of Kelderwick paid for the telescope." for i in range(14)]
    for i, t in enumerate(texts):
        (tmp_path / f"d{i:02}.txt").write_text(t)
    with fake_llm_server() as (fake, url):
        s = settings_for(arcadedb, tmp_path / "data", llm=LlmSettings(base_url=url, api_key="k", model="m"),
                         raptor=RaptorSettings(enabled=True, llm_summaries=True, branch_size=40, branch_max=80))
        fake.fail_next.extend([400])  # not transient: that one summary stays extractive
        with Platform(s, embedder=embedder) as p:
            p.ingest([tmp_path / f"d{i:02}.txt" for i in range(len(texts))])
            rows = p._store.read("MATCH (s:Summary) RETURN s.text AS text")
    asked = [m for m in fake.requests if m[-1]["content"].startswith("Write a summary of the following")]
    written = [r["text"] for r in rows if r["text"].startswith("In short: ")]
    assert len(rows) >= 3 and len(asked) == len(rows)
    assert len(written) == len(rows) - 1  # the refused request kept its extractive summary
