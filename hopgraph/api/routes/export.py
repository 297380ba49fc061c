"""GET /export: the whole graph as a file for another tool (admin keys only: it holds every text)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Literal

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from hopgraph.api.deps import problems
from hopgraph.api.tenancy import AdminPlatform
from hopgraph.app.export import export_graph

router = APIRouter(tags=["graph"])
MEDIA = {"jsonl": "application/x-ndjson", "graphml": "application/graphml+xml", "neo4j-csv": "application/zip"}


@router.get("/export", response_class=FileResponse, responses={**problems(401, 403, 404, 422), 200: {
    "description": "The graph: JSON lines, GraphML, or a zip of neo4j-admin import CSV files and import.sh",
    "content": {m: {} for m in MEDIA.values()}}}, summary="Export the whole graph (graphml, jsonl, neo4j-csv)")
async def export(p: AdminPlatform, format: Literal["graphml", "jsonl", "neo4j-csv"] = Query(
        "jsonl", description="neo4j-csv: a zip loadable by `neo4j-admin database import` (see its import.sh).")
                 ) -> FileResponse:
    """The request's collection, written to a temporary file on the server, sent, then removed."""
    graph = p.browser
    work = Path(tempfile.mkdtemp(prefix="hopgraph-export-"))
    name = {"jsonl": "graph.jsonl", "graphml": "graph.graphml", "neo4j-csv": "graph-neo4j-csv"}[format]
    report = await run_in_threadpool(export_graph, graph, format, work / name)
    path = report.path
    if format == "neo4j-csv":
        path = Path(await run_in_threadpool(shutil.make_archive, str(work / name), "zip", report.path))
    return FileResponse(path, media_type=MEDIA[format], filename=path.name,
                        background=BackgroundTask(shutil.rmtree, work, ignore_errors=True))
