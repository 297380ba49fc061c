"""The pooling of per-conversation evaluation reports (benchmarks/conversations_pooled.py): pure functions
over small per-query records."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.conversations_pooled import markdown, pool, pooled_groups, type_rows


def _report(per_mode: dict[str, list[tuple[str, float, float]]], failed: tuple[str, ...] = ()) -> dict[str, Any]:
    """A ``hopgraph eval`` report: mode -> [(query id, R@1, R@5)] (MRR@10 = R@1), and failed modes."""
    modes: dict[str, Any] = {m: {"metrics": {}, "latency_ms": {"p50": 1.0}} for m in per_mode}
    modes.update({m: {"error": "RuntimeError: boom"} for m in failed})
    return {"modes": modes, "queries": {
        m: [{"id": q, "metrics": {"R@1": r1, "R@5": r5, "MRR@10": r1}, "latency_ms": 2.0} for q, r1, r5 in rows]
        for m, rows in per_mode.items()}}


A = _report({"graph": [("q1", 1, 1), ("q2", 0, 1)], "graph-0-hops": [("q1", 1, 1), ("q2", 0, 0)],
             "bm25": [("q1", 0, 1), ("q2", 0, 0)], "dense": [("q1", 0, 0), ("q2", 0, 0)]})
# the same query ids in another conversation: pooled apart
B = _report({"graph": [("q1", 0, 0)], "graph-0-hops": [("q1", 0, 0)], "bm25": [("q1", 1, 1)],
             "dense": [("q1", 0, 1)]}, failed=("mix",))


def test_pool_keeps_every_query_of_every_set_apart_and_averages_them() -> None:
    pooled = pool({"conv-a": A, "conv-b": B})
    assert [q["id"] for q in pooled["queries"]["graph"]] == ["conv-a/q1", "conv-a/q2", "conv-b/q1"]
    assert pooled["queries"]["graph"][2]["set"] == "conv-b"
    assert pooled["modes"]["graph"]["metrics"]["R@5"] == pytest.approx(66.7)  # 2 of 3, not the mean of set means
    assert pooled["modes"]["bm25"]["metrics"]["R@1"] == pytest.approx(33.3)
    assert pooled["incomplete"] == ["mix"]  # failed in one set: not pooled
    assert "mix" not in pooled["queries"]


def test_type_rows_pick_the_best_baseline_per_type_and_pair_the_gains() -> None:
    pooled = pool({"conv-a": A, "conv-b": B})
    groups = pooled_groups({"conv-a": {"q1": "single", "q2": "multi"}, "conv-b": {"q1": "single"}})
    rows = {r["type"]: r for r in type_rows(pooled, groups)}
    assert [r["type"] for r in type_rows(pooled, groups)] == ["all", "single", "multi"]
    assert rows["all"]["queries"] == 3 and rows["single"]["queries"] == 2
    assert rows["multi"]["best_baseline"] == "dense"  # a tie: the first of BASELINES evaluated
    assert rows["single"]["best_baseline"] == "bm25"  # 100 R@5 against dense's 50
    assert rows["single"]["gain"]["R@5"][0] == pytest.approx(-50.0)  # graph 1, 0 against bm25 1, 1
    assert rows["single"]["walk"]["R@5"] == [0.0, 0.0, 0.0]
    assert rows["multi"]["walk"]["R@5"][0] == pytest.approx(100.0)  # graph 1 against graph-0-hops 0
    assert rows["all"]["means"]["graph"] == {"R@1": 33.3, "R@5": 66.7, "MRR@10": 33.3}
    low, high = rows["all"]["gain"]["R@5"][1:]
    assert low <= rows["all"]["gain"]["R@5"][0] <= high
    text = "\n".join(markdown(type_rows(pooled, groups), {"conv-a": {"graph": 2.0}}))
    assert "| single (2) | bm25 100.0 | 50.0 | -50.0 [" in text


def test_pool_without_the_walk_or_baselines_reports_no_gain() -> None:
    only = _report({"graph": [("q1", 1, 1)]})
    rows = type_rows(pool({"c": only}), {})
    assert [r["type"] for r in rows] == ["all"]
    assert "gain" not in rows[0] and "walk" not in rows[0] and "best_baseline" not in rows[0]
