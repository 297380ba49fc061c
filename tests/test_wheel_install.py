"""``pip install hopgraph-*.whl`` as a user runs it: the wheel built from the checkout, installed by pip into a
new virtual environment, and its ``hopgraph`` command ingesting the sample the wheel ships into a fresh
embedded ArcadeDB, then answering a query with a citation.

A clean environment would download torch and some sixty other packages, too slow for CI. Instead, the new
environment reaches the dependencies already installed in the environment running the tests through a
folder of links to them, named by a ``.pth`` line. hopgraph is left out of that folder: its package,
metadata, and the finder and ``.pth`` files of an editable install. Because the line only names a folder,
no ``.pth`` file of the test environment runs, so hopgraph can only come from the wheel, which the test
checks before and after installing it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import free_port
from tests.paths import REPO_ROOT, empty_config
from tests.processes import cli_env

pytestmark = [pytest.mark.slow, pytest.mark.integration]

#: files of the test environment that must not reach the new one: hopgraph itself (an editable install's
#: finder and .pth too), pip (the new environment has its own), and every .pth file
_NOT_LINKED = ("hopgraph", "__editable__", "__pycache__")


def _keep(name: str) -> bool:
    return not (name.startswith(_NOT_LINKED) or name.endswith((".pth", ".egg-link"))
                or name == "pip" or name.startswith("pip-"))


def _package_data() -> list[str]:
    """The package-data globs of pyproject.toml, e.g. ``sample/*.txt``."""
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(pyproject["tool"]["setuptools"]["package-data"]["hopgraph"])


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    site: Path  # the new environment's site-packages
    before: frozenset[str]  # its entries before the wheel went in
    env: dict[str, str]  # for the new environment's processes: its bin first, no PYTHONPATH, offline models
    home: Path  # the working directory, outside the checkout

    def run(self, *argv: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), cwd=self.home, env=self.env, capture_output=True, text=True,
                              timeout=timeout)


def _build_wheel(tmp: Path) -> Path:
    """The wheel of a copy of the checkout's packaging inputs: pyproject.toml, README.md, ``hopgraph/`` and
    the top-level links into it (so that the packages' ``include`` is tested against them), leaving no
    ``build/`` in the checkout."""
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO_ROOT / name, src / name)
    shutil.copytree(REPO_ROOT / "hopgraph", src / "hopgraph", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for link in REPO_ROOT.iterdir():
        if link.is_symlink() and link.resolve().parent == (REPO_ROOT / "hopgraph").resolve():
            (src / link.name).symlink_to(Path("hopgraph") / link.name, target_is_directory=True)
    dist = tmp / "dist"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(dist), str(src)], capture_output=True, text=True, env=cli_env(), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = dist.glob("hopgraph-*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    tmp = tmp_path_factory.mktemp("wheel-install")
    wheel = _build_wheel(tmp)
    venv = tmp / "venv"
    done = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, env=cli_env(),
                          timeout=300)
    assert done.returncode == 0, done.stderr
    python = venv / "bin" / "python"
    where = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           capture_output=True, text=True, env=cli_env(), timeout=60)
    site = Path(where.stdout.strip())
    assert site.is_dir() and site.is_relative_to(venv), where.stdout + where.stderr

    deps = tmp / "deps"  # links to the test environment's installed distributions, hopgraph left out
    deps.mkdir()
    ours = Path(sysconfig.get_paths()["purelib"])
    for entry in ours.iterdir():
        if _keep(entry.name):
            (deps / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    (site / "zz-hopgraph-test-dependencies.pth").write_text(f"{deps}\n", encoding="utf-8")

    home = tmp / "home"
    home.mkdir()
    env = cli_env({"PATH": f"{venv / 'bin'}:{cli_env()['PATH']}", "VIRTUAL_ENV": str(venv),
                   "HOPGRAPH_CONFIG": empty_config(home), "HOPGRAPH_DATA_DIR": str(home / "data"),
                   "HOPGRAPH_GRAPH__BOLT_PORT": str(free_port()), "HOPGRAPH_GRAPH__HTTP_PORT": str(free_port())})
    env.pop("PYTHONPATH", None)
    box = Installed(wheel, venv, site, frozenset(p.name for p in site.iterdir()), env, home)

    absent = box.run(str(python), "-c", "import hopgraph")  # the dependencies' folder does not carry hopgraph
    assert absent.returncode == 1 and "No module named 'hopgraph'" in absent.stderr, absent.stdout + absent.stderr
    done = box.run(str(venv / "bin" / "pip"), "install", "--no-deps", "--no-index", "-q", str(wheel))
    assert done.returncode == 0, done.stdout + done.stderr
    yield box


def test_the_wheel_holds_only_hopgraph_and_its_package_data(installed: Installed) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    dist_info = installed.wheel.name.split("-py3")[0] + ".dist-info"
    assert {n.split("/")[0] for n in names} == {"hopgraph", dist_info}  # no top-level ingest/, retrieval/, ...
    for pattern in _package_data():
        shipped = sorted(p.relative_to(REPO_ROOT) for p in (REPO_ROOT / "hopgraph").glob(pattern) if p.is_file())
        assert shipped, pattern
        for rel in shipped:
            assert rel.as_posix() in names, rel
            assert (installed.site / rel).is_file(), rel
    assert sorted({p.name for p in installed.site.iterdir()} - installed.before) == ["hopgraph", dist_info]


def test_hopgraph_imports_from_the_new_environment_with_its_dependencies_met(installed: Installed) -> None:
    python = str(installed.venv / "bin" / "python")
    out = installed.run(python, "-c", "import hopgraph, hopgraph.ingest, hopgraph.api.explorer as e, "
                                      "hopgraph.graphdb.migrations as m; "
                                      "print(hopgraph.__file__, hopgraph.ingest.__file__, e.ASSETS, m.packaged())")
    assert out.returncode == 0, out.stderr
    paths = out.stdout.split()
    assert all(Path(p).is_relative_to(installed.site / "hopgraph") for p in paths), out.stdout
    assert str(REPO_ROOT) not in out.stdout, out.stdout
    check = installed.run(python, "-m", "pip", "check")  # what the wheel requires is installed, in its versions
    assert not [line for line in check.stdout.splitlines() if line.lower().startswith("hopgraph ")], check.stdout
    script = installed.venv / "bin" / "hopgraph"
    assert script.is_file() and script.read_text(encoding="utf-8").startswith(f"#!{installed.venv / 'bin'}")


def test_the_hopgraph_command_ingests_the_shipped_sample_and_answers_with_a_citation(installed: Installed) -> None:
    hopgraph = str(installed.venv / "bin" / "hopgraph")
    sample = installed.site / "hopgraph" / "sample"
    try:
        out = installed.run(hopgraph, "ingest", "--no-progress", str(sample), timeout=600)
        count = len(list(sample.glob("*.txt")))
        assert out.returncode == 0 and f"{count} ingested" in out.stdout, out.stdout[-3000:] + out.stderr[-3000:]
        out = installed.run(hopgraph, "query", "Who founded the Vexmoor Observatory?", "--top-k", "3", "--json")
        assert out.returncode == 0, out.stderr[-3000:]
        first = json.loads(out.stdout)["results"][0]
        assert "Zorblax Quintana" in first["text"], first
        assert first["citation"]["source"] == str(sample / "observatory.txt"), first["citation"]
        assert first["citation"]["chunk_id"].startswith("chk_"), first["citation"]
    finally:
        installed.run(hopgraph, "db", "stop", timeout=120)
