"""An incremental re-ingest equals a fresh ingest of the changed corpus (real engines): the same
graph (nodes, edges, properties) and vectors, communities excepted, whose modularity must be within
2% of the fresh run's; and the change is handled around the changed entities, not by re-clustering."""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from hopgraph.app.doctor import diagnose
from hopgraph.app.platform import Platform
from hopgraph.core.records import CO_OCCURS
from hopgraph.core.settings import ExtractionSettings, ResolutionSettings
from hopgraph.graphdb.bolt.store import BoltGraphStore
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from hopgraph.vectors.store import COLLECTIONS
from tests.conftest import settings_for
from tests.paths import SHARED_DATA

# entity resolution is left out: a merge is decided with the names known when an entity arrives, and
# is never undone, so merges depend on the ingest order (a later name can make a short one ambiguous)
NO_MERGES = ResolutionSettings(enabled=False)
# properties that describe how the graph was built, not what it holds
HISTORY = {"clustered", "resolved", "stale_description", "ingested_at", "updated_at", "created_at"}


def _graph(p: Platform) -> dict[str, Any]:
    """Every node and relationship except communities and bookkeeping, with their properties."""
    def clean(props: dict[str, Any]) -> dict[str, Any]:
        return {k: sorted(v) if isinstance(v, list) else v for k, v in props.items() if k not in HISTORY}

    skip = ["Community", "GraphMeta", "GraphChange", "Migration", "IngestRun", "Alias"]
    nodes = {(r["label"], r["p"].get("id")): clean(r["p"]) for r in p._store.read(
        "MATCH (n) RETURN labels(n)[0] AS label, properties(n) AS p") if r["label"] not in skip}
    edges = sorted((r["a"], r["t"], r["b"], json.dumps(clean(r["p"]), sort_keys=True)) for r in p._store.read(
        "MATCH (a)-[x]->(b) WHERE type(x) <> 'IN_COMMUNITY' AND type(x) <> 'PARENT' "
        "RETURN a.id AS a, type(x) AS t, b.id AS b, properties(x) AS p"))
    return {"nodes": nodes, "edges": edges}


def _vectors(p: Platform) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in COLLECTIONS:
        if name == "communities":
            continue
        offset, found = None, {}
        while True:
            page, offset = p.vectors.scroll(name, limit=500, offset=offset)
            found.update({h.id: h.payload for h in page})
            if offset is None:
                break
        out[name] = found
    return out


def _modularity(p: Platform) -> tuple[float, float]:
    """Modularity of the finest (each entity's deepest community) and the coarsest (level 0)
    partitions over the weighted entity graph that Leiden clusters."""
    typed = p.settings.communities.typed_weight
    g = nx.Graph()
    for r in p._store.read("MATCH (a:Entity)-[r:RELATED]->(b:Entity) RETURN a.id AS a, b.id AS b, "
                          "r.type AS t, r.weight AS w"):
        if r["a"] != r["b"]:
            w = float(r["w"] or 1) * (1.0 if r["t"] == CO_OCCURS else typed)
            g.add_edge(r["a"], r["b"], weight=g.get_edge_data(r["a"], r["b"], {"weight": 0})["weight"] + w)
    deepest: dict[str, tuple[int, str]] = {}
    top: dict[str, str] = {}
    for r in p._store.read("MATCH (e:Entity)-[:IN_COMMUNITY]->(c:Community) RETURN e.id AS e, c.id AS c, "
                          "c.level AS level"):
        if r["e"] not in deepest or r["level"] > deepest[r["e"]][0]:
            deepest[r["e"]] = (r["level"], r["c"])
        if r["level"] == 0:
            top[r["e"]] = r["c"]

    def q(label: dict[str, str]) -> float:
        groups: dict[str, set[str]] = defaultdict(set)
        for n in g.nodes:
            groups[label.get(n, f"alone:{n}")].add(n)
        return float(nx.community.modularity(g, groups.values(), weight="weight"))

    return q({e: c for e, (_, c) in deepest.items()}), q(top)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("mode", ["text", "composed"])
