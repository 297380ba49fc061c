from hopgraph.core.records import chunk_id, content_hash, document_id, entity_id, stable_id
from hopgraph.core.text import normalize_name


def test_ids_are_stable_and_content_derived() -> None:
    assert stable_id("x", "a", "b") == stable_id("x", "a", "b")
    assert stable_id("x", "a", "b") != stable_id("x", "ab")  # parts are separated
    assert chunk_id("doc_1", "text") != chunk_id("doc_2", "text")
    assert document_id("/a/b.txt").startswith("doc_")
    assert content_hash("é") == content_hash("é".encode())


def test_entity_names_normalize_case_articles_and_possessives() -> None:
    assert normalize_name("The  Vexmoor Observatory's") == "vexmoor observatory"
    assert entity_id("Marie Curie") == entity_id("MARIE CURIE") == entity_id("the Marie Curie")
    assert entity_id("Paris") != entity_id("Parish")
