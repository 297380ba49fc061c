"""A query mode added by a package through the ``hopgraph.modes`` entry point, without touching hopgraph:
it is registered when the registry is first used and shows in ``hopgraph modes``, ``hopgraph query``,
the API's mode enum, ``hopgraph eval`` and the manual's mode table. ``Registry.register`` adds one at run
time and refuses a name already taken."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hopgraph.retrieval.registry import ENTRY_POINT_GROUP, ModeEntry, Registry
from tests.paths import REPO_ROOT
from tests.processes import cli_env

PLUGIN = textwrap.dedent('''
    """A plug-in mode for the tests: BM25's ranking, with a note saying who answered."""
    from hopgraph.retrieval.registry import REGISTRY, ModeEntry, ModeOptions, ModeOutput


    class Options(ModeOptions):
        boost: float = 1.0


    class TestMode:
        def run(self, run, res) -> ModeOutput:
            out = REGISTRY.mode("bm25").run(run, res)
            boost = run.options("testmode", Options).boost
            return ModeOutput(scores={c: s * boost for c, s in out.scores.items()}, notes=["testmode answered"])


    ENTRY = ModeEntry("testmode", "BM25 through a plug-in (tests)", "hopgraph_testmode:TestMode",
                      options="hopgraph_testmode:Options", ablations={"testmode-double": {"modes": {"testmode":
                      {"boost": 2.0}}}}, evaluated_on=frozenset({"text"}), needs_vector=False)


    def other() -> ModeEntry:
        return ModeEntry("testmode2", "a mode made by a callable (tests)", "hopgraph_testmode:TestMode",
                         needs_vector=False)
