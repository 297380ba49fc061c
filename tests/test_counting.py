"""The progress bar's total: the documents an ingest will read, counted before reading them."""

from __future__ import annotations

import json
from pathlib import Path

from fpdf import FPDF

from hopgraph.core.settings import IngestSettings
from ingest.counting import count_documents
from ingest.sources import read_sources


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
