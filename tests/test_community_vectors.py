"""Community vectors: the embedded title and summary, or composed from their key entities' vectors."""

from pathlib import Path

import numpy as np
import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.records import Community
from hopgraph.core.summary_settings import CommunitySettings
from hopgraph.ingest.communities import CommunityBuilder, embed_text
from hopgraph.ingest.community_vectors import composed
from hopgraph.vectors.embedders import SentenceTransformerEmbedder

from .conftest import ServerInfo, settings_for


def unit(v: np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=np.float32) / np.linalg.norm(v)


def test_composed_is_the_direction_of_the_key_entities_sum() -> None:
    e = {"a": np.array([2.0, 0, 0, 0]), "b": np.array([0, 3.0, 0, 0])}

    def lookup(collection: str, ids: list[str]) -> dict[str, np.ndarray]:
        assert collection == "entities"
        return {i: e[i] for i in ids if i in e}

    comms = [Community(id="c1", level=0, key_ids=["a", "b"]),
             Community(id="c2", level=0, key_ids=["a", "x"]),  # a key entity without a vector is left out
             Community(id="c3", level=1, key_ids=["x"])]  # none has one: its text is embedded
    got, missing = composed(comms, lookup, 4)
    assert np.allclose(got[0], unit(np.array([1.0, 1, 0, 0])), atol=1e-6)
    assert np.allclose(got[1], [1, 0, 0, 0], atol=1e-6)
    assert missing == [2] and not got[2].any()


@pytest.mark.parametrize("mode", ["composed", "text"])
def test_ingest_writes_the_community_vectors_its_settings_ask_for(
        arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder, tmp_path: Path, mode: str) -> None:
    """Through the pipeline: ``composed`` makes each community's vector of the stored vectors of the
    entities its summary names; ``text`` (the default) embeds its title and summary."""
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "curie.txt").write_text("Marie Curie worked in Paris with Pierre Curie. Marie Curie married Pierre "
                                    "Curie in Sceaux. Pierre Curie taught physics in Paris at the Sorbonne.")
    (root / "bohr.txt").write_text("Niels Bohr founded an institute in Copenhagen. Niels Bohr met Werner "
                                   "Heisenberg in Copenhagen. Werner Heisenberg later worked in Leipzig.")
    cfg = settings_for(arcadedb, tmp_path / "data", communities=CommunitySettings(vectors=mode))  # type: ignore[arg-type]
    with Platform(cfg, embedder=embedder) as p:  # type: ignore[arg-type]
        p.ingest([root])
        ids = sorted(p._store.community_ids())
        assert ids
        members = p._store.community_members(ids)
        comms = [Community(id=i, level=0, member_ids=sorted(members[i])) for i in ids]
        CommunityBuilder(p._store, p.vectors, embedder, cfg.communities).describe(p._store.topology(), comms)
        stored = p.vectors.vectors("communities", ids)
        if mode == "text":
            want = embedder.embed([embed_text(c, cfg.communities.embed_chars) for c in comms])
        else:
            entities = p.vectors.vectors("entities", sorted({k for c in comms for k in c.key_ids}))
            want = np.stack([unit(np.sum([unit(entities[k]) for k in c.key_ids], axis=0)) for c in comms])
        for c, w in zip(comms, want, strict=True):
            assert float(np.dot(stored[c.id], w)) > 0.999, c
