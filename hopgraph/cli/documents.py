"""Commands that change or list what is stored: ``ingest``, ``delete``, ``documents``, ``status``, ``migrate``."""

from __future__ import annotations

import glob
import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from hopgraph.cli.common import console, err, fail, load_settings, not_served, reported
from hopgraph.core.access import parse_groups
from hopgraph.core.errors import BadInputError, ConflictError, NotFoundError
from hopgraph.core.settings import Settings

with warnings.catch_warnings():  # typer deprecates is_flag/flag_value, still its only way to an optional value
    warnings.simplefilter("ignore", DeprecationWarning)
    _RAY = typer.Option(
        "--ray", is_flag=False, flag_value="", metavar="[ADDRESS]",
        help="Chunk, extract and embed on a Ray cluster (ingest.engine = ray): at ADDRESS (host:port of its head; "
             "after the paths, or --ray=ADDRESS), else ingest.ray_address, RAY_ADDRESS or a private local instance.")


def expand_globs(paths: list[Path]) -> list[Path]:
    """Each path with a wildcard replaced by what it matches (``**`` across folders); one matching
    nothing stays as given, so it is reported missing."""
    out: list[Path] = []
    for p in paths:
        found = sorted(glob.glob(str(p), recursive=True)) if glob.has_magic(str(p)) else []
        out += [Path(f) for f in found] or [p]
    return out


def nothing_to_ingest(paths: list[Path], extensions: Sequence[str], data_dir: Path) -> str | None:
    """Why an ingest of ``paths`` would read nothing (only directories, none holding a file with one of
    ``extensions`` outside ``data_dir``), else None."""
    from hopgraph.ingest.sources import expand_paths

    if next(expand_paths(paths, extensions, data_dir), None) is not None:
        return None
    others = sorted({f.suffix.lower() or f.name for p in paths for f in p.rglob("*")
                     if f.is_file() and not f.name.startswith(".")})
    holds = "holds" if len(paths) == 1 else "hold"
    why = f"nothing to ingest: {', '.join(map(str, paths))} {holds} no file with a known extension (ingest.extensions)"
    if others:
        shown = ", ".join(others[:8]) + (", …" if len(others) > 8 else "")
        why += f"; the files there end in {shown}"
    return why + "; --allow-empty runs the ingest anyway"


def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Text files, directories searched recursively, or globs "
                                                     "over them ('notes/**/*.md', quoted so the shell leaves it).")],
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    ray: Annotated[str | None, _RAY] = None,
    allow_empty: Annotated[bool, typer.Option(
        "--allow-empty", help="Run even when the paths hold nothing to ingest (else exit 2): the run removes the "
                              "documents of files gone from them and runs the post-steps (resolution, communities).",
    )] = False,
    groups: Annotated[str, typer.Option(
        "--groups", help="Access groups that may read these documents, comma-separated ('hr,finance'): API keys "
                         "with one of them find them. Documents that name their own (a record's 'groups', Markdown "
                         "front matter, a NAME.groups sidecar) keep theirs; none: public.",
    )] = "",
) -> None:
    """Ingest documents. Unchanged documents are skipped; changed ones are re-extracted; an
    interrupted run is completed by running it again. Directories that hold no file with a known
    extension (ingest.extensions) are refused unless --allow-empty. While `hopgraph serve` owns the
    stores, the server ingests the paths (a job; key from HOPGRAPH_API_KEY)."""
    from hopgraph.app.ownership import embedded_owner

    paths = expand_globs(paths)
    try:
        access = parse_groups(groups)
    except BadInputError as exc:
        raise fail(exc) from None
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise fail(NotFoundError(f"no such file or directory: {', '.join(missing)}"))
    s = load_settings()
    empty = None if allow_empty else nothing_to_ingest(paths, s.ingest.extensions, s.data_dir)
    if empty:
        raise fail(BadInputError(empty))
    if ray is not None:
        s = s.model_copy(update={"ingest": s.ingest.model_copy(update={"engine": "ray",
                                                                       "ray_address": ray or s.ingest.ray_address})})
    server = embedded_owner(s)
    if server is not None and ray is not None:
        raise fail(BadInputError("hopgraph serve owns the stores and ingests with its own ingest.engine: set "
                                 "ingest.engine = ray (and ingest.ray_address) in its settings instead of --ray"))
    if server is not None:
        from hopgraph.cli import remote

        console.print(f"hopgraph serve (pid {server.pid}) owns the stores: it ingests the paths")
        with reported():
            report = remote.ingest(server.url, [str(p.resolve()) for p in paths], server.token, groups=access)
    else:
        from hopgraph.app.platform import Platform

        with reported(), Platform(s) as p:
            report = p.ingest(paths, progress=progress, groups=access)
    console.print(
        f"[bold]{report.documents_ingested}[/] ingested, {report.documents_unchanged} unchanged, "
        f"{len(report.skipped)} skipped of {report.documents_seen} documents; {report.chunks} chunks, "
        f"{report.entities} entities, {report.mentions} mentions in {report.seconds:.1f}s"
    )
    if report.conversations:
        console.print(f"  {report.conversations} conversation(s): {report.dated_chunks} of their chunks dated "
                      "(see `hopgraph export` for each chunk's chat_json)")
    if report.redated_chunks:
        console.print(f"  {report.redated_chunks} chunk(s) of stored conversations re-dated (the rules that date "
                      "chat turns changed)")
    for source, reason in report.skipped.items():
        console.print(f"  [yellow]skipped[/] {escape(source)}: {escape(reason)}")
    for source, warning in report.warnings.items():
        console.print(f"  [yellow]warning[/] {escape(source)}: {escape(warning)}")
    for dead in report.dead_letters:
        console.print(f"  [red]dead letter[/] {escape(dead.source)}: {escape(dead.error)} (a rerun tries it again)")
    if report.skipped and not (report.documents_ingested or report.documents_unchanged):
        raise fail(BadInputError(f"nothing was ingested: all {len(report.skipped)} documents were skipped "
                                 "(reasons above)"))


