"""The ``hopgraph`` command line (typer)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.logging import RichHandler
from rich.markup import escape
from rich.table import Table

from hopgraph.cli import gnn as _gnn
from hopgraph.cli import service as _service
from hopgraph.core.settings import Settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

app = typer.Typer(
    help="hopgraph: ingest documents into a knowledge graph (ArcadeDB/Neo4j + Qdrant) and query it.\n\n"
    "Settings come from HOPGRAPH_* environment variables (nested with __, e.g. "
    "HOPGRAPH_GRAPH__BACKEND=neo4j) or ./hopgraph.toml; the default stores live in ./.hopgraph/.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
db_app = typer.Typer(help="Manage the embedded ArcadeDB graph server.", no_args_is_help=True)
app.add_typer(db_app, name="db")
console = Console()
err = Console(stderr=True)


def _settings() -> Settings:
    s = Settings()
    logging.basicConfig(level=s.log_level.upper(), format="%(message)s", datefmt="[%X]",
                        handlers=[RichHandler(console=err, show_path=False)])
    for noisy in ("neo4j", "httpx", "sentence_transformers", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return s


def _fail(exc: Exception) -> typer.Exit:
    err.print(f"[bold red]error:[/] {exc}")
    return typer.Exit(code=1)


def _known_errors() -> tuple[type[Exception], ...]:
    from graphdb.arcadedb_server import GraphServerError
    from graphdb.bolt import GraphStoreError
    from graphdb.migrations import MigrationError
    from ingest.extraction import ExtractionError
    from retrieval.modes import QueryError
    from vectors.embedders import EmbedderError
    from vectors.store import VectorStoreError

    return (GraphServerError, GraphStoreError, MigrationError, VectorStoreError, QueryError,
            EmbedderError, ExtractionError)


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Text files, or directories searched recursively.")],
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Ingest documents. Unchanged documents are skipped; changed ones are re-extracted; an
    interrupted run is completed by running it again."""
    from hopgraph.app.platform import Platform

    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise _fail(FileNotFoundError(f"no such file or directory: {', '.join(missing)}"))
    s = _settings()
    _not_served(s)
    try:
        with Platform(s) as p:
            report = p.ingest(paths, progress=progress)
    except _known_errors() as exc:
        raise _fail(exc) from exc
    console.print(
        f"[bold]{report.documents_ingested}[/] ingested, {report.documents_unchanged} unchanged, "
        f"{len(report.skipped)} skipped of {report.documents_seen} documents; {report.chunks} chunks, "
        f"{report.entities} entities, {report.mentions} mentions in {report.seconds:.1f}s"
    )
    for source, reason in report.skipped.items():
        console.print(f"  [yellow]skipped[/] {source}: {reason}")


@app.command()
def query(
    text: Annotated[str, typer.Argument(help="The question or search text.")],
    mode: Annotated[str, typer.Option(help="graph (default, strongest), naive/dense, bm25, rrf, local, global, "
                                           "hybrid, mix, or image (text -> images).")] = "graph",
    top_k: Annotated[int, typer.Option(min=1, max=1000, help="Results to return.")] = 5,
    explain: Annotated[bool, typer.Option(help="Show seeds, expansion paths and per-signal scores.")] = False,
    context: Annotated[bool, typer.Option(help="Print the cited context built for an LLM.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    image: Annotated[bool, typer.Option("--image", help="TEXT is the path of an image: find similar images "
                                                        "(needs CLIP, settings clip.*).")] = False,
) -> None:
    """Query the graph; prints ranked chunks with their citations [file · document · chunk]."""
    from hopgraph.app.platform import Platform
    from retrieval.modes import MODES

    if mode not in MODES:
        raise _fail(ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}"))
    if image and not Path(text).is_file():
        raise _fail(FileNotFoundError(f"no image file {text}"))
    try:
        with Platform(_settings()) as p:
            result = (p.retriever.query_image(text, top_k=top_k) if image
                      else p.query(text, mode=mode, top_k=top_k, explain=explain))
    except _known_errors() as exc:
        raise _fail(exc) from exc
    if as_json:
        console.print_json(result.model_dump_json())
        return
    console.print(f"[bold]{escape(result.query)}[/]  (mode {result.mode}, {result.timings_ms.get('total', 0):.0f} ms)")
    for note in result.notes:
        console.print(f"  [yellow]{escape(note)}[/]")
    if not result.results:
        console.print("  no results")
    for r in result.results:
        snippet = " ".join(r.text.split())
        snippet = snippet if len(snippet) <= 300 else snippet[:297] + "..."
        console.print(f"  [cyan]{r.rank}.[/] ({r.score:.3f}) {escape(snippet)}")
        cite = escape(f"[{Path(r.citation.source).name} · {r.citation.document_id} · {r.citation.chunk_id}]")
        via = escape(f" via {', '.join(r.entities)}") if r.entities else ""
        console.print(f"     [dim]{cite}{via}[/]")
    if explain:
        console.rule("explain")
        console.print_json(json.dumps({**result.explain, "timings_ms": result.timings_ms}))
    if context and result.context:
        console.rule("cited context")
        console.print(escape(result.context))


