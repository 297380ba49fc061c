"""Commands that read: ``query`` and ``eval``."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

from hopgraph.cli.common import console, err, fail, load_settings, reported
from hopgraph.cli.explain_view import print_explain, took
from hopgraph.cli.gnn import eval_settings, holdout_queries
from hopgraph.core.errors import BadInputError, NotFoundError
from hopgraph.core.limits import QUERY_TEXT_MAX, TOP_K_MAX, check_query_text
from hopgraph.core.records import QueryResult
from hopgraph.evaluation import report as eval_report
from hopgraph.evaluation.report import ModeReport
from hopgraph.retrieval.registry import REGISTRY

if TYPE_CHECKING:
    from hopgraph.core.settings import Settings
    from hopgraph.evaluation.evaluate import Dataset


def query(
    text: Annotated[str, typer.Argument(help=f"The question or search text (at most {QUERY_TEXT_MAX:,} "
                                             "characters, as over HTTP).")],
    mode: Annotated[str, typer.Option(metavar="MODE", help=f"{', '.join(REGISTRY.names)} (`hopgraph modes` says "
                                                           "what each does).")] = "graph",
    top_k: Annotated[int, typer.Option(min=1, max=TOP_K_MAX, help="Results to return.")] = 5,
    explain: Annotated[bool, typer.Option(help="Explain the ranking: the seeds and where they came from, per result "
                                               "the signals that scored it and the path that reached it, the stage "
                                               "timings (lists capped; with --json: the full explain object, "
                                               "subgraph included).")] = False,
    context: Annotated[bool, typer.Option(help="Print the cited context built for an LLM.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    image: Annotated[bool, typer.Option("--image", help="TEXT is the path of an image: find similar images "
                                                        "(needs CLIP, settings clip.*).")] = False,
) -> None:
    """Query the graph; prints ranked chunks with their citations \\[file · document · chunk]."""
    with reported():
        REGISTRY.check(mode)
        if not image:
            check_query_text(text)
    if image and not Path(text).is_file():
        raise fail(NotFoundError(f"no image file {text}"))
    s = load_settings()
    from hopgraph.app.ownership import embedded_owner

    server = embedded_owner(s)
    if server is not None and not image:  # `hopgraph serve` owns the stores: ask it
        from hopgraph.cli import remote

        with reported():
            result = remote.query(server.url, text, mode, top_k, explain)
    else:
        from hopgraph.app.platform import Platform  # after the checks: a bad mode is refused at once

        needed = not image and REGISTRY.entries[mode].needs_vector
        with reported(), Platform(s) as p, loading(p.question_embedder, needed):
            result = (p.query_image(text, top_k=top_k) if image
                      else p.query(text, mode=mode, top_k=top_k, explain=explain))
    if as_json:
        console.print_json(result.model_dump_json())
        return
    _print_result(result, explain, context)


def modes() -> None:
    """List the query modes, what each does, the settings it reads (beyond the shared ones), the
    ablations `hopgraph eval` reports for it, and whether API keys with access groups may use it."""
    table = Table("mode", "how it ranks", Column("settings (retrieval.*)", overflow="fold"), "ablations",
                  "keys with groups")
    for e in REGISTRY.entries.values():
        table.add_row(e.name, e.summary, ", ".join(REGISTRY.setting_keys(e.name)), ", ".join(e.ablations),
                      "yes" if e.views else "")
    console.print(table)


class _Loading(Protocol):
    """What ``loading`` uses of an embedder: its name, and starting or waiting for its model."""

    @property
    def name(self) -> str: ...

    def warm(self) -> None: ...

    def load(self) -> bool: ...


@contextlib.contextmanager
def loading(embedder: _Loading, needed: bool, out: Console = err) -> Iterator[None]:
    """Start loading the embedder when the query ``needed`` it; on a terminal, say so on ``out`` (stderr)
    until it is loaded, while the query goes on (stdout and --json stay clean)."""
    if not needed:
        yield
        return
    embedder.warm()  # loads while the stores and the index state open
    if not out.is_terminal:
        yield
        return
    with out.status(f"loading the embedder ({escape(embedder.name)})…") as status:
        def wait() -> None:
            with contextlib.suppress(Exception):  # a failed load is the query's error to report
                embedder.load()
                status.update("querying…")

        threading.Thread(target=wait, name="embedder-status", daemon=True).start()
        yield


def _print_result(result: QueryResult, explain: bool, context: bool) -> None:
    console.print(f"[bold]{escape(result.query)}[/]  (mode {result.mode}, {took(result.timings_ms)})")
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
    for name, value in result.extras.items():  # the mode's own output
        console.print(f"  [dim]{escape(name)}: {escape(json.dumps(value, default=str))}[/]")
    if explain:
        print_explain(console, result)
    if context and result.context:
        console.rule("cited context")
        console.print(escape(result.context))


def _print_stats(reps: list[Any], groups: dict[str, str], images: bool) -> dict[str, Any]:
    """Print each mode's gain over the best baseline (95% bootstrap interval) and, when the queries
    carry a type, R@5 per type; return both for the JSON report."""
    from hopgraph.evaluation.stats import by_group, gains

    found = [] if images else gains(reps)
    if found:
        table = Table("mode", "vs", *(f"gain {m}" for m in ("R@2", "R@5")), title="gain over the best baseline "
                      "(points, 95% bootstrap interval over queries)")
        for mode in dict.fromkeys(g.mode for g in found):
            row = {g.metric: g for g in found if g.mode == mode}
            table.add_row(mode, row["R@2"].baseline, *(f"{row[m].mean:+.1f} [{row[m].low:+.1f}, {row[m].high:+.1f}]"
                                                      for m in ("R@2", "R@5")))
        console.print(table)
    types = by_group(reps, groups)
    if types:
        names = sorted({g for v in types.values() for g in v})
        counts = {g: sum(1 for x in groups.values() if x == g) for g in names}
        table = Table("mode", *(f"{g} ({counts[g]})" for g in names), title="R@5 by question type")
        for mode, per_type in types.items():
            table.add_row(mode, *(f"{per_type.get(g, 0.0):.1f}" for g in names))
        console.print(table)
    return {"gains": [g.__dict__ for g in found], "r5_by_type": types}


def eval_cmd(
    dataset: Annotated[Path, typer.Argument(help="A BEIR-layout folder: corpus.jsonl, queries.jsonl, qrels/test.tsv.")],
    modes: Annotated[str, typer.Option(help="Comma-separated modes and ablations (default: every mode and "
                                            f"ablation: {', '.join(REGISTRY.evaluated(images=False))}).")] = "",
    out: Annotated[Path | None, typer.Option(help="Write the per-query JSON report here, after every mode "
                                                  "(default: <data_dir>/eval/<set>/report.json).")] = None,
    limit: Annotated[int, typer.Option(min=0, help="Only the first N queries (0 = all).")] = 0,
    holdout: Annotated[bool, typer.Option(help="Only the test queries of the GNN checkpoint (never trained on).")
                       ] = False,
    stage_caps: Annotated[bool, typer.Option(help="Keep retrieval.stage_cap_ms (off by default: a degraded "
                                                  "stage would make the figures depend on the machine's load).")
                          ] = False,
    mmr: Annotated[float | None, typer.Option(min=0, max=1, help="retrieval.mmr_lambda for every mode "
                                                                 "(diversify each top-k).")] = None,
    html: Annotated[Path | None, typer.Option(help="Also write the report as one self-contained HTML page with "
                                                   "plots (R@k curves, latencies, R@5 by question type).")] = None,
    resume: Annotated[bool, typer.Option(help="Keep the modes the --out report already finished and run only the "
                                              "others (after a run that died); refused for another dataset, "
                                              "query set or --mmr/--stage-caps.")] = False,
) -> None:
    """Ingest a BEIR corpus (once; reruns reuse it) and report R@2/5/10, nDCG@10, MRR@10 and latency
    for every mode, the BM25/dense/RRF baselines and the ablations of graph mode, in one run. The report
    is saved after every mode; a mode that fails is recorded with its error and the others go on (exit
    code 1 at the end)."""
    from hopgraph.evaluation.evaluate import is_image_corpus, load_dataset

    with reported():
        ds = load_dataset(dataset)
        images = is_image_corpus(ds.corpus)
        chosen = [m.strip() for m in modes.split(",") if m.strip()] or REGISTRY.evaluated(images=images)
        for name in chosen:
            REGISTRY.check(name, ablations=True)
    if limit:
        ds.queries = dict(list(ds.queries.items())[:limit])
    s = eval_settings(load_settings(), dataset, len(ds.queries))
    if holdout:
        with reported():
            held = holdout_queries(s)
        ds.queries = {q: t for q, t in ds.queries.items() if q in held}
        console.print(f"--holdout: {len(ds.queries)} queries the GNN never saw in training")
    if not ds.queries:
        raise fail(BadInputError("no queries to evaluate"))
    if not modes and not images and s.gnn_checkpoint_path.is_file():
        chosen.append("gnn")
    assert s.index.path is not None  # eval_settings: <data_dir>/eval/<set>/index
    out = out or s.index.path.parent / "report.json"  # this set's folder: a run that dies still leaves it
    identity = eval_report.run_identity(dataset, ds.queries, limit, mmr=mmr, stage_caps=stage_caps)
    previous: list[ModeReport] = []
    if resume:
        with reported():
            found = eval_report.load_report(out)
            if found is not None:
                eval_report.check_resumable(found, identity, out)
                previous = eval_report.reports_from(found)
    todo = eval_report.to_run(chosen, previous) if resume else chosen
    if resume:
        kept = [m for m in chosen if m not in todo]
        console.print(f"--resume: {len(kept)} mode(s) already in {out} ({', '.join(kept) or 'none'}), "
                      f"{len(todo)} to run ({', '.join(todo) or 'none'})")
    console.print(f"per-query report: {out} (saved after every mode)")
    saver = _ReportSaver(out, html, dataset, previous,
                         {"queries_evaluated": len(ds.queries), eval_report.RUN_KEY: identity})
    reps = _run_modes(s, ds, todo, stage_caps, mmr, saver) if todo else []
    merged = eval_report.merge(previous, reps)
    ok = [r for r in merged if r.error is None]
    _print_tables(ok, str(dataset), images)
    saver.save(reps, _print_stats(ok, ds.groups, images))
    console.print(f"per-query report: {out}" + (f"; HTML report: {html}" if html else ""))
    failed = [r for r in merged if r.error is not None and r.mode in chosen]
    if failed:
        raise fail(eval_report.EvaluationIncomplete(
            f"{len(failed)} of {len(chosen)} mode(s) failed: "
            + "; ".join(f"{r.mode} ({r.error})" for r in failed)
            + f". The report {out} has the others; rerun with --resume to run only the failed ones"))


class _ReportSaver:
    """Writes the report (JSON, and HTML when asked) atomically: the modes of the resumed report merged with
    this run's."""

    def __init__(self, out: Path, html: Path | None, dataset: Path, previous: list[ModeReport],
                 extra: dict[str, Any]) -> None:
        self.out, self.html, self.dataset, self.previous, self.extra = out, html, dataset, previous, extra

    def save(self, reps: list[ModeReport], extra: dict[str, Any] | None = None) -> None:
        data = eval_report.report_data(self.dataset, eval_report.merge(self.previous, reps),
                                       {**self.extra, **(extra or {})})
        try:
            eval_report.write_atomic(self.out, json.dumps(data, indent=1))
            if self.html is not None:
                from hopgraph.app.eval_html import report_html

                eval_report.write_atomic(self.html, report_html(data))
        except OSError as exc:
            raise fail(BadInputError(f"cannot write the report: {exc}")) from exc

    def after_mode(self, reps: list[ModeReport]) -> None:
        """``evaluate``'s callback: say how the mode ended, and save."""
        last = reps[-1]
        self.save(reps)
        if last.error is not None:
            console.print(f"[bold red]mode {escape(last.mode)} failed:[/] {escape(last.error)} "
                          f"(recorded; the other modes go on); saved {escape(str(self.out))}")
        else:
            console.print(f"mode {escape(last.mode)}: R@5 {last.metrics.get('R@5', 0):.1f}, "
                          f"p50 {last.latency_ms['p50']:.1f} ms; saved {escape(str(self.out))}")


