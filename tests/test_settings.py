import json
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError

from hopgraph.core.settings import Settings


def test_env_and_toml_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toml = tmp_path / "hopgraph.toml"
    toml.write_text('data_dir = "/srv/hg"\n[graph]\nbackend = "neo4j"\nuri = "bolt://db:7687"\n'
                    '[retrieval]\ntop_k = 9\n')
    monkeypatch.setenv("HOPGRAPH_CONFIG", str(toml))
    monkeypatch.setenv("HOPGRAPH_RETRIEVAL__TOP_K", "3")
    s = Settings()
    assert s.graph.backend == "neo4j" and s.graph.uri == "bolt://db:7687"
    assert s.data_dir == Path("/srv/hg")
    assert s.retrieval.top_k == 3  # the environment wins over the file


def test_defaults_are_the_embedded_stores(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOPGRAPH_CONFIG", str(tmp_path / "absent.toml"))
    s = Settings()
    assert (s.graph.backend, s.vectors.backend, s.graph.host) == ("arcadedb", "edge", "127.0.0.1")
    assert s.graph_dir == Path(".hopgraph/arcadedb")


def test_bad_values_are_refused() -> None:
    with pytest.raises(ValidationError, match="overlap_tokens"):
        Settings(chunking={"max_tokens": 50, "overlap_tokens": 60})  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="bolt_port"):
        Settings(graph={"bolt_port": 0})  # type: ignore[arg-type]
    # a backend is any registered name, checked when the store opens (tests/test_backends.py)
    assert Settings(graph={"backend": "mysql"}).graph.backend == "mysql"  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"unknown stemmer 'klingon'; choose '' \(none\) or one of .*english"):
        Settings(retrieval={"keyword_stemmer": "klingon"})  # type: ignore[arg-type]
    assert Settings(retrieval={"keyword_stemmer": ""}).retrieval.keyword_stemmer == ""  # type: ignore[arg-type]


def _strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str) -> Settings:
    from hopgraph.core.config import load_settings

    path = tmp_path / "hopgraph.toml"
    path.write_text(toml, encoding="utf-8")
    monkeypatch.setenv("HOPGRAPH_CONFIG", str(path))
    return load_settings()