@app.command("eval")
def eval_cmd(
    dataset: Annotated[Path, typer.Argument(help="A BEIR-layout folder: corpus.jsonl, queries.jsonl, qrels/test.tsv.")],
    modes: Annotated[str, typer.Option(help="Comma-separated modes and ablations (default: all).")] = "",
    out: Annotated[Path | None, typer.Option(help="Write the per-query JSON report here.")] = None,
    limit: Annotated[int, typer.Option(min=0, help="Only the first N queries (0 = all).")] = 0,
    holdout: Annotated[bool, typer.Option(help="Only the test queries of the GNN checkpoint (never trained on).")
                       ] = False,
) -> None:
    """Ingest a BEIR corpus (once; reruns reuse it) and report R@2/5/10, nDCG@10, MRR@10 and latency
    for every mode, the BM25/dense/RRF baselines and the ablations of graph mode, in one run."""
    import time

    from hopgraph.app.platform import Platform
    from retrieval.evaluation import (
        DEFAULT_MODES,
        IMAGE_MODES,
        DatasetError,
        evaluate,
        is_image_corpus,
        load_dataset,
        write_report,
    )

    try:
        ds = load_dataset(dataset)
    except DatasetError as exc:
        raise _fail(exc) from exc
    images = is_image_corpus(ds.corpus)
    chosen = [m.strip() for m in modes.split(",") if m.strip()] or list(IMAGE_MODES if images else DEFAULT_MODES)
    if limit:
        ds.queries = dict(list(ds.queries.items())[:limit])
    s = _gnn.eval_settings(_settings(), dataset, len(ds.queries))
    if holdout:
        try:
            held = _gnn.holdout_queries(s)
        except ValueError as exc:
            raise _fail(exc) from exc
        ds.queries = {q: t for q, t in ds.queries.items() if q in held}
        console.print(f"--holdout: {len(ds.queries)} queries the GNN never saw in training")
    if not modes and not images and s.gnn_checkpoint_path.is_file():
        chosen.append("gnn")
    try:
        with Platform(s) as p:
            report = p.ingest([ds.corpus], progress=True)
            console.print(f"corpus: {report.documents_ingested} ingested, {report.documents_unchanged} unchanged "
                          f"({report.seconds:.0f}s); {len(ds.queries)} queries")
            ids = p.corpus_ids()
            t = time.perf_counter()
            p.embedder.embed(list(ds.queries.values()))  # cached: every mode is timed on its own work
            per_query = (time.perf_counter() - t) * 1000 / len(ds.queries)
            console.print(f"query embeddings computed up front ({per_query:.1f} ms per query, batched); "
                          "the latencies below exclude them")
            reps = evaluate(lambda q, m, c: p.query(q, mode=m, retrieval=c), ids, ds, chosen, s.retrieval,
                            progress=True)
    except _known_errors() as exc:
        raise _fail(exc) from exc
    cols = ("R@1", "R@5", "R@10", "MRR@10") if images else ("R@2", "R@5", "R@10", "nDCG@10", "MRR@10")
    table = Table("mode", *cols, "p50 ms", "p95 ms", title=str(dataset))
    for r in reps:
        m = r.metrics
        table.add_row(r.mode, *(f"{m[k]:.1f}" for k in cols), f"{r.latency_ms['p50']:.1f}",
                      f"{r.latency_ms['p95']:.1f}")
    console.print(table)
    by_mode = {r.mode: r for r in reps}
    if "image" in by_mode and "dense" in by_mode:
        added = by_mode["image"].latency_ms["p50"] - by_mode["dense"].latency_ms["p50"]
        console.print(f"graph work adds {added:.1f} ms (p50) over caption-embedding-only retrieval")
    if out:
        write_report(out, dataset, reps, {"queries_evaluated": len(ds.queries)})
        console.print(f"per-query report: {out}")


