"""The command line, run as a real process against the session's ArcadeDB server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from hopgraph.api.schemas import QueryRequest
from hopgraph.core.limits import QUERY_TEXT_MAX
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.graphdb.migrations import discover, packaged
from tests.paths import empty_config
from tests.processes import cli_env


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hopgraph.cli", *args], capture_output=True, text=True,
                          env=cli_env(env), timeout=300)


def test_help_explains_the_commands() -> None:
    out = _run(["--help"])
    assert out.returncode == 0
    for cmd in ("ingest", "query", "delete", "status", "db", "migrate", "modes", "eval", "train-gnn", "cypher",
                "communities"):
        assert cmd in out.stdout
    assert "HOPGRAPH_" in out.stdout


def test_bad_input_gets_a_clear_error(tmp_path: Path) -> None:
    out = _run(["query", "anything", "--mode", "telepathy"])
    assert out.returncode == 2 and "unknown mode 'telepathy'" in out.stderr  # bad input
    out = _run(["ingest", str(tmp_path / "missing")])
    assert out.returncode == 4 and "no such file or directory" in out.stderr  # not found
    out = _run(["ingest", str(tmp_path / "nothing*.txt")])
    assert out.returncode == 4 and "nothing*.txt" in out.stderr  # a glob that matches nothing
    bad = tmp_path / "bad.toml"
    for toml, says in (("[retreival]\ntop_k = 3\n", "did you mean 'retrieval'"),
                       ('[retrieval]\ntop_k = "many"\n', "retrieval.top_k: Input should be a valid integer"),
                       ("[retrieval\n", "line 1")):
        bad.write_text(toml)
        out = _run(["status"], {"HOPGRAPH_CONFIG": str(bad)})
        assert out.returncode == 2 and says in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    out = _run(["status"], {"HOPGRAPH_CONFIG": str(tmp_path / "nope.toml")})
    assert out.returncode == 2 and "does not exist" in out.stderr


def test_an_ingest_with_nothing_to_ingest_fails_clearly(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    out = _run(["ingest", str(empty)])
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"nothing to ingest: {empty} holds no file with a known extension (ingest.extensions)" in out.stderr
    other = tmp_path / "other"
    other.mkdir()
    (other / "data.xyz").write_text("not a known format")
    out = _run(["ingest", str(other)])
    assert out.returncode == 2 and "the files there end in .xyz" in out.stderr and "--allow-empty" in out.stderr


def test_query_text_has_the_api_limit() -> None:
    assert QueryRequest.model_json_schema()["properties"]["text"]["maxLength"] == QUERY_TEXT_MAX
    for cmd in ("query", "ask"):
        out = _run([cmd, "x" * (QUERY_TEXT_MAX + 1)])
        assert out.returncode == 2, out.stdout + out.stderr
        assert f"is {QUERY_TEXT_MAX + 1:,} characters long; at most {QUERY_TEXT_MAX:,}" in out.stderr
    out = _run(["query", "   "])
    assert out.returncode == 2 and "the query text is blank" in out.stderr


def test_ingest_query_status_delete(arcadedb: ServerInfo, tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "fact.txt").write_text("The Vexmoor Observatory was founded by Zorblax Quintana in 1893.")
    (corpus / "bad.txt").write_bytes(b"\x00\x01")
    env = {
        "HOPGRAPH_DATA_DIR": str(tmp_path / "data"), "HOPGRAPH_GRAPH__URI": arcadedb.uri,
        "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
        "HOPGRAPH_GRAPH__DATABASE": "clitest", "HOPGRAPH_CONFIG": empty_config(tmp_path),
    }
    out = _run(["ingest", "--no-progress", str(corpus / "*.txt")], env)  # a glob, as a user quotes it
    assert out.returncode == 0, out.stderr
    assert "1 ingested" in out.stdout and "binary file" in out.stdout
    out = _run(["query", "Who founded Vexmoor?", "--mode", "local"], env)
    assert out.returncode == 0, out.stderr
    assert "Zorblax Quintana" in out.stdout and "fact.txt" in out.stdout
    out = _run(["query", "Who founded Vexmoor?", "--mode", "pcst", "--json", "--no-context"], env)
    answer = json.loads(out.stdout)
    assert out.returncode == 0 and answer["degraded"] is False and answer["mode"] == "pcst" and answer["results"]
    photo = tmp_path / "photo.png"
    photo.write_bytes(bytes.fromhex("89504e470d0a1a0a"))  # only the image query's CLIP check is reached
    out = _run(["query", str(photo), "--image"], env)
    assert out.returncode == 2 and "image queries need CLIP" in out.stderr
    out = _run(["status", "--json"], env)
    assert '"Document": 1' in out.stdout
    out = _run(["export", str(tmp_path / "g.graphml"), "--format", "graphml"], env)
    assert out.returncode == 0 and "wrote" in out.stdout and (tmp_path / "g.graphml").stat().st_size > 0, out.stderr
    out = _run(["communities", "--rebuild"], env)
    assert out.returncode == 0 and "communities in" in out.stdout and "written" in out.stdout, out.stderr
    listing = _run(["documents", "--json"], env)
    docs = json.loads(listing.stdout)
    assert [d["source"] for d in docs] == [str(corpus / "fact.txt")] and docs[0]["status"] == "complete"
    assert docs[0]["groups"] == []  # public
    doc_id = docs[0]["id"]
    out = _run(["delete", str(corpus / "*.txt"), str(tmp_path / "nothing-here.md")], env)
    assert out.returncode == 4 and "nothing-here.md" in out.stderr and "nothing deleted" in out.stderr
    out = _run(["delete", "--dry-run", str(corpus / "*.txt")], env)
    assert out.returncode == 0 and doc_id in out.stdout and "would delete 1 document(s)" in out.stdout
    out = _run(["delete", doc_id], env)
    assert out.returncode == 0 and f"deleted {doc_id}" in out.stdout
    out = _run(["delete", doc_id], env)
    assert out.returncode == 4 and "no document" in out.stderr


def test_cypher_command(arcadedb: ServerInfo, tmp_path: Path) -> None:
    env = {
        "HOPGRAPH_DATA_DIR": str(tmp_path / "data"), "HOPGRAPH_GRAPH__URI": arcadedb.uri,
        "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
        "HOPGRAPH_GRAPH__DATABASE": "clicypher", "HOPGRAPH_CONFIG": empty_config(tmp_path),
    }
    out = _run(["cypher", "MATCH (m:Migration) WHERE m.version >= $v RETURN m.name AS name ORDER BY m.version",
                "--param", "v=2", "--format", "csv"], env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:2] == ["name", "indexes"]
    out = _run(["cypher", "MATCH (m:Migration) RETURN m.version AS v", "--format", "json", "--limit", "1"], env)
    assert '"truncated": true' in out.stdout and "truncated at 1 rows" in out.stderr
    out = _run(["cypher", "match (m:Migration) /* x */ detach DELETE m"], env)
    assert out.returncode == 2 and "refused" in out.stderr
    out = _run(["cypher", "MATCH (m:Migration) RETURN count(m) AS n", "--format", "json"], env)
    n_files = len(discover(packaged()))
    assert out.returncode == 0 and json.loads(out.stdout)["rows"] == [[n_files]]  # nothing was deleted
    out = _run(["cypher", "MATCH (n RETURN n"], env)
    assert out.returncode == 2 and "rejected the statement" in out.stderr and "{" not in out.stderr
    out = _run(["cypher", "MATCH (m:Migration) WHERE m.version < 0 RETURN m.name AS name"], env)
    assert out.returncode == 0 and out.stdout.startswith("no rows")


def test_eval_writes_json_and_html_reports_and_tree_builds_the_raptor_tree(arcadedb: ServerInfo,
                                                                            tmp_path: Path) -> None:
    data = tmp_path / "set"
    (data / "qrels").mkdir(parents=True)
    sample = sorted((Path(__file__).resolve().parents[1] / "hopgraph" / "sample").glob("*.txt"))
    (data / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": p.stem, "title": p.stem.title(),
                                                             "text": p.read_text()}) for p in sample))
    (data / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in (
        {"_id": "q1", "text": "Who founded the Vexmoor Observatory?"},
        {"_id": "q2", "text": "Which physicist won two Nobel Prizes?"})))
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tobservatory\t1\nq2\tcurie\t1\n")
    (data / "qrels" / "sections.tsv").write_text("query-id\tcorpus-id\tsection\nq1\tobservatory\t0\nq2\tcurie\t0\n")
    env = {"HOPGRAPH_DATA_DIR": str(tmp_path / "data"), "HOPGRAPH_GRAPH__URI": arcadedb.uri,
           "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
           "HOPGRAPH_GRAPH__DATABASE": "clieval", "HOPGRAPH_CONFIG": empty_config(tmp_path)}
    out = _run(["eval", str(data), "--modes", "dense,raptor,sections", "--out", str(tmp_path / "r.json"),
                "--html", str(tmp_path / "r.html")], env)
    assert out.returncode == 0, out.stderr
    assert "RAPTOR tree: 1 branch(es), 1 built" in out.stdout  # built on demand for mode raptor
    report = json.loads((tmp_path / "r.json").read_text())
    assert set(report["modes"]) == {"dense", "raptor", "sections"} and report["queries_evaluated"] == 2
    assert "document+section" in out.stdout and report["modes"]["sections"]["metrics"]["DS@1"] == 100.0
    page = (tmp_path / "r.html").read_text()
    assert page.count("<svg") == 2 and "raptor" in page and "<script" not in page
    env["HOPGRAPH_GRAPH__DATABASE"] = "clitree"
    out = _run(["ingest", "--no-progress", str(data / "corpus.jsonl")], env)
    assert out.returncode == 0, out.stderr
    out = _run(["tree"], env)
    assert out.returncode == 0 and "1 built" in out.stdout, out.stderr
    out = _run(["tree"], env)  # nothing changed: nothing rebuilt
    assert out.returncode == 0 and "0 built" in out.stdout and "1 unchanged" in out.stdout, out.stdout


def test_ingest_expands_globs(tmp_path: Path) -> None:
    from hopgraph.cli.documents import expand_globs

    (tmp_path / "a").mkdir()
    for name in ("a/one.md", "a/two.txt", "three.md"):
        (tmp_path / name).write_text("x")
    found = expand_globs([tmp_path / "**" / "*.md", tmp_path / "a", tmp_path / "none*.md"])
    assert found == [tmp_path / "a" / "one.md", tmp_path / "three.md", tmp_path / "a", tmp_path / "none*.md"]


def test_query_counts_model_loading_apart_and_explains_readably(arcadedb: ServerInfo, tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "fact.txt").write_text("The Vexmoor Observatory was founded by Zorblax Quintana in 1893. "
                                     "Zorblax Quintana studied at the University of Kelderwick.")
    env = {"HOPGRAPH_DATA_DIR": str(tmp_path / "data"), "HOPGRAPH_GRAPH__URI": arcadedb.uri,
           "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
           "HOPGRAPH_GRAPH__DATABASE": "cliexplain", "HOPGRAPH_CONFIG": empty_config(tmp_path)}
    assert _run(["ingest", "--no-progress", str(corpus)], env).returncode == 0
    question = "Who founded the Vexmoor Observatory?"
    # the model itself (the ONNX copy of questions off): loading torch takes seconds, counted apart
    env["HOPGRAPH_EMBEDDER__ONNX_QUERIES"] = "false"
    out = _run(["query", question, "--mode", "graph", "--json", "--no-context"], env)
    by_model = json.loads(out.stdout)
    timings = by_model["timings_ms"]  # stdout is the JSON alone
    assert out.returncode == 0 and {"model_load", "total", "embed"} <= set(timings), timings
    out = _run(["query", question, "--mode", "graph", "--explain", "--no-context"], env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    head = re.search(r"\(mode graph, (\d+) ms; models loaded in \d+\.\d s\)", lines[0])
    assert head is not None, lines[0]  # the cold process's model loading is reported apart from the query
    text = " ".join(out.stdout.split())
    assert f"total {head[1]} ms; models loaded in" in text  # the explain's timings: the same total, load apart
    assert len(lines) < 80 and '"nodes"' not in out.stdout, out.stdout  # no raw JSON
    assert "seeds: where the walk started" in out.stdout and "Vexmoor Observatory" in out.stdout
    n_results = sum(1 for line in lines if re.match(r"  \d+\. \(", line))
    assert n_results >= 1 and sum(1 for line in lines if "signals:" in line) == n_results, out.stdout
    assert "subgraph:" in out.stdout and "--explain --json prints it whole" in text
    del env["HOPGRAPH_EMBEDDER__ONNX_QUERIES"]  # the default: questions from the ONNX copy
    out = _run(["query", question, "--mode", "graph", "--explain", "--json", "--no-context"], env)
    by_copy = json.loads(out.stdout)
    raw = by_copy["explain"]
    assert {"seeds", "signals", "subgraph"} <= set(raw) and raw["subgraph"]["nodes"], raw.keys()
    assert [r["text"] for r in by_copy["results"]] == [r["text"] for r in by_model["results"]]
