"""The query-time settings: what the modes share (``RetrievalSettings``) and what each reads alone
(``ModeSettings``: graph's, raptor's, sections', image's, pcst's and gnn's tables, and plug-in modes' own). Part of the
settings; ``hopgraph.core.settings`` re-exports ``RetrievalSettings`` and ``ImageRetrievalSettings``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from hopgraph.core.limits import TOP_K_MAX
from hopgraph.core.moved_keys import move_keys
from hopgraph.core.records import CO_OCCURS
from hopgraph.core.result_settings import ConfidenceSettings, NliSettings, SectionModeSettings
from hopgraph.core.subgraph_settings import GnnModeSettings, PcstModeSettings


class ImageRetrievalSettings(BaseModel):
    """Mode ``image`` (text -> images): caption (or CLIP) score fused with a score from the entity graph."""

    model_config = ConfigDict(frozen=True)

    kg_weight: float = Field(default=0.15, ge=0, description="Weight of the KG score against the caption score.")
    best_caption_weight: float = Field(default=1.0, ge=0, description="Weight of the best-matching single "
                                       "caption's similarity (each caption has its own vector; 0 = off).")
    clip_weight: float = Field(default=1.0, ge=0, description="Weight of the CLIP score (when CLIP is configured).")
    fusion: Literal["weighted", "rrf"] = Field(
        default="weighted", description="How mode image fuses its scores: weighted sum, or reciprocal-rank fusion.")
    candidate_k: int = Field(default=100, ge=1, description="Images scored by caption similarity.")
    similar_k: int = Field(default=5, ge=0, le=100, description="Similarity edges per entity (degree cap).")
    similar_min: float = Field(default=0.7, ge=0, le=1, description="Cosine of a similarity edge.")
    cooccur_k: int = Field(default=5, ge=0, le=100, description="Co-occurrence edges per entity (degree cap).")
    expand_weight: float = Field(default=0.3, ge=0, le=1, description="Score an expanded entity inherits.")
    enrich_images: int = Field(default=3, ge=0, description="Top caption hits whose entities join the seeds.")
    enrich_entities_per_chunk: int = Field(
        default=5, ge=0, description="Enrichment: entities taken from each of those caption hits.")
    enrich_weight: float = Field(
        default=0.5, ge=0, description="Enrichment: seed weight of those entities, as a share of their hit's score.")


class RaptorModeSettings(BaseModel):
    """Mode ``raptor``: summary nodes of the RAPTOR tree searched beside the chunks."""

    model_config = ConfigDict(frozen=True)

    k: int = Field(default=10, ge=1, le=200, description="Summary nodes of the RAPTOR tree searched beside the chunks.")
    fusion: Literal["lift", "rrf", "tree"] = Field(
        default="lift", description="How chunk hits meet the chunks of summary hits: lift (a chunk scores the "
        "higher of its cosine and the mean of its summary's cosine and its own), rrf (reciprocal-rank fusion of "
        "the two lists), tree (the summaries' chunks alone: an ablation).")


class GraphModeSettings(BaseModel):
    """Mode ``graph``'s own settings (``[retrieval.modes.graph]``): its enrichment, walk, bridges, chat signals and
    fusion. ``pcst`` and ``gnn`` build on graph's pass and read this table too."""

    model_config = ConfigDict(frozen=True)

    enrichment: bool = Field(default=True, description="Seed entities of the first-pass top chunks too.")
    enrich_chunks: int = Field(
        default=3, ge=0, description="Enrichment: first-pass top chunks whose entities join the seeds.")
    enrich_entities_per_chunk: int = Field(
        default=5, ge=0, description="Enrichment: entities taken from each of those chunks.")
    enrich_weight: float = Field(
        default=0.5, ge=0, description="Enrichment: seed weight of those entities, as a share of their chunk's "
        "score.")
    drop_generic: bool = Field(default=True, description="graph mode never seeds the corpus's generic concepts "
                               "(noun phrases more chunks mention than 10x the median: 'film', 'year').")
    expansion: Literal["ppr", "beam", "none"] = Field(default="ppr", description="none = 0 hops.")
    damping: float = Field(default=0.5, gt=0, lt=1, description="PPR: probability to keep walking.")
    ppr_solver: Literal["auto", "power", "push"] = Field(default="auto", description="PPR by power iteration "
                                                         "(it assembles the walk as one matrix, ~12 bytes an edge, "
                                                         "kept with the index state), by forward push (local), or "
                                                         "auto: push above 2M edges.")
    passage_weight: float = Field(default=0.5, ge=0, description="PPR restart mass on first-pass chunks.")
    title_weight: float = Field(
        default=10.0, ge=0, description="PPR restart of a passage whose document title the query names, as a "
        "multiple of the best dense passage's (0 = off).")
    when_weight: float = Field(
        default=0.3, ge=0, description="A question asking when something happened ('When did …', 'What year …') "
        "multiplies by 1 + this the score of the conversation chunks whose turns date something ('yesterday', "
        "'last May'; 0 = off).")
    session_link_weight: float = Field(
        default=0.0, ge=0, description="PPR weight of the links between consecutive sessions of one "
        "conversation (the same speakers), per chunk: the walk follows a chat to what was said before and "
        "after (0 = off, the default: on the chat developer sets it moved no question type up).")
    bridge_weight: float = Field(
        default=0.8, ge=0, le=1, description="Bridges: a document named by title in one of the best "
        "documents scores this share of that document's score (the second hop; 0 = off).")
    bridge_sources: int = Field(default=3, ge=0, description="Bridges: how many of the best documents lead on.")
    bridge_per_source: int = Field(default=2, ge=0, description="Bridges: the first titles a passage names "
                                   "that are followed, in the order it names them.")
    entity_bridge_weight: float = Field(
        default=0.7, ge=0, le=1, description="Entity bridges: the best documents pass this share of their score to "
        "the chunk, among those sharing a named entity with them, most similar to the query (the second hop "
        "where no title links; hubs damped; 0 = off).")
    entity_bridge_sources: int = Field(default=1, ge=0, description="Entity bridges: how many of the best "
                                       "documents lead on (one chunk each).")
    fact_weight: float = Field(
        default=0.5, ge=0, description="Fact hops: weight in the fusion of the chunks stating typed relations of an "
        "entity the question names, with a verb it uses ('What has Melanie painted?': Melanie -paint-> …; "
        "0 = off).")
    entity_weight: float = Field(
        default=1.0, ge=0, description="Seed chunks: weight in the fusion of the chunks scored by the seed entities "
        "they mention (each seed scaled by its specificity), beside the walk that starts from them, times the "
        "share of the dense weight the first pass moves to BM25 on a corpus of look-alike chunks (a chat log; "
        "none on encyclopaedic text): a chunk naming both Melanie and camping above one naming either; 0 = off.")
    person_scope: bool = Field(
        default=True, description="On a corpus of look-alike chunks (a chat log), a question that names a person "
        "keeps the walk's scores only on the chunks linked to that person (their turns, the turns that mention "
        "them): the walk from a speaker otherwise spreads into other people's conversations over shared words. "
        "No named person, or encyclopaedic text: no change.")
    time_weight: float = Field(
        default=1.0, ge=0, description="Time cues: a question that states a time ('in May 2023', 'on 7 July, "
        "2023') multiplies by 1 + this the score of the chunks of conversations dated in it, or whose turns "
        "mention a day in it (0 = off; no cue, no change).")
    hops: int = Field(default=2, ge=0, le=5, description="Beam expansion depth.")
    beam: int = Field(default=32, ge=1, description="Beam expansion: paths kept per hop.")
    decay: float = Field(default=0.5, gt=0, le=1, description="Beam score decay per hop.")
    type_weights: dict[str, float] = Field(
        default_factory=lambda: {CO_OCCURS: 0.6, "*": 1.0}, description="Beam expansion: weight of each relation "
        "type ('*': any other type).")
    fusion: Literal["weighted", "rrf"] = Field(
        default="weighted", description="How graph modes fuse their signals: weighted sum of normalized scores, or "
        "reciprocal-rank fusion.")
    decompose: bool = Field(default=True, description="Graph modes search each part of a question with several "
                            "('did X happen before Y?', 'which came first, A or B?') on its own as well, "
                            "so the passages of every part reach the top.")


