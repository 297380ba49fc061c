"""Access groups a file sets for itself (``ingest.file_access``): Markdown front matter and ``NAME.groups``
sidecars, read alone and through an ingest that a reader with groups then queries."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hopgraph import Platform
from hopgraph.core.access import groups_of
from hopgraph.core.errors import BadInputError
from hopgraph.ingest.file_access import (
    front_matter_groups,
    groups_value,
    is_sidecar,
    sidecar_groups,
    split_front_matter,
)
from hopgraph.ingest.source_text import Skipped, SourceText
from hopgraph.ingest.sources import read_sources
from hopgraph.retrieval.registry import REGISTRY
from hopgraph.testing import memory_settings
from tests.hash_embedder import HashEmbedder

EXTS = [".md", ".txt", ".jsonl"]


def test_front_matter_is_split_from_the_text() -> None:
    fields, body = split_front_matter("---\ntitle: Budget\ngroups: [hr, finance]\n---\n# Heading\nText.\n")
    assert fields == {"title": "Budget", "groups": ["hr", "finance"]} and body == "# Heading\nText.\n"
    assert split_front_matter("---\n---\nBody") == ({}, "Body")  # an empty block
    assert split_front_matter("---\r\ngroups: hr\r\n---\r\nBody") == ({"groups": "hr"}, "Body")
    plain = "---\nA rule, then a paragraph.\n---\nMore text."  # not a mapping: Markdown as it is
    assert split_front_matter(plain) == ({}, plain)
    assert split_front_matter("Text first\n---\ngroups: hr\n---\n")[0] == {}  # only at the very start
    broken = "---\nnote: [unclosed\n---\nBody"  # not YAML, and names no groups: Markdown as it is
    assert split_front_matter(broken) == ({}, broken)
    with pytest.raises(BadInputError, match=re.escape("front matter is not valid YAML (line 2): its 'groups'")):
        split_front_matter("---\ngroups: [hr\n---\nBody")
    assert split_front_matter("\n---\ndate: 2024-13-45\ngroups: hr\n...\nBody") == (
        {"date": "2024-13-45", "groups": "hr"}, "Body")  # every value a string: no date to fail on
    with pytest.raises(BadInputError, match="is not valid YAML: its 'groups'"):  # no aliases to expand
        split_front_matter("---\na: &x [hr]\ngroups: *x\n---\nBody")
    with pytest.raises(BadInputError, match="never closed: its 'groups'"):
        split_front_matter("---\n  Groups: [hr]\nBody without an end")
    assert split_front_matter("---\nA rule with no end.") == ({}, "---\nA rule with no end.")


def test_group_fields_take_a_list_or_a_typed_string() -> None:
    assert groups_value(None) == [] and groups_value(" hr, finance,") == ["finance", "hr"]
    assert front_matter_groups({"title": "T"}) == [] and front_matter_groups({"groups": ["hr"]}) == ["hr"]
    for fields, error in [({"Groups": ["hr"]}, "write the key 'Groups' as 'groups'"),
                          ({"groups": []}, "'groups' names no group"), ({"groups": ""}, "'groups' names no group"),
                          ({"groups": [["hr"]]}, "invalid access group: a list, not a name")]:
        with pytest.raises(BadInputError, match=re.escape(error)):
            front_matter_groups(fields)
    assert groups_value(["eng", "eng"]) == ["eng"]
    with pytest.raises(BadInputError, match="list of names or a comma-separated string, not int"):
        groups_value(7)
    with pytest.raises(BadInputError, match="invalid access group 'HR'"):
        groups_value(["HR"])


def test_a_sidecar_lists_groups_by_commas_or_lines(tmp_path: Path) -> None:
    doc = tmp_path / "payroll.pdf"
    assert sidecar_groups(doc) == []
    (tmp_path / "payroll.pdf.groups").write_text("# who reads payroll\nhr, finance\n\nops  # on call\n")
    assert sidecar_groups(doc) == ["finance", "hr", "ops"]
    (tmp_path / "payroll.pdf.groups").write_text("Finance Team\n")
    with pytest.raises(BadInputError, match=re.escape("groups sidecar payroll.pdf.groups: invalid access group")):
        sidecar_groups(doc)
    (tmp_path / "payroll.pdf.groups").write_bytes(b"\xff\xfe hr")
    with pytest.raises(BadInputError, match=re.escape("cannot read groups sidecar payroll.pdf.groups")):
        sidecar_groups(doc)
    (tmp_path / "payroll.pdf.groups").write_text("# nobody yet\n")
    with pytest.raises(BadInputError, match=re.escape("payroll.pdf.groups names no group")):
        sidecar_groups(doc)
    (tmp_path / "payroll.pdf.groups").unlink()
    (tmp_path / "payroll.pdf.groups").mkdir()
    with pytest.raises(BadInputError, match=re.escape("payroll.pdf.groups is not a readable file")):
        sidecar_groups(doc)
    assert not is_sidecar(tmp_path / ".groups") and not is_sidecar(tmp_path / "payroll.pdf.groups")  # no payroll.pdf
    doc.write_bytes(b"%PDF")
    assert is_sidecar(tmp_path / "payroll.pdf.groups")


def _write_folder(folder: Path) -> None:
    folder.mkdir()
    (folder / "memo.md").write_text("---\ntitle: Brimstone Ledger\ngroups: [hr]\nsecretkey: front-only-word\n---\n"
                                    "Zorblax Quintana keeps the ledger. It opens with saffronhrcanary.\n")
    (folder / "plan.txt").write_text("Zorblax Quintana drew the Copperline plan with cobaltengcanary.\n")
    (folder / "plan.txt.groups").write_text("eng\n")
    (folder / "notes.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "text": "Zorblax Quintana read the umberengcanary notes."},
        {"id": "b", "text": "Zorblax Quintana signed the plumfinancecanary notes.", "groups": ["finance"]}]) + "\n")
    (folder / "notes.jsonl.groups").write_text("eng")
    (folder / "open.md").write_text("# Vexmoor\nZorblax Quintana opened the Vexmoor Observatory.\n")
    (folder / "bad.md").write_text("---\ngroups: [hr\n---\nZorblax Quintana hid the mauvebadcanary.\n")
    (folder / "worse.txt").write_text("Zorblax Quintana hid the tealbadcanary.\n")
    (folder / "worse.txt.groups").write_text("Not Valid\n")


def test_read_sources_gives_each_document_its_nearest_groups(tmp_path: Path) -> None:
    _write_folder(tmp_path / "f")
    items = list(read_sources([tmp_path / "f"], EXTS, 1 << 20))
    docs = {i.document.source.rsplit("/", 1)[-1]: i for i in items if isinstance(i, SourceText)}
    assert {k: groups_of(v.document.metadata) for k, v in docs.items()} == {
        "memo.md": ["hr"], "plan.txt": ["eng"], "notes.jsonl#a": ["eng"], "notes.jsonl#b": ["finance"],
        "open.md": []}
    memo = docs["memo.md"]
    assert memo.document.title == "Brimstone Ledger" and "Brimstone Ledger" in memo.text
    assert "secretkey" not in memo.text and "front-only-word" not in memo.text and "groups" not in memo.text
    skipped = {i.source.rsplit("/", 1)[-1]: i.reason for i in items if isinstance(i, Skipped)}
    assert set(skipped) == {"bad.md", "worse.txt"}
    assert skipped["bad.md"] == "front matter is not valid YAML (line 2): its 'groups' cannot be read"
    assert skipped["worse.txt"].startswith("groups sidecar worse.txt.groups: invalid access group 'Not Valid'")
    named = sorted((tmp_path / "f").iterdir())  # as a shell expands f/*: the sidecars are no documents
    assert [i.document.source for i in read_sources(named, EXTS, 1 << 20) if isinstance(i, SourceText)] == [
        i.document.source for i in items if isinstance(i, SourceText)]


def _everything(p: Platform, reader: list[str] | None) -> str:
    return " ".join(p.query(q, mode=m, reader=reader).model_dump_json() for m in REGISTRY.view_modes()
                    for q in ("What opens the ledger of Zorblax Quintana?", "Which notes did Zorblax Quintana read?"))


def test_an_ingest_keeps_each_file_to_the_groups_it_names(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    _write_folder(folder)
    with Platform(memory_settings(tmp_path / "data"), embedder=HashEmbedder()) as p:
        report = p.ingest([folder], groups=["ops"])
        assert report.documents_ingested == 5 and set(report.skipped) == {str(folder.resolve() / n)
                                                                        for n in ("bad.md", "worse.txt")}
        by_group = {g: _everything(p, [g]) for g in ("hr", "eng", "finance", "ops")}
        canaries = {"saffronhrcanary": "hr", "cobaltengcanary": "eng", "umberengcanary": "eng",
                    "plumfinancecanary": "finance"}
        for canary, group in canaries.items():
            assert all((canary in text) == (g == group) for g, text in by_group.items()), canary
        assert "Vexmoor" in by_group["ops"]  # open.md names none: the run's groups
        assert "Vexmoor" not in _everything(p, ["hr"])
        indexed = " ".join(p.retriever.state().tables.chunks["text"].tolist())
        assert "saffronhrcanary" in indexed and "front-only-word" not in indexed  # the block is not indexed
        assert "badcanary" not in indexed

        (folder / "plan.txt.groups").write_text("eng, finance\n")  # the file unchanged, its access not
        (folder / "notes.jsonl.groups").unlink()
        again = p.ingest([folder], groups=["ops"])
        assert again.documents_ingested == 2 and again.documents_unchanged == 3
        assert "cobaltengcanary" in _everything(p, ["finance"])
        assert "umberengcanary" in _everything(p, ["ops"]) and "umberengcanary" not in _everything(p, ["eng"])

        (folder / "plan.txt.groups").write_text("Finance Team\n")  # its access unreadable: withdrawn, not kept
        third = p.ingest([folder], groups=["ops"])
        assert str(folder.resolve() / "plan.txt") in third.skipped and third.documents_deleted == 1
        assert "cobaltengcanary" not in " ".join(p.retriever.state().tables.chunks["text"].tolist())
