"""``hopgraph db start|stop|status``: the embedded ArcadeDB server."""

from __future__ import annotations

import typer

from hopgraph.cli.common import console, load_settings, reported

db_app = typer.Typer(help="Manage the embedded ArcadeDB graph server.", no_args_is_help=True)


@db_app.command("start")
def db_start() -> None:
    """Start the embedded ArcadeDB server (or find the running one)."""
    from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB

    s = load_settings()
    with reported():
        info = EmbeddedArcadeDB(s.graph_dir, s.graph.model_copy(update={"auto_start": True})).ensure_running()
    console.print(f"graph server running: pid {info.pid}, bolt {info.uri}, http {info.host}:{info.http_port}")


@db_app.command("stop")
def db_stop() -> None:
    """Stop the embedded ArcadeDB server cleanly."""
    from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB

    s = load_settings()
    stopped = EmbeddedArcadeDB(s.graph_dir, s.graph).stop()
    console.print("graph server stopped" if stopped else "graph server was not running")


@db_app.command("status")
def db_status() -> None:
    """Say whether the embedded server is running."""
    from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB

    s = load_settings()
    info = EmbeddedArcadeDB(s.graph_dir, s.graph).status()
    if info is None:
        console.print("graph server not running")
        raise typer.Exit(code=3)
    console.print(f"graph server running: pid {info.pid}, bolt {info.uri}")
