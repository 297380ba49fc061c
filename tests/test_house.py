"""Unit tests of the house rules: the mode registry, the error kinds, the pure graph edits, the
public API re-exports and the layer contract."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import hopgraph
from hopgraph.core.errors import BadInputError, ConflictError, HopgraphError, NotFoundError, classify
from hopgraph.core.records import Mention, Relation, relation_id
from hopgraph.core.settings import RetrievalSettings
from hopgraph.graphdb.records import RelationRef, RemovalFacts
from hopgraph.ingest.graph_edits import merge_edits, plan_removal
from hopgraph.retrieval.registry import REGISTRY, ModeEntry, ModeOptions, ModeOutput, QueryError, Registry
from tests.mode_imports import MODES, mode_folders, mode_internal_imports
from tests.paths import REPO_ROOT
from tests.processes import cli_env
from tests.run_writes import run_writes

PACKAGES = ("hopgraph",)
# the repository's top-level folders, installed and imported as ``hopgraph.<folder>`` (hopgraph/<folder> links them)
FOLDERS = ("ingest", "graphdb", "vectors", "retrieval", "gpu", "api", "migrations")
_IMPORT_IN_TEXT = re.compile(rf"(?:^|[;\n])\s*(?:from (?:{'|'.join(FOLDERS)})(?:\.\w+)* import |"
                             rf"import (?:{'|'.join(FOLDERS)})\b)")


def test_every_registered_mode_resolves_to_an_implementation() -> None:
    for name in REGISTRY.names:
        impl = REGISTRY.mode(name)
        assert callable(getattr(impl, "run", None)), name
        assert REGISTRY.mode(name) is impl  # loaded once
    assert {"graph", "pcst", "gnn", "image"} <= set(REGISTRY.names)


def test_registry_refuses_unknown_names_and_derives_lists() -> None:
    with pytest.raises(QueryError, match=r"unknown mode 'telepathy'.*graph"):
        REGISTRY.check("telepathy")
    with pytest.raises(QueryError):
        REGISTRY.check("graph-0-hops")  # an ablation is not a mode
    REGISTRY.check("graph-0-hops", ablations=True)
    text = REGISTRY.evaluated(images=False)
    assert {"dense", "bm25", "rrf", "graph", "pcst", "graph-0-hops"} <= set(text) and "image" not in text
    assert set(REGISTRY.evaluated(images=True)) >= {"image", "image-rrf", "dense"}
    assert all(f"{n}:" in REGISTRY.help() for n in REGISTRY.names)


def test_ablation_settings_merge_nested_overrides() -> None:
    base = RetrievalSettings()
    mode, cfg = REGISTRY.settings_for("image-no-expansion", base, top_k=20)
    assert mode == "image" and cfg.top_k == 20 and cfg.modes.image.similar_k == 0
    assert cfg.modes.image.candidate_k == base.modes.image.candidate_k  # untouched nested fields keep their values
    assert cfg.modes.raptor == base.modes.raptor and isinstance(cfg.modes.image, type(base.modes.image))
    mode, cfg = REGISTRY.settings_for("raptor-rrf", base)
    assert mode == "raptor" and cfg.modes.raptor.fusion == "rrf" and cfg.modes.raptor.k == base.modes.raptor.k
    mode, cfg = REGISTRY.settings_for("graph-0-hops", base)
    assert mode == "graph" and cfg.modes.graph.expansion == "none" and cfg.modes.graph.entity_bridge_weight == 0.0
    assert cfg.modes.graph.damping == base.modes.graph.damping
    with pytest.raises(ValueError, match=r"damping \(now modes\.graph\.damping\)"):  # a moved key is never lost
        base.merged({"damping": 0.3})


def test_every_retrieval_setting_is_shared_or_read_by_a_mode() -> None:
    from hopgraph.retrieval.registry import INDEX_SETTINGS, SHARED_SETTINGS

    read = {k for e in REGISTRY.entries.values() for k in e.settings if not k.startswith("modes.")}
    assert set(RetrievalSettings.model_fields) == {*SHARED_SETTINGS, *INDEX_SETTINGS, "modes", *read}
    graph_keys = [f"modes.graph.{k}" for k in RetrievalSettings().modes.graph.model_fields]
    assert set(graph_keys) <= set(REGISTRY.setting_keys("graph")) and set(graph_keys) <= set(
        REGISTRY.setting_keys("pcst"))  # pcst builds on graph's pass: it reads graph's table


def test_retrieval_settings_hold_only_what_modes_share() -> None:
    """A key of ``retrieval`` is read by every mode (the retriever's), fixed by the index state, or read by
    several modes; a key one mode reads alone lives in its table, ``retrieval.modes.<mode>``."""
    from hopgraph.retrieval.registry import INDEX_SETTINGS, SHARED_SETTINGS

    for key in set(RetrievalSettings.model_fields) - {*SHARED_SETTINGS, *INDEX_SETTINGS, "modes"}:
        readers = [e.name for e in REGISTRY.entries.values() if key in e.settings]
        assert len(readers) >= 2, f"retrieval.{key} is read by {readers} alone: move it to its mode's table"
    assert REGISTRY.setting_keys("raptor") == ["modes.raptor.k", "modes.raptor.fusion"]
    assert "| `modes.raptor.k`, `modes.raptor.fusion` |" in REGISTRY.markdown(settings=True)


class _EchoOptions(ModeOptions):
    boost: float = 2.0


def test_a_mode_reads_its_own_options_from_its_table() -> None:
    registry = Registry([ModeEntry("echo", "test", "hopgraph.retrieval.modes.baseline:DenseMode",
                                   options="tests.test_house:_EchoOptions")])
    assert registry.setting_keys("echo") == ["modes.echo.boost"]
    registry.check_options(RetrievalSettings(modes={"echo": {"boost": 3}}))
    with pytest.raises(QueryError, match=r"retrieval\.modes\.echo"):
        registry.check_options(RetrievalSettings(modes={"echo": {"bost": 3}}))
    with pytest.raises(QueryError, match=r"retrieval\.modes\.bm25"):
        REGISTRY.check_options(RetrievalSettings(modes={"bm25": {"k1": 1.2}}))  # no options of its own
    REGISTRY.check_options(RetrievalSettings(modes={"graph": {"damping": 0.3}}))  # graph's own table, typed


def test_run_writes_are_found() -> None:
    """The check below sees every kind of write into a ``Run``, and none of a mode's own log."""
    source = ("def f(run, r: Run, trace):\n    run.x = 1\n    run.k += 1\n    run.signals['d'] = {}\n"
              "    run.notes.append('n')\n    r.explain.update({})\n    r.explain.setdefault('a', [])\n"
              "    run.notes.extend([])\n    del run.signals['d']\n    run.cfg, y = 1, 2\n"
              "    trace.signals['d'] = {}\n    trace.notes.append(run.text)\n    run.keep_known({})\n")
    assert sorted(int(w.split(":")[0]) for w in run_writes(source)) == list(range(2, 11))


def test_modes_answer_only_through_their_output() -> None:
    """``Run`` holds a query's inputs, nothing a mode finds or says; nothing in ``retrieval`` but the retriever
    writes into it (attributes, items, in-place methods), and every mode class's ``run`` is annotated to
    return a ``ModeOutput``, which carries its timings, signals, explanation and notes."""
    from dataclasses import fields

    from hopgraph.retrieval.run import Run

    assert {f.name for f in fields(Run)} == {"text", "qvec", "k", "cfg", "state", "explaining", "vector_filter"}
    assert {f.name for f in fields(ModeOutput)} >= {"scores", "entities", "relations", "communities", "seed_weights",
                                                    "timings", "signals", "explain", "notes"}
    assert {n for n in vars(Run) if not n.startswith("_")} - {f.name for f in fields(Run)} == {
        "options", "snap", "keep_known"}  # no mode's own helper
    writes = {}
    for path in sorted((REPO_ROOT / "retrieval").rglob("*.py")):
        also = frozenset({"self"}) if path.name == "run.py" else frozenset()  # nor do Run's own methods
        if path.name != "retriever.py" and (found := run_writes(path.read_text(encoding="utf-8"), also)):
            writes[str(path.relative_to(REPO_ROOT))] = found
    assert not writes, f"writes into a Run outside the retriever: {writes}"
    for path in sorted((REPO_ROOT / "retrieval" / "modes").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Mode"):
                for fn in node.body:
                    if isinstance(fn, ast.FunctionDef) and fn.name in ("run", "run_image"):
                        assert ast.unparse(fn.returns or ast.Constant(None)) == "ModeOutput", (path.name, node.name)


def test_mode_internal_imports_are_found() -> None:
    """The check below sees every way to reach into a mode's folder from outside it, and none of its own."""
    source = (f"import {MODES}.graph.facts\nfrom {MODES}.graph import facts, GraphMode\n"
              f"def f():\n    from {MODES}.image.expansion import expand\n"
              f"from ..graph.chat_time import ChatTimes\nE = ModeEntry('x', 's', '{MODES}.image.expansion:expand')\n"
              f"CODE = 'import json; from {MODES}.graph.facts import verb_matches'\n"
              f"from {MODES}.graph import GraphMode\nfrom {MODES} import graph\nfrom .candidates import Induced\n"
              f"R = '{MODES}.graph:GraphMode'\n")
    subs = {"graph": {"facts", "chat_time"}, "subgraph": {"candidates"}, "image": {"expansion"}}
    found = mode_internal_imports(source, "subgraph", f"{MODES}.subgraph", subs)
    assert sorted(int(w.split(":")[0]) for w in found) == [1, 2, 4, 5, 6, 7], found
    assert mode_internal_imports(source.replace(".graph", ".subgraph"), "graph", f"{MODES}.graph", subs)


def test_no_module_imports_a_mode_s_internals() -> None:
    """A mode is a folder, ``retrieval/modes/<mode>/``: outside it, code (tests and benchmarks included, imports
    in functions and in code run from text too) reaches the mode through its package's public face,
    ``hopgraph.retrieval.modes.<mode>``, as the registry's "module:Class" strings do."""
    modes_dir = REPO_ROOT / "hopgraph" / "retrieval" / "modes"
    subs = mode_folders(modes_dir)
    assert {"graph", "subgraph", "image", "baseline"} <= set(subs) and "facts" in subs["graph"]
    found = {}
    for root in ("hopgraph", "tests", "benchmarks", "docs"):
        for path in sorted((REPO_ROOT / root).rglob("*.py")):
            rel = path.relative_to(REPO_ROOT)
            owner = rel.parts[3] if rel.parts[:3] == ("hopgraph", "retrieval", "modes") and len(rel.parts) > 4 else None
            if hits := mode_internal_imports(path.read_text(encoding="utf-8"), owner, ".".join(rel.parent.parts),
                                             subs):
                found[str(rel)] = hits
    assert not found, f"imports of a mode's internals from outside its folder: {found}"
    for entry in REGISTRY.entries.values():
        module = entry.impl.partition(":")[0]
        assert module.rpartition(".")[0] == MODES and (modes_dir / module.rpartition(".")[2]).is_dir(), entry.impl


def test_the_retriever_imports_no_concrete_mode() -> None:
    tree = ast.parse((REPO_ROOT / "retrieval" / "retriever.py").read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m.startswith("hopgraph.retrieval.modes")}


def test_readme_mode_table_is_the_registry() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- modes:begin -->\n", 1)[1].split("\n<!-- modes:end -->", 1)[0]
    assert block == REGISTRY.markdown()


def test_api_schema_enum_is_the_registry() -> None:
    from hopgraph.api.schemas import Mode

    assert [m.value for m in Mode] == list(REGISTRY.names)


def test_error_kinds_map_to_exit_codes_and_statuses() -> None:
    assert classify(BadInputError("x")) == (2, 400)
    assert classify(NotFoundError("x")) == (4, 404)
    assert classify(ConflictError("x")) == (5, 409)
    assert classify(HopgraphError("x")) == (1, 500)
    assert classify(QueryError("x")) == (2, 400)


def test_every_project_error_derives_from_the_root() -> None:
    found = []
    for pkg in PACKAGES:
        for info in pkgutil.walk_packages(importlib.import_module(pkg).__path__, f"{pkg}."):
            if info.name.startswith(("hopgraph.cli", "hopgraph.api.server")):
                continue  # entry points: checked through their errors' modules
            module = importlib.import_module(info.name)
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ == module.__name__ and issubclass(cls, Exception) and \
                        not cls.__name__.startswith("_"):
                    found.append(cls)
    internal = {"ProblemError", "JobFailed"}  # the API's own control flow, mapped in api/problems.py
    strays = [c.__qualname__ for c in found if not issubclass(c, HopgraphError) and c.__name__ not in internal]
    assert found and strays == []


def test_plan_removal_keeps_what_the_new_version_writes_again() -> None:
    facts = RemovalFacts(chunk_ids=["c1"], touched_entity_ids=["a", "b"], orphaned_entity_ids={"a", "b"},
                         unsupported={"r1": RelationRef("r1", "a", "b"), "r2": RelationRef("r2", "b", "a")},
                         community_ids={"k"})
    plan = plan_removal(facts, keep_entities={"b"}, keep_relations={"r2"})
    assert plan.entity_ids == ["a"] and plan.relation_ids == ["r1"] and plan.chunk_ids == ["c1"]
    assert plan.community_ids == ["k"] and bool(plan)


def test_merge_edits_add_counts_and_drop_self_relations() -> None:
    rels = [Relation(id="r1", source_id="x", target_id="alias", type="met", chunk_ids=["c1"]),
            Relation(id="r2", source_id="alias", target_id="canon", type="is", chunk_ids=["c2"])]
    mentions = [Mention(chunk_id="c1", entity_id="alias", count=2), Mention(chunk_id="c2", entity_id="alias")]
    edits = merge_edits({"alias": "canon"}, mentions, rels)
    assert [(m.chunk_id, m.entity_id, m.count) for m in edits.mentions] == [("c1", "canon", 2), ("c2", "canon", 1)]
    assert [(r.id, r.source_id, r.target_id) for r in edits.relations] == [
        (relation_id("x", "met", "canon"), "x", "canon")]
    assert edits.removed_relation_ids == ["r1", "r2"]


def test_public_api_is_reexported() -> None:
    from hopgraph import Platform, Settings
    from hopgraph.app.platform import Platform as Facade
    from hopgraph.core.settings import Settings as Root

    assert Platform is Facade and Settings is Root
    assert set(hopgraph.__all__) >= {"Platform", "Settings", "QueryResult", "Document", "HopgraphError"}


def test_layer_contract_holds() -> None:
    """``lint-imports`` (import-linter, contract in pyproject.toml): no import goes the wrong way."""
    out = subprocess.run([str(Path(sys.executable).parent / "lint-imports")], cwd=REPO_ROOT, capture_output=True,
                         text=True, env=cli_env())
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


def _python_processes_without_cli_env(source: str) -> list[int]:
    """Lines of ``subprocess.run/Popen/...`` calls that start Python (``sys.executable`` or a ``*PYTHON*``
    path) without ``env=cli_env(...)`` (``tests/processes.py``: stage caps off, so no outcome depends on
    the machine's load)."""
    def is_cli_env(node: ast.expr | None) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "cli_env"

    tree = ast.parse(source)
    made = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and is_cli_env(node.value)
            for t in node.targets if isinstance(t, ast.Name)}  # env = cli_env(...), passed on by name
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "subprocess"
                and node.func.attr in ("run", "Popen", "call", "check_call", "check_output") and node.args):
            continue
        argv = ast.unparse(node.args[0])
        if "sys.executable" not in argv and "PYTHON" not in argv:
            continue
        env = next((kw.value for kw in node.keywords if kw.arg == "env"), None)
        if not (is_cli_env(env) or (isinstance(env, ast.Name) and env.id in made)):
            found.append(node.lineno)
    return found


