"""Writes ``benchmarks/RESULTS.md`` from the per-query reports in ``benchmarks/reports/`` (what
``hopgraph eval --out`` writes, gzipped) and the measured figures of the other benchmark scripts.

    python -m benchmarks.results            # regenerate benchmarks/RESULTS.md
    python -m benchmarks.results --check    # exit 1 when RESULTS.md is not what the reports give

Every retrieval figure is read from a report, with the command that made it and the day the report was
added (from git); the other figures (ingest, freshness, GPU...) are listed with their command, date and
machine. A report this page does not cite is not needed: ``cited_reports()`` names those it reads."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from benchmarks.figures import OTHER_FIGURES
from benchmarks.report_tables import (
    HERE,
    Section,
    by_type,
    load,
    mean_of,
    paired_gain,
    provenance,
    question_types,
    table,
)
from benchmarks.results_chat import conversations
from benchmarks.results_embedders import embedders
from benchmarks.results_memory import memory
from benchmarks.results_stemming import stemming

RESULTS = HERE / "RESULTS.md"
DEV_SETS = ("hotpotqa-100", "musique-100", "2wiki-dev-500")
BASELINES = ("dense", "bm25", "rrf")


def gain(report: dict[str, Any], mode: str, baseline: str | None, metric: str) -> str:
    """``+19.0 [+13.0, +25.0]``: the paired bootstrap gain of ``mode`` over ``baseline`` in ``report``."""
    for g in report.get("gains", []):
        if g["mode"] == mode and g["metric"] == metric and baseline in (None, g["baseline"]):
            return f"{g['mean']:+.1f} [{g['low']:+.1f}, {g['high']:+.1f}]"
    return "—"


def best_baseline(report: dict[str, Any], metric: str) -> str:
    """The baseline with the highest ``metric`` in the report (ties: the first of dense, bm25, rrf)."""
    present = [b for b in BASELINES if b in report["modes"]]
    return max(present, key=lambda b: report["modes"][b]["metrics"][metric])


def metric(report: dict[str, Any], mode: str, name: str) -> str:
    return f"{report['modes'][mode]['metrics'][name]:.1f}"


def per_mode(names: Sequence[str], modes: Iterable[str], name: str = "R@5") -> list[list[str]]:
    """One row per mode: its ``name`` metric in each report (— where the report lacks the mode)."""
    return [[f"`{m}`", *(metric(load(n), m, name) if m in load(n)["modes"] else "—" for n in names)] for m in modes]


def multi_hop() -> Section:
    names = tuple(f"{s}.session14.json.gz" for s in DEV_SETS)
    rows = []
    for s, n in zip(DEV_SETS, names, strict=True):
        r = load(n)
        b2, b5 = best_baseline(r, "R@2"), best_baseline(r, "R@5")
        lat = r["modes"]["graph"]["latency_ms"]
        rows.append([f"{s} ({r['queries_evaluated']} q.)",
                     f"{metric(r, 'graph', 'R@2')} / {metric(r, 'graph', 'R@5')}",
                     f"{b2} {metric(r, b2, 'R@2')} / {b5} {metric(r, b5, 'R@5')}", gain(r, "graph", b2, "R@2"),
                     gain(r, "graph", b5, "R@5"), metric(r, "graph-0-hops", "R@5"),
                     f"{lat['p50']:.0f} / {lat['p95']:.0f}"])
    lines = ["`graph` against the best baseline of the same run (paired bootstrap 95% intervals).", "",
             *table(["set", "`graph` R@2 / R@5", "best baseline R@2 / R@5", "gain R@2", "gain R@5",
                     "`graph-0-hops` R@5", "`graph` p50 / p95 ms"], rows)]
    modes = ["graph", "dense", "bm25", "rrf", "local", "global", "hybrid", "mix", "graph-0-hops"]
    lines += ["R@5 of every mode in the same runs:", "",
              *table(["mode", *DEV_SETS], per_mode(names, modes))]
    lines += provenance(names, "hopgraph eval ../shared/data/SET --modes graph,dense,bm25,rrf,local,global,hybrid,"
                               "mix,graph-0-hops --out SET.json")
    return Section("Multi-hop retrieval (developer sets)", names, lines)


TEXT_SETS = (*DEV_SETS, "lihua-dev")
CURRENT_MODES = ("graph", "graph-no-parts", "graph-fixed-weights", "graph-0-hops", "pcst", "mix", "local",
                 "global", "hybrid")


def current_build() -> Section:
    names = tuple(f"{s}.names.json.gz" for s in TEXT_SETS)
    before = tuple(f"{s}.before-names.json.gz" for s in TEXT_SETS)
    rows, modes_rows = [], []
    for s, n, b in zip(TEXT_SETS, names, before, strict=True):
        r, old = load(n), load(b)
        groups: dict[str, str] = r.get("groups") or question_types(s)
        every = [q["id"] for q in r["queries"]["graph"]]
        for label, ids in by_type(every, groups):
            base = max(BASELINES, key=lambda m: mean_of(r, m, "R@5", ids))
            rows.append([f"{s} {label} ({len(ids)})", f"`{base}` {mean_of(r, base, 'R@2', ids):.1f} / "
                         f"{mean_of(r, base, 'R@5', ids):.1f}",
                         f"{mean_of(r, 'graph', 'R@2', ids):.1f} / {mean_of(r, 'graph', 'R@5', ids):.1f}",
                         paired_gain(r, "graph", base, "R@2", ids), paired_gain(r, "graph", base, "R@5", ids),
                         *(f"{mean_of(r, m, 'R@5', ids) - mean_of(r, base, 'R@5', ids):+.1f}"
                           for m in ("graph-no-parts", "graph-fixed-weights", "graph-0-hops", "graph-any-case-names")),
                         paired_gain(r, "graph", "graph", "R@5", ids, old)])
        base = max(BASELINES, key=lambda m: mean_of(r, m, "R@5", every))
        modes_rows.append([s, f"`{base}` {mean_of(r, base, 'R@5', every):.1f}",
                           *(paired_gain(r, m, base, "R@5", every)
                             for m in ("mix", "hybrid", "local", "global", "auto")),
                           "{p50:.0f} / {p95:.0f}".format(**r["modes"]["graph"]["latency_ms"])
                           + " ({p50:.1f})".format(**r["modes"]["bm25"]["latency_ms"])])
    lines = ["The four text developer sets, one run per set, per question type where the queries carry one: "
             "`graph` against the best baseline of the same run and, in R@5 points against that baseline, its "
             "ablations: without the question parts (`graph-no-parts`), with the configured dense/BM25 weights on "
             "every corpus (`graph-fixed-weights`), without expansion (`graph-0-hops`), and seeding a single word a "
             "cased question writes in lower case (`graph-any-case-names`). The last column is the R@5 gain of "
             "`graph` over `graph` without the extraction rules for company text and chats (identifiers, "
             "hyphenated names, given names, misread sentences), the handles written in questions, and the "
             "question parts fused leaning to BM25 where the first pass does (reports `SET.before-names`); each "
             "set was ingested afresh for both runs.", "",
             *table(["set / type (queries)", "best baseline R@2 / R@5", "`graph` R@2 / R@5", "gain R@2",
                     "gain R@5", "no parts", "fixed weights", "0 hops", "any-case names", "vs without these rules"],
                    rows),
             "The LightRAG-family modes and `auto`, R@5 gain over the best baseline (whole sets), and `graph`'s "
             "latency (query embedding excluded) beside `bm25`'s in the same run, the scale of the machine's speed "
             "that day:", "",
             *table(["set", "best baseline R@5", "`mix`", "`hybrid`", "`local`", "`global`", "`auto`",
                     "`graph` p50 / p95 ms (`bm25` p50)"],
                    modes_rows)]
    lines += provenance((*names, *before), "hopgraph eval ../shared/data/SET --modes bm25,dense,rrf,graph,"
                        "graph-0-hops,graph-no-parts,graph-fixed-weights,graph-any-case-names,pcst,"
                        "mix,local,global,hybrid,auto --out SET.names.json")
    return Section("Chats and questions with several parts", (*names, *before), lines)


def ablations() -> Section:
    names = (*(f"{s}.session7.json.gz" for s in DEV_SETS), "musique-100-notitle.session7.json.gz")
    sets = [*DEV_SETS, "musique-100, titles removed"]
    wanted = ["graph", "graph-no-enrichment", "graph-with-generic", "graph-0-hops", "graph-no-walk", "graph-no-bridges",
              "graph-no-title-bridges", "graph-no-entity-bridges", "graph-beam", "graph+rerank", "pcst", "auto",
              "sections", "raptor", "dense", "bm25", "rrf"]
    lines = ["R@5 of the ablations of `graph` and of the other modes, every mode in one run, without two features "
             "of the runs above: exact vector search below `vectors.exact_below` points and the composed "
             "relationship vectors. In this run `graph` scored within 0.5 points of its figures in the table "
             "above.", "",
             *table(["mode", *sets], per_mode(names, wanted))]
    notitle = load(names[-1])
    b5 = best_baseline(notitle, "R@5")
    lines += [f"Without titles, `graph` gains {gain(notitle, 'graph', b5, 'R@5')} R@5 over {b5}: title bridges need "
              "titled documents, entity bridges do not.", ""]
    lines += provenance(names, "hopgraph eval ../shared/data/SET --out SET.json (every mode and ablation); the "
                               "untitled set is musique-100 with every title removed")
    return Section("Ablations and other modes", names, lines)


def images() -> Section:
    name = "flickr8k-captions.session7.json.gz"
    r = load(name)
    rows = [[f"`{m}`", metric(r, m, "MRR@10"), metric(r, m, "R@1"), metric(r, m, "R@10")] for m in r["modes"]]
    lines = [f"Text → image retrieval on flickr8k captions ({r['queries_evaluated']:,} queries, fresh ingest; "
             "caption-only `dense` is the baseline).", "", *table(["mode", "MRR@10", "R@1", "R@10"], rows)]
    lines += provenance([name], "hopgraph eval ../shared/data/flickr8k-captions --out flickr8k-captions.json")
    return Section("Images", (name,), lines)


def raptor() -> Section:
    names = tuple(f"{s}.raptor.json.gz" for s in DEV_SETS)
    modes = ["raptor", "raptor-rrf", "raptor-tree-only", "graph", "dense", "rrf"]
    lines = ["R@5 of mode `raptor` and its ablations (tree built with `hopgraph tree`, extractive summaries): the "
             "developer questions need passages about named things, not clusters.", "",
             *table(["mode", *DEV_SETS], per_mode(names, modes))]
    lines += provenance(names, "hopgraph tree && hopgraph eval ../shared/data/SET --modes raptor,raptor-rrf,"
                               "raptor-tree-only,graph,rrf,dense,bm25 --out SET.raptor.json")
    return Section("RAPTOR tree", names, lines)


def sections() -> Section:
    name = "musique-100-sectioned.json.gz"
    r = load(name)
    keys = ["D@1", "DS@1", "D@5", "DS@5", "R@5"]
    rows = [[f"`{m}`", *(metric(r, m, k) if k in r["modes"][m]["metrics"] else "—" for k in keys)]
            for m in r["modes"]]
    lines = ["Sectioned MuSiQue (passages sharing a title become the paragraphs of one article): document recall "
             "(`D@k`) and document+section recall (`DS@k`).", "", *table(["mode", *keys], rows)]
    lines += provenance([name], "python -m benchmarks.sectioned_musique ../shared/data/musique-100 SECTIONED && "
                                "hopgraph eval SECTIONED --modes sections,dense,rrf,graph "
                                "--out musique-100-sectioned.json")
    return Section("Sections of long documents", (name,), lines)


def community_vectors() -> Section:
    names = tuple(f"{s}.communities-composed.session15.json.gz" for s in DEV_SETS)
    rows = []
    for m in ("global", "hybrid", "mix"):
        cells = []
        for s, n in zip(DEV_SETS, names, strict=True):
            text, composed = load(f"{s}.session14.json.gz"), load(n)
            d = composed["modes"][m]["metrics"]["R@2"] - text["modes"][m]["metrics"]["R@2"]
            cells.append(f"{metric(text, m, 'R@2')} → {metric(composed, m, 'R@2')} ({d:+.1f})")
        rows.append([f"`{m}`", *cells])
    lines = ["R@2 with `communities.vectors = \"text\"` (the default) → `\"composed\"`, the same stores with only "
             "the community vectors rewritten; only these three modes read community vectors.", "",
             *table(["mode", *DEV_SETS], rows)]
    lines += provenance(names, "hopgraph eval ../shared/data/SET --modes global,hybrid,mix --out SET.json, on the "
                               "stores of the first table with the community vectors rewritten as composed")
    return Section("Composed community vectors", names, lines)


def diversity() -> Section:
    short = {"hotpotqa-100": "hotpot", "musique-100": "musique", "2wiki-dev-500": "2wiki"}
    rows, names = [], []
    for s in DEV_SETS:
        off, on = f"{short[s]}.mmr_none.json.gz", f"{short[s]}.mmr_0.7.json.gz"
        names += [off, on]
        for m in ("graph", "rrf"):
            a, b = load(off)["modes"][m], load(on)["modes"][m]
            rows.append([s, f"`{m}`", f"{a['metrics']['R@5']:.1f} → {b['metrics']['R@5']:.1f}",
                         f"{a['diversity']['ratio@5']:.3f} → {b['diversity']['ratio@5']:.3f}",
                         f"{a['diversity']['ild@5']:.3f} → {b['diversity']['ild@5']:.3f}"])
    lines = ["Maximal marginal relevance (`retrieval.mmr_lambda`): off → 0.7.", "",
             *table(["set", "mode", "R@5", "div@5", "ILD@5"], rows)]
    lines += provenance(names, "hopgraph eval ../shared/data/SET --modes graph,rrf,dense,bm25 [--mmr 0.7] --out ...")
    return Section("Diversity (MMR)", tuple(names), lines)


def graph_qa() -> Section:
    name = "expla-graphs.graphqa.json"
    r = load(name)
    acc, ret = r["accuracy"], r["retrieval"]
    lines = [f"ExplaGraphs, {r['test']} held-out questions ({r['train']} for training): a question-conditioned GNN "
             "over each question's graph document.", "",
             *table(["classifier", "accuracy"], [[k.replace("_", " "), f"{v:.3f}"] for k, v in acc.items()]),
             f"Retrieval of the question's graph document by dense retrieval: hit@1 {ret['document_hit@1']:.3f}, "
             f"hit@5 {ret['document_hit@5']:.3f}; PCST subgraphs connected {ret['connected']:.0%}, within budget "
             f"{ret['within_budget']:.0%}. LLM rows: {', '.join(sorted(set(map(str, r['llm'].values()))))}.", ""]
    lines += provenance([name], "hopgraph bench-graphqa ../shared/data/expla-graphs")
    return Section("Graph question answering", (name,), lines)


def ray_identity() -> Section:
    name = "ray_identity.json"
    r = load(name)
    rows = [[f"`{m}`", str(v["queries"]), str(v["identical"])] for m, v in r["modes"].items()]
    local = {**r["counts"]["local"]["graph"], **r["counts"]["local"]["vectors"]}
    ray = {**r["counts"]["ray"]["graph"], **r["counts"]["ray"]["vectors"]}
    ids_differ = [d for d in r["differences"] if d.startswith("ids")]
    doctor = "clean on both" if not (r["doctor"]["local"] or r["doctor"]["ray"]) else "NOT clean"
    lines = [f"`hopgraph ingest --ray` on a two-node Ray cluster on loopback ({', '.join(r['ray_nodes'])}) against "
             f"`hopgraph ingest` of {r['dataset']} ({r['documents']:,} documents), each into fresh stores: the top "
             f"{r['top_k']} chunks of every query in every mode `hopgraph eval` runs on a text corpus.", "",
             *table(["mode", "queries", "identical rankings"], rows),
             f"Graph and vector counts {'equal' if local == ray else 'DIFFER'} "
             f"({', '.join(f'{k} {v:,}' for k, v in local.items() if v)}); the ids of every document, chunk, entity, "
             f"relation and vector point {'equal' if not ids_differ else 'DIFFER'}; `hopgraph doctor` {doctor}. "
             f"Ingest wall time (the CLI process, model loading included): local {r['ingest']['local']['wall_s']} s, "
             f"Ray {r['ingest']['ray']['wall_s']} s." + (f" Commit `{r['commit']}`." if "commit" in r else ""), ""]
    lines += provenance([name], "python -m benchmarks.ray_identity")
    return Section("Ray ingest against a local ingest", (name,), lines)


def global_questions() -> Section:
    name = "podcasts_global.json"
    r = load(name)
    base = r["baseline"]
    gains = {(g["mode"], g["metric"]): f"{g['mean']:+.2f} [{g['low']:+.2f}, {g['high']:+.2f}]" for g in r["gains"]}
    rows = [[f"`{m}`", f"{v['groups@10']:.2f}", f"{v['communities@10']:.1f}",
             gains.get((m, "groups@10"), "—"), gains.get((m, "communities@10"), "—"), f"{v['p50_ms']:.0f}"]
            for m, v in r["modes"].items()]
    routed = ", ".join(f"{k} {n}" for k, n in sorted(r["modes"].get("auto", {}).get("routed", {}).items()))
    lines = [f"The {r['questions']} global questions of {r['dataset']} (about the whole corpus; no gold answers): "
             "how much of the corpus each mode's top 10 covers, as distinct episodes (a document's title without "
             "its part number) and distinct communities of the entities its passages mention; gains against "
             f"`{base}` with their paired bootstrap 95% interval. `auto` routed: {routed}.", "",
             *table(["mode", "episodes@10", "communities@10", f"episodes vs {base}", f"communities vs {base}",
                     "p50 ms"], rows)]
    lines += provenance([name], "python -m benchmarks.global_coverage ../shared/data/podcasts --data-dir D "
                        "--modes dense,bm25,rrf,graph,local,global,hybrid,mix,auto --out podcasts_global.json")
    return Section("Global questions (podcasts)", (name,), lines)


def other_figures() -> Section:
    rows = [[what, figure, f"`{command}`", date, machine] for what, figure, command, date, machine in OTHER_FIGURES]
    kept = tuple(sorted({m for _, _, command, _, _ in OTHER_FIGURES
                         for m in re.findall(r"benchmarks/reports/([\w.-]+)", command)}))
    lines = ["Figures of the other scripts in `benchmarks/` (they print ratios against baselines of the same run; "
             "where a script writes a report file, its command names it).", "",
             *table(["what", "figure", "command", "date", "machine"], rows)]
    return Section("Ingest, freshness and scale", kept, lines)


SECTIONS = (conversations, stemming, embedders, current_build, multi_hop, ablations, global_questions, images, raptor,
            sections, community_vectors, diversity, graph_qa, ray_identity, memory, other_figures)


def cited_reports() -> set[str]:
    """The report files RESULTS.md is made from."""
    return {name for make in SECTIONS for name in make().reports}


def render() -> str:
    out = ["# Benchmark results", "",
           "Generated by `python -m benchmarks.results` from the reports in `benchmarks/reports/` (per-query "
           "rankings written by `hopgraph eval --out`, gzipped); do not edit by hand. Figures are percentages; a "
           "gain is the paired bootstrap mean with its 95% interval against a baseline measured in the same run.",
           ""]
    for make in SECTIONS:
        section = make()
        out += [f"## {section.title}", "", *section.lines]
    return "\n".join(out).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 when RESULTS.md differs from the reports")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        same = RESULTS.is_file() and RESULTS.read_text(encoding="utf-8") == text
        print("RESULTS.md is current" if same else "RESULTS.md differs: run python -m benchmarks.results")
        return 0 if same else 1
    RESULTS.write_text(text, encoding="utf-8")
    print(f"wrote {RESULTS} from {len(cited_reports())} reports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
