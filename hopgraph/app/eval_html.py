"""``hopgraph eval --html``: an evaluation report as one self-contained HTML page (the plots are inline
SVG drawn by matplotlib; no script, no external resource), for people who compare modes: R@k curves
per mode, latency distributions, per-question-type bars, and the tables of the terminal report."""

from __future__ import annotations

import html
import io
from collections.abc import Mapping
from typing import Any

KS = (1, 2, 5, 10)


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None, "Format": None,
                                                                  "Type": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]  # inline: drop the XML prolog and doctype


def _figure(width: float = 7.0, height: float = 3.6) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"  # text stays text (searchable, small)
    return plt.subplots(figsize=(width, height))


def recall_curves(modes: Mapping[str, Any]) -> str:
    """R@k against k for every mode."""
    import matplotlib.pyplot as plt

    fig, ax = _figure()
    for name, m in modes.items():
        ks = [k for k in KS if f"R@{k}" in m["metrics"]]
        ax.plot(ks, [m["metrics"][f"R@{k}"] for k in ks], marker="o", label=name)
    ax.set(xlabel="k", ylabel="recall@k (%)", xscale="log", xticks=list(KS), xticklabels=[str(k) for k in KS],
           title="Recall at k")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    out = _svg(fig)
    plt.close(fig)
    return out


def latency_boxes(queries: Mapping[str, list[dict[str, Any]]]) -> str:
    """Per-query latency distribution of every mode."""
    import matplotlib.pyplot as plt

    names = list(queries)
    fig, ax = _figure(height=0.45 * len(names) + 1.2)
    ax.boxplot([[q["latency_ms"] for q in queries[n]] for n in names], vert=False, showfliers=True)
    ax.set_yticks(range(1, len(names) + 1), names)
    ax.set(xlabel="latency (ms, log scale)", xscale="log", title="Latency per query")
    ax.grid(alpha=0.3, axis="x")
    out = _svg(fig)
    plt.close(fig)
    return out


def type_bars(by_type: Mapping[str, Mapping[str, float]]) -> str:
    """R@5 per question type, grouped by type, a bar per mode."""
    import matplotlib.pyplot as plt

    modes = list(by_type)
    types = sorted({t for v in by_type.values() for t in v})
    fig, ax = _figure()
    width = 0.8 / max(len(modes), 1)
    for i, mode in enumerate(modes):
        ax.bar([j + i * width for j in range(len(types))], [by_type[mode].get(t, 0.0) for t in types], width,
               label=mode)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(types))], types)
    ax.set(ylabel="R@5 (%)", title="R@5 by question type")
    ax.legend(fontsize=8, ncol=2)
    out = _svg(fig)
    plt.close(fig)
    return out


def _table(head: list[str], rows: list[list[str]]) -> str:
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"


def report_html(report: Mapping[str, Any]) -> str:
    """The page of one ``hopgraph eval --out`` report (its JSON as a dict); a failed mode (``{"error":
    ...}``) is listed with its error and left out of the table and plots."""
    modes: Mapping[str, Any] = {name: m for name, m in report["modes"].items() if "error" not in m}
    failed = {name: str(m["error"]) for name, m in report["modes"].items() if "error" in m}
    cols = [c for c in ("R@1", "R@2", "R@5", "R@10", "nDCG@10", "MRR@10")
            if all(c in m["metrics"] for m in modes.values())]
    rows = [[name, *(f"{m['metrics'][c]:.1f}" for c in cols), f"{m['latency_ms']['p50']:.1f}",
             f"{m['latency_ms']['p95']:.1f}", f"{m.get('diversity', {}).get('ratio@5', 0):.3f}"]
            for name, m in modes.items()]
    parts = [f"<h1>{html.escape(str(report.get('dataset', 'evaluation')))}</h1>",
             f"<p>{report.get('queries_evaluated', '?')} queries; every mode over the same index.</p>",
             _table(["mode", *cols, "p50 ms", "p95 ms", "div@5"], rows)]
    if failed:
        parts.append('<h2 id="failed">Failed modes</h2>' + _table(["mode", "error"], [[n, e] for n, e in
                                                                                   failed.items()]))
    if modes:
        queries = {name: q for name, q in report["queries"].items() if name in modes}
        parts += ['<figure class="plot" id="recall">' + recall_curves(modes) + "</figure>",
                  '<figure class="plot" id="latency">' + latency_boxes(queries) + "</figure>"]
    gains = report.get("gains") or []
    if gains:
        parts.append("<h2>Gain over the best baseline (points, 95% bootstrap interval)</h2>" + _table(
            ["mode", "vs", "metric", "gain"],
            [[g["mode"], g["baseline"], g["metric"], f"{g['mean']:+.1f} [{g['low']:+.1f}, {g['high']:+.1f}]"]
             for g in gains]))
    curves = {name: m["selective"] for name, m in modes.items() if m.get("selective")}
    if curves:
        first = next(iter(curves.values()))
        parts.append("<h2>Selective retrieval: top-1 precision answering only the surest queries</h2>" + _table(
            ["mode", *(f"{c['coverage']:.0%} answered" for c in first)],
            [[name, *(f"{c['precision']:.1f}" for c in curve)] for name, curve in curves.items()]))
    if report.get("r5_by_type"):
        parts.append('<figure class="plot" id="types">' + type_bars(report["r5_by_type"]) + "</figure>")
    style = ("body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#212121}table{border-collapse:collapse;"
             "margin:1rem 0}td,th{padding:.25rem .6rem;border-bottom:1px solid #eee;text-align:right}"
             "td:first-child,th:first-child,#failed+table td{text-align:left}figure{margin:1.5rem 0}")
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>hopgraph evaluation</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>")
