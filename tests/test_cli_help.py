"""The CLI's help texts as printed (rich markup must not swallow literal brackets)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer
from typer.testing import CliRunner

from hopgraph.cli.main import app

_ENV = {"COLUMNS": "250", "NO_COLOR": "1"}


def _help(*command: str) -> str:
    out = CliRunner().invoke(app, [*command, "--help"], env=_ENV)
    assert out.exit_code == 0, out.output
    return " ".join(out.output.split())


def _commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    ctx = typer.Context(group, info_name="hopgraph")
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if hasattr(cmd, "list_commands"):
            yield from _commands(cmd, (*path, name))
        elif cmd is not None:
            yield (*path, name), cmd


def test_ask_help_shows_the_citation_form() -> None:
    assert "should cite passages as [document#chunk]; citations" in _help("ask")


def test_query_help_shows_the_citation_form() -> None:
    assert "with their citations [file · document · chunk]" in _help("query")


def test_no_help_text_loses_a_bracketed_literal() -> None:
    for path, cmd in _commands(typer.main.get_command(app)):
        texts = [cmd.help or "", *(getattr(p, "help", None) or "" for p in cmd.params)]
        literals = [" ".join(m.removeprefix("\\").split()) for t in texts for m in re.findall(r"\\?\[[^\]]*\]", t)]
        if literals:
            shown = _help(*path)
            assert [lit for lit in literals if lit not in shown] == [], path
