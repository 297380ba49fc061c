"""RESULTS.md's section on BM25's stemmer: every text developer set evaluated twice on the same stores, words
matched by their Snowball stem (``retrieval.keyword_stemmer = "english"``, the default; the conversations
section's reports) and as written (``""``): recall of `bm25`, `rrf`, `graph` and `graph-0-hops`."""

from __future__ import annotations

from benchmarks.report_tables import Section, by_type, load, mean_of, paired_gain, provenance, question_types, table
from benchmarks.results_chat import MODES, SETS

COMPARED = ("bm25", "rrf", "graph", "graph-0-hops")


def stemming() -> Section:
    exact_names = tuple(f"{s}.stem-none.json.gz" for s in SETS)
    stem_names = tuple(f"{s}.conversations.json.gz" for s in SETS)
    rows = []
    for s, e_name, s_name in zip(SETS, exact_names, stem_names, strict=True):
        exact, stem = load(e_name), load(s_name)
        groups = question_types(s)
        every = [q["id"] for q in stem["queries"]["graph"]]
        for label, ids in by_type(every, groups, least=10):
            cells = [f"{s} {label} ({len(ids)})"]
            for mode in COMPARED:
                cells += [f"{mean_of(exact, mode, 'R@5', ids):.1f} → {mean_of(stem, mode, 'R@5', ids):.1f}",
                          paired_gain(stem, mode, mode, "R@5", ids, exact)]
            rows.append(cells)
    header = ["set / type (queries)"]
    for mode in COMPARED:
        header += [f"`{mode}` R@5 as written → stemmed", "stemmed - as written"]
    lines = ["BM25, the keyword signal of every mode, matches words by their Snowball stem (`retrieval.keyword_stemmer`"
             ", `english` by default): \"Where has Melanie camped?\" finds \"we went camping\". Each set evaluated "
             "twice on the same stores, words stemmed and as written (`keyword_stemmer = \"\"`); R@5 of each mode "
             "and the stemmer's paired gain (bootstrap, 95%), per question type where queries carry one (types with "
             "fewer than 10 queries left out):", "",
             *table(header, rows)]
    lines += provenance(exact_names, f"hopgraph eval ../shared/data/SET --modes {MODES} --out SET.stem-none.json "
                        "(with keyword_stemmer = \"\" under [retrieval] in the file HOPGRAPH_CONFIG names)")
    return Section("Keyword matching by word stem", exact_names + stem_names, lines)
