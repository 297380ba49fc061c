"""``make demo``: ingest the bundled sample corpus into ./.hopgraph and run a few cited queries.

Exits 0 only when the sample was ingested (or was already there, unchanged) and every query returned
cited results; otherwise it says what went wrong and exits 1.
"""

from __future__ import annotations

import os
import time
from importlib.resources import files
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rich.console import Console
from rich.markup import escape

from hopgraph.app.platform import Platform
from hopgraph.core.errors import HopgraphError
from hopgraph.core.settings import Settings

#: the sample corpus shipped inside the package (``hopgraph/sample/*.txt``)
SAMPLE = Path(str(files("hopgraph") / "sample"))
QUERIES = [
    ("Who founded the Vexmoor Observatory?", "graph"),
    ("Where did Einstein work before he became famous?", "naive"),
    ("Which machine broke the Enigma cipher?", "local"),
    ("first published computer program", "bm25"),
    ("Nobel Prize in Physics", "global"),
]


class DemoFailed(HopgraphError):
    """The demo ingested nothing or a query returned nothing."""


def run_demo(console: Console, sample: Path = SAMPLE) -> None:
    """Ingest ``sample`` and print the cited results of each demo query; raise ``DemoFailed`` when the
    sample is missing, nothing was ingested, or a query came back empty."""
    if not sample.is_dir() or not any(sample.glob("*.txt")):
        raise DemoFailed(f"the sample corpus is missing: no .txt files in {sample}")
    t0 = time.perf_counter()
    with Platform(Settings()) as p:
        console.rule("[bold]hopgraph demo: ingest")
        report = p.ingest([sample], progress=True)
        console.print(f"{report.documents_ingested} ingested, {report.documents_unchanged} unchanged: "
                      f"{report.chunks} chunks, {report.entities} entities in {report.seconds:.1f}s")
        if report.skipped:
            console.print(f"skipped: {report.skipped}")
        if report.documents_ingested + report.documents_unchanged == 0:
            raise DemoFailed(f"no document of {sample} was ingested (skipped: {report.skipped or 'none'})")
        st = p.status()
        console.print(f"graph: {st['graph']}\nvectors: {st['vectors']}")
        empty = []
        for text, mode in QUERIES:
            console.rule(f"[bold]{escape(text)}[/]  ({mode})")
            result = p.query(text, mode=mode, top_k=2)
            if not result.results:
                empty.append(f"{text!r} ({mode})")
            for r in result.results:
                snippet = " ".join(r.text.split())[:220]
                console.print(f"[cyan]{r.rank}.[/] ({r.score:.3f}) {escape(snippet)}...")
                via = f" via {', '.join(r.entities[:4])}" if r.entities else ""
                cite = escape(f"[{Path(r.citation.source).name} · {r.citation.chunk_id}]{via}")
                console.print(f"   [dim]{cite}[/]")
        if empty:
            raise DemoFailed(f"these queries returned no results: {'; '.join(empty)}")
    console.rule()
    console.print(f"done in {time.perf_counter() - t0:.1f}s. Try: .venv/bin/hopgraph query \"...\" --mode local; "
                  "stop the graph server with .venv/bin/hopgraph db stop")


def main() -> None:
    """Run the demo; any failure is one clear line on stderr and exit status 1."""
    try:
        run_demo(Console())
    except HopgraphError as exc:
        Console(stderr=True).print(f"[bold red]demo failed:[/] {escape(str(exc))}")
        raise SystemExit(1) from exc


if __name__ == "__main__":
    main()
