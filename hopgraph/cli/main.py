"""The ``hopgraph`` command line: the app and its commands (each module holds a few)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from hopgraph.cli import ask, common, documents, explore, gnn, graphqa, query, service
from hopgraph.cli.collections import collections_app
from hopgraph.cli.db import db_app

app = typer.Typer(
    help="hopgraph: ingest documents into a knowledge graph (ArcadeDB/Neo4j + Qdrant) and query it.\n\n"
    "Settings come from HOPGRAPH_* environment variables (nested with __, e.g. "
    "HOPGRAPH_GRAPH__BACKEND=neo4j) or ./hopgraph.toml; the default stores live in ./.hopgraph/.\n\n"
    "Exit codes: 0 done, 2 bad input, 3 a store or model unavailable, 4 not found, 5 conflict "
    "(e.g. `hopgraph serve` owns the stores), 1 anything else.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    """Print ``hopgraph <version>`` (the installed package's) and exit."""
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("hopgraph")
        except PackageNotFoundError:
            found = "unknown (not installed)"
        typer.echo(f"hopgraph {found}")
        raise typer.Exit()


#: long-running services: they log at the ``log_level`` setting (INFO) unless ``-q``
SERVICES = ("serve", "worker", "mcp")


@app.callback()
def main(ctx: typer.Context, collection: Annotated[str | None, typer.Option(
        "--collection", "-C", envvar="HOPGRAPH_COLLECTION", show_default=False,
        help="The collection (an isolated knowledge graph) the command addresses; default: `default`.")] = None,
         version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True, help="Print hopgraph's version and exit.")] = False,
         verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Show INFO logs (commands show warnings and errors by default).")] = False,
         quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Show errors only, no warnings.")] = False,
         ) -> None:
    """hopgraph: ingest documents into a knowledge graph (ArcadeDB/Neo4j + Qdrant) and query it."""
    if verbose and quiet:
        raise typer.BadParameter("give -v/--verbose or -q/--quiet, not both")
    common.COLLECTION = collection
    common.VERBOSITY = 1 if verbose else -1 if quiet else 0
    common.SERVICE = ctx.invoked_subcommand in SERVICES


#: ``hopgraph --help`` groups the commands by what they are for
PANELS: dict[str, tuple[Callable[..., Any], ...]] = {
    "Documents": (documents.ingest, documents.delete, documents.documents, documents.status, documents.doctor,
                  documents.migrate, documents.communities, documents.tree),
    "Query": (query.query, ask.ask, query.modes),
    "Explore": (explore.cypher, explore.export),
    "Serve": (service.serve, service.mcp, service.worker, service.api_key),
    "Research": (query.eval_cmd, gnn.train_gnn, graphqa.bench_graphqa),
}
NAMES = {query.eval_cmd: "eval"}


def _first_sentence(command: Callable[..., Any]) -> str:
    """The first sentence of the command's help: its line in ``hopgraph --help``."""
    text = " ".join((command.__doc__ or "").split())
    head, dot, _ = text.partition(". ")
    return head + "." if dot else text


for panel, commands in PANELS.items():
    for command in commands:
        app.command(NAMES.get(command, command.__name__.replace("_", "-")), rich_help_panel=panel,
                    short_help=_first_sentence(command))(command)
app.add_typer(db_app, name="db", rich_help_panel="Serve")
app.add_typer(collections_app, name="collections", rich_help_panel="Serve")

if __name__ == "__main__":
    app()
