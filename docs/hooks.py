"""MkDocs hooks of the manual: pages hold markers such as ``<!-- hopgraph:settings -->`` that are
replaced, at build time, by references generated from the code itself, so the manual cannot drift from
it: the settings (``hopgraph.core.settings_doc``), the CLI (the typer app's click commands), the HTTP
API (the app factory's OpenAPI schema), the error kinds and the query modes. A setting without a
description is logged as a warning, which fails ``mkdocs build --strict``."""

from __future__ import annotations

import functools
import html
import logging
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
log = logging.getLogger("mkdocs.plugins.hopgraph")
MARKER = re.compile(r"<!-- hopgraph:([a-z-]+) -->")


def _cell(text: object) -> str:
    """One Markdown table cell: on one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def settings_page() -> str:
    from hopgraph.core.settings_doc import missing_descriptions, settings_reference

    for key in missing_descriptions():
        log.warning("setting %r has no description (add description= to its Field)", key)
    return settings_reference()


def _commands(group: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    """Every leaf command under ``group`` (typer's click command objects) with its full name."""
    import typer

    ctx = typer.Context(group, info_name=prefix)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        path = f"{prefix} {name}"
        if hasattr(cmd, "list_commands"):
            yield from _commands(cmd, path)
        else:
            yield path, cmd


def _type_of(p: Any) -> str:
    descriptor = getattr(p, "type_descriptor", None)
    annotation = getattr(descriptor, "annotation", None)
    name = getattr(annotation, "__name__", None) or str(annotation or "")
    name = re.sub(r"\b(typing|pathlib|builtins)\.", "", name).replace("Optional[", "").rstrip("]") or "text"
    bounds = [f"≥ {p.min}" if getattr(p, "min", None) is not None else "",
              f"≤ {p.max}" if getattr(p, "max", None) is not None else ""]
    extra = ", ".join(b for b in bounds if b)
    return f"{name} ({extra})" if extra else name


def _param_row(p: Any) -> str:
    from hopgraph.core.settings_doc import markdown_text

    if getattr(p, "param_type_name", "") == "option" or hasattr(p, "is_flag"):
        names = ", ".join(f"`{o}`" for o in [*p.opts, *p.secondary_opts])
        kind = "flag" if p.is_flag else _cell(_type_of(p))
        default = p.default
        shown = "" if default in (None, (), [], False, "") or callable(default) else f"`{_cell(default)}`"
        return f"| {names} | {kind} | {shown} | {markdown_text(_cell(p.help or ''))} |"
    name = (p.name or "").upper()
    multiple = " ..." if p.nargs == -1 else ""
    req = "required" if p.required else "optional"
    help_text = markdown_text(_cell(getattr(p, "help", None) or ""))
    return f"| `{name}{multiple}` | {_cell(_type_of(p))}, {req} | | {help_text} |"


def cli_page() -> str:
    import typer

    from hopgraph.cli.main import app

    root = typer.main.get_command(app)
    out = [html.escape(root.help or "", quote=False), ""]
    for path, cmd in _commands(root, "hopgraph"):
        usage = " ".join(cmd.collect_usage_pieces(typer.Context(cmd, info_name=path)))
        usage = re.sub(r"\{(\w+)\}", lambda m: m.group(1).upper(), usage)
        out += [f"## `{path}`", "", f"```text\n{path} {usage}\n```", ""]
        if cmd.help:
            out += [html.escape(cmd.help.split("\f")[0].strip(), quote=False), ""]
        params = [p for p in cmd.params if p.name != "help"]
        if params:
            out += ["| parameter | type | default | description |", "|---|---|---|---|"]
            out += [_param_row(p) for p in params]
            out.append("")
    return "\n".join(out)


def _schema_name(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " or ".join(_schema_name(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"array of {_schema_name(schema.get('items', {}))}"
    return str(schema.get("type", "object"))


def openapi_page() -> str:
    from hopgraph.api.app import create_app
    from hopgraph.core.settings import Settings

    spec = create_app(Settings(data_dir=".hopgraph-docs")).openapi()
    out = [f"OpenAPI {spec.get('openapi', '')}, API version {spec['info'].get('version', '')}. The running "
           "server serves this schema at `/openapi.json` and browsable documentation at `/docs` and `/redoc`.",
           "", "| method | path | summary | auth |", "|---|---|---|---|"]
    ops = [(path, method, op) for path, item in spec["paths"].items() for method, op in item.items()]
    for path, method, op in ops:
        auth = "key" if op.get("security") else "none"
        out.append(f"| `{method.upper()}` | `{path}` | {_cell(op.get('summary', ''))} | {auth} |")
    out.append("")
    for path, method, op in ops:
        out += [f"### `{method.upper()} {path}`", ""]
        if op.get("description"):
            out += [op["description"].strip(), ""]
        params = op.get("parameters", [])
        if params:
            out += ["| parameter | in | type | required | description |", "|---|---|---|---|---|"]
            for p in params:
                out.append(f"| `{p['name']}` | {p['in']} | {_cell(_schema_name(p.get('schema', {})))} | "
                           f"{'yes' if p.get('required') else 'no'} | {_cell(p.get('description', ''))} |")
            out.append("")
        body = op.get("requestBody", {}).get("content", {})
        for media, content in body.items():
            out += [f"Request body (`{media}`): {_cell(_schema_name(content.get('schema', {})))}.", ""]
        codes = ", ".join(f"`{code}` {_cell(r.get('description', ''))}" for code, r in op.get("responses", {}).items())
        if codes:
            out += [f"Responses: {codes}.", ""]
    schemas = spec.get("components", {}).get("schemas", {})
    if schemas:
        out += ["## Schemas", ""]
        for name, schema in schemas.items():
            props = schema.get("properties", {})
            if not props:
                continue
            required = set(schema.get("required", []))
            out += [f"### {name}", ""]
            if schema.get("description"):
                out += [_cell(schema["description"]).replace("\\|", "|"), ""]
            out += ["| field | type | required | description |", "|---|---|---|---|"]
            for field, fs in props.items():
                out.append(f"| `{field}` | {_cell(_schema_name(fs))} | {'yes' if field in required else 'no'} | "
                           f"{_cell(fs.get('description', ''))} |")
            out.append("")
    return "\n".join(out)


def errors_page() -> str:
    from hopgraph.core.errors import ERROR_KINDS

    out = ["| error kind | exit code | HTTP status | meaning |", "|---|---|---|---|"]
    for kind, code, status in ERROR_KINDS:
        out.append(f"| `{kind.__name__}` | {code} | {status} | {_cell(kind.__doc__ or '')} |")
    return "\n".join(out)


def modes_page() -> str:
    from hopgraph.retrieval.registry import REGISTRY

    return REGISTRY.markdown(settings=True)


def results_page() -> str:
    """benchmarks/RESULTS.md (written by ``python -m benchmarks.results``) without its title."""
    text = (Path(__file__).resolve().parents[1] / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    return text.split("\n", 1)[1].lstrip()


GENERATORS: dict[str, Callable[[], str]] = {
    "settings": settings_page, "cli": cli_page, "openapi": openapi_page, "errors": errors_page, "modes": modes_page,
    "results": results_page,
}


@functools.cache
def generated(name: str) -> str:
    return GENERATORS[name]()


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any, **_: Any) -> str:
    def fill(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in GENERATORS:
            log.warning("%s: unknown generated section %r", page.file.src_path, name)
            return m.group(0)
        return generated(name)

    return MARKER.sub(fill, markdown)
