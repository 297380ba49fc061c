"""Evaluation of answers that must name the right part of the right document: document recall and
document+section recall at 1/3/5/10, for sets whose ``qrels/sections.tsv`` gives, per query, the gold
(document, section number) pairs (``query-id``, ``corpus-id``, ``section``; section numbers count a
document's sections from 0 in order)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

KS = (1, 3, 5, 10)
SECTION_QRELS = "sections.tsv"


def load_section_qrels(root: Path) -> dict[str, set[tuple[str, int]]]:
    """query -> gold (corpus id, section number) pairs ({} when the set has no section judgements)."""
    path = root / "qrels" / SECTION_QRELS
    if not path.is_file():
        return {}
    out: dict[str, set[tuple[str, int]]] = {}
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        parts = line.strip().split("\t")
        if len(parts) < 3 or (i == 0 and not parts[2].isdigit()):
            continue  # header
        out.setdefault(parts[0], set()).add((parts[1], int(parts[2])))
    return out


def section_metrics(ranked: Sequence[tuple[str, int | None]], gold: set[tuple[str, int]]) -> dict[str, float]:
    """D@k (gold documents among the first k distinct documents) and DS@k (gold sections among the
    first k distinct document sections), as fractions of the gold."""
    docs: list[str] = []
    parts: list[tuple[str, int | None]] = []
    for doc, section in ranked:
        if doc not in docs:
            docs.append(doc)
        if (doc, section) not in parts:
            parts.append((doc, section))
    gold_docs = {d for d, _ in gold}
    out: dict[str, float] = {}
    for k in KS:
        out[f"D@{k}"] = len(gold_docs & set(docs[:k])) / max(len(gold_docs), 1)
        out[f"DS@{k}"] = len(gold & {p for p in parts[:k] if p[1] is not None}) / max(len(gold), 1)
    return out


def ranked_sections(chunk_ids: Sequence[str], corpus_ids: Mapping[str, str],
                    section_of: Mapping[str, int]) -> list[tuple[str, int | None]]:
    """(corpus id, section number) of each result chunk, in rank order."""
    return [(corpus_ids.get(c, c), section_of.get(c)) for c in chunk_ids]
