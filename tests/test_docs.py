"""The manual and the front page: the generated configuration reference lists every setting, the README
stays a front page, RESULTS.md is what the reports give, and the manual builds with ``--strict``."""

from __future__ import annotations

import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from benchmarks import report_tables, results
from hopgraph.core.limits import QUERY_TEXT_MAX
from hopgraph.core.settings import Settings
from hopgraph.core.settings_doc import markdown_text, missing_descriptions, setting_docs, settings_reference
from tests.processes import cli_env

REPO_ROOT = Path(__file__).resolve().parents[1]
MKDOCS = Path(sys.executable).parent / "mkdocs"


def _keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every leaf key of ``model``, walked here independently of the generator (list items as ``x[]``)."""
    out = []
    for name, info in model.model_fields.items():
        key = f"{prefix}.{name}" if prefix else name
        ann = info.annotation
        item = typing.get_args(ann)[0] if typing.get_origin(ann) is list and typing.get_args(ann) else None
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out += _keys(ann, key)
            continue
        out.append(key)
        if isinstance(item, type) and issubclass(item, BaseModel):
            out += _keys(item, f"{key}[]")
    return out


def test_configuration_reference_lists_every_setting() -> None:
    expected = _keys(Settings)
    docs = setting_docs()
    assert sorted(d.key for d in docs) == sorted(expected)
    text = settings_reference()
    for d in docs:
        name = d.key.rsplit(".", 1)[-1]
        assert f"| `{name}`" in text, d.key
        if d.env:
            assert f"`{d.env}`" in text, d.key
    assert "`HOPGRAPH_RETRIEVAL__TOP_K`" in text and "`HOPGRAPH_RETRIEVAL__NLI__TOP_M`" in text
    assert "## `[retrieval.nli]`" in text and "## `[[scheduler.sources]]` (each item)" in text


def test_every_setting_has_a_description() -> None:
    assert missing_descriptions() == []
    assert "**undocumented**" not in settings_reference()


def test_placeholders_show_as_written_not_as_html_tags() -> None:
    text = settings_reference()
    for default in ("vectors", "llm-cache", "index", "gnn.pt", "jobs.sqlite"):
        assert f"&lt;data_dir&gt;/{default}" in text, default
    assert "<data_dir>" not in re.sub(r"(`+).+?\1", "", text)  # left raw only inside code spans
    assert markdown_text("a <b> & `<c>` ``x <d>``") == "a &lt;b&gt; &amp; `<c>` ``x <d>``"


def test_manual_states_the_query_limit_and_the_server_lifetime() -> None:
    querying = " ".join((REPO_ROOT / "docs" / "querying.md").read_text(encoding="utf-8").split())
    assert f"1 to {QUERY_TEXT_MAX:,} characters" in querying
    python_api = " ".join((REPO_ROOT / "docs" / "python-api.md").read_text(encoding="utf-8").split())
    assert "does **not** stop the embedded ArcadeDB server" in python_api and "hopgraph db stop" in python_api


def test_readme_is_a_front_page_not_a_journal() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    assert not re.search(r"\bsessions?\b", readme, re.IGNORECASE)
    assert "../shared" not in readme
    for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if not link.startswith(("http://", "https://")):
            assert (REPO_ROOT / link).exists(), link


#: phrases of a development journal, which date a figure by a build instead of giving its command and date
JOURNAL_PHRASES = re.compile(r"previous build|this build|measured before", re.IGNORECASE)


def test_the_manual_and_the_readme_read_as_documentation_not_development_notes() -> None:
    """README.md, every page of docs/ and benchmarks/RESULTS.md (which docs/results.md shows)."""
    pages = [REPO_ROOT / "README.md", REPO_ROOT / "benchmarks" / "RESULTS.md",
             *sorted((REPO_ROOT / "docs").rglob("*.md"))]
    assert len(pages) > 20
    found = [f"{page.relative_to(REPO_ROOT)}: {m.group(0)!r}" for page in pages
             for m in JOURNAL_PHRASES.finditer(page.read_text(encoding="utf-8"))]
    assert found == [], found
    assert JOURNAL_PHRASES.search("as Measured Before the change") and not JOURNAL_PHRASES.search("measured on")


def test_results_md_is_what_the_reports_give() -> None:
    assert (REPO_ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8") == results.render()
    cited = results.cited_reports()
    assert all((report_tables.REPORTS / name).is_file() for name in cited)
    assert {p.name for p in report_tables.REPORTS.iterdir()} <= cited


@pytest.mark.integration
def test_docs_build_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run([str(MKDOCS), "build", "--strict", "-d", str(site)], cwd=REPO_ROOT,
                          env=cli_env({"NO_MKDOCS_2_WARNING": "1"}), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    config = (site / "configuration.html").read_text(encoding="utf-8")
    assert "HOPGRAPH_RETRIEVAL__TOP_K" in config and "<!-- hopgraph:" not in config
    assert "(default: &lt;data_dir&gt;/vectors)" in config and "<data_dir>" not in config
    cli = (site / "cli.html").read_text(encoding="utf-8")
    assert "hopgraph ingest" in cli and "&lt;data_dir&gt;/eval/&lt;set&gt;/report.json" in cli
    assert "/query" in (site / "http-api.html").read_text(encoding="utf-8")
    assert "Platform" in (site / "python-api.html").read_text(encoding="utf-8")


@pytest.mark.integration
def test_a_setting_without_description_fails_the_strict_build(tmp_path: Path) -> None:
    script = (
        "import hopgraph.core.settings_doc as sd\n"
        "sd.missing_descriptions = lambda model=None: ['retrieval.undescribed']\n"
        "from mkdocs.__main__ import cli\n"
        f"cli(['build', '--strict', '-d', {str(tmp_path / 'site')!r}])\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, env=cli_env({"NO_MKDOCS_2_WARNING": "1"}),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "retrieval.undescribed" in done.stdout + done.stderr
