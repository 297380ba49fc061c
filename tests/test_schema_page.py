"""docs/schema.md, the schema reference of the graph store: its inventory is what the Cypher of the code
names (``hopgraph.graphdb.schema_doc``), every property there has its meaning on the page, and a real
store holds no label or relationship type the page does not list."""

from __future__ import annotations

import re
from pathlib import Path

from hopgraph.app.platform import Platform
from hopgraph.graphdb.schema_doc import markdown, scan, schema
from tests.generated_pages import block, described
from tests.paths import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "schema.md"


def _page() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_the_inventory_block_is_the_generators_output() -> None:
    assert block(_page(), "schema") == markdown()


def test_the_scan_reads_labels_properties_and_directions() -> None:
    found = scan(["MATCH (c:Chunk {id: $id})<-[m:MENTIONS]-(x) SET m.count = 1, c.ord = 2 RETURN x.name",
                  "UNWIND $rows AS r MATCH (d:Document {id: r.id}) MERGE (d)-[:HAS_SECTION]->(s:Section)"
                  "-[:HAS_CHUNK]->(k:Chunk) SET s.title = r.title",
                  "MATCH (e:Entity)-[r:RELATED]-(o:Entity) RETURN r.weight"])  # no direction: no endpoints
    assert found.labels == {"Chunk": ("id", "ord"), "Document": ("id",), "Section": ("title",), "Entity": ()}
    assert found.relationships == {"HAS_CHUNK": (), "HAS_SECTION": (), "MENTIONS": ("count",),
                                   "RELATED": ("weight",)}
    assert found.endpoints == {"HAS_CHUNK": (("Section", "Chunk"),), "HAS_SECTION": (("Document", "Section"),),
                               "MENTIONS": (), "RELATED": ()}


def test_the_schema_holds_what_the_store_is_known_to_hold() -> None:
    s = schema()
    assert {"Document", "Chunk", "Entity", "Community", "Section", "Summary", "Alias", "IngestRun", "GraphChange",
            "GraphMeta", "Migration"} <= set(s.labels)
    assert {"HAS_CHUNK", "HAS_SECTION", "MENTIONS", "RELATED", "IN_COMMUNITY", "PARENT", "SUMMARIZES"} <= set(
        s.relationships)
    assert ("Document", "Chunk") in s.endpoints["HAS_CHUNK"] and s.endpoints["MENTIONS"] == (("Chunk", "Entity"),)
    assert {"central", "leaves", "centroid"} <= set(s.labels["Summary"])  # written as a map, found where read
    assert {"status", "content_hash", "chat_json"} <= {*s.labels["Document"], *s.labels["Chunk"]}
    assert {i.name: i.dropped_by for i in s.indexes}["entity_typed"] == "0011_drop_mark_indexes"


def test_every_property_has_its_meaning_on_the_page() -> None:
    page = _page().split("<!-- schema:end -->", 1)[1]
    s = schema()
    for name, props in [*s.labels.items(), *s.relationships.items()]:
        assert described(page, name) == set(props), name


def test_a_real_store_holds_only_what_the_page_lists(platform: Platform, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Ada Lovelace worked with Charles Babbage in London on the Analytical Engine.\n\n"
                     "Charles Babbage designed the Difference Engine at Cambridge.\n", encoding="utf-8")
    report = platform.ingest([notes])
    assert report.documents_ingested == 1
    labels = {label for row in platform._store.read("MATCH (n) RETURN DISTINCT labels(n) AS labels")
              for label in row["labels"]}
    types = {row["type"] for row in platform._store.read("MATCH ()-[r]->() RETURN DISTINCT type(r) AS type")}
    assert {"Document", "Chunk", "Entity", "Section", "Migration", "GraphMeta", "GraphChange"} <= labels
    assert {"HAS_CHUNK", "HAS_SECTION", "MENTIONS", "RELATED"} <= types
    listed = set(re.findall(r"^\| `(\w+)` \|", block(_page(), "schema"), re.MULTILINE))
    assert labels - listed == set() and types - listed == set()
