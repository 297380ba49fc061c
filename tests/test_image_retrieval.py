"""Mode ``image``: caption records become image documents whose caption entities feed a KG score
fused with caption similarity; the parts are checked against brute-force references."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from hopgraph.app.platform import Platform
from hopgraph.retrieval.modes.image import EntityEdges, expand, similarity_matrix, top_k_rows
from tests.paths import SHARED_DATA

FLICKR = SHARED_DATA / "flickr8k-captions"


def test_similarity_edges_match_brute_force() -> None:
    rng = np.random.default_rng(0)
    v = rng.standard_normal((300, 16)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    m = similarity_matrix(v, k=4, min_sim=0.3)
    full = v @ v.T
    np.fill_diagonal(full, -1)
    for i in range(300):
        want = {int(j) for j in np.argsort(-full[i])[:4] if full[i, j] >= 0.3}
        got = set(m.indices[m.indptr[i]:m.indptr[i + 1]].tolist())
        assert got == want and i not in got
        for j in got:
            assert abs(m[i, j] - full[i, j]) < 1e-5


def test_degree_cap_and_one_hop_expansion() -> None:
    adj = sp.csr_matrix(np.array([[0, 3, 1, 2], [3, 0, 0, 0], [1, 0, 0, 5], [2, 0, 5, 0]], dtype=float))
    capped = top_k_rows(adj, 2)
    assert capped.getnnz(axis=1).tolist() == [2, 1, 2, 2] and capped[0, 2] == 0 and capped[0, 1] == 3
    edges = EntityEdges(similar=sp.csr_matrix((4, 4)), cooccur=sp.csr_matrix(capped / 3.0))
    scores = expand({0: 1.0}, edges, 4, weight=0.5)
    assert scores[0] == 1.0 and np.isclose(scores[1], 0.5) and np.isclose(scores[3], 0.5 * 2 / 3) and scores[2] == 0


def _records(n: int) -> tuple[list[str], list[tuple[str, str]]]:
    corpus = FLICKR.joinpath("corpus.jsonl").read_text().splitlines()[:n]
    ids = {json.loads(line)["_id"] for line in corpus}
    qrels = dict(line.split("\t")[:2] for line in FLICKR.joinpath("qrels", "test.tsv").read_text().splitlines()[1:])
    queries = [(json.loads(q)["text"], qrels[json.loads(q)["_id"]])
               for q in FLICKR.joinpath("queries.jsonl").read_text().splitlines()]
    return corpus, [(text, img) for text, img in queries if img in ids]


def test_image_mode_ranks_images_with_their_entities(platform: Platform, tmp_path: Path) -> None:
    corpus, queries = _records(60)
    path = tmp_path / "images.jsonl"
    path.write_text("\n".join(corpus) + "\n")
    report = platform.ingest([path])
    assert report.documents_ingested == 60 and report.entities > 30
    ids = platform.corpus_ids()
    found = 0
    for text, gold in queries:
        res = platform.query(text, mode="image", top_k=5)
        assert res.results and all(r.image and r.image.endswith(".jpg") for r in res.results)
        found += gold in [ids[r.citation.chunk_id] for r in res.results]
    assert found >= 0.7 * len(queries), (found, len(queries))
    res = platform.query("a dog running through the grass", mode="image", top_k=3, explain=True)
    assert "## Images" in res.context and any(r.entities for r in res.results)
    assert {"caption", "kg"} <= set(res.explain["signals"]) and res.timings_ms["kg"] > 0
    stats = res.explain["entity_stats"]
    assert stats and all(1 <= s["df"] <= s["cf"] for s in stats)
    # the expansion edges follow the settings (they were once cached per graph version only)
    base = platform.settings.retrieval
    flat = base.model_copy(update={"modes": base.modes.model_copy(update={"image": base.modes.image.model_copy(
        update={"similar_k": 0, "cooccur_k": 0})})})
    wide = platform.query("a dog running through the grass", mode="image", top_k=40, explain=True)
    bare = platform.query("a dog running through the grass", mode="image", top_k=40, explain=True, retrieval=flat)
    assert set(bare.explain["signals"]["kg"]) < set(wide.explain["signals"]["kg"])  # all 60 images fit


def test_image_mode_without_images_says_so(platform: Platform, tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ada Lovelace wrote the first program.")
    platform.ingest([doc])
    res = platform.query("Lovelace", mode="image")
    assert res.results == [] and "no image documents in the graph" in res.notes


CAPTIONED = [
    {"_id": "kite.jpg", "image": "kite.jpg", "captions": ["A boy flies a red kite on a windy beach .",
                                                          "Someone is outside .", "A child at the coast ."]},
    {"_id": "bike.jpg", "image": "bike.jpg", "captions": ["A man rides a bicycle down a dirt trail .",
                                                          "A cyclist in the woods ."]},
]


def test_each_caption_has_its_own_vector(platform: Platform, tmp_path: Path) -> None:
    records = json.loads(json.dumps(CAPTIONED))
    path = tmp_path / "images.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    platform.ingest([path])
    assert platform.vectors.count("captions") == 5
    res = platform.query("a red kite flown by a boy on the beach", mode="image", top_k=2, explain=True)
    best = res.explain["signals"]["best_caption"]
    kite = next(c for c, d in platform.corpus_ids().items() if d == "kite.jpg")
    assert max(best, key=best.__getitem__) == kite and res.results[0].citation.chunk_id == kite
    # a changed document keeps no caption it lost; a deleted one keeps none
    records[0]["captions"] = records[0]["captions"][:1]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    platform.ingest([path])
    assert platform.vectors.count("captions") == 3
    kite_doc = next(d.id for d in platform.documents() if d.source.endswith("#kite.jpg"))
    platform.delete(kite_doc)
    assert platform.vectors.count("captions") == 2  # the bicycle's two


def test_older_image_documents_get_caption_vectors(platform: Platform, tmp_path: Path) -> None:
    path = tmp_path / "images.jsonl"
    path.write_text(json.dumps({"_id": "bike.jpg", "image": "bike.jpg",
                                "captions": ["A man rides a bicycle .", "A cyclist ."]}) + "\n")
    platform.ingest([path])
    # what migration 0009 leaves for an image document ingested before caption vectors existed
    platform.vectors.delete_where("captions", {"document_id": [d.id for d in platform.documents()]})
    platform._store.read("MATCH (d:Document) SET d.captions_embedded = false RETURN count(d) AS n")
    assert platform.vectors.count("captions") == 0 and len(platform._store.uncaptioned_images()) == 1
    platform.ingest([path])  # nothing changed: the ingest's finish writes the missing vectors
    assert platform.vectors.count("captions") == 2 and platform._store.uncaptioned_images() == {}
