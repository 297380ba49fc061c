"""RAPTOR clustering in a new process: UMAP's numba functions loaded from numba's cache, against the same
process compiling them (as umap-learn does when nothing enables its cache).

Each run is a fresh ``python`` process that clusters ``--points`` random vectors with ``soft_clusters``
(the RAPTOR tree's clustering); ``compiled`` imports umap as it was imported before its functions were
cached (pynndescent's functions, which pynndescent caches itself, come from the cache in both cases). One
untimed run first fills the cache. Prints the median, min and max seconds of the clustering call and of
the whole process, and the ratio of the two cases.

    python -m benchmarks.raptor_cold [--runs 3] [--points 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

#: the child process: cluster random vectors, print the clustering call's seconds
CHILD = """
import json, sys, time
import numpy as np
import importlib
from hopgraph.core.summary_settings import RaptorSettings
from hopgraph.ingest import raptor_cluster
from hopgraph.ingest.raptor_cluster import soft_clusters
if sys.argv[1] == "compiled":
    raptor_cluster._umap = lambda: importlib.import_module("umap")
vecs = np.random.default_rng(0).normal(size=(int(sys.argv[2]), 384)).astype(np.float32)
t = time.perf_counter()
soft_clusters(vecs, RaptorSettings())
print(json.dumps({"cluster_s": time.perf_counter() - t}))
"""


def run_once(case: str, points: int) -> tuple[float, float]:
    """(clustering seconds, whole-process seconds) of one fresh process."""
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, case, str(points)], capture_output=True, text=True,
                         timeout=900)
    took = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"{case} run failed ({out.returncode}): {out.stderr[-2000:]}")
    return float(json.loads(out.stdout.splitlines()[-1])["cluster_s"]), took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="processes per case (default 3)")
    parser.add_argument("--points", type=int, default=200, help="vectors clustered (default 200)")
    args = parser.parse_args()
    run_once("cached", args.points)  # fills the cache (and the OS file cache)
    times: dict[str, list[tuple[float, float]]] = {"compiled": [], "cached": []}
    for _ in range(args.runs):  # alternating, so that both cases see the same machine
        for case in times:
            times[case].append(run_once(case, args.points))
    print(f"RAPTOR clustering of {args.points} vectors in a fresh process, {args.runs} runs each")
    print(f"{'case':10} {'cluster s':>10} {'min':>6} {'max':>6} {'process s':>10}")
    med = {}
    for case, samples in times.items():
        cluster = [c for c, _ in samples]
        med[case] = statistics.median(cluster)
        print(f"{case:10} {med[case]:10.2f} {min(cluster):6.2f} {max(cluster):6.2f} "
              f"{statistics.median(p for _, p in samples):10.2f}")
    print(f"compiled / cached: {med['compiled'] / med['cached']:.1f}x")


if __name__ == "__main__":
    main()
