"""Graph write and 2-hop read speed of the Bolt adapter on the embedded ArcadeDB.

Loads a synthetic graph (default 100k entities, 300k relations; targets drawn with a mild
preferential skew, so there are hubs) through the graph store (``open_graph_store``) and prints nodes/s,
edges/s and 2-hop latency (p50/p95, 10 random seeds per query). The JVM is warmed up first on a throwaway
database (a serving process is warm). Baselines measured in the same run on the same server:
the raw driver running the same UNWIND statement without the adapter, and one row per transaction.

    python -m benchmarks.graph_write [--entities 100000] [--relations 300000] [--batch 5000]
"""

from __future__ import annotations

import argparse
import os
import random
from typing import Any, Protocol

import neo4j

from benchmarks.common import percentiles, throwaway_arcadedb, timed
from hopgraph.core.records import Entity, Relation
from hopgraph.core.settings import GraphSettings, Settings
from hopgraph.graphdb.bolt.cypher import statements as cypher
from hopgraph.graphdb.factory import open_graph_store
from hopgraph.graphdb.protocols import GraphAdmin, GraphBrowser, IngestWriter

TYPES = ["works_at", "born_in", "part_of", "cooccurs", "located_in", "member_of"]


def synthetic(n_ent: int, n_rel: int, seed: int = 7) -> tuple[list[Entity], list[Relation]]:
    """Entities and relations; 20% of relation targets come from the 1% most popular entities."""
    rng = random.Random(seed)
    ents = [Entity(id=f"e{i}", name=f"Entity {i}", type=rng.choice(["PERSON", "ORG", "GPE"])) for i in range(n_ent)]
    hubs = max(1, n_ent // 100)
    rels = []
    for j in range(n_rel):
        a = rng.randrange(n_ent)
        b = rng.randrange(hubs) if rng.random() < 0.2 else rng.randrange(n_ent)
        rels.append(Relation(id=f"r{j}", source_id=f"e{a}", target_id=f"e{b}", type=rng.choice(TYPES),
                             chunk_ids=[f"c{j % 5000}"]))
    return ents, rels


class _Measured(IngestWriter, GraphAdmin, GraphBrowser, Protocol):
    """The roles measured: entity and relation writes, counts, k-hop reads."""


def _store(cfg: GraphSettings, tmp: Any, database: str, batch: int) -> _Measured:
    return open_graph_store(Settings(data_dir=tmp / database,
                                     graph=cfg.model_copy(update={"database": database, "batch_size": batch})))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, default=100_000)
    ap.add_argument("--relations", type=int, default=300_000)
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()

    ents, rels = synthetic(args.entities, args.relations)
    with throwaway_arcadedb() as (info, cfg, tmp):
        warm = _store(cfg, tmp, "warmup", args.batch)
        w_ents, w_rels = synthetic(20_000, 40_000, seed=99)
        warm.upsert_entities(w_ents)
        warm.upsert_relations(w_rels)
        warm.close()

        store = _store(cfg, tmp, "bench", args.batch)
        t_nodes = timed(lambda: store.upsert_entities(ents))
        t_edges = timed(lambda: store.upsert_relations(rels))
        counts = store.counts()
        assert counts["Entity"] == args.entities and counts["RELATED"] == args.relations, counts

        _store(cfg, tmp, "raw", args.batch).close()  # migrated, empty
        n_sub = min(20_000, args.entities)
        rows = [{"id": e.id, "name": e.name, "type": e.type, "description": ""} for e in ents[:n_sub]]
        with neo4j.GraphDatabase.driver(info.uri, auth=("root", info.password)) as drv, \
                drv.session(database="raw") as ses:
            def write(tx: neo4j.ManagedTransaction, batch: list[dict[str, Any]]) -> None:
                tx.run(cypher.UPSERT_ENTITIES, rows=batch).consume()

            def raw() -> None:
                for i in range(0, n_sub, args.batch):
                    ses.execute_write(write, rows[i : i + args.batch])

            def single() -> None:
                for r in rows[:1000]:
                    ses.execute_write(write, [{**r, "id": r["id"] + "s"}])
            t_raw, t_single = timed(raw), timed(single)

        rng = random.Random(1)
        lat: list[float] = []
        sizes: list[int] = []
        for _ in range(args.queries):
            seeds = [f"e{rng.randrange(args.entities)}" for _ in range(10)]
            out: list[str] = []

            def hop(seeds: list[str] = seeds, out: list[str] = out) -> None:
                out.extend(store.k_hop(seeds, hops=2, limit=1_000_000))

            lat.append(timed(hop))
            sizes.append(len(out))
        p50, p95 = percentiles(lat)
        store.close()

    nodes_s, edges_s = args.entities / t_nodes, args.relations / t_edges
    raw_s, single_s = n_sub / t_raw, 1000 / t_single
    print(f"graph_write: {args.entities:,} entities, {args.relations:,} relations, batch {args.batch}, "
          f"embedded ArcadeDB, {os.cpu_count()} cores")
    print(f"  entity upsert       {nodes_s:>9,.0f} nodes/s  ({t_nodes:.1f} s)")
    print(f"  relation upsert     {edges_s:>9,.0f} edges/s  ({t_edges:.1f} s)")
    print(f"  baseline raw UNWIND {raw_s:>9,.0f} nodes/s  adapter/raw = {nodes_s / raw_s:.2f}")
    print(f"  baseline 1 row/tx   {single_s:>9,.0f} nodes/s  batched/single = {nodes_s / single_s:.0f}x")
    print(f"  2-hop from 10 seeds: p50 {p50:.1f} ms, p95 {p95:.1f} ms "
          f"({args.queries} queries, median {sorted(sizes)[len(sizes) // 2]:,} entities reached)")
    print(f"  targets: >= 15,000 nodes/s [{'ok' if nodes_s >= 15_000 else 'MISSED'}], >= 8,000 edges/s "
          f"[{'ok' if edges_s >= 8_000 else 'MISSED'}], 2-hop p50 <= 20 ms [{'ok' if p50 <= 20 else 'MISSED'}]")


if __name__ == "__main__":
    main()
