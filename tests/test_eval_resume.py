"""``hopgraph eval`` as a real process when a mode dies: the other modes are reported, the failure is
recorded with its error, and ``--resume`` reruns only what did not finish."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from tests.paths import empty_config
from tests.processes import cli_env

DOCS = {
    "observatory": "The Vexmoor Observatory was founded by Zorblax Quintana in 1893 in Scotland.",
    "quintana": "Zorblax Quintana was a Scottish astronomer who studied comets with Ada Lovelace.",
    "curie": "Marie Curie won the Nobel Prize in Physics and the Nobel Prize in Chemistry.",
    "turing": "Alan Turing worked at Bletchley Park and wrote about computable numbers.",
}
QUERIES = {"q1": "Who founded the Vexmoor Observatory?", "q2": "Which scientist won two Nobel Prizes?",
           "q3": "Where did Alan Turing work?"}
QRELS = {"q1": "observatory", "q2": "curie", "q3": "turing"}


def _flat(text: str) -> str:
    """Console text without the line breaks and spaces of its wrapping."""
    return "".join(text.split())


def _eval(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hopgraph.cli", "eval", *args], capture_output=True, text=True,
                          env=cli_env(env), timeout=300)


def test_a_failing_mode_is_recorded_and_resume_runs_only_what_did_not_finish(arcadedb: ServerInfo,
                                                                              tmp_path: Path) -> None:
    data = tmp_path / "resumeset"  # its own graph database: eval_resumeset
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": d, "title": d.title(), "text": t})
                                                 for d, t in DOCS.items()))
    (data / "queries.jsonl").write_text("\n".join(json.dumps({"_id": q, "text": t}) for q, t in QUERIES.items()))
    (data / "qrels" / "test.tsv").write_text("".join(f"{q}\t{d}\t1\n" for q, d in QRELS.items()))
    env = {"HOPGRAPH_DATA_DIR": str(tmp_path / "data"), "HOPGRAPH_GRAPH__URI": arcadedb.uri,
           "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
           "HOPGRAPH_CONFIG": empty_config(tmp_path)}
    report, page = tmp_path / "r.json", tmp_path / "r.html"
    # gnn without a trained checkpoint raises: the modes before and after it still run
    out = _eval([str(data), "--modes", "bm25,gnn,dense", "--out", str(report), "--html", str(page)], env)
    assert out.returncode == 1, out.stdout + out.stderr  # a hopgraph error, reported at the end
    assert _flat("mode gnn failed: QueryError: no GNN checkpoint") in _flat(out.stdout)
    assert _flat("1 of 3 mode(s) failed: gnn") in _flat(out.stderr) and "--resume" in out.stderr
    first = json.loads(report.read_text())
    assert list(first["modes"]) == ["bm25", "gnn", "dense"] and list(first["queries"]) == ["bm25", "dense"]
    assert first["modes"]["gnn"]["error"].startswith("QueryError: no GNN checkpoint")
    assert first["modes"]["dense"]["metrics"]["R@5"] > 0 and first["queries_evaluated"] == 3
    assert "Failed modes" in page.read_text() and not list(tmp_path.glob(".r.*"))  # no temporary left

    out = _eval([str(data), "--modes", "bm25,gnn,dense", "--out", str(report), "--resume"], env)
    assert out.returncode == 1, out.stdout + out.stderr
    assert _flat("--resume: 2 mode(s) already in") in _flat(out.stdout) and _flat("1 to run (gnn)") in _flat(out.stdout)
    assert "mode bm25:" not in out.stdout and "mode dense:" not in out.stdout  # not run again
    again = json.loads(report.read_text())
    assert again["queries"] == first["queries"]  # the finished modes' per-query figures (latencies too) are kept
    assert again["modes"]["gnn"]["error"].startswith("QueryError") and again["gains"] == first["gains"]

    out = _eval([str(data), "--modes", "bm25", "--out", str(report), "--resume", "--limit", "2"], env)
    assert out.returncode == 2 and _flat("another query set (3 queries, --limit none)") in _flat(out.stderr), out.stderr

    out = _eval([str(data), "--modes", "rrf", "--limit", "1"], env)  # no --out: the set's own folder
    default = tmp_path / "data" / "eval" / "resumeset" / "report.json"
    assert out.returncode == 0, out.stdout + out.stderr
    assert _flat(f"per-query report: {default}") in _flat(out.stdout)
    assert list(json.loads(default.read_text())["modes"]) == ["rrf"]
