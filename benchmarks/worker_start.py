"""Starting the spaCy extraction workers of a local ingest and parsing one batch in them, for the shipped
pipeline (loaded without PyTorch, its ``meta.json`` requiring spaCy alone) or for the same pipeline copied
to a folder whose ``meta.json`` also requires ``spacy-transformers`` (so the workers load PyTorch, as every
worker did before): the cost of PyTorch in a worker, everything else equal.

Each of ``--runs`` runs starts ``--processes`` new workers (``ExtractionWorker.start``), parses the first
``--passages`` hotpotqa-100 passages in them and stops them, the two cases alternating; prints, per case,
the median, min and max seconds of the start and of the parse, the largest peak RSS of a worker (its
``VmHWM``: Linux), and whether both cases extracted the same entities, mentions and
relations.

    python -m benchmarks.worker_start [--runs 5] [--processes 1] [--passages 50]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.common import status_mb
from benchmarks.paths import SHARED_DATA
from hopgraph.core.records import Chunk
from hopgraph.core.settings import ExtractionSettings
from hopgraph.ingest.extraction_worker import ExtractionWorker, torch_free

CORPUS = SHARED_DATA / "hotpotqa-100" / "corpus.jsonl"


def copy_needing_torch(model: str, into: Path) -> str:
    """``model`` written to ``into`` (spaCy's own ``to_disk``, in a child: this process never imports
    spaCy), its ``meta.json`` requiring ``spacy-transformers`` too."""
    import subprocess
    import sys

    code = f"import sys; sys.modules['torch'] = None; import spacy; spacy.load({model!r}).to_disk({str(into)!r})"
    subprocess.run([sys.executable, "-c", code], check=True)
    meta = json.loads((into / "meta.json").read_text())
    meta["requirements"] = [*meta.get("requirements", []), "spacy-transformers>=1.3"]
    (into / "meta.json").write_text(json.dumps(meta))
    return str(into)


def run_once(cfg: ExtractionSettings, processes: int, chunks: list[Chunk]) -> tuple[float, float, float, str]:
    """(start seconds, parse seconds, a worker's peak MB, the extraction as JSON) of one pool of new workers."""
    workers = ExtractionWorker(cfg, processes=processes)
    t0 = time.perf_counter()
    workers.start()
    t1 = time.perf_counter()
    found = workers.submit(chunks, {}).result()
    t2 = time.perf_counter()
    peak_mb = max(status_mb("VmHWM", p.pid) or 0.0 for p in multiprocessing.active_children() if p.pid)  # workers
    workers.close()
    dump = {"entities": {k: v.model_dump() for k, v in sorted(found.entities.items())},
            "mentions": [m.model_dump() for m in found.mentions],
            "relations": [r.model_dump() for r in found.relations]}
    return t1 - t0, t2 - t1, peak_mb, json.dumps(dump, sort_keys=True, default=str)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--passages", type=int, default=50)
    args = parser.parse_args()
    lines = CORPUS.read_text(encoding="utf-8").splitlines()[: args.passages]
    chunks = [Chunk(id=f"c{i:03d}", document_id=f"d{i}", text=json.loads(line)["text"], ord=0)
              for i, line in enumerate(lines)]
    shipped = ExtractionSettings()
    with tempfile.TemporaryDirectory() as tmp:
        copy = copy_needing_torch(shipped.spacy_model, Path(tmp) / "pipeline")
        cases = {"without torch": shipped, "with torch": shipped.model_copy(update={"spacy_model": copy})}
        runs: dict[str, list[tuple[float, float, float, str]]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, cfg in cases.items():
                runs[name].append(run_once(cfg, args.processes, chunks))
    same = len({dump for case in runs.values() for *_, dump in case}) == 1
    for name, cfg in cases.items():
        start, parse, peak, _ = zip(*runs[name], strict=True)
        print(json.dumps({"case": name, "torch_free": torch_free(cfg.spacy_model), "same_extraction": same,
                          "entities": len(json.loads(runs[name][0][3])["entities"]), "start_s": _spread(start),
                          "parse_s": _spread(parse), "worker_peak_mb": round(max(peak))}))


def _spread(values: tuple[float, ...]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 2), "min": round(min(values), 2), "max": round(max(values), 2)}


if __name__ == "__main__":
    main()