def test_every_python_subprocess_of_the_tests_turns_stage_caps_off() -> None:
    assert _python_processes_without_cli_env(
        "subprocess.run([sys.executable, '-m', 'hopgraph.cli'], env={**os.environ})") == [1]
    assert _python_processes_without_cli_env("subprocess.Popen([sys.executable, 'x.py'])") == [1]
    assert _python_processes_without_cli_env("subprocess.run([sys.executable, 'x.py'], env=cli_env(e))") == []
    assert _python_processes_without_cli_env("subprocess.run(['docker', 'info'])") == []
    assert _python_processes_without_cli_env("e = cli_env()\nsubprocess.run([sys.executable], env=e)") == []
    assert _python_processes_without_cli_env("e = {}\nsubprocess.run([sys.executable], env=e)") == [2]
    offenders = {path.name: lines for path in sorted((REPO_ROOT / "tests").glob("*.py"))
                 if (lines := _python_processes_without_cli_env(path.read_text(encoding="utf-8")))}
    assert offenders == {}, f"start hopgraph processes with env=cli_env(...) (tests/processes.py): {offenders}"


def _old_root_imports(path: Path) -> list[str]:
    """``import X`` / ``from X import`` of a top-level folder by its bare name, at any depth of ``path``,
    and in the code a string holds (a script a test writes, a ``python -c`` line)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [f"{path.relative_to(REPO_ROOT)}:{node.lineno} {m.group(0).strip()}"
                      for m in _IMPORT_IN_TEXT.finditer(node.value)]
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        found += [f"{path.relative_to(REPO_ROOT)}:{node.lineno} {name}" for name in names
                  if name.split(".")[0] in FOLDERS]
    return found


def test_everything_imports_through_one_root() -> None:
    """The wheel installs only ``hopgraph``: an import of ``ingest`` or ``api`` by its bare name works in a
    checkout but not installed, so none may exist. Every module is a real file under ``hopgraph/``; the
    top-level part names are links into it (the user's layout), never the other way round."""
    roots = [REPO_ROOT / name for name in ("hopgraph", "tests", "benchmarks", "docs")]
    files = [f for root in roots for f in root.rglob("*.py") if not any(p.is_symlink() for p in f.parents)]
    assert len(files) > 100
    assert [hit for f in files for hit in _old_root_imports(f)] == []
    for folder in FOLDERS:
        real, link = REPO_ROOT / "hopgraph" / folder, REPO_ROOT / folder
        assert real.is_dir() and not real.is_symlink(), folder
        assert link.is_symlink() and link.resolve() == real.resolve(), folder
        assert any(real.iterdir()), folder


#: the module that makes every extractor (``make_extractor``, ``local_extractor``)
_EXTRACTOR_FACTORY = "hopgraph/ingest/extractors.py"


def _extractor_misuse(trees: dict[str, ast.Module]) -> list[str]:
    """Calls of an extractor class (a class with an ``extract`` method) outside the factory's module, and
    ``isinstance`` checks against one (or against the ``Extractor`` protocol) anywhere."""
    classes = {node.name for tree in trees.values() for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
               and any(isinstance(f, ast.FunctionDef) and f.name == "extract" for f in node.body)}

    def named(node: ast.expr) -> str:
        return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""

    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            if named(node.func) in classes and path != _EXTRACTOR_FACTORY:
                found.append(f"{path}:{node.lineno} {named(node.func)}(")
            if named(node.func) == "isinstance" and len(node.args) == 2:
                kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
                found += [f"{path}:{node.lineno} isinstance(..., {named(k)})" for k in kinds
                          if named(k) in classes | {"Extractor"}]
    return found


def test_extractors_are_made_in_one_place_and_never_told_apart_by_class() -> None:
    """``ingest/extractors.py`` is the only place an extractor is made (the pipeline, the extraction
    workers and Ray tasks ask it), and a caller reads what an extractor can do from it (``local``), never
    from its class: a new kind of extractor needs no edit of its callers."""
    sample = {"a.py": ast.parse("class SpacyExtractor:\n    def extract(self, chunks): ...\n"
                                "x = SpacyExtractor(cfg)\nisinstance(x, (int, m.SpacyExtractor))\n"),
              _EXTRACTOR_FACTORY: ast.parse("x = SpacyExtractor(cfg)\n")}
    assert _extractor_misuse(sample) == ["a.py:3 SpacyExtractor(", "a.py:4 isinstance(..., SpacyExtractor)"]
    trees = {f.relative_to(REPO_ROOT).as_posix(): ast.parse(f.read_text(encoding="utf-8"))
             for f in sorted((REPO_ROOT / "hopgraph").rglob("*.py"))
             if not any(p.is_symlink() for p in f.parents)}
    assert (REPO_ROOT / _EXTRACTOR_FACTORY).is_file()
    assert _extractor_misuse(trees) == []


#: the names of the whole graph store (``graphdb.protocols``): every role at once
_STORE_UNIONS = {"GraphStore", "GraphBackend"}
#: where the unions may be named: the graph package (they are defined there, the registry and the factory
#: open one), the in-memory store (it is one), and the platform's opener (``Platform._store`` holds the opened
#: store; ``app.platform_roles`` hands each caller its role: ``admin``, ``browser``, ``console``, ...)
_UNION_HOMES = ("hopgraph/graphdb/", "hopgraph/testing/")
_UNION_ALLOWED = {"hopgraph/app/platform.py", "hopgraph/app/platform_roles.py"}


def _union_names(path: str, source: str) -> list[str]:
    """``path:line name`` for every import of a union's name (``from x import GraphStore``) and every
    attribute reading it (``protocols.GraphBackend``)."""
    found = []
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.ImportFrom):
            found += [f"{path}:{node.lineno} {a.name}" for a in node.names if a.name in _STORE_UNIONS]
        elif isinstance(node, ast.Attribute) and node.attr in _STORE_UNIONS:
            found.append(f"{path}:{node.lineno} {node.attr}")
    return found


