"""Speakers addressed by name in a chat turn ("Woohoo Melanie!"): the name is the speaker, the greeting
no part of any entity; a name elsewhere in a sentence is left to the recognizer."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from hopgraph.core.records import Chunk
from hopgraph.core.settings import ExtractionSettings
from hopgraph.ingest.extraction import SpacyExtractor
from hopgraph.ingest.vocatives import addressed


@cache
def _nlp() -> Any:
    import spacy

    return spacy.load(ExtractionSettings().spacy_model)


def _addressed(text: str) -> list[tuple[str, str]]:
    doc = _nlp()(text)
    names = [line.split(":", 1)[0] for line in text.splitlines() if ":" in line]
    return [(doc[a.start:a.name_start].text, doc[a.name_start:a.end].text) for a in addressed(doc, names)]


@pytest.mark.parametrize(("text", "found"), [
    ("Caroline: Woohoo Melanie! I passed the interviews.\nMelanie: Great!", [("Woohoo", "Melanie")]),
    ("Maria: Aww John, bummer about that.\nJohn: yes", [("Aww", "John")]),
    ("Gina: Great news John, congrats!\nJohn: thanks", [("Great news", "John")]),
    ("John: Thank you Maria\nMaria: Sure", [("Thank you", "Maria")]),
    ("Caroline: Glad it helped ya, Melanie!\nMelanie: ok", [("", "Melanie")]),  # after a comma: no greeting
    ("Ann: Bob. Are you there?\nBob: yes", [("", "Bob")]),
    ("John: Thank you Maria...\nMaria: Sure", [("Thank you", "Maria")]),
    ("Ann: Hey John Smith!\nJohn Smith: hi\nSmith: hello", [("Hey", "John Smith")]),  # the longer name first
])
def test_a_speakers_name_in_the_place_of_an_address_is_found_with_its_greeting(
        text: str, found: list[tuple[str, str]]) -> None:
    assert _addressed(text) == found


@pytest.mark.parametrize("text", [
    "Maria: I love Elton John.\nJohn: me too",                # more than a greeting before it
    "Maria: Elton John played last night.\nJohn: cool",       # no stop after it
    "Maria: Hey Tim!\nJohn: who?",                            # Tim speaks in no line of this text
    "Maria: Saw Elton John!\nJohn: me too",                   # a capitalised word in the greeting: a name
])
def test_a_name_elsewhere_is_not_an_address(text: str) -> None:
    assert _addressed(text) == []


def test_the_extractor_links_an_addressed_speaker_to_the_speaker_and_drops_the_greeting() -> None:
    text = ("Caroline: Woohoo Melanie! I passed the adoption interviews.\n"
            "Melanie: Aww Caroline, that's great! We saw Elton John.\n")
    out = SpacyExtractor(ExtractionSettings()).extract([Chunk(id="c", document_id="d", text=text, ord=0)])
    names = {e.name for e in out.entities.values()}
    assert {"Melanie", "Caroline", "Elton John"} <= names
    assert not any(n in names for n in ("Woohoo Melanie", "Aww Caroline", "Woohoo", "Aww"))
    melanie = next(e.id for e in out.entities.values() if e.name == "Melanie")
    assert sum(m.count for m in out.mentions if m.entity_id == melanie) == 2  # her tag and the address
