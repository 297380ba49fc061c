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
    with pytest.raises(ValidationError):
        Settings(graph={"backend": "mysql"})  # type: ignore[arg-type]
