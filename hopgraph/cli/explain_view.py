"""``hopgraph query --explain``'s readable form: the seeds and where they came from, per result the
signals that scored it and the path that reached it, the mode's other findings in one line each, and
the stage timings; every list capped (``--explain --json`` prints the full explain object)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hopgraph.core.records import MODEL_LOAD, QueryResult, RetrievedChunk

#: the most items of one list printed (seeds, results, a finding's items)
CAP = 10
#: the longest line of one finding, in characters
LINE = 240
#: the explain keys shown in their own sections (``subgraph`` only as its size)
_OWN = ("seeds", "signals", "paths", "subgraph")


def took(timings: Mapping[str, float]) -> str:
    """The query's own time (``N ms``), then ``; models loaded in S s`` when it waited for a model to load."""
    text = f"{timings.get('total', 0):.0f} ms"
    if MODEL_LOAD in timings:
        text += f"; models loaded in {timings[MODEL_LOAD] / 1000:.1f} s"
    return text


def _more(n: int) -> str:
    return f"[dim]  … and {n} more[/]" if n > 0 else ""


def _brief(value: Any) -> str:
    """One line: a list's first ``CAP`` items, a mapping or anything else as compact JSON."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        items = [v if isinstance(v, str) else json.dumps(v, default=str, separators=(",", ":")) for v in value]
        text = "; ".join(items[:CAP]) + (f" … and {len(items) - CAP} more" if len(items) > CAP else "")
    else:
        text = value if isinstance(value, str) else json.dumps(value, default=str, separators=(",", ":"))
    return text if len(text) <= LINE else text[: LINE - 1] + "…"


def _seeds(console: Console, seeds: Sequence[Mapping[str, Any]]) -> None:
    table = Table("seed entity", "weight", "from", box=None, padding=(0, 2), header_style="bold",
                  title="seeds: where the walk started", title_justify="left", title_style="bold")
    for s in seeds[:CAP]:
        weight = s.get("weight")
        table.add_row(escape(str(s.get("entity", ""))), f"{weight:.3f}" if isinstance(weight, int | float) else "",
                      escape(str(s.get("why", ""))))
    console.print(table)
    if more := _more(len(seeds) - CAP):
        console.print(more)


def _result(console: Console, r: RetrievedChunk, signals: Mapping[str, Mapping[str, float]],
            path: Mapping[str, Any] | None, depth: int) -> None:
    cid = r.citation.chunk_id
    where = Path(r.citation.source).name or r.citation.document_id
    console.print(f"  [cyan]#{r.rank}[/] {escape(where)} · {escape(cid)}  score {r.score:.3f}")
    scored = sorted(((name, sig[cid]) for name, sig in signals.items() if cid in sig), key=lambda kv: -kv[1])
    line = ", ".join(f"{escape(name)} {value:.2f}" for name, value in scored)
    console.print(f"     signals: {line}" if line else
                  f"     [dim]signals: in no signal's top {depth} (ranked by the mode's own scoring)[/]")
    if path is not None:
        hops = path.get("hops")
        console.print(f"     path: {escape(str(path.get('path', '')))}  [dim]({hops} hop(s), walk weight "
                      f"{path.get('weight', 0):.3f})[/]")


def print_explain(console: Console, result: QueryResult) -> None:
    """The readable explanation of ``result`` (a query run with ``explain``)."""
    ex = result.explain
    console.rule("explain")
    seeds = ex.get("seeds") or []
    if seeds:
        _seeds(console, seeds)
    else:
        console.print("[bold]seeds:[/] none (this mode does not start from entities)")
    signals: Mapping[str, Mapping[str, float]] = ex.get("signals") or {}
    paths = [p for p in ex.get("paths") or [] if isinstance(p, Mapping)]
    by_chunk = {p.get("chunk"): p for p in paths}
    if result.results:
        console.print("[bold]results: the signals that scored each (normalized, 1 = the signal's best) and the "
                      "path that reached it[/]")
    depth = max((len(s) for s in signals.values()), default=0)
    for r in result.results[:CAP]:
        _result(console, r, signals, by_chunk.get(r.citation.chunk_id), depth)
    if more := _more(len(result.results) - CAP):
        console.print(more)
    walked = [p for p in ex.get("paths") or [] if isinstance(p, str)]  # beam expansion's paths are text
    if walked:
        console.print(f"[bold]expansion paths:[/] {escape(_brief(walked))}")
    for name, value in ex.items():
        if name not in _OWN and value not in (None, [], {}):
            console.print(f"[bold]{escape(name)}:[/] {escape(_brief(value))}")
    graph = ex.get("subgraph")
    if isinstance(graph, Mapping):
        console.print(f"[bold]subgraph:[/] {len(graph.get('nodes') or [])} nodes, {len(graph.get('edges') or [])} "
                      "edges [dim](--explain --json prints it whole)[/]")
    stages = [f"{escape(k)} {v:.0f}" for k, v in result.timings_ms.items() if k not in ("total", MODEL_LOAD)]
    console.print(f"[bold]timings (ms):[/] {' · '.join(stages)}; total {took(result.timings_ms)}")
