"""``make demo``: ingest the bundled sample corpus into ./.hopgraph and run a few cited queries."""

from __future__ import annotations

import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rich.console import Console
from rich.markup import escape

from hopgraph.app.platform import Platform
from hopgraph.core.settings import Settings

SAMPLE = Path(__file__).parent / "sample"
QUERIES = [
    ("Who founded the Vexmoor Observatory?", "graph"),
    ("Where did Einstein work before he became famous?", "naive"),
    ("Which machine broke the Enigma cipher?", "local"),
    ("first published computer program", "bm25"),
    ("Nobel Prize in Physics", "global"),
]


def main() -> None:
    console = Console()
    t0 = time.perf_counter()
    with Platform(Settings()) as p:
        console.rule("[bold]hopgraph demo: ingest")
        report = p.ingest([SAMPLE], progress=True)
        console.print(f"{report.documents_ingested} ingested, {report.documents_unchanged} unchanged: "
                      f"{report.chunks} chunks, {report.entities} entities in {report.seconds:.1f}s")
        st = p.status()
        console.print(f"graph: {st['graph']}\nvectors: {st['vectors']}")
        if report.skipped:
            console.print(f"skipped: {report.skipped}")
        for text, mode in QUERIES:
            console.rule(f"[bold]{text}[/]  ({mode})")
            result = p.query(text, mode=mode, top_k=2)
            for r in result.results:
                snippet = " ".join(r.text.split())[:220]
                console.print(f"[cyan]{r.rank}.[/] ({r.score:.3f}) {escape(snippet)}...")
                via = f" via {', '.join(r.entities[:4])}" if r.entities else ""
                cite = escape(f"[{Path(r.citation.source).name} · {r.citation.chunk_id}]{via}")
                console.print(f"   [dim]{cite}[/]")
    console.rule()
    console.print(f"done in {time.perf_counter() - t0:.1f}s. Try: .venv/bin/hopgraph query \"...\" --mode local; "
                  "stop the graph server with .venv/bin/hopgraph db stop")


if __name__ == "__main__":
    from graphdb.arcadedb_server import GraphServerError
    from vectors.store import VectorStoreError

    try:
        main()
    except (GraphServerError, VectorStoreError) as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {exc}")
        raise SystemExit(1) from exc
