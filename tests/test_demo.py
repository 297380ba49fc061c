"""``make demo`` as a user runs it: a fresh data dir, its own graph server ports, every query cited."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from hopgraph.cli.demo import QUERIES, SAMPLE, DemoFailed, run_demo
from tests.conftest import free_port
from tests.paths import REPO_ROOT, empty_config
from tests.processes import cli_env


def test_the_sample_ships_with_the_package() -> None:
    assert SAMPLE.is_dir() and len(list(SAMPLE.glob("*.txt"))) >= 5


def test_a_missing_sample_fails_the_demo(tmp_path: Path) -> None:
    with pytest.raises(DemoFailed, match="sample corpus is missing"):
        run_demo(Console(quiet=True), sample=tmp_path / "nowhere")


def test_make_demo_ingests_the_sample_and_every_query_is_cited(tmp_path: Path) -> None:
    """What ``make demo`` runs (``python -m hopgraph.cli.demo`` in a checkout), in an empty folder so
    the data dir is new; the embedded graph server gets ports of its own and is stopped afterwards."""
    env = cli_env({"HOPGRAPH_CONFIG": empty_config(tmp_path), "HOPGRAPH_GRAPH__BOLT_PORT": str(free_port()),
                   "HOPGRAPH_GRAPH__HTTP_PORT": str(free_port())})
    try:
        out = subprocess.run([sys.executable, "-m", "hopgraph.cli.demo"], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=900)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        ingested = re.search(r"(\d+) ingested, (\d+) unchanged", out.stdout)
        assert ingested and int(ingested[1]) == len(list(SAMPLE.glob("*.txt"))), out.stdout
        assert (tmp_path / ".hopgraph").is_dir()
        sections: dict[str, list[str]] = {}  # each rule line (a heading) -> the lines printed under it
        heading = ""
        for line in out.stdout.splitlines():
            if line.startswith("─") or line.endswith("─"):
                heading = line.strip("─ ")
                sections[heading] = []
            elif heading:
                sections[heading].append(line)
        for text, mode in QUERIES:  # each query printed at least one citation of a sample file
            printed = "\n".join(sections.get(f"{text}  ({mode})", []))
            assert re.search(r"\[\w+\.txt · chk_[0-9a-f]+", printed), f"{text} ({mode}) cited nothing:\n{out.stdout}"
        again = subprocess.run([sys.executable, "-m", "hopgraph.cli.demo"], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=900)
        assert again.returncode == 0 and re.search(r"0 ingested, \d+ unchanged", again.stdout), again.stderr
    finally:
        subprocess.run([sys.executable, "-m", "hopgraph.cli", "db", "stop"], cwd=tmp_path, env=env,
                       capture_output=True, timeout=120)


def test_the_readme_python_example_runs_as_a_plain_script(tmp_path: Path) -> None:
    """The README's first Python block, verbatim in a file run by ``python`` (no ``__main__`` guard): it
    prints its results once, its stderr is clean, and spaCy parsed in worker processes that did not run
    the script again (they would open the same stores, fail, and leave tracebacks)."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    example = readme.split("```python\n", 1)[1].split("```", 1)[0]
    assert "__main__" not in example
    script = tmp_path / "example.py"
    script.write_text(example + "print('extraction workers:', report.extraction_workers)\n", encoding="utf-8")
    env = cli_env({"HOPGRAPH_CONFIG": empty_config(tmp_path), "HOPGRAPH_GRAPH__BOLT_PORT": str(free_port()),
                   "HOPGRAPH_GRAPH__HTTP_PORT": str(free_port()),
                   "HOPGRAPH_INGEST__DOC_BATCH": "1", "HOPGRAPH_EXTRACTION__PROCESSES": "2"})  # 6 batches, 2 workers
    try:
        out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=900)
        assert out.returncode == 0 and out.stderr == "", out.stderr[-3000:]
        assert len(re.findall(r"ingested,", out.stdout)) == 1 and "6 ingested, 0 unchanged" in out.stdout
        assert "extraction workers: 2" in out.stdout and "observatory.txt" in out.stdout, out.stdout
    finally:
        subprocess.run([sys.executable, "-m", "hopgraph.cli", "db", "stop"], cwd=tmp_path, env=env,
                       capture_output=True, timeout=120)
