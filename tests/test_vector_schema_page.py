"""docs/vector-schema.md, the schema reference of the vector store: its inventory is what the writers of the
code set (``hopgraph.vectors.schema_doc``), every payload field there has its meaning on the page, and a real
store's points hold only the fields the page lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.access import PUBLIC
from hopgraph.vectors.schema_doc import ScanError, fields, markdown, modules, scan
from hopgraph.vectors.store import COLLECTIONS
from tests.generated_pages import block, described
from tests.paths import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "vector-schema.md"


def _page() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_the_inventory_block_is_the_generators_output() -> None:
    assert block(_page(), "vectors") == markdown()


def _write(root: Path, name: str, source: str) -> None:
    (root / name).write_text(source, encoding="utf-8")


def test_the_scan_finds_each_writes_collections_and_keys(tmp_path: Path) -> None:
    _write(tmp_path, "a.py", "from hopgraph.core.access import VECTOR_FIELD\n"
           "from hopgraph.vectors.store import DOCUMENT_COLLECTIONS\n"
           "def made(c):\n    return VectorPoint(c.id, c.v, {'document_id': c.d, 'ord': 1})\n"
           "def points(cs, s):\n    out = {'chunks': [VectorPoint(c.id, c.v, {'document_id': c.d}) for c in cs]}\n"
           "    out['sections'] = [made(c) for c in cs]\n"
           "    s.upsert('entities', [VectorPoint(c.id, c.v, {'name': c.n})])\n"
           "    return {k: [VectorPoint(p.id, p.v, {**p.payload, VECTOR_FIELD: []}) for p in ps]\n"
           "            if k in DOCUMENT_COLLECTIONS else ps for k, ps in out.items()}\n")
    found = {(f.collection, f.name): f.writers for f in scan(modules(tmp_path))}
    assert found[("sections", "ord")] == ("a.made",) and found[("entities", "name")] == ("a.points",)
    assert found[("chunks", "document_id")] == ("a.points",)
    assert {c for c, k in found if k == "groups"} == {c for c, f in COLLECTIONS.items() if "groups" in f}


def test_a_write_the_scan_cannot_place_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path, "b.py", "def f(s, c):\n    s.upsert('chunk', [VectorPoint(c.id, c.v, {'x': 1})])\n")
    with pytest.raises(ScanError, match="'chunk'"):
        scan(modules(tmp_path))
    _write(tmp_path, "b.py", "def f(s, c, name):\n    s.upsert(name, [VectorPoint(c.id, c.v, {'x': 1})])\n")
    with pytest.raises(ScanError, match="cannot resolve 'name'"):
        scan(modules(tmp_path))


def test_every_collection_is_written_and_every_index_is_a_written_field() -> None:
    per = fields()
    assert list(per) == list(COLLECTIONS)
    for collection, indexed in COLLECTIONS.items():
        assert set(indexed) <= set(per[collection]), collection
        assert "id" in per[collection]


def test_every_field_has_its_meaning_on_the_page() -> None:
    page = _page().split("<!-- vectors:end -->", 1)[1]
    for collection, names in fields().items():
        assert described(page, collection) == set(names), collection


def _payload_keys(platform: Platform, collection: str) -> tuple[set[str], list[dict[str, object]]]:
    hits, _ = platform.vectors.scroll(collection, limit=1000)
    return {k for h in hits for k in h.payload}, [h.payload for h in hits]


def test_a_real_store_holds_only_the_listed_fields(platform: Platform, tmp_path: Path) -> None:
    report = platform.ingest_records([
        {"id": "lab", "text": "# Engines\n\nAda Lovelace worked with Charles Babbage in London on the Analytical "
                               "Engine.", "groups": ["eng"]},
        {"id": "pub", "text": "Charles Babbage designed the Difference Engine at Cambridge."},
        {"id": "pic", "image": str(tmp_path / "engine.png"), "captions": ["The Difference Engine", "A drawing"]},
    ])
    assert report.documents_ingested == 3
    listed = fields()
    for collection in COLLECTIONS:
        keys, _ = _payload_keys(platform, collection)
        assert keys <= set(listed[collection]), collection
    for collection in ("chunks", "entities", "sections", "captions"):
        assert _payload_keys(platform, collection)[0] == set(listed[collection]), collection
    groups = sorted({tuple(p["groups"]) for p in _payload_keys(platform, "chunks")[1]})  # type: ignore[arg-type]
    assert groups == [(PUBLIC,), ("eng",)]
