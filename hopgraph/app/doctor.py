"""``hopgraph doctor`` and ``GET /ready``: the invariants of a healthy store, each checked and explained.

Stores reachable, migrations applied, the vector store built by the configured embedder, graph items
and vectors in agreement (chunks, entities, typed relationships, communities, images), no document
left unfinished, no orphan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hopgraph.core.errors import HopgraphError
from hopgraph.retrieval.index import persist

if TYPE_CHECKING:
    from hopgraph.app.platform import Platform


@dataclass(frozen=True)
class Check:
    """One invariant: its name, whether it holds, and what was found."""

    name: str
    ok: bool
    detail: str


def _agree(name: str, graph: int, vectors: int, what: str) -> Check:
    ok = graph == vectors
    return Check(name, ok, f"{graph} {what} in the graph, {vectors} vectors" + ("" if ok else " — they differ"))


def diagnose(platform: Platform) -> list[Check]:
    """Every check, in order; a store that cannot be reached ends the list with the reason."""
    checks: list[Check] = []
    try:
        graph = platform.admin
        version = graph.version()
        checks.append(Check("graph store", True, f"{platform.settings.graph.backend}, graph version {version}"))
    except HopgraphError as exc:
        return [Check("graph store", False, str(exc))]
    pending = graph.pending_migrations()
    checks.append(Check("migrations", not pending, "all applied" if not pending else f"pending: {', '.join(pending)}"))
    try:
        vectors = platform.vectors
        checks.append(Check("vector store", True, f"{platform.settings.vectors.backend}; embedder "
                                                  f"{platform.embedder.name} matches the stored vectors"))
    except HopgraphError as exc:
        return [*checks, Check("vector store", False, str(exc))]
    counts, health = graph.counts(), graph.health_counts()
    checks.append(_agree("chunks", health["chunks"], vectors.count("chunks"), "chunks"))
    checks.append(_agree("entities", counts["Entity"], vectors.count("entities"), "entities"))
    embedded = health["all_relations"] if platform.settings.extraction.embed_cooccurrence else health["typed_relations"]
    checks.append(_agree("relationships", embedded, vectors.count("relationships"), "embedded relations"))
    checks.append(_agree("communities", counts["Community"], vectors.count("communities"), "communities"))
    if counts["Summary"] or vectors.count("summaries"):
        checks.append(_agree("tree", counts["Summary"], vectors.count("summaries"), "tree summaries"))
    if platform.settings.clip.enabled:
        checks.append(_agree("images", health["image_documents"], vectors.count("images"), "image documents"))
    unfinished = graph.unfinished_documents()
    checks.append(Check("documents", not unfinished, "every document complete" if not unfinished else
                        f"{len(unfinished)} unfinished ({', '.join(f'{d.id} {d.status}' for d in unfinished[:5])}); "
                        "rerun the ingest (or the delete) to finish them"))
    orphans = {k: health[k] for k in ("orphan_entities", "orphan_chunks", "empty_communities") if health[k]}
    checks.append(Check("orphans", not orphans, "none" if not orphans else
                        ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in orphans.items())))
    checks.append(_index_state(platform, version))
    return checks


def _index_state(platform: Platform, version: int) -> Check:
    """Where the persisted index state stands (informational: a stale or missing one is rebuilt or
    patched at the next start, never wrong)."""
    if not platform.settings.index.persist:
        return Check("index state", True, "not persisted (index.persist = false): built at each start")
    if not platform.persists_index:
        return Check("index state", True, "not persisted (an in-memory store): built at each start")
    saved = persist.saved_version(platform.settings.index_dir)
    if saved is None:
        return Check("index state", True, "none persisted yet: the next query or serve builds it")
    behind = f", {version - saved} version(s) behind: the next start applies the changes" if saved < version else ""
    return Check("index state", True, f"persisted at graph version {saved}{behind}")
