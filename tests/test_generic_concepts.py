"""Generic concepts (``Snapshot.generic``): noun phrases that far more chunks mention than the median
entity ("film", "year") are the corpus's own stop list; graph mode never seeds them."""

from __future__ import annotations

import json
from pathlib import Path

from hopgraph.app.platform import Platform

NAMES = ["Ondrel Vask", "Mira Tolle", "Jonas Brek", "Ilse Varga", "Tomas Kell", "Rena Holt", "Piet Amsel",
         "Edda Lund", "Karl Brisk", "Nora Feld", "Ugo Salm", "Vera Drost", "Lars Ekman", "Alma Reuss",
         "Otto Quint", "Berta Szell", "Hugo Renn", "Greta Moll", "Felix Ahn", "Ida Kross", "Max Ebbe",
         "Lena Sorg", "Emil Thal", "Hanna Voss"]


def test_graph_mode_never_seeds_a_generic_concept(platform: Platform, tmp_path: Path) -> None:
    path = tmp_path / "films.jsonl"
    path.write_text("\n".join(json.dumps({"_id": f"p{i}", "text": f"{n} directed a film in {1950 + i}."})
                              for i, n in enumerate(NAMES)) + "\n")
    platform.ingest([path])
    snap = platform.retriever.snapshot()
    generic = {snap.entity_names[i] for i in range(snap.n_entities) if snap.generic[i]}
    assert generic == {"film"}, generic  # in every chunk; each name is in one
    res = platform.query("Which film did Ondrel Vask direct?", mode="graph", explain=True)
    assert res.explain["generic_concepts"] == ["film"]
    assert "film" not in {s["entity"] for s in res.explain["seeds"]}
    assert "Ondrel Vask" in {s["entity"] for s in res.explain["seeds"]}
    keep = platform.settings.retrieval.merged({"modes": {"graph": {"drop_generic": False}}})
    res = platform.query("Which film did Ondrel Vask direct?", mode="graph", explain=True, retrieval=keep)
    assert "film" in {s["entity"] for s in res.explain["seeds"]} and "generic_concepts" not in res.explain
