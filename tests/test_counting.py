"""The progress bar's total: the documents an ingest will read, counted before reading them."""

from __future__ import annotations

import json
from pathlib import Path

from fpdf import FPDF

from hopgraph.core.settings import IngestSettings
from hopgraph.ingest.counting import count_documents
from hopgraph.ingest.sources import read_sources


def test_the_count_is_what_the_read_yields(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("One note.", encoding="utf-8")
    (tmp_path / "b.md").write_text("# Title\n\nText.", encoding="utf-8")
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps({"_id": str(i), "text": f"record {i}"}) for i in range(3))
                                      + "\n\n", encoding="utf-8")
    (tmp_path / "d.csv").write_text("id,text\n1,first row\n2,second row\n", encoding="utf-8")
    pdf = FPDF()
    for page in ("page one", "page two"):
        pdf.add_page()
        pdf.set_font("Helvetica", size=12)
        pdf.cell(text=page)
    pdf.output(str(tmp_path / "e.pdf"))
    (tmp_path / "f.pdf").write_bytes(b"%PDF-1.4 broken")  # unreadable: one (skipped) item
    exts = IngestSettings().extensions
    read = list(read_sources([tmp_path], exts, 10_000_000))
    assert count_documents([tmp_path], exts) == len(read) == 1 + 1 + 3 + 2 + 2 + 1


def test_post_steps_run_in_order_by_name_and_are_timed() -> None:
    from typing import Any, cast

    from hopgraph.core.records import IngestReport
    from hopgraph.ingest.post_steps import POST_STEPS, PostStep, run_post_steps

    assert [s.name for s in POST_STEPS] == ["resolve", "forget", "chat_dates", "access_tags", "types", "communities",
                                            "tree", "vector_write"]
    ran: list[str] = []
    steps = [PostStep(n, lambda ing, rep, n=n: ran.append(n), when=lambda ing, n=n: n != "never")
             for n in ("a", "never", "b", "c")]
    report = IngestReport()
    run_post_steps(cast(Any, None), report, steps, skip=["c"])
    assert ran == ["a", "b"] and set(report.stage_seconds) == {"a", "b"}