''')

CORPUS = {"d1": "Arthur's Magazine was an American literary periodical published in Philadelphia.",
          "d2": "First for Women is a woman's magazine published by Bauer Media Group in the USA.",
          "d3": "The Oberoi family is an Indian family famous for its involvement in hotels."}
QUERIES = {"q1": "Which magazine was published in Philadelphia?", "q2": "Which family runs hotels?"}


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding an installed-looking package ``hopgraph_testmode`` with two mode entry points."""
    root = tmp_path_factory.mktemp("plugin")
    (root / "hopgraph_testmode").mkdir()
    (root / "hopgraph_testmode" / "__init__.py").write_text(PLUGIN, encoding="utf-8")
    info = root / "hopgraph_testmode-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hopgraph-testmode\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\ntestmode = hopgraph_testmode:ENTRY\n"
                                           "testmode2 = hopgraph_testmode:other\n", encoding="utf-8")
    return root


def _env(plugin_dir: Path, tmp_path: Path) -> dict[str, str]:
    """A CLI environment with the plug-in importable and in-memory stores."""
    empty = tmp_path / "empty.toml"
    empty.write_text("", encoding="utf-8")
    return cli_env({"PYTHONPATH": os.pathsep.join([str(plugin_dir), str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
                    "HOPGRAPH_DATA_DIR": str(tmp_path / "data"), "HOPGRAPH_CONFIG": str(empty),
                    "HOPGRAPH_GRAPH__BACKEND": "memory", "HOPGRAPH_VECTORS__BACKEND": "memory"})


def _run(args: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=env["HOPGRAPH_DATA_DIR"].rsplit("/", 1)[0],
                          timeout=timeout)


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "hopgraph.cli", *args], env)


def test_register_adds_a_mode_and_refuses_a_taken_name() -> None:
    registry = Registry([ModeEntry("one", "first", "hopgraph_x:One", ablations={"one-a": {}})])
    registry.register(ModeEntry("two", "second", "hopgraph_x:Two"))
    assert registry.names == ("one", "two")
    with pytest.raises(ValueError, match=r"mode 'one': the name 'one' is already registered .*replace=True"):
        registry.register(ModeEntry("one", "again", "hopgraph_x:Again"))
    with pytest.raises(ValueError, match=r"the name 'one-a' is already registered"):
        registry.register(ModeEntry("three", "an ablation name taken", "hopgraph_x:T", ablations={"one-a": {}}))
    registry.register(ModeEntry("one", "replaced", "hopgraph_x:Again"), replace=True)
    assert registry.entries["one"].summary == "replaced" and "one-a" not in registry.ablations
    with pytest.raises(ValueError, match=r"declares unknown retrieval settings: \['nope'\]"):
        registry.register(ModeEntry("four", "bad", "hopgraph_x:F", settings=("nope",)))
    with pytest.raises(TypeError, match="ModeEntry"):
        registry.register("five")  # type: ignore[arg-type]


def test_entry_points_join_the_registry_on_first_use(plugin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = Registry([ModeEntry("one", "first", "hopgraph_x:One")], plugins=ENTRY_POINT_GROUP)
    monkeypatch.syspath_prepend(str(plugin_dir))  # after the registry was made: loaded on first use
    assert registry.names == ("one", "testmode", "testmode2")  # a ModeEntry and a callable returning one
    assert registry.ablations["testmode-double"] == ("testmode", {"modes": {"testmode": {"boost": 2.0}}})
    assert registry.setting_keys("testmode") == ["modes.testmode.boost"]
    assert "testmode" in registry.evaluated(images=False) and "| `testmode` |" in registry.markdown(settings=True)
    with pytest.raises(ValueError, match=r"testmode.*already registered"):
        registry.register(ModeEntry("testmode", "taken", "hopgraph_x:T"))
    clash = Registry([ModeEntry("testmode", "built in", "hopgraph_x:T")], plugins=ENTRY_POINT_GROUP)
    with pytest.raises(ValueError, match=r"mode plug-in testmode = hopgraph_testmode:ENTRY .*already registered"):
        clash.names  # noqa: B018 - a plug-in never replaces a mode silently


def test_a_plugin_mode_shows_in_the_cli_and_answers_queries(plugin_dir: Path, tmp_path: Path) -> None:
    env = _env(plugin_dir, tmp_path)
    modes = _cli(["modes"], env)
    assert modes.returncode == 0, modes.stderr
    assert "testmode" in modes.stdout and "modes.testmode.boost" in modes.stdout and "testmode-double" in modes.stdout
    helped = _cli(["query", "--help"], env)
    assert helped.returncode == 0 and "testmode" in helped.stdout.partition("--mode")[2]  # among the choices
    data = tmp_path / "docs.jsonl"
    data.write_text("\n".join(json.dumps({"id": k, "text": v}) for k, v in CORPUS.items()), encoding="utf-8")
    script = ("from hopgraph.app.platform import Platform\nfrom hopgraph.core.config import load_settings\n"
              "import sys\nwith Platform(load_settings()) as p:\n    p.ingest([sys.argv[1]])\n"
              "    for m in ('bm25', 'testmode'):\n"
              "        r = p.query('Which magazine was published in Philadelphia?', mode=m, top_k=3)\n"
              "        print(m, [x.citation.document_id for x in r.results], r.notes)\n")
    out = _run([sys.executable, "-c", script, str(data)], env)  # an in-memory store lives in one process
    assert out.returncode == 0, out.stderr[-3000:]
    bm25, plugin = (line.split(" ", 1)[1] for line in out.stdout.splitlines()[-2:])
    assert plugin.startswith(bm25.split("]")[0]) and "testmode answered" in plugin  # BM25's ranking, its note
    unknown = _cli(["query", "anything", "--mode", "nomode"], env)
    assert unknown.returncode == 2 and "unknown mode 'nomode'" in unknown.stderr + unknown.stdout
    accepted = _cli(["query", "anything", "--mode", "testmode"], env)
    assert "unknown mode" not in accepted.stderr + accepted.stdout, accepted.stderr


def test_a_plugin_mode_is_in_the_api_enum_and_the_manuals_table(plugin_dir: Path, tmp_path: Path) -> None:
    env = _env(plugin_dir, tmp_path)
    script = ("import json\nfrom hopgraph.api.app import create_app\nfrom hopgraph.core.settings import Settings\n"
              "import docs.hooks as hooks\n"
              "print(json.dumps({'openapi': create_app(Settings()).openapi(), 'modes': hooks.modes_page()}))\n")
    out = _run([sys.executable, "-c", script], {**env, "PYTHONPATH": env["PYTHONPATH"] + os.pathsep + str(REPO_ROOT)})
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.splitlines()[-1])
    schemas = got["openapi"]["components"]["schemas"]
    enums = [s["enum"] for s in schemas.values() if "enum" in s and "graph" in s["enum"]]
    assert enums and all("testmode" in e and "testmode2" in e for e in enums), enums
    assert "| `testmode` | BM25 through a plug-in (tests) |" in got["modes"]


def test_eval_runs_a_plugin_mode(plugin_dir: Path, tmp_path: Path) -> None:
    data = tmp_path / "set"
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": k, "title": "", "text": v})
                                                 for k, v in CORPUS.items()), encoding="utf-8")
    (data / "queries.jsonl").write_text("\n".join(json.dumps({"_id": q, "text": t}) for q, t in QUERIES.items()),
                                        encoding="utf-8")
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n", encoding="utf-8")
    report = tmp_path / "report.json"
    out = _cli(["eval", str(data), "--modes", "bm25,testmode,testmode-double", "--out", str(report)],
               _env(plugin_dir, tmp_path))
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    text = report.read_text(encoding="utf-8")
    assert "testmode" in text and "testmode-double" in text