@app.command()
def delete(doc_id: Annotated[str, typer.Argument(help="Document id (see `hopgraph documents`).")]) -> None:
    """Delete a document, its chunks, mentions, orphaned entities and vectors."""
    from hopgraph.app.platform import Platform

    s = _settings()
    _not_served(s)
    try:
        with Platform(s) as p:
            found = p.delete(doc_id)
    except _known_errors() as exc:
        raise _fail(exc) from exc
    if not found:
        raise _fail(LookupError(f"no document with id {doc_id!r}"))
    console.print(f"deleted {doc_id}")


@app.command()
def documents(limit: Annotated[int, typer.Option(min=1)] = 100, skip: Annotated[int, typer.Option(min=0)] = 0
              ) -> None:
    """List ingested documents with their ids and status."""
    from hopgraph.app.platform import Platform

    try:
        with Platform(_settings()) as p:
            docs = p.graph.list_documents(skip=skip, limit=limit)
    except _known_errors() as exc:
        raise _fail(exc) from exc
    table = Table("id", "status", "source")
    for d in docs:
        table.add_row(d.id, d.status or "", d.source or "")
    console.print(table)


@app.command()
def status(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show the stores in use and their counts."""
    from hopgraph.app.platform import Platform

    s = _settings()
    try:
        with Platform(s) as p:
            st = p.status()
    except _known_errors() as exc:
        raise _fail(exc) from exc
    st["graph_backend"] = s.graph.backend
    st["vector_backend"] = s.vectors.backend
    st["data_dir"] = str(s.data_dir.resolve())
    if as_json:
        console.print_json(json.dumps(st))
        return
    console.print(f"data dir: {st['data_dir']}  graph: {s.graph.backend} (version {st['graph_version']})  "
                  f"vectors: {s.vectors.backend}")
    table = Table("store", "item", "count")
    for k, v in st["graph"].items():
        table.add_row("graph", k, str(v))
    for k, v in st["vectors"].items():
        table.add_row("vectors", k, str(v))
    console.print(table)


@app.command()
def migrate() -> None:
    """Apply pending graph migrations (also done whenever the graph is opened)."""
    from graphdb.factory import open_graph_store

    try:
        store = open_graph_store(_settings(), migrate=False)
        try:
            applied = store.migrate()
        finally:
            store.close()
    except _known_errors() as exc:
        raise _fail(exc) from exc
    console.print(f"applied {len(applied)} migration(s): {', '.join(applied) or 'none pending'}")


def _parse_params(pairs: list[str]) -> dict[str, object]:
    params: dict[str, object] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.isidentifier():
            raise typer.BadParameter(f"expected NAME=VALUE, got {pair!r}", param_hint="--param")
        try:
            params[key] = json.loads(raw)  # numbers, booleans, lists, quoted strings
        except json.JSONDecodeError:
            params[key] = raw
    return params


@app.command()
def cypher(
    statement: Annotated[str, typer.Argument(help="A read-only Cypher statement, e.g. \"MATCH (e:Entity) RETURN "
                                                  "e.name LIMIT 10\".")],
    param: Annotated[list[str], typer.Option("--param", "-p", help="NAME=VALUE (JSON or plain text); "
                                             "passed as a query parameter, never interpolated.")] = [],  # noqa: B006
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, json or csv.")] = "table",
    limit: Annotated[int, typer.Option(min=1, max=100_000, help="Row limit.")] = 1000,
    timeout: Annotated[float, typer.Option(min=0.1, help="Transaction timeout in seconds.")] = 30.0,
) -> None:
    """Explore the graph with read-only Cypher. Write clauses (CREATE, MERGE, SET, DELETE, REMOVE,
    DROP, LOAD CSV, FOREACH, CALL … IN TRANSACTIONS, writing procedures) are refused before they run."""
    import csv
    import sys

    from graphdb.factory import open_graph_store
    from graphdb.readonly import ReadOnlyViolation, check_read_only

    if fmt not in ("table", "json", "csv"):
        raise typer.BadParameter("choose table, json or csv", param_hint="--format")
    params = _parse_params(param)
    try:
        check_read_only(statement)
        store = open_graph_store(_settings())
        try:
            res = store.explore(statement, params, row_limit=limit, timeout_s=timeout)
        finally:
            store.close()
    except ReadOnlyViolation as exc:
        raise _fail(ValueError(f"refused: {exc}")) from exc
    except _known_errors() as exc:
        raise _fail(exc) from exc
    except Exception as exc:  # a Cypher syntax or runtime error from the server
        raise _fail(exc) from exc
    if fmt == "json":
        console.print_json(json.dumps({"columns": res.columns, "rows": res.rows, "truncated": res.truncated},
                                      default=str))
    elif fmt == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(res.columns)
        writer.writerows([[json.dumps(v, default=str) if isinstance(v, dict | list) else v for v in row]
                          for row in res.rows])
    else:
        table = Table(*res.columns)
        for row in res.rows:
            table.add_row(*[escape(json.dumps(v, default=str) if isinstance(v, dict | list) else str(v))
                            for v in row])
        console.print(table)
    if res.truncated:
        err.print(f"[yellow]truncated at {limit} rows[/] (raise --limit)")


@db_app.command("start")
def db_start() -> None:
    """Start the embedded ArcadeDB server (or find the running one)."""
    from graphdb.arcadedb_server import EmbeddedArcadeDB, GraphServerError

    s = _settings()
    try:
        info = EmbeddedArcadeDB(s.graph_dir, s.graph.model_copy(update={"auto_start": True})).ensure_running()
    except GraphServerError as exc:
        raise _fail(exc) from exc
    console.print(f"graph server running: pid {info.pid}, bolt {info.uri}, http {info.host}:{info.http_port}")


@db_app.command("stop")
def db_stop() -> None:
    """Stop the embedded ArcadeDB server cleanly."""
    from graphdb.arcadedb_server import EmbeddedArcadeDB

    s = _settings()
    stopped = EmbeddedArcadeDB(s.graph_dir, s.graph).stop()
    console.print("graph server stopped" if stopped else "graph server was not running")


@db_app.command("status")
def db_status() -> None:
    """Say whether the embedded server is running."""
    from graphdb.arcadedb_server import EmbeddedArcadeDB

    s = _settings()
    info = EmbeddedArcadeDB(s.graph_dir, s.graph).status()
    if info is None:
        console.print("graph server not running")
        raise typer.Exit(code=3)
    console.print(f"graph server running: pid {info.pid}, bolt {info.uri}")


def _not_served(s: Settings) -> None:
    """Writes while `hopgraph serve` owns the embedded stores must go through its API."""
    from api.server import embedded_owner

    other = embedded_owner(s)
    if other is not None:
        raise _fail(RuntimeError(
            f"hopgraph serve (pid {other.pid}) owns the stores in {s.data_dir}; send the work through its API "
            f"(POST {other.url}/documents, DELETE {other.url}/documents/ID) or stop it first"))


_service.register(app, _settings, _fail)
_gnn.register(app, _settings, _fail, _known_errors)

if __name__ == "__main__":
    app()