def _run_modes(s: Settings, ds: Dataset, todo: list[str], stage_caps: bool, mmr: float | None,
               saver: _ReportSaver) -> list[ModeReport]:
    """Ingest the set (reruns reuse it) and evaluate the modes of ``todo``, saving after each."""
    from hopgraph.app.eval_runs import embed_questions, evaluate_modes
    from hopgraph.app.platform import Platform

    with reported(), Platform(s) as p:
        report = p.ingest([ds.corpus], progress=True)
        console.print(f"corpus: {report.documents_ingested} ingested, {report.documents_unchanged} unchanged "
                      f"({report.seconds:.0f}s); {len(ds.queries)} queries")
        if any(REGISTRY.settings_for(m, s.retrieval)[0] == "raptor" for m in todo):
            tree = p.update_tree(progress=True)
            console.print(f"RAPTOR tree: {tree.branches} branch(es), {tree.built} built ({tree.seconds:.0f}s)")
        ids = p.corpus_ids()
        t = time.perf_counter()
        texts = list(ds.queries.values())
        # cached: every mode is timed on its own work (the parts of multi-part questions embedded too)
        embed_questions(p, texts)
        per_query = (time.perf_counter() - t) * 1000 / len(ds.queries)
        console.print(f"query embeddings computed up front ({per_query:.1f} ms per query, batched); "
                      "the latencies below exclude them")
        base = s.retrieval if stage_caps else s.retrieval.model_copy(update={"stage_cap_ms": None})
        if mmr is not None:
            base = base.model_copy(update={"mmr_lambda": mmr})
        return evaluate_modes(p, ds, ids, todo, base, on_mode=saver.after_mode)


