"""``hopgraph cypher``: read-only Cypher against the graph, as a table, JSON or CSV."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, cast

import typer
from rich.markup import escape
from rich.table import Table

from hopgraph.cli.common import console, err, fail, load_settings, reported
from hopgraph.core.errors import BadInputError
from hopgraph.core.limits import CYPHER_MAX_ROWS, CYPHER_MAX_TIMEOUT_S, CYPHER_MIN_TIMEOUT_S


def _parse_params(pairs: list[str]) -> dict[str, object]:
    params: dict[str, object] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.isidentifier():
            raise typer.BadParameter(f"expected NAME=VALUE, got {pair!r}", param_hint="--param")
        try:
            params[key] = json.loads(raw)  # numbers, booleans, lists, quoted strings
        except json.JSONDecodeError:
            params[key] = raw
    return params


def _cell(value: object) -> str:
    return json.dumps(value, default=str) if isinstance(value, dict | list) else str(value)


def cypher(
    statement: Annotated[str, typer.Argument(help="A read-only Cypher statement, e.g. \"MATCH (e:Entity) RETURN "
                                                  "e.name LIMIT 10\".")],
    param: Annotated[list[str], typer.Option("--param", "-p", help="NAME=VALUE (JSON or plain text); "
                                             "passed as a query parameter, never interpolated.")] = [],  # noqa: B006
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, json or csv.")] = "table",
    limit: Annotated[int, typer.Option(min=1, max=CYPHER_MAX_ROWS, help="Row limit.")] = 1000,
    timeout: Annotated[float, typer.Option(min=CYPHER_MIN_TIMEOUT_S, max=CYPHER_MAX_TIMEOUT_S,
                                           help="Seconds the statement may run.")] = 30.0,
) -> None:
    """Explore the graph with read-only Cypher. Write clauses (CREATE, MERGE, SET, DELETE, REMOVE,
    DROP, LOAD CSV, FOREACH, CALL … IN TRANSACTIONS, writing procedures) are refused before they run."""
    import csv
    import sys

    from neo4j.exceptions import Neo4jError

    from hopgraph.app.cypher_check import refused_write
    from hopgraph.app.platform import Platform

    if fmt not in ("table", "json", "csv"):
        raise typer.BadParameter("choose table, json or csv", param_hint="--format")
    params = _parse_params(param)
    with reported():
        settings = load_settings()
    why = refused_write(settings, statement)  # the backend's own allow-list, before the store opens
    if why is not None:  # (its console checks the same again)
        raise fail(BadInputError(f"refused: {why}"))
    with reported(), Platform(settings) as p:
        try:
            res = p.console.explore(statement, params, row_limit=limit, timeout_s=timeout)
        except Neo4jError as exc:  # a Cypher syntax or runtime error from the server
            raise fail(BadInputError(f"the graph database rejected the statement: {exc.message or exc}")) from exc
    if fmt == "json":
        console.print_json(json.dumps({"columns": res.columns, "rows": res.rows, "truncated": res.truncated},
                                      default=str))
    elif fmt == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(res.columns)
        writer.writerows([[json.dumps(v, default=str) if isinstance(v, dict | list) else v for v in row]
                          for row in res.rows])
    elif not res.rows:
        console.print(f"no rows{' (columns: ' + ', '.join(res.columns) + ')' if res.columns else ''}")
    else:
        table = Table(*res.columns)
        for row in res.rows:
            table.add_row(*[escape(_cell(v)) for v in row])
        console.print(table)
    if res.truncated:
        err.print(f"[yellow]truncated at {limit} rows[/] (raise --limit)")


def export(
    out: Annotated[Path, typer.Argument(help="The file to write (a folder for neo4j-csv).")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="graphml, jsonl or neo4j-csv (loadable by "
                                                           "`neo4j-admin database import`).")] = "jsonl",
) -> None:
    """Write the whole graph (documents, chunks, entities, communities and their edges) for another tool."""
    from hopgraph.app.export import FORMATS, ExportFormat, export_graph
    from hopgraph.app.platform import Platform

    if fmt not in FORMATS:
        raise typer.BadParameter(f"choose {', '.join(FORMATS)}", param_hint="--format")
    with reported(), Platform(load_settings()) as p:
        report = export_graph(p.browser, cast(ExportFormat, fmt), out)
    nodes = ", ".join(f"{n} {label}" for label, n in report.nodes.items())
    edges = ", ".join(f"{n} {t}" for t, n in report.edges.items())
    console.print(f"wrote {report.path} ({fmt}): {nodes}; {edges}")
