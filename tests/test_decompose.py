"""Questions with several parts, split without an LLM (``retrieval.modes.graph.decompose``), and the corpus
homogeneity that moves first-pass weight from dense to BM25 (``retrieval.parts.first_pass``)."""

from __future__ import annotations

import numpy as np
import pytest

from hopgraph.core.settings import RetrievalSettings
from hopgraph.core.text import with_handles_split
from hopgraph.retrieval.parts.decompose import split_question
from hopgraph.retrieval.parts.first_pass import first_pass_scales, first_pass_weights, homogeneity
from hopgraph.retrieval.parts.keyword import KeywordIndex


@pytest.mark.parametrize("question, parts", [
    ("Did Li Hua agree to go out for dinner after Wolfgang first asked him if he wanted to go out for dinner?",
     ["Did Li Hua agree to go out for dinner", "Wolfgang first asked him if he wanted to go out for dinner"]),
    ("Did Hailey announce the new line of breads before inviting Li Hua to the bakery event?",
     ["Did Hailey announce the new line of breads", "inviting Li Hua to the bakery event"]),
    ("Who is the oldest, Sid Haig or Vic Darchinyan?", ["Sid Haig", "Vic Darchinyan"]),
    ("Are Christopher Nolan and Sathish Kalathil both film directors?",
     ["Christopher Nolan film directors", "Sathish Kalathil film directors"]),
    ("Is the time interval more than 3 days between Li Hua asking Adam for a fridge and Adam asking about its size?",
     ["Li Hua asking Adam for a fridge", "Adam asking about its size"]),
    ("What was the content of the first delivery and what was Li Hua's opinion about it?",
     ["What was the content of the first delivery", "what was Li Hua's opinion about it"]),
])
def test_questions_with_several_parts_are_split(question: str, parts: list[str]) -> None:
    assert split_question(question) == parts


@pytest.mark.parametrize("question", [
    "Who founded the Vexmoor Observatory?",
    "What did he eat after the workout this week?",  # "after" opens a noun phrase, not a second event
    "Where did Einstein work before 1909?",
    "When does Li Hua ask Jennifer Moore about adjusting the protein in her meal plan?",
])
def test_questions_of_one_part_are_kept_whole(question: str) -> None:
    assert split_question(question) == []


def test_homogeneity_is_the_mean_cosine_of_distinct_pairs() -> None:
    x = np.random.default_rng(1).normal(size=(60, 8))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    pairs = (x @ x.T)[~np.eye(60, dtype=bool)]
    assert homogeneity(x) == pytest.approx(float(pairs.mean()), abs=1e-5)
    assert homogeneity(np.tile(x[:1], (10, 1))) == pytest.approx(1.0, abs=1e-5)  # all alike
    assert homogeneity(x[:1]) == 0.0


def test_a_homogeneous_corpus_moves_dense_weight_to_bm25() -> None:
    cfg = RetrievalSettings()
    assert first_pass_weights(cfg, 0.03, 1000) == cfg.weights  # unrelated texts: the configured weights
    assert first_pass_weights(cfg, 0.3, 50) == cfg.weights  # a few texts are alike by topic: not read
    moved = first_pass_weights(cfg, 0.3, 1000)
    dense, bm25 = cfg.weights["dense"], cfg.weights["bm25"]
    assert moved["dense"] == pytest.approx(dense * cfg.homogeneity_min_share)
    assert moved["dense"] + moved["bm25"] == pytest.approx(dense + bm25)  # the total is kept
    assert first_pass_weights(cfg.model_copy(update={"homogeneity_slope": 0.0}), 0.3, 1000) == cfg.weights
    # the question parts' rank fusion leans the same way, by the same factors
    assert first_pass_scales(cfg, 0.03, 1000) == {"dense": 1.0, "bm25": 1.0}
    scales = first_pass_scales(cfg, 0.3, 1000)
    assert scales["dense"] == pytest.approx(cfg.homogeneity_min_share)
    assert scales["bm25"] == pytest.approx(moved["bm25"] / bm25) and scales["bm25"] > 1


def test_bm25_matches_a_camelcase_speaker_tag_by_its_words() -> None:
    assert with_handles_split("WolfgangSchulz: hi") == "WolfgangSchulz Wolfgang Schulz: hi"
    index = KeywordIndex(["WolfgangSchulz: see you at the concert", "Adam: the fridge is here"])
    rows, _ = index.search("Did Wolfgang mention the concert?", 2)
    assert rows.tolist()[0] == 0
    assert index.search("wolfgang", 2)[0].tolist() == [0]
