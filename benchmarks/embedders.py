"""Whether a larger embedder should replace the default: retrieval quality and ingest cost of two
sentence-transformers models (the default all-MiniLM-L6-v2 and, by default, all-mpnet-base-v2) on the
shared developer sets, each model in a data directory and an embedded ArcadeDB server of its own.

``run``: per set and per model, in turn (never two at once), one timed ingest of the set's corpus into
the evaluation index ``hopgraph eval`` uses (models loaded before the clock starts; documents per second,
the CPU seconds of the ingesting process, whose threads embed and write, extraction workers not counted,
and the ingest report's stage seconds), then ``hopgraph eval`` on it (stage caps off, as eval does by
default), which finds the corpus ingested. A pair already measured is kept (``--force`` redoes it).
``embed``: chunks per second of each model alone on a sample of chunks of the sets' corpora, chunked as
an evaluation chunks them and batched as the project batches (``embedder.batch_size``), the models
alternating, the fastest of ``--repeat`` runs kept. ``report``: per set and per question type, the
second model minus the first for ``dense`` and ``graph`` (R@5 and R@2, paired bootstrap 95% intervals
over the same queries, ``evaluation.stats.paired_interval``), with the ingest and embedding
costs, written to ``--out`` with the commands that produced them. ``stop``: stop the graph servers
``run`` started.

    python -m benchmarks.embedders run --sets locomo-dev,lihua-dev [--work /tmp/emb]
    python -m benchmarks.embedders embed [--chunks 300] [--repeat 2]
    python -m benchmarks.embedders report [--out benchmarks/reports/embedders.json]
    python -m benchmarks.embedders stop
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import commit
from benchmarks.paths import SHARED_DATA

SETS = ("locomo-dev", "lihua-dev", "hotpotqa-100", "musique-100", "2wiki-dev-500")
MODES = "dense,bm25,rrf,graph,mix,auto"
COMPARED = {"dense": ("R@5", "R@2"), "graph": ("R@5", "R@2")}
#: the base and the candidate: the embedder.model value and the ports of their own graph server
MODELS: dict[str, dict[str, Any]] = {
    "minilm": {"model": "all-MiniLM-L6-v2", "bolt": 7712, "http": 2512},
    "mpnet": {"model": "all-mpnet-base-v2", "bolt": 7711, "http": 2511},  # the extra `mpnet`
}
ROOT = Path(__file__).resolve().parents[1]


def model_env(name: str, work: Path, config: Path) -> dict[str, str]:
    """The environment of one model's processes: its data directory, ports and ONNX folder."""
    m = MODELS[name]
    return {**os.environ, "HF_HUB_OFFLINE": "1", "HOPGRAPH_CONFIG": str(config),
            "HOPGRAPH_DATA_DIR": str(work / name), "HOPGRAPH_EMBEDDER__MODEL": str(m["model"]),
            "HOPGRAPH_EMBEDDER__ONNX_DIR": str(work / "onnx"),
            "HOPGRAPH_GRAPH__BOLT_PORT": str(m["bolt"]), "HOPGRAPH_GRAPH__HTTP_PORT": str(m["http"])}


def ingest_one(dataset: Path, out: Path) -> None:
    """One timed ingest of ``dataset`` into its evaluation index (the settings of this process's
    environment, as ``hopgraph eval`` reads them); the figures go to ``out``."""
    from hopgraph.app.platform import Platform
    from hopgraph.cli.common import load_settings
    from hopgraph.cli.gnn import eval_settings
    from hopgraph.evaluation.evaluate import load_dataset

    ds = load_dataset(dataset)
    s = eval_settings(load_settings(), dataset, len(ds.queries))
    with Platform(s) as p:
        p.embedder.embed(["warm"])
        p.extractor_warmup()
        load = os.getloadavg()[0]
        t, cpu = time.perf_counter(), time.process_time()
        report = p.ingest([ds.corpus])
        wall, cpu = time.perf_counter() - t, time.process_time() - cpu
    found = {"model": s.embedder.model, "dim": p.embedder.dim, "seconds": round(wall, 2),
             "cpu_seconds_main_process": round(cpu, 2),
             "documents": report.documents_ingested, "unchanged": report.documents_unchanged,
             "chunks": report.chunks, "docs_per_s": round(report.documents_ingested / wall, 3),
             "load_average_start": load, "load_average_end": os.getloadavg()[0],
             "stage_seconds": {k: round(v, 2) for k, v in sorted(report.stage_seconds.items(), key=lambda kv: -kv[1])}}
    out.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    print(f"ingest {dataset.name} ({s.embedder.model}): {report.documents_ingested} docs, {report.chunks} chunks in "
          f"{wall:.1f} s = {found['docs_per_s']:.2f} docs/s", flush=True)


