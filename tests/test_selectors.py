"""Documents named by id, by source file or directory, or by glob (hopgraph delete's targets)."""

from __future__ import annotations

import json
from pathlib import Path

from hopgraph.app.platform import Platform


def test_targets_name_files_directories_globs_and_ids(platform: Platform, tmp_path: Path) -> None:
    notes, other = tmp_path / "notes", tmp_path / "notes2"
    (notes / "sub").mkdir(parents=True)
    other.mkdir()
    (notes / "a.md").write_text("# Alpha\n\nAda Lovelace wrote notes on the Analytical Engine.")
    (notes / "sub" / "b.md").write_text("# Beta\n\nCharles Babbage designed the Difference Engine.")
    (notes / "c.jsonl").write_text("\n".join(json.dumps({"_id": i, "text": f"Record {i} about Grace Hopper."})
                                             for i in ("r1", "r2")))
    (other / "x.md").write_text("# Gamma\n\nAlan Turing designed the Bombe.")
    platform.ingest([notes, other])
    by_source = {d.source: d.id for d in platform.documents()}
    a, b, x = (by_source[str(p)] for p in (notes / "a.md", notes / "sub" / "b.md", other / "x.md"))
    records = sorted(by_source[f"{notes / 'c.jsonl'}#{i}"] for i in ("r1", "r2"))
    found = platform.select([str(notes / "a.md"), str(notes), f"{notes}/**/*.md", str(notes / "c.jsonl"), a,
                             str(tmp_path / "missing.md"), "doc_nothing"])
    assert found[str(notes / "a.md")] == [a]
    assert sorted(found[str(notes)]) == sorted([a, b, *records])  # not notes2/, which only shares a prefix
    assert sorted(found[f"{notes}/**/*.md"]) == sorted([a, b])
    assert sorted(found[str(notes / "c.jsonl")]) == records and found[a] == [a]
    assert found[str(tmp_path / "missing.md")] == [] and found["doc_nothing"] == []
    assert platform.delete_documents([*found[f"{notes}/**/*.md"], a]) == 2  # several at once, once each
    assert {d.id for d in platform.documents()} == {x, *records}
