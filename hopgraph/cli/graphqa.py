"""``hopgraph bench-graphqa``: the three-way graph-QA benchmark (LLM alone, + PCST subgraph, + GNN
triples) and the GNN alone, on graph documents."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from hopgraph.cli.common import console, load_settings, reported

if TYPE_CHECKING:
    from hopgraph.app.graphqa_bench import BenchReport


def bench_graphqa(
    dataset: Annotated[Path, typer.Argument(help="ExplaGraphs (a folder with train_dev.tsv, or the TSV) or a "
                                                 "graph-QA JSONL (graph documents with question and answer).")],
    limit: Annotated[int | None, typer.Option(min=10, help="Only the first N questions.")] = None,
    node_budget: Annotated[int, typer.Option(min=1, help="PCST: most nodes of a subgraph.")] = 50,
    epochs: Annotated[int, typer.Option(min=1, help="GNN training epochs.")] = 40,
    llm_questions: Annotated[int, typer.Option(min=0, help="Test questions sent to the LLM (3 requests "
                                                           "each), when llm.* names an endpoint.")] = 200,
    out: Annotated[Path | None, typer.Option(help="Write the report as JSON here.")] = None,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """Ingest the dataset's graphs as graph documents (into their own evaluation stores under
    <data_dir>/eval/), retrieve a PCST subgraph per question inside its document's graph, train the
    question-conditioned GNN on a training split and report, on the held-out split: accuracy of the GNN,
    a majority-class and a question-only baseline; exact match and token F1 of the LLM with the raw
    text, the PCST subgraph and the GNN-ranked triples ("no endpoint" without llm settings); and the
    retrieval-side figures (document hit rate, BFS fallback rate, connectedness, budget)."""
    s = load_settings()
    from dataclasses import replace

    from hopgraph.app.graphqa_bench import BenchConfig, GraphQaBench, chat_client
    from hopgraph.app.graphqa_data import read_graphqa
    from hopgraph.app.platform import Platform
    from hopgraph.cli.gnn import eval_settings
    from hopgraph.gpu.graph_classifier import ClassifierConfig

    with reported():
        questions = read_graphqa(dataset)[:limit]
    es = eval_settings(s, dataset, len(questions))
    es = es.model_copy(update={"communities": es.communities.model_copy(update={"enabled": False})})
    cfg = BenchConfig(node_budget=node_budget, llm_questions=llm_questions,
                      classifier=replace(ClassifierConfig(), epochs=epochs))
    with reported(), Platform(es) as p:
        chat = chat_client(s)
        report = GraphQaBench(p, cfg, chat).run(questions, s.data_dir / "eval" / "graphqa" / dataset.stem, progress)
    _print(report)
    if out is not None:
        out.write_text(report.json(), encoding="utf-8")
        console.print(f"wrote {out}")


def _print(report: BenchReport) -> None:
    console.print(f"{report.questions} questions: {report.train} to train the GNN, {report.test} held out")
    table = Table("answerer (held-out split)", "accuracy / exact match", "token F1")
    for name, acc in report.accuracy.items():
        table.add_row(name.replace("_", " "), str(acc), "")
    for name, got in report.llm.items():
        if isinstance(got, str):
            table.add_row(name.replace("_", " "), got, got)
        else:
            table.add_row(f"{name.replace('_', ' ')} ({got['questions']:.0f} q)", f"{got['exact_match']}",
                          f"{got['token_f1']}")
    console.print(table)
    side = Table("retrieval side", "value")
    for key, value in report.retrieval.items():
        side.add_row(key, str(value))
    console.print(side)
