"""Evaluation on any BEIR-layout folder: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``.

Every corpus record is one document (passages stay whole as chunks when they are short). Every
mode, the BM25 / dense / RRF baselines and the ablations of ``graph`` run in the same process on
the same index; the report has R@2, R@5, R@10, nDCG@10, MRR@10 and latency p50/p95 per mode, and
the ranked documents of every query; ``evaluation.stats`` adds the gains over the best baseline
with bootstrap intervals, and the figures per question type.
"""

from __future__ import annotations

import json
import logging
import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hopgraph.core.errors import BadInputError, HopgraphError
from hopgraph.core.records import QueryResult
from hopgraph.core.settings import RetrievalSettings
from hopgraph.evaluation.report import ModeReport, error_text
from hopgraph.evaluation.sections import load_section_qrels, ranked_sections, section_metrics
from hopgraph.evaluation.stats import group_of
from hopgraph.retrieval.parts import confidence
from hopgraph.retrieval.parts.diversity import diversity_ratio, intra_list_diversity
from hopgraph.retrieval.registry import REGISTRY

#: the top of each list whose diversity is measured
DIVERSITY_K = 5

log = logging.getLogger(__name__)


def is_image_corpus(corpus: Path) -> bool:
    """Whether the first record of a corpus is an image record (``image`` + ``captions``)."""
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                meta = rec.get("metadata") if isinstance(rec.get("metadata"), dict) else {}
                return bool(rec.get("image") or meta.get("image"))
    return False


class DatasetError(BadInputError):
    """The folder is not in the BEIR layout."""


@dataclass
class Dataset:
    root: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    groups: dict[str, str] = field(default_factory=dict)  # query -> its type or hop count, when given
    sections: dict[str, set[tuple[str, int]]] = field(default_factory=dict)  # query -> gold (doc, section)

    @property
    def corpus(self) -> Path:
        return self.root / "corpus.jsonl"


def load_dataset(root: Path, split: str = "test") -> Dataset:
    """Queries and qrels of a BEIR folder (the corpus is ingested from ``corpus.jsonl``)."""
    for f in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"):
        if not (root / f).exists():
            raise DatasetError(f"{root} is not a BEIR-layout folder: {f} is missing")
    queries: dict[str, str] = {}
    groups: dict[str, str] = {}
    for line in (root / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            queries[str(rec["_id"])] = str(rec["text"])
            group = group_of(rec.get("metadata") if isinstance(rec.get("metadata"), dict) else None)
            if group is not None:
                groups[str(rec["_id"])] = group
    qrels: dict[str, dict[str, int]] = {}
    for i, line in enumerate((root / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()):
        parts = line.strip().split("\t")
        if len(parts) < 3 or (i == 0 and not parts[2].lstrip("-").isdigit()):
            continue  # header
        if int(parts[2]) > 0:
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    queries = {q: t for q, t in queries.items() if q in qrels}
    if not queries:
        raise DatasetError(f"no query of {root} has relevance judgements in qrels/{split}.tsv")
    return Dataset(root, queries, qrels, {q: g for q, g in groups.items() if q in queries},
                   load_section_qrels(root))


def metrics(ranked_docs: Sequence[str], relevant: dict[str, int]) -> dict[str, float]:
    """Recall@2/5/10, nDCG@10 and MRR@10 of one query."""
    out: dict[str, float] = {}
    n_rel = max(len(relevant), 1)
    for k in (1, 2, 5, 10):
        out[f"R@{k}"] = sum(1 for d in ranked_docs[:k] if d in relevant) / n_rel
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked_docs[:10]))
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(relevant.values(), reverse=True)[:10]))
    out["nDCG@10"] = dcg / ideal if ideal else 0.0
    out["MRR@10"] = next((1.0 / (i + 1) for i, d in enumerate(ranked_docs[:10]) if d in relevant), 0.0)
    return out


def ranked_documents(result: QueryResult, corpus_ids: dict[str, str]) -> list[str]:
    out: list[str] = []
    for r in result.results:
        d = corpus_ids.get(r.citation.chunk_id, r.citation.document_id)
        if d not in out:
            out.append(d)
    return out


