"""Settings of the corpus's summarised structure: hierarchical entity communities and the RAPTOR tree of
chunk-cluster summaries (kept apart to keep settings.py readable)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class CommunitySettings(BaseModel):
    """Hierarchical Leiden communities, recomputed after each ingest that changed the graph."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = Field(
        default=True, description="Recompute the entity communities after each ingest that changed the graph.")
    max_cluster_size: int = Field(default=25, ge=2, description="Larger clusters are split into a finer level.")
    min_size: int = Field(default=2, ge=1, description="Smaller communities are not stored.")
    resolution: float = Field(default=1.0, gt=0, description="Leiden resolution: higher gives smaller communities.")
    typed_weight: float = Field(default=2.0, ge=0, description="Weight of a typed relation vs a co-occurrence.")
    summary_relations: int = Field(
        default=6, ge=0, description="Strongest relations quoted in a community's extractive summary.")
    embed_chars: int = Field(default=200, ge=0, description="Characters of the summary in a community's "
                             "embedded text (after its title).")
    llm_summaries: bool = Field(default=False, description="Community reports by the LLM of the llm settings.")
    vectors: Literal["text", "composed"] = Field(
        default="text", description="'text': a community's title and summary are embedded; 'composed': its "
        "vector is the sum of its key entities' vectors, no text embedded (faster; ``ingest.community_vectors``).")
    warm_start: bool = Field(
        default=True, description="Start Leiden from the previous assignment: a small change keeps most "
        "communities (and their ids); the result then depends on the ingest history, not only on the graph.")
    incremental: bool = Field(
        default=True, description="After an ingest, re-cluster only around the entities whose neighbourhood "
        "changed (new leaf communities under their old parents); false re-clusters everything every time.")
    incremental_max_fraction: float = Field(
        default=0.2, ge=0, le=1, description="Above this share of changed entities the update is a full "
        "re-clustering.")
    redescribe_change: float = Field(
        default=0.2, gt=0, description="An ancestor community is re-described when this share of its members "
        "changed in one update (or a key entity it names left it, or its summary quotes removed text).")
    seed: int = Field(default=42, description="Random seed of Leiden (the same graph gives the same communities).")


class RaptorSettings(BaseModel):
    """The RAPTOR tree (mode ``raptor``): chunks clustered by UMAP + a Gaussian mixture with soft membership,
    each cluster summarised, the summaries clustered again, level by level. The tree is a forest of
    branches (k-means over chunk vectors) so that a change rebuilds only the branches it touches."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = Field(default=False, description="Build and update the tree at the end of every ingest "
                          "(off by default: it costs ingest time, and only mode raptor reads it).")
    branch_size: int = Field(default=300, ge=4, description="Chunks per branch when branches are formed.")
    branch_max: int = Field(default=600, ge=8, description="A branch that new chunks grow past this is split.")
    umap_dim: int = Field(default=10, ge=2, description="Dimensions UMAP reduces vectors to before clustering.")
    umap_neighbors: int = Field(default=10, ge=2, description="UMAP's n_neighbors (fewer when a set is small).")
    max_clusters: int = Field(default=12, ge=2, description="Most mixture components tried (BIC picks the count).")
    membership_threshold: float = Field(
        default=0.1, gt=0, le=1, description="Soft membership: a node joins every cluster it has at least this "
        "probability of belonging to (and always its most likely one).")
    max_levels: int = Field(default=4, ge=1, le=10, description="Summary levels above the chunks, at most.")
    summary_sentences: int = Field(default=4, ge=1, le=20, description="Sentences in an extractive summary.")
    summary_chars: int = Field(default=700, ge=100, description="Characters of a summary, at most.")
    expand_leaves: int = Field(default=20, ge=1, le=200, description="A summary's most central chunks, which a "
                               "summary hit expands to.")
    llm_summaries: bool = Field(default=False, description="Summaries written by the LLM of the llm settings "
                                "(extractive otherwise).")
    incremental_max_fraction: float = Field(
        default=0.5, ge=0, le=1, description="Above this share of chunks added or removed the tree is rebuilt.")
    seed: int = Field(default=42, description="Random seed of UMAP, the mixtures and the branch k-means.")

    @model_validator(mode="after")
    def _sizes(self) -> RaptorSettings:
        if self.branch_max < self.branch_size:
            raise ValueError(f"raptor.branch_max ({self.branch_max}) must be at least raptor.branch_size "
                             f"({self.branch_size})")
        return self
