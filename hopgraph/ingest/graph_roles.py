"""The graph roles (``graphdb.protocols``) the ingest pipeline's parts are given, composed where one
caller needs several: the pipeline and its post-ingest steps name what they use, not the whole store
(a backend without, say, the run log or the admin role still ingests)."""

from __future__ import annotations

from typing import Protocol

from hopgraph.graphdb.protocols import (
    ChatDateStore,
    CommunityStore,
    EntityEditor,
    IncrementalCommunities,
    IndexSource,
    IngestWriter,
    SectionStore,
    TreeStore,
    VectorGroupStore,
)

__all__ = ["IngestGraph", "StepGraph"]


class StepGraph(EntityEditor, IndexSource, SectionStore, ChatDateStore, VectorGroupStore, CommunityStore, Protocol):
    """What the post-ingest steps read and write (``ingest.post_steps``): entity merges, types and
    descriptions, the vectors' payloads (the snapshot reads), section and caption backfills, the re-dating
    of stored conversations, the access groups of stored vectors, and whether the communities are stale."""


class IngestGraph(IngestWriter, StepGraph, IncrementalCommunities, TreeStore, Protocol):
    """What ``ingest.pipeline.Ingestor`` is given: the writes of each batch, the post-ingest steps' roles,
    the community builder's (``CommunityGraph``) and the RAPTOR tree's."""
