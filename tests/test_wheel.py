"""The built wheel installs one import root, ``hopgraph``, and works from there: migrations, an ingest
and a query run from the installed files, not from the checkout."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from tests.paths import REPO_ROOT, empty_config
from tests.processes import cli_env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(REPO_ROOT)], capture_output=True, text=True, env=cli_env(),
                          timeout=300)
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("hopgraph-*.whl")
    return built


def test_wheel_holds_one_top_level_package_with_its_data(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"hopgraph", wheel.name.split("-py3")[0] + ".dist-info"}, tops
    for needed in ("hopgraph/ingest/pipeline.py", "hopgraph/retrieval/modes/graph/__init__.py", "hopgraph/api/app.py",
                   "hopgraph/migrations/0001_constraints.cypher", "hopgraph/api/explorer_assets/explorer.js",
                   "hopgraph/sample/"):
        assert any(name.startswith(needed) for name in names), needed


def test_installed_wheel_migrates_ingests_and_answers(wheel: Path, arcadedb: ServerInfo, tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                           str(wheel)], capture_output=True, text=True, env=cli_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in site.iterdir() if p.name != "bin") == ["hopgraph", wheel.name.split("-py3")[0]
                                                                         + ".dist-info"]
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "fact.txt").write_text("The Quillon Lighthouse was designed by Marisol Underhay in 1911.")
    env = cli_env({
        "PYTHONPATH": str(site), "HOPGRAPH_DATA_DIR": str(tmp_path / "data"), "HOPGRAPH_GRAPH__URI": arcadedb.uri,
        "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
        "HOPGRAPH_GRAPH__DATABASE": "wheeltest", "HOPGRAPH_CONFIG": empty_config(tmp_path),
    })

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        # run from outside the checkout so that only the installed files can be imported
        return subprocess.run([sys.executable, "-m", "hopgraph.cli", *args], cwd=tmp_path, capture_output=True,
                              text=True, env=env, timeout=300)

    where = subprocess.run([sys.executable, "-c", "import hopgraph.graphdb.migrations as m, hopgraph.ingest as i; "
                            "print(m.__file__); print(i.__file__); print(m.packaged())"],
                           cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert where.returncode == 0, where.stderr
    assert all(line.startswith(str(site)) for line in where.stdout.split()), where.stdout
    out = run("migrate")
    assert out.returncode == 0, out.stderr
    out = run("ingest", "--no-progress", str(corpus))
    assert out.returncode == 0 and "1 ingested" in out.stdout, out.stdout + out.stderr
    out = run("query", "Who designed the Quillon Lighthouse?", "--mode", "bm25")
    assert out.returncode == 0 and "Marisol Underhay" in out.stdout and "fact.txt" in out.stdout, out.stderr