def test_an_incremental_reingest_equals_a_fresh_ingest_of_the_changed_corpus(
        arcadedb: Any, embedder: SentenceTransformerEmbedder, tmp_path: Path,
        caplog: pytest.LogCaptureFixture, mode: str) -> None:
    """(``mode``: how relationship vectors are made, ``extraction.relation_vectors``)"""
    extraction = ExtractionSettings(relation_vectors=mode)
    lines = (SHARED_DATA / "2wiki-corpus" / "corpus.jsonl").read_text().splitlines()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines[:160]))
    with Platform(settings_for(arcadedb, tmp_path / "inc", resolution=NO_MERGES, extraction=extraction),
                  embedder=embedder) as inc:
        inc.ingest([corpus])
        communities_before = inc._store.counts()["Community"]
        recs = [json.loads(x) for x in lines[:160]]
        for i in (5, 50, 120):  # edited
            recs[i]["text"] += " It was later restored by the Vexmoor Trust of Kelderwick."
        recs = [r for i, r in enumerate(recs) if i not in (30, 90)] + [json.loads(x) for x in lines[160:163]]
        corpus.write_text("\n".join(json.dumps(r) for r in recs))
        with caplog.at_level(logging.INFO, logger="hopgraph.ingest.community_update"):
            report = inc.ingest([corpus])
        assert report.documents_ingested == 6 and report.documents_deleted == 2
        assert any("communities updated around" in r.message for r in caplog.records)  # not re-clustered
        inc_graph, inc_vectors, inc_q = _graph(inc), _vectors(inc), _modularity(inc)
        assert inc.vectors.count("communities") == inc._store.counts()["Community"]
        assert inc._store.unclustered_entities() == [] and inc._store.stale_summaries() == set()
        assert inc._store.counts()["Community"] > 0.8 * communities_before
    with Platform(settings_for(arcadedb, tmp_path / "fresh", resolution=NO_MERGES, extraction=extraction),
                  embedder=embedder) as fresh:
        fresh.ingest([corpus])
        fresh_graph, fresh_vectors, fresh_q = _graph(fresh), _vectors(fresh), _modularity(fresh)
    assert inc_graph["nodes"].keys() == fresh_graph["nodes"].keys()
    assert inc_graph == fresh_graph
    assert inc_vectors == fresh_vectors
    # Leiden maximises modularity at the top level (the levels below split communities larger than
    # max_cluster_size): there the update must be within 2% of a fresh clustering (99.9% measured);
    # the finest partition, re-clustered region by region, stays within 5% (97.8% measured)
    finest, coarsest = inc_q
    assert coarsest >= 0.98 * fresh_q[1], (inc_q, fresh_q)
    assert finest >= 0.95 * fresh_q[0], (inc_q, fresh_q)


@pytest.mark.timeout(900)
def test_an_update_killed_midway_is_completed_by_the_rerun(
        arcadedb: Any, embedder: SentenceTransformerEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = (SHARED_DATA / "2wiki-corpus" / "corpus.jsonl").read_text().splitlines()[:60]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines))
    with Platform(settings_for(arcadedb, tmp_path / "data"), embedder=embedder) as p:
        p.ingest([corpus])
        recs = [json.loads(x) for x in lines]
        recs[7]["text"] += " Its archive moved to the Vexmoor Observatory of Kelderwick."
        corpus.write_text("\n".join(json.dumps(r) for r in recs))
        real = BoltGraphStore.edit_memberships

        def killed(self: BoltGraphStore, *args: Any) -> None:
            raise KeyboardInterrupt("killed between the new leaves and the membership edits")

        monkeypatch.setattr(BoltGraphStore, "edit_memberships", killed)
        with pytest.raises(KeyboardInterrupt):
            p.ingest([corpus])
        monkeypatch.setattr(BoltGraphStore, "edit_memberships", real)
        assert p._store.unclustered_entities()  # the marks survive the kill
        p.ingest([corpus])  # nothing left to ingest: the run's end redoes the community update
        g = p._store
        assert g.unclustered_entities() == [] and not g.communities_stale()
        sizes = {r["id"]: (r["size"], r["n"]) for r in g.read(
            "MATCH (c:Community) OPTIONAL MATCH (e:Entity)-[:IN_COMMUNITY]->(c) "
            "RETURN c.id AS id, c.size AS size, count(e) AS n")}
        assert sizes and all(size == n >= p.settings.communities.min_size for size, n in sizes.values())
        assert p.vectors.count("communities") == len(sizes)
        assert all(c.ok for c in diagnose(p)), [c for c in diagnose(p) if not c.ok]