def evaluate(query: Callable[[str, str, RetrievalSettings], QueryResult], corpus_ids: dict[str, str],
             ds: Dataset, modes: Sequence[str], base: RetrievalSettings, progress: bool = False,
             vectors: Callable[[Sequence[str]], Mapping[str, np.ndarray]] | None = None,
             section_of: Mapping[str, int] | None = None,
             on_mode: Callable[[list[ModeReport]], None] | None = None) -> list[ModeReport]:
    """Run every query in every mode (and ablation) and aggregate; with ``vectors`` (chunk id ->
    vector), also the intra-list diversity of each top 5; with section judgements and ``section_of``
    (chunk id -> its section number), document and document+section recall. A mode that raises is
    logged and reported with its ``error``, and the others still run; ``on_mode`` gets the reports so
    far after each mode (to save them)."""
    reports = []
    for mode in modes:
        try:
            rep = evaluate_mode(query, corpus_ids, ds, mode, base, progress, vectors, section_of)
        except Exception as exc:  # one mode's failure must not lose the others
            rep = ModeReport(mode, error=error_text(exc))
            log.error("mode %s failed: %s", mode, rep.error, exc_info=not isinstance(exc, HopgraphError))
        reports.append(rep)
        if on_mode is not None:
            on_mode(list(reports))
    return reports


def evaluate_mode(query: Callable[[str, str, RetrievalSettings], QueryResult], corpus_ids: dict[str, str],
                  ds: Dataset, mode: str, base: RetrievalSettings, progress: bool = False,
                  vectors: Callable[[Sequence[str]], Mapping[str, np.ndarray]] | None = None,
                  section_of: Mapping[str, int] | None = None) -> ModeReport:
    """Every query of ``ds`` in one mode (or ablation), aggregated (see ``evaluate``)."""
    from tqdm import tqdm

    real, cfg = REGISTRY.settings_for(mode, base, top_k=20)
    query(next(iter(ds.queries.values())), real, cfg)  # warm-up (caches, derived indexes): not timed
    rep = ModeReport(mode)
    sums: dict[str, float] = {}
    lat: list[float] = []
    tops: list[list[str]] = []
    for qid, text in tqdm(ds.queries.items(), desc=mode, disable=not progress, leave=False):
        t = time.perf_counter()
        res = query(text, real, cfg)
        lat.append((time.perf_counter() - t) * 1000)
        docs = ranked_documents(res, corpus_ids)
        tops.append([r.citation.chunk_id for r in res.results[:DIVERSITY_K]])
        m = metrics(docs, ds.qrels[qid])
        if ds.sections.get(qid) and section_of is not None:
            m |= section_metrics(ranked_sections([r.citation.chunk_id for r in res.results], corpus_ids,
                                                 section_of), ds.sections[qid])
        for k, v in m.items():
            sums[k] = sums.get(k, 0.0) + v
        rep.notes += bool(res.notes)
        spread = confidence.entropy(confidence.distribution([r.score for r in res.results[: base.confidence.top_m]],
                                                            base.confidence.temperature))
        rep.per_query.append({"id": qid, "query": text, "ranked": docs[:10], "relevant": sorted(ds.qrels[qid]),
                              "metrics": m, "latency_ms": round(lat[-1], 2), "notes": res.notes,
                              "entropy": round(spread, 4)})
    n = len(ds.queries)
    rep.metrics = {k: round(100 * v / n, 1) for k, v in sums.items()}
    ordered = sorted(lat)
    rep.latency_ms = {"p50": round(statistics.median(ordered), 1),
                      "p95": round(ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 1)}
    rep.diversity = {f"ratio@{DIVERSITY_K}": round(diversity_ratio(tops, DIVERSITY_K), 4)}
    rep.selective = confidence.selective_curve([q["entropy"] for q in rep.per_query],
                                               [q["metrics"]["R@1"] > 0 for q in rep.per_query])
    if vectors is not None:
        ild = []
        for top in tops:
            found = vectors(top)
            ild.append(intra_list_diversity([found[c] for c in top if c in found]))
        rep.diversity[f"ild@{DIVERSITY_K}"] = round(float(np.mean(ild)) if ild else 0.0, 4)
    return rep
