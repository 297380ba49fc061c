"""PDF (one document per page, the page in every citation), DOCX (headings as sentences) and CSV
(one document per row, configurable columns) through their libraries, on files the tests write."""

from __future__ import annotations

from pathlib import Path

import docx
from fpdf import FPDF

from hopgraph.app.platform import Platform
from hopgraph.core.settings import CsvSettings
from hopgraph.ingest.source_text import Skipped, SourceText
from hopgraph.ingest.sources import read_sources

EXTS = [".pdf", ".docx", ".csv", ".tsv"]


def _pdf(path: Path, pages: list[str], title: str = "") -> Path:
    pdf = FPDF()
    if title:
        pdf.set_title(title)
    pdf.set_font("Helvetica", size=12)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 8, text)
    pdf.output(str(path))
    return path


def _read(folder: Path, csv: CsvSettings | None = None) -> tuple[dict[str, SourceText], dict[str, str]]:
    docs: dict[str, SourceText] = {}
    skipped: dict[str, str] = {}
    for item in read_sources([folder], EXTS, 1 << 22, csv):
        if isinstance(item, Skipped):
            skipped[item.source.rsplit("/", 1)[-1]] = item.reason
        else:
            docs[item.document.source.rsplit("/", 1)[-1]] = item
    return docs, skipped


def test_pdf_pages_are_documents_that_cite_their_page(tmp_path: Path) -> None:
    _pdf(tmp_path / "report.pdf", ["Keswick Dam holds the Tarn reservoir.", "The dam was built by Rosalind Avery.",
                                   ""], title="Dam report")
    (tmp_path / "fake.pdf").write_bytes(b"not a pdf at all")
    _pdf(tmp_path / "scan.pdf", ["", ""])
    docs, skipped = _read(tmp_path)
    assert set(docs) == {"report.pdf#page=1", "report.pdf#page=2"}
    page2 = docs["report.pdf#page=2"]
    assert "Rosalind Avery" in page2.text and page2.document.title == "Dam report"
    assert docs["report.pdf#page=1"].document.metadata == {"page": 1, "pages": 3}
    assert skipped["report.pdf#page=3"] == "page has no text"
    assert skipped["fake.pdf"].startswith("unreadable PDF") and "no text layer" in skipped["scan.pdf"]


def test_docx_headings_are_sentences_and_the_title(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_heading("Marrowind Engineering", level=1)
    d.add_paragraph("Marrowind Engineering builds bridges in Caldermouth.")
    table = d.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Founded", "1911"
    d.save(str(tmp_path / "firm.docx"))
    (tmp_path / "broken.docx").write_bytes(b"PK\x03\x04 not really a zip")
    docs, skipped = _read(tmp_path)
    firm = docs["firm.docx"]
    assert firm.document.title == "Marrowind Engineering"
    assert firm.text == "Marrowind Engineering.\nMarrowind Engineering builds bridges in Caldermouth.\nFounded | 1911"
    assert skipped["broken.docx"].startswith("unreadable DOCX")


def test_csv_rows_are_documents_with_configurable_columns(tmp_path: Path) -> None:
    (tmp_path / "notes.csv").write_text("id,title,text,author\nn1,Keswick Dam,It holds the Tarn.,ada\n"
                                        "n2,,Second note.,bob\nn3,Empty,,cy\n")
    (tmp_path / "other.tsv").write_text("key\tbody\nk1\tA tab-separated row.\n")
    docs, skipped = _read(tmp_path)
    assert docs["notes.csv#n1"].text == "Keswick Dam.\nIt holds the Tarn." and docs["notes.csv#n1"].document.metadata \
        == {"corpus_id": "n1", "author": "ada"}
    assert docs["notes.csv#n2"].text == "Second note." and "empty 'text'" in skipped["notes.csv:4"]
    assert "no 'text' column" in skipped["other.tsv"] and "key, body" in skipped["other.tsv"]
    docs, _ = _read(tmp_path, CsvSettings(text_column="body", id_column="key"))
    assert docs["other.tsv#k1"].text == "A tab-separated row."


def test_an_ingested_pdf_is_cited_by_page(platform: Platform, tmp_path: Path) -> None:
    _pdf(tmp_path / "dam.pdf", ["Keswick Dam holds the Tarn reservoir.", "Rosalind Avery designed the spillway."])
    report = platform.ingest([tmp_path / "dam.pdf"])
    assert report.documents_ingested == 2
    hit = platform.query("Who designed the spillway?", mode="bm25", top_k=1).results[0]
    assert hit.citation.source.endswith("dam.pdf#page=2") and "Rosalind Avery" in hit.text
    again = platform.ingest([tmp_path / "dam.pdf"])
    assert again.documents_ingested == 0 and again.documents_unchanged == 2
