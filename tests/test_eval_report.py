"""Unit tests of the evaluation report as a file (``evaluation.report``): a failed mode in the report
and its HTML page, the merge of a resumed run, the choice of the modes left to run, the refusal to
resume another run's report, and the atomic write."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hopgraph.app.eval_html import report_html
from hopgraph.core.errors import BadInputError
from hopgraph.evaluation import report as er
from hopgraph.evaluation.report import ModeReport, check_resumable, report_data, reports_from, run_identity
from hopgraph.retrieval.registry import QueryError

QUERIES = {"q1": "Who founded the Vexmoor Observatory?", "q2": "Which physicist won two Nobel Prizes?"}


def _done(mode: str, r5: float = 50.0) -> ModeReport:
    per_query = [{"id": q, "query": t, "ranked": ["d1"], "relevant": ["d1"], "metrics": {"R@1": 1.0, "R@5": 1.0},
                  "latency_ms": 1.5, "notes": [], "entropy": 0.1} for q, t in QUERIES.items()]
    return ModeReport(mode, metrics={"R@1": r5, "R@2": r5, "R@5": r5, "R@10": r5, "nDCG@10": r5, "MRR@10": r5},
                      latency_ms={"p50": 1.5, "p95": 2.0}, per_query=per_query, notes=1,
                      diversity={"ratio@5": 0.4}, selective=[{"coverage": 1.0, "precision": 50.0, "max_entropy": 1.0}])


def _failed(mode: str) -> ModeReport:
    return ModeReport(mode, error=er.error_text(QueryError("no GNN checkpoint at /x/gnn.pt")))


def test_a_failed_mode_is_its_error_alone_and_the_report_reads_back() -> None:
    reps = [_done("bm25"), _failed("gnn"), _done("dense", 75.0)]
    data = report_data(Path("set"), reps, {"queries_evaluated": 2})
    assert data["modes"]["gnn"] == {"error": "QueryError: no GNN checkpoint at /x/gnn.pt"}
    assert list(data["queries"]) == ["bm25", "dense"] and data["modes"]["dense"]["metrics"]["R@5"] == 75.0
    assert reports_from(json.loads(json.dumps(data))) == reps  # what --resume reads is what was written


def test_the_html_page_lists_a_failed_mode_apart() -> None:
    page = report_html(report_data(Path("set"), [_done("bm25"), _failed("gnn")], {"queries_evaluated": 2}))
    table, failed = page.split('id="failed"')
    assert "bm25" in table and "gnn" not in table  # no metrics row for it
    assert "gnn" in failed and "QueryError: no GNN checkpoint" in failed and page.count("<svg") == 2
    only_failed = report_html(report_data(Path("set"), [_failed("gnn")], {}))  # the first mode died
    assert "Failed modes" in only_failed and "<svg" not in only_failed


def test_a_resumed_run_keeps_the_finished_modes_and_reruns_the_failed() -> None:
    previous = [_done("bm25"), _failed("gnn"), _done("dense")]
    assert er.to_run(["bm25", "gnn", "rrf", "dense"], previous) == ["gnn", "rrf"]
    assert er.to_run(["bm25"], []) == ["bm25"]
    rerun = [_done("gnn", 90.0), _done("rrf")]
    merged = er.merge(previous, rerun)
    assert [r.mode for r in merged] == ["bm25", "gnn", "dense", "rrf"]  # a rerun mode keeps its place
    assert merged[1].error is None and merged[1].metrics["R@5"] == 90.0 and merged[0] is previous[0]
    assert [r.mode for r in er.merge(previous, [_failed("dense")])] == ["bm25", "gnn", "dense"]


def test_resuming_is_refused_for_another_dataset_query_set_or_options(tmp_path: Path) -> None:
    ident = run_identity(tmp_path / "set", QUERIES, 0, mmr=None, stage_caps=False)
    report = {er.RUN_KEY: ident, "modes": {}}
    path = tmp_path / "r.json"
    check_resumable(report, run_identity(tmp_path / "set", dict(QUERIES), 0, mmr=None, stage_caps=False), path)
    with pytest.raises(BadInputError, match=r"report of dataset .*other"):
        check_resumable(report, run_identity(tmp_path / "other", QUERIES, 0, mmr=None, stage_caps=False), path)
    first = dict(list(QUERIES.items())[:1])
    with pytest.raises(BadInputError, match=r"another query set \(2 queries, --limit none\) than this run's "
                                            r"\(1 queries, --limit 1\)"):
        check_resumable(report, run_identity(tmp_path / "set", first, 1, mmr=None, stage_caps=False), path)
    reworded = {**QUERIES, "q2": "Who won two Nobel Prizes?"}
    with pytest.raises(BadInputError, match="another query set"):
        check_resumable(report, run_identity(tmp_path / "set", reworded, 0, mmr=None, stage_caps=False), path)
    with pytest.raises(BadInputError, match=r"mmr: None, now 0\.7"):
        check_resumable(report, run_identity(tmp_path / "set", QUERIES, 0, mmr=0.7, stage_caps=False), path)
    with pytest.raises(BadInputError, match="does not say which run wrote it"):
        check_resumable({"modes": {}}, ident, path)


def test_load_report_reads_a_report_and_refuses_anything_else(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    assert er.load_report(path) is None
    er.write_report(path, Path("set"), [_done("bm25")], {"queries_evaluated": 2})
    found = er.load_report(path)
    assert found is not None and reports_from(found) == [_done("bm25")]
    path.write_text("{not json")
    with pytest.raises(BadInputError, match="not a readable evaluation report"):
        er.load_report(path)
    path.write_text("[1, 2]")
    with pytest.raises(BadInputError, match="not an evaluation report"):
        er.load_report(path)


def test_write_atomic_replaces_whole_files_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "r.json"
    er.write_atomic(path, "first")
    assert path.read_text() == "first" and path.stat().st_mode & 0o777 == 0o644
    os.chmod(path, 0o600)
    er.write_atomic(path, "second")
    assert path.read_text() == "second" and path.stat().st_mode & 0o777 == 0o600  # the file keeps its mode
    with pytest.raises(UnicodeEncodeError):
        er.write_atomic(path, "half written \ud800 then it fails")  # a lone surrogate: utf-8 refuses it mid-write
    assert path.read_text() == "second" and sorted(p.name for p in path.parent.iterdir()) == ["r.json"]