def test_misspelled_sections_and_keys_name_the_closest_valid_one(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from hopgraph.core.config import SettingsError

    with pytest.raises(SettingsError, match=r"unknown setting 'retreival'; did you mean 'retrieval'\?"):
        _strict(tmp_path, monkeypatch, "[retreival]\ntop_k = 3\n")
    with pytest.raises(SettingsError, match=r"unknown setting 'graph.bolt_prot'; did you mean 'graph.bolt_port'\?"):
        _strict(tmp_path, monkeypatch, "[graph]\nbolt_prot = 7000\n")
    with pytest.raises(SettingsError, match=r"'api.api_keys.nmae'"):
        _strict(tmp_path, monkeypatch, '[[api.api_keys]]\nnmae = "x"\nsha256 = "' + "0" * 64 + '"\n')
    monkeypatch.setenv("HOPGRAPH_PORT", "8000")  # docker compose's own variable: not a setting, not an error
    assert _strict(tmp_path, monkeypatch, "").retrieval.top_k == 5
    monkeypatch.setenv("HOPGRAPH_RETRIEVAL__TOPK", "3")
    with pytest.raises(SettingsError, match=r"environment HOPGRAPH_RETRIEVAL__TOPK: unknown setting "
                                            r"'retrieval.topk'; did you mean 'retrieval.top_k'"):
        _strict(tmp_path, monkeypatch, "")


def test_a_list_setting_from_the_environment_must_be_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hopgraph.core.config import SettingsError

    monkeypatch.setenv("HOPGRAPH_API__CORS_ORIGINS", "https://secret.example")
    monkeypatch.setenv("HOPGRAPH_EXTRACTION__ENTITY_LABELS", "PERSON")
    with pytest.raises(SettingsError) as exc:
        _strict(tmp_path, monkeypatch, "")
    message = str(exc.value)
    assert "HOPGRAPH_API__CORS_ORIGINS must be JSON for a list or table setting" in message
    assert "HOPGRAPH_EXTRACTION__ENTITY_LABELS must be JSON" in message and "\n" not in message
    assert "secret.example" not in message  # a value is never echoed
    monkeypatch.setenv("HOPGRAPH_API__CORS_ORIGINS", '["https://a.example"]')
    monkeypatch.setenv("HOPGRAPH_EXTRACTION__ENTITY_LABELS", '["PERSON"]')
    s = _strict(tmp_path, monkeypatch, "")
    assert s.api.cors_origins == ["https://a.example"] and s.extraction.entity_labels == ["PERSON"]


def test_a_moved_table_key_from_the_environment_must_be_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """A key that moved (``retrieval.type_weights`` -> ``retrieval.modes.graph.type_weights``) is checked
    as its new one: a value that is not JSON gets the same one-line message."""
    from hopgraph.core.config import SettingsError

    monkeypatch.setenv("HOPGRAPH_RETRIEVAL__TYPE_WEIGHTS", "PERSON=2")
    with pytest.raises(SettingsError, match=r"HOPGRAPH_RETRIEVAL__TYPE_WEIGHTS must be JSON for a list or table "
                                            r"setting \(for example HOPGRAPH_RETRIEVAL__TYPE_WEIGHTS='\{"):
        _strict(tmp_path, monkeypatch, "")


def test_bad_values_and_syntax_are_one_line_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hopgraph.core.config import SettingsError, load_settings

    with pytest.raises(SettingsError, match=r"invalid settings .*retrieval\.top_k: Input should be a valid integer"):
        _strict(tmp_path, monkeypatch, '[retrieval]\ntop_k = "many"\n')
    with pytest.raises(SettingsError, match=r"hopgraph\.toml: .*line 2") as exc:
        _strict(tmp_path, monkeypatch, "[retrieval]\ntop_k = = 3\n")
    assert "\n" not in str(exc.value)
    monkeypatch.setenv("HOPGRAPH_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(SettingsError, match=r"missing\.toml, which does not exist"):
        load_settings()
    assert _strict(tmp_path, monkeypatch, "[retrieval]\ntop_k = 7\n").retrieval.top_k == 7
    monkeypatch.delenv("HOPGRAPH_CONFIG")
    monkeypatch.setenv("HOPGRAPH_RETRIEVAL__TOP_K", "many")  # the environment wins: its variable is named
    with pytest.raises(SettingsError, match=r"retrieval\.top_k \(environment HOPGRAPH_RETRIEVAL__TOP_K\): "
                                            r"Input should be a valid integer") as exc:
        _strict(tmp_path, monkeypatch, "[retrieval]\ntop_k = 7\n")
    assert "hopgraph.toml" not in str(exc.value)


@pytest.mark.parametrize(("old", "toml", "env", "read"), [
    ("raptor_k", "[retrieval]\nraptor_k = 17\n", ("HOPGRAPH_RETRIEVAL__RAPTOR_K", "17"),
     lambda s: s.retrieval.modes.raptor.k == 17),
    ("raptor_fusion", '[retrieval]\nraptor_fusion = "rrf"\n', ("HOPGRAPH_RETRIEVAL__RAPTOR_FUSION", "rrf"),
     lambda s: s.retrieval.modes.raptor.fusion == "rrf"),
    ("sections", "[retrieval.sections]\ndocuments = 7\n", ("HOPGRAPH_RETRIEVAL__SECTIONS__DOCUMENTS", "7"),
     lambda s: s.retrieval.modes.sections.documents == 7),
    ("image", "[retrieval.image]\nkg_weight = 0.5\n", ("HOPGRAPH_RETRIEVAL__IMAGE__KG_WEIGHT", "0.5"),
     lambda s: s.retrieval.modes.image.kg_weight == 0.5),
])
def test_a_key_moved_under_modes_still_works_with_a_warning_naming_the_new_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, old: str, toml: str,
        env: tuple[str, str], read: Callable[[Settings], bool]) -> None:
    from hopgraph.core.retrieval_settings import MOVED_KEYS

    new = MOVED_KEYS[old][0].removesuffix(".*")
    with caplog.at_level("WARNING"), pytest.warns(DeprecationWarning, match=f"use retrieval.{new}"):
        assert read(_strict(tmp_path, monkeypatch, toml))  # from the config file
    assert f"retrieval.{old} is deprecated" in caplog.text and f"use retrieval.{new}" in caplog.text
    caplog.clear()
    monkeypatch.setenv(*env)
    with caplog.at_level("WARNING"):
        assert read(_strict(tmp_path, monkeypatch, ""))  # from the environment
    assert f"use retrieval.{new}" in caplog.text


#: a value other than the default for every key of graph mode's table (each moved from ``retrieval.<key>``)
GRAPH_SAMPLES: dict[str, object] = {
    "enrichment": False, "enrich_chunks": 4, "drop_generic": False, "expansion": "beam", "damping": 0.6,
    "ppr_solver": "push", "passage_weight": 0.7, "title_weight": 5.0, "when_weight": 0.5, "session_link_weight": 1.0,
    "bridge_weight": 0.5, "bridge_sources": 4, "bridge_per_source": 3, "entity_bridge_weight": 0.5,
    "entity_bridge_sources": 2, "fact_weight": 0.25, "entity_weight": 0.25, "time_weight": 0.5, "hops": 3,
    "beam": 16, "decay": 0.25,
    "type_weights": {"*": 0.5}, "fusion": "rrf", "decompose": False, "person_scope": False,
    "enrich_entities_per_chunk": 3, "enrich_weight": 0.25}


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return "{ " + ", ".join(f'"{k}" = {v}' for k, v in value.items()) + " }"
    return f'"{value}"' if isinstance(value, str) else str(value)


def _env(value: object) -> str:
    return json.dumps(value) if isinstance(value, dict) else str(value).lower() if isinstance(value, bool) else str(
        value)


def test_every_key_of_graph_mode_has_a_sample() -> None:
    from hopgraph.core.retrieval_settings import MOVED_KEYS, GraphModeSettings

    assert set(GRAPH_SAMPLES) == set(GraphModeSettings.model_fields)
    assert all(MOVED_KEYS[k][0] == f"modes.graph.{k}" for k in GRAPH_SAMPLES)
    assert all(GraphModeSettings().model_dump()[k] != v for k, v in GRAPH_SAMPLES.items())  # each sample is news


@pytest.mark.parametrize("key", sorted(GRAPH_SAMPLES))
def test_a_graph_key_read_from_its_old_place_warns_and_lands_in_graph_modes_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, key: str) -> None:
    value = GRAPH_SAMPLES[key]
    with caplog.at_level("WARNING"):
        got = _strict(tmp_path, monkeypatch, f"[retrieval]\n{key} = {_toml(value)}\n")  # from the config file
    assert getattr(got.retrieval.modes.graph, key) == value
    assert f"retrieval.{key} is deprecated" in caplog.text and f"use retrieval.modes.graph.{key}" in caplog.text
    caplog.clear()
    monkeypatch.setenv(f"HOPGRAPH_RETRIEVAL__{key.upper()}", _env(value))
    with caplog.at_level("WARNING"):
        got = _strict(tmp_path, monkeypatch, "")  # from the environment
    assert getattr(got.retrieval.modes.graph, key) == value and f"use retrieval.modes.graph.{key}" in caplog.text
    monkeypatch.delenv(f"HOPGRAPH_RETRIEVAL__{key.upper()}")
    new = _strict(tmp_path, monkeypatch, f"[retrieval.modes.graph]\n{key} = {_toml(value)}\n")  # the new place
    assert getattr(new.retrieval.modes.graph, key) == value