def _print_tables(reps: list[ModeReport], title: str, images: bool) -> None:
    """The metric tables of the finished modes."""
    cols = ("R@1", "R@5", "R@10", "MRR@10") if images else ("R@2", "R@5", "R@10", "nDCG@10", "MRR@10")
    table = Table("mode", *cols, "p50 ms", "p95 ms", "div@5", "ILD@5", title=title)
    for r in reps:
        m, d = r.metrics, r.diversity
        table.add_row(r.mode, *(f"{m[k]:.1f}" for k in cols), f"{r.latency_ms['p50']:.1f}",
                      f"{r.latency_ms['p95']:.1f}", f"{d.get('ratio@5', 0):.3f}", f"{d.get('ild@5', 0):.3f}")
    console.print(table)
    if reps and "DS@1" in reps[0].metrics:
        ks = ("D@1", "D@3", "D@5", "D@10", "DS@1", "DS@3", "DS@5", "DS@10")
        parts = Table("mode", *ks, title="documents (D) and document+section (DS) recall at k")
        for r in reps:
            parts.add_row(r.mode, *(f"{r.metrics[k]:.1f}" for k in ks))
        console.print(parts)
    if reps and reps[0].selective:
        sel = Table("mode", *(f"{c['coverage']:.0%} answered" for c in reps[0].selective),
                    title="selective retrieval: top-1 precision when only the surest queries (lowest score "
                          "entropy) are answered")
        for r in reps:
            sel.add_row(r.mode, *(f"{c['precision']:.1f} (H≤{c['max_entropy']:.2f})" for c in r.selective))
        console.print(sel)
    by_mode = {r.mode: r for r in reps}
    if "image" in by_mode and "dense" in by_mode:
        added = by_mode["image"].latency_ms["p50"] - by_mode["dense"].latency_ms["p50"]
        console.print(f"graph work adds {added:.1f} ms (p50) over caption-embedding-only retrieval")
