"""A sectioned evaluation set from a BEIR folder whose passages carry titles (MuSiQue): passages sharing
a title become the sections (paragraphs) of one article; a query's gold documents are the articles of
its gold passages, its gold sections those passages. Ingest it with ``chunking.sections = paragraphs``.

    python -m benchmarks.sectioned_musique ../shared/data/musique-100 /tmp/musique-100-sectioned
    HOPGRAPH_CHUNKING__SECTIONS=paragraphs hopgraph eval /tmp/musique-100-sectioned --modes sections,dense,graph
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path


def build(src: Path, dst: Path) -> dict[str, int]:
    """Write the sectioned set; returns its counts."""
    articles: dict[str, list[tuple[str, str]]] = {}  # title -> (passage id, text), in corpus order
    for line in (src / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            articles.setdefault(str(rec.get("title") or rec["_id"]), []).append((str(rec["_id"]), rec["text"]))
    where: dict[str, tuple[str, int]] = {}  # passage id -> (article id, section number)
    (dst / "qrels").mkdir(parents=True, exist_ok=True)
    with (dst / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for n, (title, passages) in enumerate(articles.items()):
            art = f"art{n:05d}"
            kept: list[str] = []
            for pid, text in passages:
                body = " ".join(text.split())  # one paragraph: no blank line inside
                if body not in kept:  # a repeated paragraph is one section (and one chunk)
                    kept.append(body)
                where[pid] = (art, kept.index(body))
            out.write(json.dumps({"_id": art, "title": title, "text": "\n\n".join(kept)}) + "\n")
    shutil.copy(src / "queries.jsonl", dst / "queries.jsonl")
    docs, parts = ["query-id\tcorpus-id\tscore"], ["query-id\tcorpus-id\tsection"]
    for i, line in enumerate((src / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()):
        q = line.strip().split("\t")
        if len(q) < 3 or (i == 0 and not q[2].isdigit()) or int(q[2]) <= 0 or q[1] not in where:
            continue
        art, section = where[q[1]]
        docs.append(f"{q[0]}\t{art}\t1")
        parts.append(f"{q[0]}\t{art}\t{section}")
    (dst / "qrels" / "test.tsv").write_text("\n".join(dict.fromkeys(docs)) + "\n", encoding="utf-8")
    (dst / "qrels" / "sections.tsv").write_text("\n".join(dict.fromkeys(parts)) + "\n", encoding="utf-8")
    multi = sum(1 for p in articles.values() if len(p) > 1)
    return {"articles": len(articles), "with_several_sections": multi, "passages": len(where)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path)
    ap.add_argument("target", type=Path)
    args = ap.parse_args()
    print(json.dumps(build(args.source, args.target)))


if __name__ == "__main__":
    main()