def test_mode_tables_are_typed_checked_strictly_and_the_new_key_wins(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from hopgraph.core.config import SettingsError

    s = _strict(tmp_path, monkeypatch, '[retrieval.modes.raptor]\nk = 12\nfusion = "tree"\n[retrieval.modes.image]\n'
                                       'kg_weight = 0.25\n')
    assert (s.retrieval.modes.raptor.k, s.retrieval.modes.raptor.fusion, s.retrieval.modes.image.kg_weight) == (
        12, "tree", 0.25)
    with pytest.raises(SettingsError, match=r"'retrieval.modes.raptor.kk'; did you mean 'retrieval.modes.raptor.k'"):
        _strict(tmp_path, monkeypatch, "[retrieval.modes.raptor]\nkk = 3\n")
    with pytest.raises(SettingsError, match=r"'retrieval.image.kg_wieght'"):  # a moved table is checked as its new one
        _strict(tmp_path, monkeypatch, "[retrieval.image]\nkg_wieght = 0.5\n")
    with pytest.raises(ValueError, match=r"retrieval.raptor_k and its new key retrieval.modes.raptor.k are both set"):
        Settings(retrieval={"raptor_k": 3, "modes": {"raptor": {"k": 9}}})  # type: ignore[arg-type]
    plugin = Settings(retrieval={"modes": {"echo": {"boost": 3}}})  # type: ignore[arg-type]
    assert plugin.retrieval.modes.plugin_tables() == {"echo": {"boost": 3}}
    assert _strict(tmp_path, monkeypatch, "[retrieval.modes.echo]\nboost = 3\n").retrieval.modes.plugin_tables() == {
        "echo": {"boost": 3}}  # a plug-in mode's table: checked by its model when the retriever starts
    with pytest.raises(SettingsError, match=r"retrieval.image.kg_weight and its new key "
                                            r"retrieval.modes.image.kg_weight are both set"):
        _strict(tmp_path, monkeypatch, "[retrieval.image]\nkg_weight = 0.5\n[retrieval.modes.image]\nkg_weight = 0.4\n")


#: a value other than the default for every key of ``gpu`` that moved, and where it lands now
GPU_SAMPLES: dict[str, tuple[object, tuple[tuple[str, str], ...]]] = {
    "candidates": (50, (("pcst", "candidates"), ("gnn", "candidates"))),
    "similar_k": (3, (("pcst", "similar_k"), ("gnn", "similar_k"))),
    "similar_min": (0.5, (("pcst", "similar_min"), ("gnn", "similar_min"))),
    "pcst_topk": (4, (("pcst", "topk"),)), "pcst_topk_edges": (6, (("pcst", "topk_edges"),)),
    "pcst_edge_cost": (0.25, (("pcst", "edge_cost"),)), "pcst_weight": (0.5, (("pcst", "weight"),)),
    "gnn_checkpoint": (Path("/tmp/g.pt"), (("gnn", "checkpoint"),)), "gnn_weight": (0.25, (("gnn", "weight"),)),
    "allow_stale_checkpoint": (True, (("gnn", "allow_stale_checkpoint"),)),
    "gnn_hidden": (32, (("gnn", "hidden"),)), "gnn_heads": (4, (("gnn", "heads"),)),
    "gnn_layers": (3, (("gnn", "layers"),)),
}


def test_every_moved_gpu_key_lands_in_its_mode_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    from hopgraph.core.gpu_settings import GpuSettings
    from hopgraph.core.subgraph_settings import GPU_MOVED_KEYS

    assert set(GPU_SAMPLES) == set(GPU_MOVED_KEYS) and set(GpuSettings.model_fields) == {
        "device", "ppr_backend", "mixed_precision"}  # gpu.* keeps only where the engines run
    for old, (value, places) in GPU_SAMPLES.items():
        caplog.clear()
        text = f'"{value}"' if isinstance(value, Path) else str(value).lower() if isinstance(value, bool) else value
        with caplog.at_level("WARNING"), pytest.warns(DeprecationWarning, match=f"gpu.{old} is deprecated"):
            got = _strict(tmp_path, monkeypatch, f"[gpu]\n{old} = {text}\n")
        for mode, key in places:
            assert getattr(getattr(got.retrieval.modes, mode), key) == value, (old, mode, key)
            assert f"retrieval.modes.{mode}.{key}" in caplog.text
    monkeypatch.setenv("HOPGRAPH_GPU__PCST_TOPK", "7")  # from the environment
    with pytest.warns(DeprecationWarning, match="use retrieval.modes.pcst.topk"):
        assert _strict(tmp_path, monkeypatch, "").retrieval.modes.pcst.topk == 7
    with pytest.raises(ValueError, match=r"gpu.pcst_topk and its new key retrieval.modes.pcst.topk are both set"):
        _strict(tmp_path, monkeypatch, "[retrieval.modes.pcst]\ntopk = 9\n")
    monkeypatch.delenv("HOPGRAPH_GPU__PCST_TOPK")
    with pytest.warns(DeprecationWarning):  # keyword arguments too
        assert Settings(gpu={"gnn_hidden": 16}).retrieval.modes.gnn.hidden == 16  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"gpu keys moved: pcst_topk \(now retrieval.modes.pcst.topk\)"):
        GpuSettings(pcst_topk=3)  # type: ignore[call-arg]
    assert Settings(retrieval={"modes": {"gnn": {"checkpoint": "/tmp/c.pt"}}}  # type: ignore[arg-type]
                    ).gnn_checkpoint_path == Path("/tmp/c.pt")


def test_a_key_two_modes_read_moves_to_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.warns(DeprecationWarning, match="use retrieval.modes.graph.enrich_weight and "
                                                "retrieval.modes.image.enrich_weight"):
        got = _strict(tmp_path, monkeypatch, "[retrieval]\nenrich_weight = 0.25\n").retrieval.modes
    assert (got.graph.enrich_weight, got.image.enrich_weight) == (0.25, 0.25)
    new = _strict(tmp_path, monkeypatch, "[retrieval.modes.image]\nenrich_weight = 0.25\n").retrieval.modes
    assert (new.graph.enrich_weight, new.image.enrich_weight) == (0.5, 0.25)
