"""The index state at scale, from generated tables (``python -m benchmarks.freshness --synthetic``).

Documents have one chunk naming ten entities (uniformly drawn) and a title; edges join uniformly
drawn entity pairs, one in ten typed. A ``SyntheticGraph`` answers the delta's reads for 100 changed
documents from the same arrays, so the refresh runs ``apply_delta`` and the derivation (carrying the
served state over) for real. Two kinds of change are timed: documents that keep their chunk ids and
whose new text names entities that exist (no row moves), and documents whose chunks get new ids (as
the ingest's ids hash a chunk's text) and whose text names three new entities each: rows are
inserted among the existing ones, so every row after them moves.
The patched tables are then persisted, and a fresh process loads them as ``serve`` does: its RSS is
the served state's, and its graph passes give the query p50 (``python -m benchmarks.freshness_scale
FOLDER`` runs that part alone).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import rss_mb
from hopgraph.core.index_settings import IndexSettings
from hopgraph.core.linalg import unit
from hopgraph.core.memory import keep_freed_memory, pregrow
from hopgraph.core.records import CO_OCCURS
from hopgraph.core.text import normalize_name
from hopgraph.graphdb.records import EdgeRow, GraphChange
from hopgraph.retrieval.index import persist
from hopgraph.retrieval.index.delta import apply_delta
from hopgraph.retrieval.index.state import IndexRecipe, IndexState
from hopgraph.retrieval.index.tables import CHUNK_COLUMNS, Tables, strings, typed_rows, vector_dtype
from hopgraph.retrieval.parts.signals import Seeds, entity_similarity, ppr_scores

DIM = 384
PER_CHUNK = 10
WORDS = [f"w{i}" for i in range(5000)]
REFRESHES = 6


def _text(rng: np.random.Generator, ents: np.ndarray) -> str:
    words = rng.choice(WORDS, 20).tolist()
    return " ".join(words[:10] + [f"entity {e}" for e in ents[:3]] + words[10:])


def generate(n_docs: int, n_entities: int, n_edges: int, seed: int = 7) -> Tables:
    """Tables of one synthetic corpus (entity vectors in the dtype ``fetch_all`` would give them)."""
    rng = np.random.default_rng(seed)
    ids = strings([f"e{i:09d}" for i in range(n_entities)])
    names = strings([f"entity {i}" for i in range(n_entities)])
    m_entity = rng.integers(0, n_entities, n_docs * PER_CHUNK).astype(np.int32)
    texts = [_text(rng, m_entity[j * PER_CHUNK:(j + 1) * PER_CHUNK]) for j in range(n_docs)]
    chunk_ids = strings([f"c{j:09d}" for j in range(n_docs)])
    docs = strings([f"d{j:09d}" for j in range(n_docs)])
    vec = np.empty((n_entities, DIM), dtype=vector_dtype(n_entities))
    for a in range(0, n_entities, 65_536):
        vec[a:a + 65_536] = unit(stored(np.arange(a, min(a + 65_536, n_entities)), ENTITY_SALT))
    cvec = rng.standard_normal((n_docs, DIM), dtype=np.float32)
    cvec /= np.linalg.norm(cvec, axis=1, keepdims=True)
    src = rng.integers(0, n_entities, n_edges).astype(np.int32)
    dst = rng.integers(0, n_entities, n_edges).astype(np.int32)
    typed = rng.random(n_edges) < 0.1
    return Tables(
        version=1, entity_ids=ids, entity_names=names, entity_types=strings(["PERSON"] * n_entities),
        entity_keys=strings([normalize_name(n) for n in names.tolist()]), entity_vectors=vec, chunk_ids=chunk_ids,
        chunks={**{name: strings([""] * n_docs) for name in CHUNK_COLUMNS}, "text": strings(texts),
                "document_id": docs, "source": docs, "title": strings([f"Title {j}" for j in range(n_docs)]),
                "kind": strings(["text"] * n_docs)}, chunk_vectors=cvec,
        mention_chunk=np.repeat(np.arange(n_docs, dtype=np.int32), PER_CHUNK), mention_entity=m_entity,
        mention_count=np.ones(n_docs * PER_CHUNK), mention_label=strings(["PERSON"] * (n_docs * PER_CHUNK)),
        edge_source=src, edge_target=dst,
        edge_type=typed.astype(np.int16), edge_type_names=strings([CO_OCCURS, "knows"]),
        edge_weight=rng.integers(1, 4, n_edges).astype(np.float64),
        edge_id=strings([f"r{k}" for k in np.flatnonzero(typed).tolist()]),
        member_entity=np.zeros(0, np.int32), member_community=strings([]),
        support_edge=np.zeros(0, np.int32), support_groups=strings([]), support_count=np.zeros(0, np.int32))


class SyntheticGraph:
    """The reads a delta makes, over generated tables where ``changed`` documents got new text."""

    def __init__(self, t: Tables, changed: list[int], seed: int = 11, moving: bool = False) -> None:
        self.t = t
        rng = np.random.default_rng(seed)
        n_e = len(t.entity_ids)
        self.changed = {f"d{j:09d}": j for j in changed}
        self.typed_rows = typed_rows(t)
        self.new_mentions = {j: rng.integers(0, n_e, PER_CHUNK) for j in changed}
        self.texts = {j: _text(rng, self.new_mentions[j]) for j in changed}
        # moving: a chunk id elsewhere in the order (after another document's), and three new entities
        # (ids right after existing ones: "e000012345" < "e000012345.s11.0" < "e000012346")
        self.chunk_id = {j: f"c{int(rng.integers(0, len(t.chunk_ids))):09d}.{j}" if moving else f"c{j:09d}"
                         for j in changed}
        self.of_chunk = {c: j for j, c in self.chunk_id.items()}
        self.new_entities = {j: [f"e{int(rng.integers(0, n_e)):09d}.s{seed}.{k}" for k in range(3)] if moving
                             else [] for j in changed}

    def version(self) -> int:
        return self.t.version + 1

    def changes_since(self, version: int) -> list[GraphChange]:
        return [GraphChange(self.t.version + 1, tuple(sorted(self.changed)))]

    def snapshot_chunks(self, document_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        return [{"id": self.chunk_id[self.changed[d]], "text": self.texts[self.changed[d]], "document_id": d,
                 "source": d, "title": f"Title {self.changed[d]}", "kind": "text", "uri": ""}
                for d in document_ids or ()]

    def snapshot_mentions(self, chunk_ids: Sequence[str] | None = None,
                          entity_ids: Sequence[str] | None = None) -> list[tuple[str, str, int, str]]:
        out = []
        for c in chunk_ids or ():
            j = self.of_chunk[c]
            new = self.new_entities[j]
            out += [(c, f"e{e:09d}", 1, "PERSON") for e in self.new_mentions[j][: PER_CHUNK - len(new)].tolist()]
            out += [(c, e, 1, "PERSON") for e in new]
        return out

    def snapshot_entities(self, ids: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        return [(i, f"entity {i[1:]}", "PERSON") for i in ids or ()]

    def snapshot_edges(self, entity_ids: Sequence[str] | None = None, within: bool = False) -> list[EdgeRow]:
        asked = np.zeros(len(self.t.entity_ids), dtype=bool)  # (as a graph's index of its entities would)
        asked[[int(i[1:]) for i in entity_ids or () if len(i) == 10]] = True  # (new entities have no edges)
        ends = asked[self.t.edge_source], asked[self.t.edge_target]
        hit = np.nonzero(ends[0] & ends[1] if within else ends[0] | ends[1])[0]
        t = self.t
        typed = np.searchsorted(self.typed_rows, hit)  # (a typed edge's id: at its place among the typed rows)
        ids = np.where(t.edge_type[hit] != 0, t.edge_id[np.minimum(typed, len(t.edge_id) - 1)], "")
        return [EdgeRow(f"e{s:09d}", f"e{d:09d}", ty, w, i) for s, d, ty, w, i in zip(
            t.edge_source[hit].tolist(), t.edge_target[hit].tolist(), t.edge_type_names[t.edge_type[hit]].tolist(),
            t.edge_weight[hit].tolist(), ids.tolist(), strict=True)]

    def snapshot_memberships(self, entity_ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        return []


def stored(rows: np.ndarray, salt: float) -> np.ndarray:
    """The float32 vectors a store holds for these rows: a function of the row, as an entity's vector is
    of its name (a hash, not statistics: only their being distinct and fixed matters here)."""
    x = np.sin((rows[:, None] + 1.0) * 12.9898 + np.arange(DIM)[None, :] * 78.233 + salt) * 43758.5453
    return (x - np.floor(x) - 0.5).astype(np.float32)


ENTITY_SALT, CHUNK_SALT = 0.0, 0.5


class SyntheticVectors:
    """The vector store: an entity keeps the vector it was generated with (its name did not change); a
    changed document's chunk gets a new one (its text did)."""

    def vectors(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        rows = np.asarray([int(i[1:10]) + (0.5 if len(i) > 10 else 0.0) for i in ids], dtype=np.float64)
        found = stored(rows, ENTITY_SALT if collection == "entities" else CHUNK_SALT)
        return dict(zip(ids, found, strict=True))


def rss_parts() -> dict[str, float]:
    """This process's resident memory (MB): all of it, and its anonymous part (what no file backs)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {k: int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "RssAnon") if k in fields}


def served(folder: Path, queries: int = 20) -> None:
    """In a fresh process, as ``serve`` does: load the persisted tables, derive the state, answer graph
    passes (entity seeds + PPR by the solver graph mode picks); print the state's RSS and the p50. torch is
    imported first, as a server's warm-up imports it with the embedding model: the entity cosines are then
    torch's product (numpy's, in a process without torch, widens float16 vectors: about 1 s per query at 1M
    entities)."""
    import torch  # noqa: F401  (as serve has it loaded)

    base = rss_parts()
    t = time.perf_counter()
    tables = persist.load(folder)
    if tables is None:
        raise SystemExit(f"no index state in {folder}")
    state = IndexState.of(tables, IndexRecipe())
    load_s = time.perf_counter() - t
    snap, walk = state.snapshot, state.walk(1.0)
    rng = np.random.default_rng(9)
    lat = []
    for _ in range(queries):
        t = time.perf_counter()
        q = rng.standard_normal(DIM).astype(np.float32)
        q /= np.linalg.norm(q)
        sims = entity_similarity(snap, q)
        top = np.argpartition(-sims, 9)[:10]
        chunk_seeds = {snap.chunk_ids[int(j)]: 1.0 for j in rng.choice(snap.n_chunks, 10)}
        ppr_scores(snap, walk, Seeds({int(e): float(sims[e]) for e in top}), chunk_seeds, 1.0, 0.5)
        lat.append(time.perf_counter() - t)
    now = rss_parts()
    print(f"served state (a fresh process: load + derive {load_s:.1f}s): index state RSS "
          f"{now['VmRSS'] - base['VmRSS']:.0f} MB, of which anonymous {now['RssAnon'] - base['RssAnon']:.0f} MB "
          f"(entity vectors {tables.entity_vectors.dtype}, memory-mapped)")
    print(f"graph pass (entity seeds + PPR over {snap.n_entities + snap.n_chunks} nodes, "
          f"{walk.nnz} edges) p50 {sorted(lat)[len(lat) // 2] * 1000:.0f} ms, "
          f"max {max(lat) * 1000:.0f} ms over {queries} queries")


def refreshed(served_state: IndexState, n_docs: int, moving: bool) -> IndexState:
    """``REFRESHES`` deltas of 100 changed documents each, timed (``moving``: rows move); the last state."""
    kind = "new chunk ids and 3 new entities each: rows move" if moving else "chunk ids kept, no entity new"
    refreshes = []
    for k in range(REFRESHES):  # as a server does: the served state answers while the next is built
        changed = np.random.default_rng(5 + k + 100 * moving).choice(n_docs, 100, replace=False).tolist()
        graph = SyntheticGraph(served_state.tables, changed, seed=11 + k + 100 * moving, moving=moving)
        t = time.perf_counter()
        patched, patch = apply_delta(served_state.tables, graph.changes_since(served_state.version),
                                     graph, SyntheticVectors())  # type: ignore[arg-type]
        delta_s = time.perf_counter() - t
        t = time.perf_counter()
        new = IndexState.of(patched, IndexRecipe(), base=(served_state, patch))
        derive_s = time.perf_counter() - t
        print(f"refresh {k + 1} after 100 changed documents ({kind}): tables {delta_s:.2f}s + derive "
              f"{derive_s:.2f}s {new.seconds}, process RSS {rss_mb():.0f} MB")
        refreshes.append(delta_s + derive_s)
        served_state = new  # swapped in; the previous state is dropped
    print(f"refresh after 100 changed documents ({kind}): median {statistics.median(refreshes):.2f}s of "
          f"{REFRESHES} (the first ones may also grow the process to its working size); process RSS "
          f"{rss_mb():.0f} MB")
    return served_state


def scale_run(n_docs: int, n_entities: int, n_edges: int, keep: bool = True, grow: bool = True) -> None:
    kept = keep and keep_freed_memory()  # as the platform does (index.keep_freed_memory)
    print(f"freed memory {'kept for the next refresh' if kept else 'handed back to the kernel'}")
    base = rss_mb()
    t = time.perf_counter()
    tables = generate(n_docs, n_entities, n_edges)
    print(f"synthetic {n_docs} documents / {n_entities} entities / {n_edges} edges generated in "
          f"{time.perf_counter() - t:.0f}s (tables {rss_mb() - base:.0f} MB)")
    t = time.perf_counter()
    served_state = IndexState.of(tables, IndexRecipe())
    print(f"full build {time.perf_counter() - t:.1f}s {served_state.seconds}")
    if kept and grow:  # as a server does on its background thread once the state is served (index.pregrow)
        t = time.perf_counter()
        grown = pregrow(int(served_state.nbytes() * IndexSettings().pregrow))
        print(f"heap set aside for refreshes: {grown >> 20} MB (index.pregrow x the state's arrays) in "
              f"{time.perf_counter() - t:.1f}s, "
              f"process RSS {rss_mb():.0f} MB")
    for moving in (False, True):
        served_state = refreshed(served_state, n_docs, moving)
    with tempfile.TemporaryDirectory() as tmp:
        persist.save(served_state.tables, Path(tmp) / "index")
        del served_state, tables
        subprocess.run([sys.executable, "-m", "benchmarks.freshness_scale", str(Path(tmp) / "index")], check=True)

if __name__ == "__main__":
    served(Path(sys.argv[1]))
