"""Ray ingest identity: a BEIR corpus ingested with ``hopgraph ingest`` and with ``hopgraph ingest --ray`` ends
in the same stores and ranks every query the same.

The corpus is ingested twice, each time by the CLI as its own process, into a fresh data directory with its own
embedded ArcadeDB server (its own Bolt and HTTP ports) and qdrant-edge shard: once with the local engine, once
with ``--ray`` on a two-node Ray cluster started here on the loopback range (a head at 127.0.0.2 and a worker
node at 127.0.0.3, one CPU each, as in tests/test_ray_ingest.py). Both are then opened and compared:

- graph counts (nodes per label, edges per type) and vector point counts per collection;
- the ids of every Document, Chunk and Entity node, every RELATED edge and every vector point;
- ``hopgraph doctor``'s checks (both must be clean);
- the top-10 chunk ids of every query of the set in every mode ``hopgraph eval`` runs on a text corpus (taken
  from the mode registry: none needs an LLM or CLIP), stage caps off so the machine's load cannot degrade one;
  as ``hopgraph eval`` does, the RAPTOR tree is built (``hopgraph tree``) before raptor runs.

It prints a table (mode, queries, identical rankings), writes the report to
``benchmarks/reports/ray_identity.json`` and exits 1 when anything differs.

    python -m benchmarks.ray_identity [DATASET] [--out benchmarks/reports/ray_identity.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.common import commit, free_port
from benchmarks.paths import SHARED_DATA
from hopgraph.app.doctor import diagnose
from hopgraph.app.platform import Platform
from hopgraph.core.settings import GraphSettings, RetrievalSettings, Settings
from hopgraph.evaluation.evaluate import load_dataset
from hopgraph.graphdb.bolt.arcadedb_server import EmbeddedArcadeDB
from hopgraph.retrieval.registry import REGISTRY, TEXT

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = SHARED_DATA / "hotpotqa-100"
DEFAULT_OUT = REPO / "benchmarks" / "reports" / "ray_identity.json"
TOP_K = 10
#: the loopback nodes of the Ray cluster: head, worker
NODES = ("127.0.0.2", "127.0.0.3")
#: a ranking must not depend on the machine's load (see tests/processes.py)
NO_CAPS_ENV = {"HOPGRAPH_RETRIEVAL__STAGE_CAP_MS": "none"}


def text_modes() -> list[str]:
    """The modes ``hopgraph eval`` runs on a text corpus (the registry's list, without ablations)."""
    return [e.name for e in REGISTRY.entries.values() if TEXT in e.evaluated_on]


@contextmanager
def ray_cluster() -> Iterator[str]:
    """A head and a worker node on the loopback range, one CPU each; yields the head's address."""
    os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
    from ray.cluster_utils import Cluster

    node: dict[str, Any] = {"num_cpus": 1, "object_store_memory": 128 * 2**20}
    c = Cluster(initialize_head=True, head_node_args={"node_ip_address": NODES[0], "include_dashboard": False, **node})
    try:
        c.add_node(node_ip_address=NODES[1], **node)
        c.wait_for_nodes()
        yield str(c.address)
    finally:
        c.shutdown()


def _settings(data_dir: Path, graph: GraphSettings) -> Settings:
    return Settings(data_dir=data_dir, graph=graph, retrieval=RetrievalSettings(stage_cap_ms=None))


def ingest_cli(corpus: Path, data_dir: Path, graph: GraphSettings, ray_address: str | None) -> dict[str, Any]:
    """``hopgraph ingest CORPUS [--ray=ADDRESS]`` as its own process; its wall time and last output lines."""
    config = data_dir.parent / f"{data_dir.name}.toml"
    config.write_text("", encoding="utf-8")  # defaults, whatever hopgraph.toml the working dir holds
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "HOPGRAPH_CONFIG": str(config),
           "HOPGRAPH_DATA_DIR": str(data_dir), "HOPGRAPH_GRAPH__BOLT_PORT": str(graph.bolt_port),
           "HOPGRAPH_GRAPH__HTTP_PORT": str(graph.http_port), "PYTHONPATH": str(REPO), "COLUMNS": "200", **NO_CAPS_ENV}
    cmd = [sys.executable, "-m", "hopgraph.cli", "ingest", "--no-progress", str(corpus)]
    if ray_address is not None:
        cmd.append(f"--ray={ray_address}")
    t = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-4000:]}")
    return {"command": " ".join(["hopgraph", *cmd[3:]]), "wall_s": round(wall, 1),
            "output": done.stdout.strip().splitlines()[-3:]}


def _ids(p: Platform) -> dict[str, list[str]]:
    ids = {label: sorted(str(r["id"]) for r in p.browser.export_nodes(label))
           for label in ("Document", "Chunk", "Entity")}
    ids["RELATED"] = sorted(str(r["id"]) for r in p.browser.export_edges("RELATED"))
    for collection in p.status()["vectors"]:
        ids[f"vectors:{collection}"] = sorted(p.vectors.export(collection)[0])
    return ids