def run(args: argparse.Namespace) -> None:
    """Ingest and evaluate every set with every model, one process at a time."""
    for name in args.sets.split(","):
        dataset = args.data / name
        for model in MODELS:
            folder = args.work / "reports"
            folder.mkdir(parents=True, exist_ok=True)
            timing, evaluated = folder / f"{name}.{model}.ingest.json", folder / f"{name}.{model}.eval.json"
            if timing.is_file() and evaluated.is_file() and not args.force:
                print(f"{name} / {model}: measured already ({evaluated})", flush=True)
                continue
            env = model_env(model, args.work, args.config)
            py = sys.executable
            subprocess.run([py, "-m", "benchmarks.embedders", "_ingest", str(dataset), str(timing)],
                           env=env, cwd=ROOT, check=True)
            subprocess.run([py, "-m", "hopgraph.cli", "eval", str(dataset), "--modes", MODES, "--out", str(evaluated)],
                           env=env, cwd=ROOT, check=True, stdout=(folder / f"{name}.{model}.eval.log").open("w"),
                           stderr=subprocess.STDOUT)
            print(f"{name} / {model}: evaluated ({evaluated})", flush=True)


def stop(args: argparse.Namespace) -> None:
    """Stop each model's embedded graph server (``hopgraph db stop`` in its environment)."""
    for model in MODELS:
        subprocess.run([sys.executable, "-m", "hopgraph.cli", "db", "stop"], cwd=ROOT, check=False,
                       env=model_env(model, args.work, args.config))


def sample_chunks(data: Path, n: int) -> list[str]:
    """About ``n`` chunks, as many from each set's corpus, chunked as an evaluation chunks them."""
    from hopgraph.core.settings import Settings
    from hopgraph.ingest.chunking import Chunker
    from hopgraph.vectors.embedders import SentenceTransformerEmbedder

    counter = SentenceTransformerEmbedder(MODELS["minilm"]["model"], device="cpu")
    c = Settings().chunking
    chunker = Chunker(counter.count_tokens, 256, 32, c.sections)  # eval_settings' chunking
    out: list[str] = []
    for name in SETS:
        mine: list[str] = []
        with (data / name / "corpus.jsonl").open(encoding="utf-8") as fh:
            for i, line in enumerate(fh):
                rec = json.loads(line)
                text = f"{rec.get('title') or ''}\n{rec['text']}".strip()
                mine += [ch.text for ch in chunker.chunk_document(f"d{i}", text)[1]]
                if len(mine) >= n // len(SETS):
                    break
        out += mine[: n // len(SETS)]
    return out


def embed(args: argparse.Namespace) -> None:
    """Chunks per second of each model alone (the fastest of ``--repeat`` alternating runs)."""
    from hopgraph.core.settings import EmbedderSettings
    from hopgraph.vectors.embedders import make_embedder

    os.environ["HF_HUB_OFFLINE"] = "1"
    chunks = sample_chunks(args.data, args.chunks)
    load = os.getloadavg()[0]
    runs: dict[str, list[float]] = {m: [] for m in MODELS}
    batch: dict[str, int | None] = {}
    for _ in range(args.repeat):
        for name, m in MODELS.items():
            emb = make_embedder(EmbedderSettings(model=str(m["model"]), device="cpu", onnx_queries=False))
            emb.embed(["warm"])
            t = time.perf_counter()
            emb.embed(chunks)
            runs[name].append(time.perf_counter() - t)
            batch[name] = getattr(emb, "batch_size", None)
            print(f"  {name}: {len(chunks)} chunks in {runs[name][-1]:.1f} s", flush=True)
    rates = {m: round(len(chunks) / min(r), 2) for m, r in runs.items()}
    found = {"chunks": len(chunks), "repeat": args.repeat, "seconds": runs, "chunks_per_s": rates,
             "batch_size": batch, "ratio_minilm_over_mpnet": round(rates["minilm"] / rates["mpnet"], 2),
             "load_average_start": load, "load_average_end": os.getloadavg()[0]}
    (args.work / "reports").mkdir(parents=True, exist_ok=True)
    (args.work / "reports" / "embed.json").write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(rates))