class ModeSettings(BaseModel):
    """Settings each mode reads alone. A plug-in mode's table (``[retrieval.modes.<name>]``) is kept as
    given and checked against the model its registry entry names (``ModeEntry.options``)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    graph: GraphModeSettings = Field(default_factory=GraphModeSettings)
    raptor: RaptorModeSettings = Field(default_factory=RaptorModeSettings)
    sections: SectionModeSettings = Field(default_factory=SectionModeSettings)
    image: ImageRetrievalSettings = Field(default_factory=ImageRetrievalSettings)
    pcst: PcstModeSettings = Field(default_factory=PcstModeSettings)
    gnn: GnnModeSettings = Field(default_factory=GnnModeSettings)

    def plugin_tables(self) -> dict[str, dict[str, Any]]:
        """The tables of modes without a field here (plug-in modes), by mode name."""
        return {k: dict(v) for k, v in (self.model_extra or {}).items()}


def _merged(model: BaseModel, update: Mapping[str, Any]) -> Any:
    """``model`` with ``update`` applied; a mapping given for a nested model updates only its own keys. A key
    the model lacks is refused (naming its new place where it moved), unless the model keeps extra keys."""
    unknown = update.keys() - type(model).model_fields.keys()
    if unknown and model.model_config.get("extra") != "allow":
        moved = getattr(model, "MOVED_KEYS", {})
        raise ValueError("unknown retrieval settings: " + ", ".join(
            f"{k} (now {' and '.join(moved[k]).removesuffix('.*')})" if k in moved else k for k in sorted(unknown)))
    values = {k: _merged(getattr(model, k), v) if isinstance(v, Mapping) and isinstance(getattr(model, k, None),
                                                                                     BaseModel) else v
              for k, v in update.items()}
    return model.model_copy(update=values)


#: keys of ``retrieval`` that moved under ``retrieval.modes``: old key -> new keys (read with a warning;
#: ``.*``: each key of the old table)
MOVED_KEYS: dict[str, tuple[str, ...]] = {
    "raptor_k": ("modes.raptor.k",), "raptor_fusion": ("modes.raptor.fusion",),
    "sections": ("modes.sections.*",), "image": ("modes.image.*",),
    **{k: (f"modes.graph.{k}",) for k in GraphModeSettings.model_fields
       if k not in ("enrich_entities_per_chunk", "enrich_weight")},
    **{k: (f"modes.graph.{k}", f"modes.image.{k}") for k in ("enrich_entities_per_chunk", "enrich_weight")}}


class RetrievalSettings(BaseModel):
    """Query-time parameters the modes share."""

    model_config = ConfigDict(frozen=True)
    MOVED_KEYS: ClassVar[dict[str, tuple[str, ...]]] = MOVED_KEYS

    top_k: int = Field(
        default=5, ge=1, le=TOP_K_MAX, description="Results returned per query (a request may ask for another "
        "number).")
    candidate_k: int = Field(default=50, ge=1, description="Dense and BM25 candidates fused by graph modes.")
    entity_k: int = Field(default=20, ge=1, description="Entities seeded by similarity to the query.")
    min_entity_score: float = Field(
        default=0.45, ge=-1.0, le=1.0, description="Least cosine of an entity seeded by similarity to the query.")
    link_weight: float = Field(
        default=100.0, ge=0, description="PPR edge weight of chunk-to-chunk title links (a chunk-entity edge "
        "weighs about 1): a passage that names another document's title walks there first, like a hyperlink.")
    about_weight: float = Field(default=2.0, ge=0, description="Extra chunk-entity weight for a document's title.")
    typed_weight: float = Field(default=2.0, ge=0, description="Snapshot weight of a typed relation per support.")
    keyword_stemmer: str = Field(
        default="english", description="BM25 matches words by their Snowball stem in this language ('camped' "
        "finds 'camping'; 'english', 'french', 'german', … or 'porter'); '' matches words as written. A change "
        "rebuilds the keyword index when the index state is next loaded.")
    weights: dict[str, float] = Field(
        default_factory=lambda: {"dense": 1.0, "bm25": 0.6, "graph": 1.0, "parts": 1.0, "hybrid": 0.5},
        description="Weight of each signal in the weighted fusion (dense, bm25, graph, parts; pcst and gnn in their "
        "modes); hybrid: the weight of the knowledge graph's list in mode mix's reciprocal-rank fusion.")
    homogeneity_floor: float = Field(
        default=0.1, ge=0, le=1, description="Graph modes: a corpus whose chunks are on average more alike than "
        "this (mean cosine of a sample) gives part of the dense weight to BM25 (``retrieval.parts.first_pass``).")
    homogeneity_slope: float = Field(
        default=3.0, ge=0, description="Share of the dense weight moved to BM25 per unit of homogeneity above "
        "homogeneity_floor (0 = the configured weights everywhere, and no seed chunks in graph mode).")
    homogeneity_min_chunks: int = Field(
        default=200, ge=2, description="The corpus homogeneity is read only from this many chunks on: the few "
        "texts of a small corpus are alike by topic, not by form, and their mean cosine says nothing of it.")
    homogeneity_min_share: float = Field(
        default=0.4, ge=0, le=1, description="The dense signal keeps at least this share of its weight.")
    cased_names: bool = Field(default=True, description="A single word a question writes in lower case, where "
                              "it capitalises others, is a common noun there and never seeds as a name it gives.")
    rrf_k: int = Field(default=60, ge=1, description="The k of reciprocal-rank fusion: 1 / (k + rank).")
    rerank: bool = Field(default=False, description="Rerank the fused top candidates.")
    mmr_lambda: float | None = Field(default=None, ge=0, le=1, description="Re-rank the top mmr_pool by maximal "
                                     "marginal relevance (1 = relevance only, lower = more diverse); None = off.")
    mmr_pool: int = Field(default=30, ge=2, le=500, description="Candidates MMR chooses the top-k from.")
    rerank_k: int = Field(default=20, ge=1, description="Fused top candidates the reranker rescores.")
    reranker: str = Field(default="minilm-maxsim", description="'minilm-maxsim' or a cross-encoder name/path.")
    nli: NliSettings = Field(default_factory=NliSettings)
    confidence: ConfidenceSettings = Field(default_factory=ConfidenceSettings)
    stage_cap_ms: float | None = Field(
        default=150.0, gt=0, description="A stage over this degrades the mode to a cheaper one (saying so); "
        "None = never degrade (rankings then never depend on the machine's load: evaluation, tests).")
    token_budget: int = Field(default=1200, ge=50, description="Tokens of cited context returned.")
    query_memory_mb: float = Field(
        default=1024.0, gt=0, description="The most memory one query's own work may take (MB), beyond the index "
        "state every query shares; a query that would need more is refused with an error naming this setting "
        "(and one the host lacks the memory for right now, with 'try again later'). Fixed by the server: a "
        "query cannot raise it.")
    modes: ModeSettings = Field(default_factory=ModeSettings, description=(
        "Settings each mode reads alone (`[retrieval.modes.<mode>]`): `graph` (read by `pcst` and `gnn` too), "
        "`raptor`, `sections`, `image`, `pcst` and `gnn`; a plug-in mode's table is checked against its own model "
        "when the retriever starts (`hopgraph modes` lists them)."))

    def merged(self, update: Mapping[str, Any]) -> RetrievalSettings:
        """These settings with ``update`` applied (unchecked, like ``model_copy``); a mapping given for a table
        updates only its own keys: ``cfg.merged({"modes": {"graph": {"expansion": "none"}}})``."""
        return _merged(self, update)

    @field_validator("keyword_stemmer")
    @classmethod
    def _known_stemmer(cls, name: str) -> str:
        import Stemmer

        if name and name not in Stemmer.algorithms():
            raise ValueError(f"unknown stemmer {name!r}; choose '' (none) or one of {', '.join(Stemmer.algorithms())}")
        return name

    @model_validator(mode="before")
    @classmethod
    def _moved_keys(cls, data: Any) -> Any:
        """The keys that moved under ``modes`` still work, for one release, with a warning naming the new key."""
        return move_keys(data, MOVED_KEYS, "retrieval.")
