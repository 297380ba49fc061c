"""The rights of an ingest run (``ingest.caller``), on real files and links: which paths a caller may read
(judged on the real path), what a folder walk reports and enters, and which re-ingests widen a
document's access groups."""

from __future__ import annotations

from pathlib import Path

import pytest

from hopgraph.graphdb.memory.store import MemoryGraphStore
from hopgraph.ingest.caller import OWNER, Caller, held_back, hold_back, may_widen, refusal, widens
from hopgraph.ingest.source_text import Skipped, SourceText, grouped, text_document
from hopgraph.ingest.sources import expand_paths, read_sources, walk_paths

EXTS = [".txt", ".md", ".jpg"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``root`` (the ingest root) with a note, ``data`` (the data dir) with a token, ``outside`` with a secret."""
    for name in ("root", "data/uploads", "outside"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "root" / "note.txt").write_text("a note")
    (tmp_path / "data" / "serve.json").write_text('{"token": "secret-token"}')
    (tmp_path / "data" / "uploads" / "up.txt").write_text("an upload")
    (tmp_path / "outside" / "secret.txt").write_text("a secret")
    return tmp_path


def test_a_path_is_judged_on_its_real_path(tree: Path) -> None:
    root, data = tree / "root", tree / "data"
    bound = Caller(roots=(root,))
    (root / "tok.txt").symlink_to(data / "serve.json")
    (root / "out.txt").symlink_to(tree / "outside" / "secret.txt")
    (root / "in.txt").symlink_to(root / "note.txt")
    (root / "gone.txt").symlink_to(tree / "outside" / "missing.txt")  # dangling: judged on where it leads
    assert refusal(root / "note.txt", data, bound) is None
    assert refusal(root / "in.txt", data, bound) is None  # a link that stays inside a root
    assert (refusal(root / "tok.txt", data, bound) or "").startswith("is a link that leads into the server's data dir")
    assert "outside api.ingest_roots" in (refusal(root / "out.txt", data, bound) or "")
    assert "outside api.ingest_roots" in (refusal(root / "gone.txt", data, bound) or "")
    assert "outside" in (refusal(root / ".." / "outside" / "secret.txt", data, bound) or "")
    assert "none are configured" in (refusal(root / "note.txt", data, Caller(roots=())) or "")
    # the owner reads anywhere but the data dir, whatever a link or '..' says
    assert refusal(tree / "outside" / "secret.txt", data, OWNER) is None
    assert "data dir" in (refusal(root / "tok.txt", data, OWNER) or "")
    assert "data dir" in (refusal(root / ".." / "data" / "serve.json", data, OWNER) or "")
    assert "data dir" in (refusal(data / "uploads" / "up.txt", data, OWNER) or "")
    # an upload job reads its own uploads folder, and nothing else of the data dir
    uploads = Caller(roots=(), uploads=data / "uploads")
    assert refusal(data / "uploads" / "up.txt", data, uploads) is None
    assert "data dir" in (refusal(data / "serve.json", data, uploads) or "")
    assert refusal(data / "serve.json", None, OWNER) is None  # no data dir to keep out


def test_a_walk_reports_links_out_and_enters_links_in_once(tree: Path) -> None:
    root, data = tree / "root", tree / "data"
    bound = Caller(roots=(root,))
    (root / "sub").mkdir()
    (root / "sub" / "deep.txt").write_text("deep")
    (root / "alias").symlink_to(root / "sub", target_is_directory=True)  # inside: entered, its file read once
    (root / "loop").symlink_to(root, target_is_directory=True)  # back to the root: not walked again
    (root / "away").symlink_to(tree / "outside", target_is_directory=True)
    (root / "store").symlink_to(data, target_is_directory=True)
    (root / "tok.txt").symlink_to(data / "serve.json")
    found = {p.relative_to(root).as_posix(): why or "" for p, _, why in walk_paths([root], EXTS, data, bound)}
    assert {k for k, why in found.items() if not why} == {"sub/deep.txt", "note.txt"}
    assert "outside api.ingest_roots" in found["away"] and "data dir" in found["store"]
    assert "data dir" in found["tok.txt"]
    assert len(found) == 5
    assert [p.name for p in expand_paths([root], EXTS, data, bound)] == ["note.txt", "deep.txt"]
    (tree / "outside" / "data").mkdir()  # the data dir inside a walked folder is left out silently
    assert [(p.name, why) for p, _, why in walk_paths([tree / "outside"], EXTS, tree / "outside" / "data", OWNER)] == [
        ("secret.txt", None)]
    [(named, _, why)] = walk_paths([data], EXTS, data, OWNER)  # named: refused whole, not walked
    assert named == data and (why or "").startswith("lies into the server's data dir")


def test_read_sources_reads_a_link_as_its_target_and_refuses_sidecars_out(tree: Path) -> None:
    root, data = tree / "root", tree / "data"
    bound = Caller(roots=(root,))
    (root / "hr.txt").write_text("payroll")
    (root / "hr.txt.groups").write_text("hr")
    (root / "public.txt").symlink_to(root / "hr.txt")  # a link without a sidecar: still the hr document
    (root / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0fakejpeg")
    (root / "photo.txt").symlink_to(data / "serve.json")  # its captions would be the token
    (root / "note.txt.groups").symlink_to(tree / "outside" / "secret.txt")
    items = list(read_sources([root], EXTS, 1 << 20, data_dir=data, caller=bound))
    docs = {Path(i.document.source).name: i.document.metadata.get("groups") for i in items
            if isinstance(i, SourceText)}
    skipped = {Path(i.source).name: i for i in items if isinstance(i, Skipped)}
    assert docs == {"hr.txt": ["hr"]}
    assert "caption file photo.txt" in skipped["photo.jpg"].reason and "data dir" in skipped["photo.jpg"].reason
    assert "groups sidecar" in skipped["note.txt"].reason and not skipped["note.txt"].keep
    assert not any("secret-token" in i.reason or "a secret" in i.reason for i in skipped.values())


@pytest.mark.parametrize(("stored", "new", "wider"), [
    ([], [], False), ([], ["hr"], False), (["hr"], ["hr"], False), (["eng", "hr"], ["hr"], False),
    (["hr"], [], True), (["hr"], ["eng"], True), (["hr"], ["eng", "hr"], True)])
def test_a_document_is_widened_when_a_key_could_read_it_that_could_not(stored: list[str], new: list[str],
                                                                     wider: bool) -> None:
    assert widens(stored, new) is wider


def test_only_a_caller_holding_every_group_may_widen() -> None:
    assert may_widen(["hr"], OWNER) and may_widen(["hr"], Caller(holds=frozenset({"hr", "eng"})))
    assert not may_widen(["hr", "ops"], Caller(holds=frozenset({"hr"})))
    assert not may_widen(["hr"], Caller(holds=frozenset()))
    assert held_back(["hr"], ["hr"], Caller(holds=frozenset())) is None
    why = held_back(["hr"], [], Caller(holds=frozenset({"eng"})))
    assert why is not None and "stored with groups hr" in why and "no groups (public)" in why


def test_hold_back_keeps_what_a_caller_may_store_and_says_why_of_the_rest() -> None:
    graph = MemoryGraphStore()
    stored = [grouped(text_document(f"/n/{n}.txt", n, f"text {n}"), groups) for n, groups in
              (("a", ["hr"]), ("b", []), ("c", ["eng"]))]
    graph.upsert_documents([s.document for s in stored if isinstance(s, SourceText)], status="complete")
    again = [text_document(f"/n/{n}.txt", n, f"new text {n}") for n in ("a", "b", "c", "d")]
    changed = [s for s in again if isinstance(s, SourceText)]
    skipped: dict[str, str] = {}
    kept = hold_back(graph, changed, Caller(holds=frozenset({"eng"})), skipped)
    assert [Path(s.document.source).stem for s in kept] == ["b", "c", "d"]
    assert list(skipped) == ["/n/a.txt"] and "stored with groups hr" in skipped["/n/a.txt"]
    assert hold_back(graph, changed, OWNER, skipped) == changed