def compare(base: dict[str, Any], cand: dict[str, Any], groups: dict[str, str]) -> list[dict[str, Any]]:
    """Per question type (and ``all``): each compared mode's metrics under both models and the paired
    difference (candidate minus base, points) with its 95% bootstrap interval."""
    from hopgraph.evaluation.stats import paired_interval

    rows = []
    for group in ["all", *sorted(set(groups.values()))]:
        row: dict[str, Any] = {"type": group}
        for mode, metrics in COMPARED.items():
            a = {q["id"]: q["metrics"] for q in cand["queries"][mode]}
            b = {q["id"]: q["metrics"] for q in base["queries"][mode]}
            ids = [q for q in b if q in a and (group == "all" or groups.get(q) == group)]
            row["n"] = len(ids)
            for metric in metrics:
                mean, low, high = paired_interval([a[q][metric] for q in ids], [b[q][metric] for q in ids])
                row[f"{mode} {metric}"] = {
                    "minilm": round(100 * sum(b[q][metric] for q in ids) / max(len(ids), 1), 1),
                    "mpnet": round(100 * sum(a[q][metric] for q in ids) / max(len(ids), 1), 1),
                    "diff": round(mean, 1), "ci95": [round(low, 1), round(high, 1)]}
        rows.append(row)
    return rows


def report(args: argparse.Namespace) -> None:
    """Gather what ``run`` and ``embed`` measured into one report."""
    from hopgraph.evaluation.evaluate import load_dataset

    folder = args.work / "reports"
    sets: dict[str, Any] = {}
    for name in SETS:
        paths = {m: folder / f"{name}.{m}.eval.json" for m in MODELS}
        if not all(p.is_file() for p in paths.values()):
            continue
        evals = {m: json.loads(p.read_text(encoding="utf-8")) for m, p in paths.items()}
        ingest = {m: json.loads((folder / f"{name}.{m}.ingest.json").read_text(encoding="utf-8")) for m in MODELS}
        sets[name] = {"ingest": ingest, "all_modes_r5": {m: {k: v["metrics"]["R@5"] for k, v in e["modes"].items()
                                                             if "metrics" in v} for m, e in evals.items()},
                      "by_type": compare(evals["minilm"], evals["mpnet"], load_dataset(args.data / name).groups)}
    embedding = folder / "embed.json"
    py = "python -m benchmarks.embedders"
    out = {"commit": commit(),
           "date": time.strftime("%Y-%m-%d"), "machine": platform.machine(), "cores": os.cpu_count(),
           "models": {m: v["model"] for m, v in MODELS.items()},
           "commands": {"run": f"{py} run --sets {','.join(sets)} --work {args.work}",
                        "per pair": f"{py} _ingest ../shared/data/<set> <timing>.json; python -m hopgraph.cli eval "
                                    f"../shared/data/<set> --modes {MODES} --out <set>.<model>.eval.json "
                                    "(env: HOPGRAPH_EMBEDDER__MODEL, HOPGRAPH_DATA_DIR, ports, see model_env)",
                        "embed": f"{py} embed --work {args.work}", "report": f"{py} report --out {args.out}"},
           "eval_reports": str(folder), "bootstrap": "paired_interval: 2000 resamples of queries, seed 0, percentile",
           "embed_only": json.loads(embedding.read_text(encoding="utf-8")) if embedding.is_file() else None,
           "sets": sets}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"report: {args.out} ({', '.join(sets) or 'no set measured'})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("run", "embed", "report", "stop", "_ingest"))
    ap.add_argument("rest", nargs="*", help="_ingest: the data set folder and the timing file.")
    ap.add_argument("--sets", default=",".join(SETS), help="Comma-separated shared data sets (run).")
    ap.add_argument("--work", type=Path, default=Path("/tmp/emb"), help="Data directories and eval reports.")
    ap.add_argument("--config", type=Path, default=Path("/tmp/cold/empty.toml"), help="HOPGRAPH_CONFIG (empty).")
    ap.add_argument("--data", type=Path, default=SHARED_DATA)
    ap.add_argument("--chunks", type=int, default=300, help="Chunks embedded by each model (embed).")
    ap.add_argument("--repeat", type=int, default=2, help="Alternating runs of each model (embed).")
    ap.add_argument("--force", action="store_true", help="Measure pairs measured already again (run).")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "reports" / "embedders.json")
    args = ap.parse_args()
    if args.command == "_ingest":
        ingest_one(Path(args.rest[0]), Path(args.rest[1]))
        return
    if not args.config.exists():
        args.config.parent.mkdir(parents=True, exist_ok=True)
        args.config.write_text("", encoding="utf-8")
    {"run": run, "embed": embed, "report": report, "stop": stop}[args.command](args)


if __name__ == "__main__":
    main()