def delete(
    targets: Annotated[list[str], typer.Argument(help="Document ids (doc_…, see `hopgraph documents`), source "
                                                      "files or directories, or globs over them ('notes/**/*.md').")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would be deleted.")] = False,
) -> None:
    """Delete documents with their chunks, mentions, orphaned entities and vectors. Nothing is
    deleted when a target names no document (exit 4, naming it)."""
    from hopgraph.app.ownership import embedded_owner

    s = load_settings()
    server = embedded_owner(s)
    if server is not None:  # `hopgraph serve` owns the stores: it deletes, by document id
        _delete_served(server.url, targets, dry_run)
        return
    from hopgraph.app.platform import Platform

    with reported(), Platform(s) as p:
        found = p.select(targets)
        missing = [t for t, ids in found.items() if not ids]
        if missing:
            raise fail(NotFoundError(f"no document matches {', '.join(repr(m) for m in missing)}; nothing deleted"))
        ids = list(dict.fromkeys(i for group in found.values() for i in group))
        if dry_run:
            for i in ids:
                console.print(i)
            console.print(f"would delete {len(ids)} document(s)")
            return
        n = p.delete_documents(ids)
    console.print(f"deleted {ids[0]}" if n == 1 else f"deleted {n} documents")


def _delete_served(url: str, targets: list[str], dry_run: bool) -> None:
    from hopgraph.cli import remote

    paths = [t for t in targets if not t.startswith("doc_")]
    if paths:
        raise fail(ConflictError(f"hopgraph serve owns the stores at {url}: delete by document id while it runs "
                                 f"(not {', '.join(paths)}), or stop it first"))
    if dry_run:
        console.print(f"would ask {url} to delete {len(targets)} document(s)")
        return
    with reported():
        n = remote.delete(url, list(dict.fromkeys(targets)))
    console.print(f"deleted {targets[0]}" if n == 1 and len(targets) == 1 else f"deleted {n} documents")


def documents(limit: Annotated[int, typer.Option(min=1)] = 100, skip: Annotated[int, typer.Option(min=0)] = 0,
              as_json: Annotated[bool, typer.Option("--json", help="One JSON array of the documents.")] = False
              ) -> None:
    """List ingested documents with their ids, status, access groups and full source."""
    from hopgraph.app.platform import Platform

    with reported(), Platform(load_settings()) as p:
        docs = p.documents(skip=skip, limit=limit)
    if as_json:
        console.print_json(json.dumps([{"id": d.id, "status": d.status, "source": d.source,
                                        "content_hash": d.content_hash, "groups": list(d.groups or ())}
                                       for d in docs]))
        return
    if not docs:
        console.print("no documents")
        return
    table = Table("id", "status", "groups", "source")
    table.columns[3].overflow = "fold"  # a long path wraps, never cut
    for d in docs:
        table.add_row(d.id, d.status or "", ",".join(d.groups or ()) or "(public)", d.source or "")
    console.print(table)


def _served_by(s: Settings, as_json: bool, what: str) -> str | None:
    """The URL of the ``hopgraph serve`` that owns the embedded stores (saying so: on stderr with
    ``--json``), or None when this process may open them."""
    from hopgraph.app.ownership import embedded_owner

    server = embedded_owner(s)
    if server is not None:
        (err if as_json else console).print(f"hopgraph serve (pid {server.pid}) owns the stores: {what} come from it")
    return server.url if server is not None else None


def status(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show the stores in use and their counts (asked of `hopgraph serve` while it owns the stores)."""
    from hopgraph.app.platform import Platform
    from hopgraph.cli import remote

    s = load_settings()
    url = _served_by(s, as_json, "the counts")
    if url is not None:
        with reported():
            st = remote.status(url)
    else:
        with reported(), Platform(s) as p:
            st = p.status()
    st["graph_backend"] = s.graph.backend
    st["vector_backend"] = s.vectors.backend
    st["data_dir"] = str(s.data_dir.resolve())
    if as_json:
        console.print_json(json.dumps(st))
        return
    console.print(f"data dir: {st['data_dir']}  graph: {s.graph.backend} (version {st['graph_version']})  "
                  f"vectors: {s.vectors.backend}")
    table = Table("store", "item", "count")
    for k, v in st["graph"].items():
        table.add_row("graph", k, str(v))
    for k, v in st["vectors"].items():
        table.add_row("vectors", k, str(v))
    console.print(table)
    for dead in st.get("dead_letters", []):
        console.print(f"[red]dead letter[/] {escape(str(dead['source']))}: {escape(str(dead['error']))} "
                      f"({dead['attempts']} attempt(s); the next ingest of it tries again)")


def doctor(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Check the stores: reachable, migrated, built by the configured embedder, graph and vector counts
    in agreement, every document complete, no orphans. Exits 1 when something is off, saying what.
    While `hopgraph serve` owns the stores, it runs the checks."""
    from hopgraph.app.doctor import Check, diagnose
    from hopgraph.app.platform import Platform
    from hopgraph.cli import remote

    s = load_settings()
    url = _served_by(s, as_json, "the checks")
    if url is not None:
        with reported():
            checks = [Check(str(c["name"]), bool(c["ok"]), str(c["detail"])) for c in remote.doctor(url)]
    else:
        with Platform(s) as p:
            checks = diagnose(p)
    if as_json:
        console.print_json(json.dumps([c.__dict__ for c in checks]))
    else:
        table = Table("check", "", "found")
        for c in checks:
            table.add_row(c.name, "[green]ok[/]" if c.ok else "[bold red]FAIL[/]", c.detail)
        console.print(table)
    if not all(c.ok for c in checks):
        raise typer.Exit(code=1)


def communities(
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Re-cluster the whole graph instead of only "
                                          "around the entities that changed since the last update.")] = False,
) -> None:
    """Bring the entity communities up to date (an ingest does this at its end). Without --rebuild
    only the communities around what changed are re-clustered; --rebuild recomputes them all (a
    small change keeps most ids: Leiden starts from the current assignment)."""
    from hopgraph.app.platform import Platform

    s = load_settings()
    not_served(s)
    with reported(), Platform(s) as p:
        report = p.update_communities(rebuild=rebuild)
    console.print(f"{report.communities} communities in {report.levels} level(s): {report.written} written, "
                  f"{report.deleted} deleted, {report.unchanged} unchanged in {report.seconds:.1f}s")


def tree(
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Re-partition the chunks and rebuild every branch "
                                          "instead of only the branches that gained or lost chunks.")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar over the branches built.")] = True,
) -> None:
    """Build or update the RAPTOR tree of chunk-cluster summaries that mode raptor searches (an ingest
    does this at its end when raptor.enabled is set). Branches untouched since the last update are kept."""
    from hopgraph.app.platform import Platform

    s = load_settings()
    not_served(s)
    with reported(), Platform(s) as p:
        report = p.update_tree(rebuild=rebuild, progress=progress)
    console.print(f"tree: {report.branches} branch(es): {report.built} built ({report.summaries_written} "
                  f"summaries), {report.dropped} dropped, {report.unchanged} unchanged in {report.seconds:.1f}s")


def migrate() -> None:
    """Apply pending graph migrations (also done whenever the graph is opened)."""
    from hopgraph.app.platform import Platform

    with reported(), Platform(load_settings()) as p:
        applied = p.migrate()
    console.print(f"applied {len(applied)} migration(s): {', '.join(applied) or 'none pending'}")
