"""The CLI's help texts as printed (rich markup must not swallow literal brackets)."""

from __future__ import annotations

from typer.testing import CliRunner

from hopgraph.cli.main import app


def test_ask_help_shows_the_citation_form() -> None:
    out = CliRunner().invoke(app, ["ask", "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert out.exit_code == 0, out.output
    assert "should cite passages as [document#chunk]; citations" in " ".join(out.output.split())
