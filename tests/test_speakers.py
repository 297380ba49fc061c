"""Speaker tags of chat logs: each names a person the chat is linked to (``ingest.speakers``), and an
entity in most of a corpus's chunks weighs nothing as a seed (``corpus_share_damping``)."""

from __future__ import annotations

import numpy as np
import pytest

from hopgraph.core.records import Chunk
from hopgraph.core.settings import ExtractionSettings
from hopgraph.core.text import handle_words, with_handles_split
from hopgraph.core.weights import corpus_share_damping
from hopgraph.ingest.extraction import SpacyExtractor
from hopgraph.ingest.speakers import speakers

CHAT = ("Time: 20260105_11:00\nLiHua: Hey! Just wanted to let you know that I've arrived in the city!\n"
        "WolfgangSchulz: Awesome! Can't wait to catch up. See you on the 8th!\n"
        "🌞 LiHua: Sounds great, Wolfgang!\n")


def test_handles_become_names() -> None:
    assert handle_words("WolfgangSchulz") == "Wolfgang Schulz"
    assert handle_words("ChaeSong-hwa") == "Chae Song-hwa"
    assert handle_words("Adam Smith") == "Adam Smith"
    # a query or chunk writing the handle reads it by the same rule as a speaker tag
    assert with_handles_split("Did ChaeSong-hwa call LiHua?") == "Did ChaeSong-hwa Chae Song-hwa call LiHua Li Hua?"


def test_speaker_tags_are_found_only_in_conversations() -> None:
    assert [s.name for s in speakers(CHAT)] == ["Li Hua", "Wolfgang Schulz", "Li Hua"]  # "Time:" is a label
    assert speakers("Star Wars: Episode IV is a 1977 film.\nIt was directed by George Lucas.") == []  # a title
    assert speakers("The score was 2:1.\nNote: none.") == []


def test_a_chat_links_its_speakers_as_persons_and_no_tag_becomes_junk() -> None:
    out = SpacyExtractor(ExtractionSettings()).extract([Chunk(id="chk_1", document_id="doc_1", text=CHAT, ord=0)])
    people = {e.name for e in out.entities.values() if e.type == "PERSON"}
    assert {"Li Hua", "Wolfgang Schulz"} <= people
    names = {e.name for e in out.entities.values()}
    assert not any(":" in n or n.startswith(("Hey ", "Wow ")) for n in names), names
    counts = {out.entities[m.entity_id].name: m.count for m in out.mentions}
    assert counts["Li Hua"] == 2 and counts["Wolfgang Schulz"] == 1


def test_an_entity_in_most_chunks_weighs_little_as_a_seed() -> None:
    damp = corpus_share_damping(np.array([1.0, 100.0, 950.0, 1000.0]), 1000)
    assert damp.tolist() == pytest.approx([0.999, 0.9, 0.1, 0.1])  # never below MIN_SHARE: its seeds still rank
    assert corpus_share_damping(np.array([1.0, 4.0]), 4).tolist() == [1.0, 1.0]  # a few texts: not read