def snapshot(data_dir: Path, graph: GraphSettings, queries: dict[str, str], modes: list[str]) -> dict[str, Any]:
    """Counts, ids, doctor's failed checks and the top-10 chunk ids per (mode, query) of one ingest;
    its graph server is stopped afterwards."""
    s = _settings(data_dir, graph)
    try:
        with Platform(s) as p:
            if any(REGISTRY.settings_for(m, s.retrieval)[0] == "raptor" for m in modes):
                p.update_tree()  # as `hopgraph eval` does before it runs raptor
            st = p.status()
            out: dict[str, Any] = {"graph": st["graph"], "vectors": st["vectors"], "ids": _ids(p),
                                   "doctor": [f"{c.name}: {c.detail}" for c in diagnose(p) if not c.ok]}
            t = time.perf_counter()
            out["rankings"] = {m: {qid: [r.citation.chunk_id for r in p.query(text, mode=m, top_k=TOP_K).results]
                                   for qid, text in queries.items()} for m in modes}
            out["query_s"] = round(time.perf_counter() - t, 1)
            return out
    finally:
        EmbeddedArcadeDB(s.graph_dir, graph).stop()


def compare(local: dict[str, Any], ray: dict[str, Any]) -> dict[str, Any]:
    """What differs between the two snapshots, and per mode how many queries rank identically."""
    diffs: list[str] = []
    for part in ("graph", "vectors"):
        for k in sorted(set(local[part]) | set(ray[part])):
            if local[part].get(k) != ray[part].get(k):
                diffs.append(f"{part} {k}: local {local[part].get(k)} != ray {ray[part].get(k)}")
    for k in sorted(set(local["ids"]) | set(ray["ids"])):
        a, b = set(local["ids"].get(k, [])), set(ray["ids"].get(k, []))
        if a != b:
            diffs.append(f"ids {k}: {len(a - b)} only local, {len(b - a)} only ray (e.g. {sorted(a ^ b)[:3]})")
    for name, got in (("local", local), ("ray", ray)):
        diffs += [f"doctor ({name}): {c}" for c in got["doctor"]]
    modes: dict[str, dict[str, Any]] = {}
    for m, ranked in local["rankings"].items():
        differ = [q for q, top in ranked.items() if ray["rankings"][m].get(q) != top]
        modes[m] = {"queries": len(ranked), "identical": len(ranked) - len(differ), "differ": differ}
        if differ:
            diffs.append(f"rankings {m}: {len(differ)} of {len(ranked)} queries differ (e.g. {differ[:3]})")
    return {"modes": modes, "differences": diffs}


def _ingest_and_snapshot(corpus: Path, data_dir: Path, queries: dict[str, str], modes: list[str],
                         ray_address: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    graph = GraphSettings(bolt_port=free_port(), http_port=free_port())
    run = ingest_cli(corpus, data_dir, graph, ray_address)
    print(f"  {run['command']}: {run['wall_s']} s; {run['output'][-1] if run['output'] else ''}", flush=True)
    return run, snapshot(data_dir, graph, queries, modes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", nargs="?", type=Path, default=DEFAULT_DATASET,
                    help=f"A BEIR-layout folder (default {DEFAULT_DATASET}).")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"The JSON report (default {DEFAULT_OUT}).")
    ap.add_argument("--keep", type=Path, default=None, help="Keep both data directories under this folder.")
    args = ap.parse_args()
    ds = load_dataset(args.dataset)
    modes = text_modes()
    with tempfile.TemporaryDirectory(prefix="hopgraph-ray-identity-") as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        local_run, local = _ingest_and_snapshot(ds.corpus, root / "local", ds.queries, modes, None)
        with ray_cluster() as address:
            ray_run, ray = _ingest_and_snapshot(ds.corpus, root / "ray", ds.queries, modes, address)
    result = compare(local, ray)
    print(f"ray identity: {args.dataset.name}, {local['graph'].get('Document', 0)} documents, {len(ds.queries)} "
          f"queries, top {TOP_K}; local ingest {local_run['wall_s']} s, ray ingest ({len(NODES)} nodes) "
          f"{ray_run['wall_s']} s")
    print(f"{'mode':<10} {'queries':>7} {'identical rankings':>19}")
    for m, r in result["modes"].items():
        print(f"{m:<10} {r['queries']:>7} {r['identical']:>19}")
    print("counts:", ", ".join(f"{k} {v}" for k, v in {**local["graph"], **local["vectors"]}.items()))
    for d in result["differences"]:
        print("DIFFERS:", d)
    report = {"commit": commit(), "dataset": args.dataset.name, "documents": local["graph"].get("Document", 0),
              "queries": len(ds.queries), "top_k": TOP_K, "ray_nodes": list(NODES), "cpu_count": os.cpu_count(),
              "ingest": {"local": local_run, "ray": ray_run},
              "counts": {"local": {"graph": local["graph"], "vectors": local["vectors"]},
                         "ray": {"graph": ray["graph"], "vectors": ray["vectors"]}},
              "ids": {k: len(v) for k, v in local["ids"].items()},
              "doctor": {"local": local["doctor"], "ray": ray["doctor"]},
              "query_s": {"local": local["query_s"], "ray": ray["query_s"]},
              **result, "identical": not result["differences"]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"report: {args.out}")
    raise SystemExit(0 if report["identical"] else 1)


if __name__ == "__main__":
    main()
