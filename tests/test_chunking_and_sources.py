import itertools
from pathlib import Path

from hopgraph.ingest.chunking import Chunker
from hopgraph.ingest.source_text import Skipped, SourceText
from hopgraph.ingest.sources import expand_paths, read_jsonl, read_sources, read_text_file
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.paths import SHARED_DATA

CAROL = SHARED_DATA / "christmas-carol" / "a-christmas-carol.txt"


def test_chunks_respect_the_token_budget_and_sentences(embedder: SentenceTransformerEmbedder) -> None:
    text = CAROL.read_text(encoding="utf-8")[:20000]
    chunker = Chunker(embedder.count_tokens, max_tokens=120, overlap_tokens=30)
    chunks = chunker.chunk("doc_x", text)
    assert len(chunks) > 10
    counts = embedder.count_tokens([c.text for c in chunks])
    assert max(counts) <= 125  # the budget, give or take joining whitespace
    assert [c.ord for c in chunks] == list(range(len(chunks)))
    # consecutive windows overlap by whole sentences
    overlapping = sum(1 for a, b in itertools.pairwise(chunks) if b.text[:40] in a.text)
    assert overlapping >= len(chunks) // 2
    assert chunker.chunk("doc_x", text) == chunks  # deterministic ids


def test_short_passage_stays_whole(embedder: SentenceTransformerEmbedder) -> None:
    text = "Scrooge was a squeezing, wrenching old sinner. Marley was dead, to begin with."
    chunks = Chunker(embedder.count_tokens, 200, 40).chunk("d", text)
    assert [c.text for c in chunks] == [text]


def test_overlong_sentence_is_split(embedder: SentenceTransformerEmbedder) -> None:
    text = " ".join(f"word{i}" for i in range(900))
    chunks = Chunker(embedder.count_tokens, 100, 10).chunk("d", text)
    assert len(chunks) >= 9
    assert all(c.n_tokens <= 100 for c in chunks)


def test_bad_files_are_reported_with_reasons(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text("Fine text about London.")
    (tmp_path / "empty.txt").write_text("   \n")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "big.txt").write_text("x" * 200)
    (tmp_path / "ignored.pdf").write_bytes(b"%PDF")
    files = list(expand_paths([tmp_path], [".txt"]))
    assert [f.name for f in files] == ["big.txt", "bin.txt", "empty.txt", "latin1.txt", "ok.txt"]
    results = {f.name: read_text_file(f, max_bytes=100) for f in files}
    assert isinstance(results["ok.txt"], SourceText)
    reasons = {k: v.reason for k, v in results.items() if isinstance(v, Skipped)}
    assert "too large" in reasons["big.txt"]
    assert "binary" in reasons["bin.txt"]
    assert "empty" in reasons["empty.txt"]
    assert "UTF-8" in reasons["latin1.txt"]
    missing = read_text_file(tmp_path / "nope.txt", 100)
    assert isinstance(missing, Skipped) and "cannot stat" in missing.reason


def test_a_malformed_jsonl_line_says_where_once(tmp_path: Path) -> None:
    (tmp_path / "r.jsonl").write_text('{"_id": "1", "text": "fine"}\n{"_id": "2", "text": "cut\n{"_id": 3,}\n')
    reasons = [i.reason for i in read_jsonl(tmp_path / "r.jsonl", 10_000) if isinstance(i, Skipped)]
    assert reasons == ["malformed JSON: Unterminated string starting at column 22",
                       "malformed JSON: Expecting property name enclosed in double quotes at column 11"]


def test_invalid_utf8_is_replaced_and_reported_unless_strict(tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 au lait, cr\xe8me br\xfbl\xe9e".encode("latin-1"))
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01\xffbinary")  # binary stays skipped
    lenient = {Path(i.document.source if isinstance(i, SourceText) else i.source).name: i
               for i in read_sources([tmp_path], [".txt"], 10_000)}
    doc = lenient["latin1.txt"]
    assert isinstance(doc, SourceText) and doc.text == "caf\ufffd au lait, cr\ufffdme br\ufffdl\ufffde"
    assert doc.warning.startswith("not valid UTF-8: 4 byte(s) replaced") and isinstance(lenient["bin.txt"], Skipped)
    strict = list(read_sources([tmp_path / "latin1.txt"], [".txt"], 10_000, strict_utf8=True))
    assert isinstance(strict[0], Skipped) and "not valid UTF-8 (byte 3)" in strict[0].reason
