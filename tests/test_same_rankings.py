"""``benchmarks.same_rankings``: per-query top-10 comparison of two ``hopgraph eval`` reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.same_rankings import compare, main


def _report(modes: dict[str, Any], queries: dict[str, list[list[str]]]) -> dict[str, Any]:
    return {"modes": modes, "queries": {m: [{"id": f"q{i}", "ranked": r} for i, r in enumerate(rs)]
                                        for m, rs in queries.items()}}


def test_rankings_are_compared_query_by_query_and_failures_by_their_kind(tmp_path: Path) -> None:
    ranked = [[f"d{i}" for i in range(12)], ["a", "b"]]
    before = _report({"graph": {}, "bm25": {}, "gnn": {"error": "QueryError: no checkpoint at /x"}},
                     {"graph": ranked, "bm25": ranked})
    after = _report({"graph": {}, "bm25": {}, "gnn": {"error": "QueryError: no checkpoint at /y"}, "new": {}},
                    {"graph": [[*ranked[0][:10], "other"], ranked[1]], "bm25": [ranked[0], ["b", "a"]], "new": []})
    rows = {r.mode: r for r in compare(before, after)}
    assert (rows["graph"].identical, rows["graph"].queries, rows["graph"].same) == (2, 2, True)  # past the top 10
    assert rows["bm25"].differing == ["q1"] and not rows["bm25"].same
    assert rows["gnn"].same and rows["new"].outcome == "only in after" and not rows["new"].same
    paths = []
    for name, rep in (("b", before), ("a", after)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(rep), encoding="utf-8")
    assert main([str(paths[0]), str(paths[0])]) == 0 and main([str(p) for p in paths]) == 1
