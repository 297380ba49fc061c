"""``hopgraph collections``: list, create and delete collections (isolated knowledge graphs)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from hopgraph.cli.common import console, load_settings, reported

collections_app = typer.Typer(
    help="Collections: isolated knowledge graphs in one deployment, each with its own graph database, vector "
    "collections and index state. Address one with `hopgraph --collection NAME <command>`; `default` holds what "
    "was ingested without one.", no_args_is_help=True)

NameArg = Annotated[str, typer.Argument(help="A lower-case letter, then up to 39 lower-case letters or digits.")]


@collections_app.command("list")
def list_cmd(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List the collections."""
    from hopgraph.app.collection_registry import list_collections
    from hopgraph.app.ownership import running_server
    from hopgraph.cli import remote

    s = load_settings()
    server = running_server(s)
    with reported():
        found = (remote.collections(server.url) if server is not None else
                 [c.model_dump() for c in list_collections(s)])
    if as_json:
        console.print_json(json.dumps(found))
        return
    table = Table("collection", "created")
    for c in found:
        table.add_row(c["name"], c.get("created_at") or "")
    console.print(table)


@collections_app.command("create")
def create(name: NameArg) -> None:
    """Create a collection (its database and vector collections are made now)."""
    from hopgraph.app.collections import create_collection
    from hopgraph.app.ownership import running_server
    from hopgraph.cli import remote

    s = load_settings()
    server = running_server(s)
    with reported():
        made = remote.create_collection(server.url, name) if server is not None else \
            create_collection(s, name).model_dump()
    console.print(f"created collection {made['name']}")


@collections_app.command("delete")
def delete(name: NameArg, yes: Annotated[bool, typer.Option("--yes", help="Do not ask.")] = False) -> None:
    """Delete a collection with everything in it: its graph database, vectors and index state."""
    from hopgraph.app.collections import delete_collection
    from hopgraph.app.ownership import running_server
    from hopgraph.cli import remote

    s = load_settings()
    if not yes:
        typer.confirm(f"delete collection {name!r} and everything in it?", abort=True)
    server = running_server(s)
    with reported():
        if server is not None:
            remote.delete_collection(server.url, name)
        else:
            delete_collection(s, name)
    console.print(f"deleted collection {name}")
