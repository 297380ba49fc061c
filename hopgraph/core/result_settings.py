"""Settings of what is made of a query's top results (kept apart to keep settings.py readable): NLI
clustering (``retrieval.nli``: pairs scored by an NLI cross-encoder, an edge where one entails the other
clearly enough, groups as cliques or BFS clusters of that graph) and confidence by score entropy
(``retrieval.parts.confidence``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NLI_LABELS = frozenset({"entailment", "contradiction", "neutral"})


class NliSettings(BaseModel):
    """NLI clustering of the top ``top_m`` results of any mode."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = Field(default=False, description="Group the top results by entailment (needs model).")
    model: str | None = Field(default=None, description="NLI cross-encoder: a hub name or a local path.")
    labels: tuple[str, str, str] = Field(
        default=("contradiction", "entailment", "neutral"),
        description="The model's output labels in order (the order of the cross-encoder/nli-* models).")
    device: str = Field(default="auto", description="auto, cpu or cuda.")
    batch_size: int = Field(default=32, ge=1, le=1024, description="Passage pairs per NLI batch.")
    top_m: int = Field(default=10, ge=2, le=50, description="Results grouped.")
    strategy: Literal["clique", "bfs"] = Field(
        default="clique", description="clique: maximal cliques of the entailment graph (networkx); bfs: "
        "clusters grown from the best-scored result over entailment edges.")
    e_min: float = Field(default=0.5, ge=0, le=1, description="Least entailment probability of an edge.")
    margin: float = Field(default=0.1, ge=-1, le=1, description="Least entailment minus contradiction of an edge.")
    alpha: float = Field(default=1.0, ge=0, description="Weight of entailment in an edge's weight.")
    beta: float = Field(default=1.0, ge=0, description="Weight of contradiction in an edge's weight.")
    tau: float = Field(default=0.3, ge=0, description="Least edge weight max(0, alpha*P_e - beta*P_c).")
    blend: float = Field(default=0.5, ge=0, le=1, description="A cluster's rank: blend x mean normalized "
                         "retrieval score + (1 - blend) x mean edge weight.")
    max_size: int = Field(default=3, ge=1, le=20, description="Members of a cluster, at most (a larger clique "
                          "keeps its best sub-clique).")

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: tuple[str, str, str]) -> tuple[str, str, str]:
        if set(v) != NLI_LABELS:
            raise ValueError(f"nli.labels must name entailment, contradiction and neutral once each, got {list(v)}")
        return v

    @model_validator(mode="after")
    def _model_when_enabled(self) -> NliSettings:
        if self.enabled and not self.model:
            raise ValueError("nli.enabled needs nli.model (an NLI cross-encoder name or path)")
        return self


class ConfidenceSettings(BaseModel):
    """Confidence by score entropy: the top ``top_m`` scores of a result list, scaled to [0, 1] and turned
    into a softmax distribution; its normalized entropy says how sure the ranking is (0: one result
    stands out, 1: all alike)."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = Field(default=False, description="Give every result its probability and the query its "
                          "entropy; apply the cuts below.")
    top_m: int = Field(default=10, ge=2, le=100, description="Results the distribution is over.")
    temperature: float = Field(default=0.2, gt=0, le=10, description="Softmax temperature over the scaled "
                               "scores (smaller: sharper).")
    max_entropy: float | None = Field(default=None, ge=0, le=1, description="Above this normalized entropy the "
                                      "query abstains: no results, and a note says why (None: never).")
    top_p: float | None = Field(default=None, gt=0, le=1, description="Keep the results whose probabilities "
                                "add up to this (fewer when the ranking is sure; None: keep top_k).")


class SectionModeSettings(BaseModel):
    """Mode ``sections``: candidate documents first, then their sections, with confidence by entropy."""

    model_config = ConfigDict(frozen=True)

    documents: int = Field(default=5, ge=1, le=100, description="Candidate documents (by their best chunk).")
    exclude_titles: str = Field(
        default=r"^(list|lists|outline|index|timeline|glossary) of\b",
        description="Documents whose title matches this (case-insensitive regular expression) are not "
        "candidates: pages that list other pages answer nothing themselves ('' keeps every document).")
    top_m: int = Field(default=10, ge=2, le=100, description="Sections ranked (and in the confidence "
                       "distribution).")

    @field_validator("exclude_titles")
    @classmethod
    def _compiles(cls, v: str) -> str:
        import re

        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"sections.exclude_titles is not a regular expression: {exc}") from exc
        return v
