"""Service commands of the CLI: ``serve``, ``mcp``, ``worker`` and ``api-key``."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from hopgraph.cli.common import console, fail, load_settings, reported
from hopgraph.core.errors import BadInputError, ConflictError, HopgraphError


def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (default: settings api.host, 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(min=1, max=65535, help="Port (default: settings api.port).")] = None,
    scheduler: Annotated[bool | None, typer.Option(
        help="Run the scheduled re-ingestion sources here (default: settings scheduler.enabled).")] = None,
) -> None:
    """Serve the HTTP API (OpenAPI docs at /docs). While it runs it owns the embedded stores:
    send ingests and deletes through the API (POST /documents, DELETE /documents/{id})."""
    from hopgraph.api.server import serve as run

    s = load_settings()
    update = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    if update:
        s = s.model_copy(update={"api": s.api.model_copy(update=update)})
    with reported():
        run(s, scheduler=scheduler)

def mcp() -> None:
    """Serve hopgraph's MCP tools on stdio, for an MCP client (Claude Desktop, an IDE, an agent) that
    starts this command: query (ranked, cited passages and the cited context), ask (an LLM's cited answer;
    needs llm settings), list_documents, get_document, lookup_entity, cypher (read-only) and ingest_paths.
    It opens the stores of your settings (HOPGRAPH_* variables, ./hopgraph.toml) as your own process,
    so every tool is allowed; stdout carries the protocol, logs go to stderr. While `hopgraph serve` owns
    the stores, point the client at its /mcp endpoint instead (streamable HTTP, with an API key).
    Client config: {"command": "hopgraph", "args": ["mcp"], "env": {"HOPGRAPH_DATA_DIR": "/path/.hopgraph"}}."""
    import threading

    from hopgraph.app.ownership import embedded_owner
    from hopgraph.app.platform import Platform

    s = load_settings()
    other = embedded_owner(s)
    if other is not None:
        raise fail(ConflictError(f"hopgraph serve (pid {other.pid}) owns the stores in {s.data_dir}; point the "
                                 f"MCP client at {other.url}/mcp (streamable HTTP) or stop it first"))
    try:
        from hopgraph.api.mcp_server import LocalAccess, build_server
    except ImportError as exc:
        raise fail(HopgraphError(f"the MCP server needs the mcp extra ({exc}): pip install 'hopgraph[mcp]'")
                   ) from exc
    with reported(), Platform(s) as p:
        access = LocalAccess(p)
        threading.Thread(target=access.warm, name="mcp-warm-up", daemon=True).start()
        try:
            build_server(access).run("stdio")
        finally:
            access.close()  # the other collections' platforms (``p`` closes the default one)


def worker(once: Annotated[bool, typer.Option(help="Run every source once and exit.")] = False) -> None:
    """Run the scheduled re-ingestion sources (settings scheduler.sources) without the API.
    Each run is incremental and recorded in the graph; see GET /jobs or `hopgraph cypher
    "MATCH (r:IngestRun) RETURN r ORDER BY r.started_at DESC LIMIT 10"`."""
    from hopgraph.app.open_platforms import OpenPlatforms
    from hopgraph.app.ownership import embedded_owner
    from hopgraph.app.platform import Platform
    from hopgraph.core.service_settings import ScheduledSource
    from hopgraph.graphdb.records import IngestRun
    from hopgraph.ingest.scheduler import ReingestScheduler

    s = load_settings()
    if not s.scheduler.sources:
        raise fail(BadInputError("no scheduled sources: set scheduler.sources in hopgraph.toml "
                              "(name, paths, and cron or interval_s)"))
    other = embedded_owner(s)
    if other is not None:
        raise fail(ConflictError(f"hopgraph serve (pid {other.pid}, {other.url}) owns the embedded stores "
                                "and runs the schedules itself; stop it to run a separate worker"))
    with reported(), Platform(s) as p:
        platforms = OpenPlatforms(p)  # a source's collection: opened on its first run

        def reingest(source: ScheduledSource) -> IngestRun:
            return platforms.get(source.collection).reingest(source)

        if once:
            failed = 0
            for source in s.scheduler.sources:
                run = reingest(source)
                failed += run.status == "failed"  # a warning (a path missing) or nothing changed is no failure
                why = f" — {run.error}" if run.error else ""
                console.print(f"{source.name}: {run.status} in {run.duration_s or 0:.1f}s "
                              f"({run.report.get('documents_ingested', 0)} ingested, "
                              f"{run.report.get('documents_deleted', 0)} deleted){why}")
            raise typer.Exit(code=1 if failed else 0)
        sched = ReingestScheduler(s.scheduler, reingest, blocking=True)
        try:
            sched.start()
        except (KeyboardInterrupt, SystemExit):
            sched.shutdown()
        finally:
            platforms.close_others()

def api_key(
    name: Annotated[str, typer.Argument(help="A name for the key (who or what uses it).")],
    scope: Annotated[str, typer.Option(help="'read' (query, explore) or 'admin' (also ingest, delete).")] = "read",
    collections: Annotated[list[str] | None, typer.Option(
        "--collection", help="A collection the key may use (repeat for several; '*' for every one). "
        "Default: default.")] = None,
    groups: Annotated[str, typer.Option(
        "--groups", help="The access groups a read key reads, comma-separated ('hr,finance'): it finds public "
        "documents and those of its groups. Default: every document.")] = "",
) -> None:
    """Make a new API key. Prints the key once, and the settings entry holding only its hash."""
    from hopgraph.api.auth import new_key
    from hopgraph.core.access import parse_groups
    from hopgraph.core.collections import check_name

    if scope not in ("read", "admin"):
        raise fail(BadInputError("scope must be 'read' or 'admin'"))
    allowed = collections or ["default"]
    with reported():
        for c in allowed:
            if c != "*":
                check_name(c)
        reads = parse_groups(groups)
    key, digest = new_key()
    console.print(f"key (shown once): [bold]{key}[/]")
    console.print("add to hopgraph.toml:")
    entry = [f'name = "{name}"', f'sha256 = "{digest}"', f'scope = "{scope}"', f"collections = {json.dumps(allowed)}"]
    entry += [f"groups = {json.dumps(reads)}"] if reads else []  # (a JSON list of strings is a TOML array)
    console.print("\n".join(["[[api.api_keys]]", *entry]), markup=False)
