"""Extraction on tickets and company notes: identifiers are entities of their own type, hyphenated names
stay whole, a given name before a recognized surname joins it, a misread sentence is no entity, and a
word a query writes in lower case is never a name it gives (``ingest.identifiers``, ``ingest.extraction``,
``retrieval.parts.signals.common_words``)."""

from __future__ import annotations

from hopgraph.core.records import IDENTIFIER, Chunk
from hopgraph.core.settings import ExtractionSettings
from hopgraph.core.text import WORD
from hopgraph.ingest.extraction import SpacyExtractor
from hopgraph.ingest.identifiers import identifiers, is_identifier
from hopgraph.retrieval.parts.signals import common_words

NOTE = ("Imogen Calder-Ruiz fixed the e-mail delivery bug in INC-2402 after Keymint v2.3 shipped. "
        "Teodor Vasquez-Lind and Vasquez-Lind reviewed CVE-2024-3094 on 2024-03-29.")


def test_identifiers_are_found_whole() -> None:
    assert [f.name for f in identifiers(NOTE)] == ["INC-2402", "v2.3", "CVE-2024-3094"]
    assert [f.name for f in identifiers("Deploy SKU_778 (see PR-45b), not v2 or 2.3.1 or x-ray.")] == [
        "SKU_778", "PR-45b"]
    assert identifiers("COVID-19 spread in 2020-21.")[0].name == "COVID-19"
    assert is_identifier("INC-2402") and is_identifier("v10.4.1")
    assert not is_identifier("Calder-Ruiz") and not is_identifier("INC-2402 was closed")


def test_enterprise_text_keeps_names_whole_and_types_identifiers() -> None:
    out = SpacyExtractor(ExtractionSettings()).extract([Chunk(id="chk_1", document_id="doc_1", text=NOTE, ord=0)])
    types = {e.name: e.type for e in out.entities.values()}
    assert {types.get(n) for n in ("INC-2402", "v2.3", "CVE-2024-3094")} == {IDENTIFIER}
    assert "Imogen Calder-Ruiz" in types and "Teodor Vasquez-Lind" in types, types
    assert "e-mail delivery bug" in types
    assert not any(" - " in n or n.startswith("-") or n.endswith("-") for n in types), types


def test_a_misread_sentence_is_no_entity() -> None:
    from hopgraph.ingest.extraction import sentence_like

    nlp = SpacyExtractor(ExtractionSettings()).nlp
    assert sentence_like(list(nlp("Glimmerstore is Ansel Fairweather")))
    assert not sentence_like(list(nlp("Ansel Fairweather"))) and not sentence_like(list(nlp("Save the Children")))


def test_lower_case_words_of_a_cased_query_name_nothing() -> None:
    query = "Which service kept the record of INC-2402 for Keymint?"
    assert common_words(WORD.findall(query)) == {"service", "kept", "the", "record", "of", "for"}
    assert common_words(WORD.findall("which service kept the record")) == set()  # all lower case: any word
    assert "keymint" not in common_words(WORD.findall("Is Keymint the keymint service?"))