def test_callers_take_roles_not_the_whole_graph_store() -> None:
    """Code outside the graph package names the role protocols it uses (``IngestWriter``, ``GraphAdmin``,
    a composition such as ``ingest.graph_roles.IngestGraph``), never ``GraphStore``/``GraphBackend``: a
    backend offering fewer roles still serves the callers that need only those. Tests are left out: the
    store contract drives every role."""
    sample = ("from hopgraph.graphdb.protocols import GraphAdmin, GraphStore\n"
              "from hopgraph.graphdb import protocols\nx: protocols.GraphBackend\n")
    assert _union_names("a.py", sample) == ["a.py:1 GraphStore", "a.py:3 GraphBackend"]
    files = [f for root in ("hopgraph", "benchmarks") for f in sorted((REPO_ROOT / root).rglob("*.py"))
             if not any(p.is_symlink() for p in f.parents)]
    found = []
    for f in files:
        path = f.relative_to(REPO_ROOT).as_posix()
        if not path.startswith(_UNION_HOMES) and path not in _UNION_ALLOWED:
            found += _union_names(path, f.read_text(encoding="utf-8"))
    assert len(files) > 100 and found == [], "take the role protocols you use (graphdb.protocols):\n" + \
        "\n".join(found)


#: the front ends: they reach the stores and the retriever only through ``hopgraph.app.platform.Platform``
_FRONT_ENDS = ("hopgraph/api", "hopgraph/cli", "hopgraph/integrations")
#: the packages behind the platform, and the modules of theirs a front end may import: types, records and
#: registries, and tools that open no store (why each, below)
_BEHIND = ("hopgraph.retrieval", "hopgraph.graphdb", "hopgraph.vectors", "hopgraph.ingest")
_FRONT_IMPORTS = {
    "hopgraph.retrieval.registry",  # the mode table: names, options, help (feeds the CLI, the API enum, MCP)
    "hopgraph.graphdb.protocols", "hopgraph.graphdb.records",  # the role protocols and the graph's record types
    "hopgraph.ingest.control", "hopgraph.ingest.caller",  # the handles passed into ``Platform.ingest``
    "hopgraph.ingest.scheduler",  # the timer that calls ``Platform.reingest`` back; its run-log keys
    "hopgraph.ingest.file_access", "hopgraph.ingest.sources",  # the upload sidecar's name; which files an ingest reads
    "hopgraph.graphdb.bolt.arcadedb_server",  # the embedded engine's process (``hopgraph db``): no store
}
#: attributes that are the platform's internals, whatever object they are read from
_INTERNALS = {"retriever", "keeper"}


