"""What document access groups cost a query: each mode (``graph`` and ``dense`` by default) for a key with
groups against the same query with no access filter, same process, same questions.

The corpus's records are split into two groups (alternately ``a`` and ``b``) and ingested into fresh
embedded stores (or ``--data-dir``, ingested before by this script). The reader holds two groups, ``a``
and ``c``, so it reads half the corpus (its dense searches filter on the vectors' groups inside the
engine). Reported per mode: the first reader query after the index state was loaded (it derives the
reader's view), then p50 / p95 of every question asked both ways, alternating which goes first, and the
ratio of the p50s.

    python -m benchmarks.access_overhead [--corpus ../shared/data/2wiki-dev-500] [--data-dir D] [--limit N]
        [--modes graph dense]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.common import corpus_store, percentiles
from benchmarks.paths import SHARED_DATA
from hopgraph.app.platform import Platform

READER = ["a", "c"]


def grouped(corpus: Path, limit: int | None) -> list[str]:
    """``corpus``'s records (JSONL lines) with the groups ``a`` and ``b`` in turn."""
    lines = corpus.read_text(encoding="utf-8").splitlines()[:limit]
    return [json.dumps({**json.loads(line), "groups": ["a" if i % 2 == 0 else "b"]}) for i, line in enumerate(lines)]


def measure(p: Platform, questions: list[str], mode: str = "graph") -> dict[str, float]:
    """The reader's first query (its view derived), then both kinds of query per question, alternating."""
    p.query(questions[0], mode=mode)  # the model and the state, loaded
    t = time.perf_counter()
    p.query(questions[0], mode=mode, reader=READER)
    first = time.perf_counter() - t
    plain: list[float] = []
    reader: list[float] = []
    for i, q in enumerate(questions):
        for who in ((None, READER) if i % 2 == 0 else (READER, None)):
            t = time.perf_counter()
            p.query(q, mode=mode, reader=who)
            (plain if who is None else reader).append(time.perf_counter() - t)
    (p50, p95), (r50, r95) = percentiles(plain), percentiles(reader)
    return {"first_reader_query_ms": first * 1000, "plain_p50": p50, "plain_p95": p95, "reader_p50": r50,
            "reader_p95": r95, "ratio_p50": r50 / p50}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--corpus", default=str(SHARED_DATA / "2wiki-dev-500"), help="a BEIR folder")
    parser.add_argument("--data-dir", help="a data dir this script ingested before (skips the ingest)")
    parser.add_argument("--limit", type=int, help="ingest the first N records only")
    parser.add_argument("--questions", type=int, default=500, help="questions asked both ways")
    parser.add_argument("--modes", nargs="+", default=["graph", "dense"], help="the modes measured, in turn")
    args = parser.parse_args()
    lines = (Path(args.corpus) / "queries.jsonl").read_text(encoding="utf-8").splitlines()[: args.questions]
    questions = [json.loads(x)["text"] for x in lines]
    corpus = Path(args.corpus) / "corpus.jsonl"
    with corpus_store(args.data_dir, lambda: grouped(corpus, args.limit), "access") as settings, \
            Platform(settings) as p:
        state = p.retriever.state()
        print(f"index state v{state.version}: {len(state.tables.chunk_ids):,} chunks, "
              f"{len(state.tables.entity_ids):,} entities; reader {READER} over {len(questions)} questions")
        for mode in args.modes:
            r = measure(p, questions, mode)
            print(f"{mode}: first query of the reader {r['first_reader_query_ms']:.0f} ms; p50 / p95: no access "
                  f"filter {r['plain_p50']:.1f} / {r['plain_p95']:.1f} ms, reader {r['reader_p50']:.1f} / "
                  f"{r['reader_p95']:.1f} ms; ratio of the p50s {r['ratio_p50']:.2f}")


if __name__ == "__main__":
    main()
