"""RESULTS.md's section on the embedder: all-MiniLM-L6-v2 (the default) against all-mpnet-base-v2 (extra
``mpnet``), each ingested and evaluated on the five text developer sets in one run of
``benchmarks/embedders.py``: recall of `dense` and `graph` per set and question type, and the ingest cost."""

from __future__ import annotations

from benchmarks.report_tables import Section, by_type, load, mean_of, paired_gain, provenance, question_types, table

SETS = ("hotpotqa-100", "musique-100", "2wiki-dev-500", "lihua-dev", "locomo-dev")
MODELS = ("minilm", "mpnet")
COST = "embedders.json"


def _eval_report(dataset: str, model: str) -> str:
    return f"{dataset}.embed-{model}.json.gz"


def embedders() -> Section:
    cost = load(COST)
    measured = [s for s in SETS if s in cost["sets"]]
    names = tuple(_eval_report(s, m) for s in measured for m in MODELS)
    rows = []
    for s in measured:
        small, large = (load(_eval_report(s, m)) for m in MODELS)
        groups = question_types(s)
        every = [q["id"] for q in small["queries"]["graph"]]
        for label, ids in by_type(every, groups, least=10):
            rows.append([f"{s} {label} ({len(ids)})",
                         *(f"{mean_of(r, 'dense', 'R@5', ids):.1f}" for r in (small, large)),
                         paired_gain(large, "dense", "dense", "R@5", ids, small),
                         *(f"{mean_of(r, 'graph', 'R@5', ids):.1f}" for r in (small, large)),
                         paired_gain(large, "graph", "graph", "R@5", ids, small),
                         paired_gain(large, "graph", "graph", "R@2", ids, small)])
    ingest = []
    for s in measured:
        got = cost["sets"][s]["ingest"]
        a, b = got["minilm"], got["mpnet"]
        ingest.append([s, f"{a['documents']} / {a['chunks']}", f"{a['docs_per_s']:.2f}", f"{b['docs_per_s']:.2f}",
                       f"{b['seconds'] / a['seconds']:.1f}x",
                       f"{a['stage_seconds'].get('embed', 0):.0f} / {b['stage_seconds'].get('embed', 0):.0f}"])
    lines = ["The embedder, measured inside hopgraph: each set ingested once with each model (same settings, "
             "separate stores) and evaluated with the same questions. R@5 of `dense` and `graph` per set and "
             "question type (types with fewer than 10 queries left out), and mpnet's gain over MiniLM (paired "
             "bootstrap, 95%):", "",
             *table(["set / type (queries)", "`dense` MiniLM", "`dense` mpnet", "mpnet - MiniLM",
                     "`graph` MiniLM", "`graph` mpnet", "mpnet - MiniLM", "`graph` R@2 mpnet - MiniLM"], rows),
             "What it costs: the whole ingest (spaCy, embedding, writes, communities) with each model, one after "
             "the other on the same machine, and the seconds of its embedding stage. These ingests shared the "
             "machine's two cores with other work, so read the ratios, not the seconds:", "",
             *table(["set", "documents / chunks", "MiniLM docs/s", "mpnet docs/s", "mpnet's ingest time",
                     "embed s MiniLM / mpnet"], ingest)]
    alone = cost.get("embed_only")
    if alone:
        speed = alone["chunks_per_s"]
        lines += [f"Embedding alone ({alone['chunks']} chunks of the five corpora, batches of "
                  f"{alone['batch_size']['minilm']}, the models alternating, the faster of {alone['repeat']} runs): "
                  f"MiniLM {speed['minilm']:.1f} chunks/s, mpnet {speed['mpnet']:.2f} chunks/s "
                  f"({speed['minilm'] / speed['mpnet']:.1f}x).", ""]
    missing = [s for s in SETS if s not in measured]
    if missing:
        lines += [f"Not measured with both models in this run: {', '.join(missing)}.", ""]
    lines += provenance((*names, COST), "python -m benchmarks.embedders run --sets SETS --work DIR "
                        "(then: python -m benchmarks.embedders report --out benchmarks/reports/embedders.json)")
    return Section("Embedder: all-MiniLM-L6-v2 and all-mpnet-base-v2", (*names, COST), lines)