def _store_methods() -> dict[str, set[str]]:
    """``graph`` / ``vectors`` -> the public methods of the whole graph store and of the vector store."""
    from hopgraph.graphdb.protocols import GraphBackend
    from hopgraph.vectors.store import VectorStore

    return {attr: {n for n in dir(proto) if not n.startswith("_") and callable(getattr(proto, n))}
            for attr, proto in (("graph", GraphBackend), ("vectors", VectorStore))}


def _reach_throughs(path: str, source: str, store_methods: dict[str, set[str]]) -> list[str]:
    """``path:line what`` for each use past the facade in ``source`` (see
    ``test_front_ends_reach_the_stores_only_through_the_platform``)."""
    found = []
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.Attribute):
            base, attr = node.value, node.attr
            private = attr.startswith("_") and not attr.startswith("__")
            if attr in _INTERNALS or (private and not (isinstance(base, ast.Name) and base.id in ("self", "cls"))):
                found.append(f"{path}:{node.lineno} .{attr}")
            elif isinstance(base, ast.Attribute) and attr in store_methods.get(base.attr, ()):
                found.append(f"{path}:{node.lineno} .{base.attr}.{attr}")
        modules: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module]
            if node.module in _BEHIND:  # ``from hopgraph.retrieval import signals``
                modules = [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        found += [f"{path}:{node.lineno} import {m}" for m in modules
                  if m.startswith(tuple(f"{b}." for b in _BEHIND)) and m not in _FRONT_IMPORTS]
    return found


def test_front_ends_reach_the_stores_only_through_the_platform() -> None:
    """The API, the CLI, the MCP server and the integrations (``hopgraph/api``, ``hopgraph/cli``,
    ``hopgraph/integrations``) use the platform's roles and operations, nothing behind them. Checked by use,
    over the AST of every module there, whatever a value is named:

    - no attribute ``retriever`` or ``keeper`` is read (the retriever and its index keeper);
    - no private attribute (``x._name``, dunders aside) is read from anything but ``self``/``cls``
      (``platform._store``, the whole graph store, included);
    - no method of the whole graph store (``GraphBackend``) is called through an attribute ``graph``, nor a
      method of ``VectorStore`` through an attribute ``vectors`` (``p.graph.chunk_sections()``,
      ``p.vectors.count(...)``; ``settings.graph.backend`` is no method);
    - no module of ``hopgraph.retrieval``, ``hopgraph.graphdb``, ``hopgraph.vectors`` or ``hopgraph.ingest``
      is imported (``import``, ``from ... import``, inside functions too), except those of ``_FRONT_IMPORTS``:
      types, records, registries and tools that open no store. A role's protocol comes from
      ``graphdb.protocols``; records of results come from ``hopgraph.core``."""
    methods = _store_methods()
    today = ("from hopgraph.retrieval.signals import load_torch_for\n"
             "from hopgraph.retrieval import registry, decompose\nimport hopgraph.vectors.embedders\n"
             "from hopgraph.retrieval.registry import REGISTRY\nfrom hopgraph.graphdb.protocols import GraphAdmin\n"
             "keeper = platform.retriever.keeper\nplatform.graph.chunk_sections()\np.vectors.count('chunks')\n"
             "p._store.counts()\nself._platform.warm()\ns.graph.backend\np.browser.entity('e')\n")
    assert _reach_throughs("a.py", today, methods) == [
        "a.py:1 import hopgraph.retrieval.signals", "a.py:2 import hopgraph.retrieval.decompose",
        "a.py:3 import hopgraph.vectors.embedders", "a.py:6 .keeper", "a.py:6 .retriever",
        "a.py:7 .graph.chunk_sections", "a.py:8 .vectors.count", "a.py:9 ._store"]
    files = [f for root in _FRONT_ENDS for f in sorted((REPO_ROOT / root).rglob("*.py"))]
    found = []
    for f in files:
        found += _reach_throughs(f.relative_to(REPO_ROOT).as_posix(), f.read_text(encoding="utf-8"), methods)
    assert len(files) > 40 and found == [], "use the platform's roles and operations (hopgraph.app.platform):\n" + \
        "\n".join(found)


def test_each_post_step_takes_its_own_role() -> None:
    """Every post-ingest step and condition is typed with what it uses (a protocol of ``ingest.post_steps``),
    never the whole ``Host``; where it uses the graph, its ``graph`` is one role (or a composition of two),
    never the steps' union ``StepGraph`` nor the pipeline's ``IngestGraph``."""
    import typing

    from hopgraph.ingest import post_steps

    wide = {"Host", "StepGraph", "IngestGraph", "GraphStore", "GraphBackend"}
    for step in post_steps.POST_STEPS:
        for fn in (step.run, step.when):
            if fn.__name__ == "<lambda>":  # the default condition: always
                continue
            taken = typing.get_type_hints(fn)["ing"]
            assert taken.__name__ not in wide, (step.name, fn.__name__, taken)
            graph = getattr(taken, "graph", None)
            if graph is not None:
                role = typing.get_type_hints(graph.fget)["return"]
                parts = [c for c in role.__mro__ if c not in (role, typing.Protocol, typing.Generic, object)]
                assert role.__name__ not in wide and len(parts) <= 2, (step.name, fn.__name__, role)


def test_the_retriever_has_no_mode_specific_methods() -> None:
    """One way in for every mode: ``query`` (a text, or an image for a mode that answers by image); what a
    mode needs beyond it lives in the mode (its ``ModeOutput``, ``ImageQueries``, ``GnnExamples``)."""
    from hopgraph.retrieval.retriever import Retriever

    public = {name for name in vars(Retriever) if not name.startswith("_")}
    assert public == {"query", "state", "snapshot", "embedder"}  # no mode's parts (pcst, gnn: theirs)
    with pytest.raises(QueryError, match="does not answer queries by image"):
        REGISTRY.image_queries("graph")
