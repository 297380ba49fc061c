"""Request and response bodies of the HTTP API (pydantic; they make the OpenAPI schema)."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
    model_validator,
)

from hopgraph.core.access import check_groups
from hopgraph.core.limits import (
    CYPHER_MAX_ROWS,
    CYPHER_MAX_TIMEOUT_S,
    CYPHER_MIN_TIMEOUT_S,
    QUERY_TEXT_MAX,
    TOP_K_MAX,
)
from hopgraph.core.records import Answer, QueryFilters, QueryResult
from hopgraph.core.times import iso_time
from hopgraph.retrieval.registry import REGISTRY

#: the modes of the registry, as the schema's enum (names are validated against it)
Mode = Enum("Mode", {name: name for name in REGISTRY.names}, type=str)  # type: ignore[misc]


class Problem(BaseModel):
    """An error as RFC 7807 problem details (``application/problem+json``)."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str = ""
    instance: str | None = None
    errors: list[dict[str, Any]] | None = Field(default=None, description="Field errors of a 422.")


def _not_blank(v: str) -> str:
    if not v.strip():
        raise ValueError("the text is blank")
    return v


#: the text of a query or a question: 1 to QUERY_TEXT_MAX (4,000) characters, not all blank
QueryText = Annotated[str, Field(min_length=1, max_length=QUERY_TEXT_MAX), AfterValidator(_not_blank)]


class QueryRequest(BaseModel):
    """A retrieval query."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"text": "Which magazine was started first, Arthur's Magazine or First for Women?", "mode": "graph",
         "top_k": 5},
        {"text": "ghost of Christmas past", "mode": "local", "top_k": 3,
         "filters": {"source_prefix": "/data/books/"}, "token_budget": 800, "explain": True},
    ]})

    text: QueryText = Field(description="The question or search text.")
    mode: Mode = Field(default=Mode("graph"), description="Retrieval mode; 'graph' is the strongest.")
    top_k: int = Field(default=5, ge=1, le=TOP_K_MAX)
    filters: QueryFilters | None = None
    token_budget: int | None = Field(default=None, ge=50, le=32000, description="Tokens of cited context.")
    rerank: bool | None = Field(default=None, description="Rerank the fused candidates (default: settings).")
    mmr_lambda: float | None = Field(default=None, ge=0, le=1, description="Diversify the top-k by maximal "
                                     "marginal relevance (1 = relevance only; default: settings).")
    nli: bool | None = Field(default=None, description="Group the top results by NLI entailment (needs "
                             "retrieval.nli.model; default: retrieval.nli.enabled).")
    confidence: bool | None = Field(default=None, description="Give each result its probability and the query "
                                    "its confidence by score entropy (default: retrieval.confidence.enabled).")
    explain: bool = Field(default=False, description="Include seeds, paths and per-signal scores.")


class AnswerRequest(BaseModel):
    """A question for the LLM, answered from a retrieval mode's cited context."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"text": "Who was Marley to Scrooge?", "mode": "graph", "top_k": 6},
    ]})

    text: QueryText = Field(description="The question.")
    mode: Mode | None = Field(default=None, description="Retrieval mode of the context (default: answer.mode).")
    top_k: int | None = Field(default=None, ge=1, le=TOP_K_MAX,
                              description="Passages retrieved (default: answer.top_k).")
    filters: QueryFilters | None = None
    token_budget: int | None = Field(default=None, ge=100, le=64000, description="Tokens of context sent.")


class AnswerResponse(Answer):
    """The LLM's answer, its citations (checked: ``invalid_citations`` name labels that are not in the
    context), the sentences that cite nothing, and the retrieval whose context it was given."""


class QueryResponse(QueryResult):
    """Ranked, cited chunks, the cited context, per-stage timings and ``degraded`` (a stage overran its
    cap and a cheaper mode answered)."""


#: access groups of documents (``core.access``): checked, sorted, each once
Groups = Annotated[list[str], AfterValidator(check_groups)]

class DocumentIn(BaseModel):
    """A text record, or an image record with captions. Re-sending an id updates that document."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=512, pattern=r"^[^#\s][^#]*$")
    text: str | None = Field(default=None, max_length=5_000_000)
    title: str | None = Field(default=None, max_length=2000)
    metadata: dict[str, Any] | None = None
    groups: Groups | None = Field(default=None, max_length=100, description="The access groups that may read "
                                     "the document (keys' `groups`); none: public in its collection.")
    image: str | None = Field(default=None, max_length=4096, description="Image path or URI.")
    captions: list[str] | None = Field(default=None, max_length=100)

    @model_validator(mode="after")
    def _text_or_image(self) -> DocumentIn:
        has_text = self.text is not None and self.text.strip() != ""
        has_image = self.image is not None and bool(self.captions) and any(c.strip() for c in self.captions or [])
        if has_text == has_image:
            raise ValueError("give either a non-blank 'text', or an 'image' with non-blank 'captions'")
        return self


class LocalPathsRequest(BaseModel):
    """Files and folders on the server's own disk to ingest (what ``hopgraph ingest`` sends while
    ``hopgraph serve`` owns the stores on the same machine)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"paths": ["/home/me/notes"]}]})

    paths: list[str] = Field(min_length=1, max_length=1000, description="Absolute paths on the server; "
                             "documents once ingested from them whose file is gone are deleted.")
    groups: Groups = Field(default_factory=list, max_length=100, description="The access groups that may "
                              "read the documents (those naming none of their own); none: public in the collection.")


class IngestRequest(BaseModel):
    """Documents to ingest as JSON (files go as multipart/form-data field ``files``)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"documents": [{"id": "note-1", "title": "Scrooge", "text": "Ebenezer Scrooge ran a counting-house in "
                        "London with his clerk Bob Cratchit."}], "collection": "notes"},
    ]})

    documents: list[DocumentIn] = Field(min_length=1)
    collection: str = Field(default="api", min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:/-]+$",
                            description="Source prefix: a document's source is '<collection>#<id>'.")


#: a time kept as epoch seconds inside, written as ISO 8601 (UTC) in every JSON response
Timestamp = Annotated[float, PlainSerializer(iso_time, return_type=str, when_used="json"),
                      WithJsonSchema({"type": "string", "format": "date-time"}, mode="serialization")]


class JobOut(BaseModel):
    """A background job (an ingest, a deletion or a scheduled re-ingestion run)."""

    id: str
    kind: Literal["ingest", "delete", "reingest"]
    status: Literal["queued", "running", "cancelling", "succeeded", "failed", "cancelled", "skipped"]
    collection: str = Field(default="default", description="The collection the job works on.")
    detail: str = ""
    created_at: Timestamp
    started_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    result: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    warning: str | None = Field(default=None, description="What a succeeded job could not do, e.g. a scheduled "
                                "source's 'path missing: <path>' (its documents are kept).")
    done: int = Field(default=0, description="Documents handled so far.")
    total: int | None = Field(default=None, description="Documents in all, when known.")


class QuietRuns(BaseModel):
    """A scheduled source's runs that changed nothing since its last change (not listed as jobs)."""

    runs: int = Field(description="Runs that changed nothing since the source's last change.")
    last_checked: Timestamp = Field(description="When the latest of them started.")
    skipped: dict[str, str] = Field(default_factory=dict, description="Files its latest run skipped, and why.")


class JobList(BaseModel):
    jobs: list[JobOut]
    schedules: dict[str, Timestamp | None] = Field(default_factory=dict, description="Next run of each schedule.")
    unchanged: dict[str, QuietRuns] = Field(
        default_factory=dict, description="Per scheduled source, its runs that changed nothing (no job rows).")


class DocumentOut(BaseModel):
    id: str
    source: str | None
    status: str | None
    content_hash: str | None
    groups: list[str] | None = Field(default=None, description="The document's access groups ([]: public), in "
                                     "the list of documents to a key that reads every document; null otherwise.")


class ReloadOut(BaseModel):
    keys: int = Field(description="API keys now configured.")
    schedules: list[str] = Field(description="Scheduled sources now running.")
    restart_needed: list[str] = Field(description="Changed settings sections a reload does not apply.")


class EntityMatch(BaseModel):
    id: str
    name: str
    type: str
    chunks: int = Field(description="Chunks that mention it.")


class EntityOut(BaseModel):
    id: str
    name: str | None
    type: str | None
    description: str | None = None
    chunks: int = Field(description="Chunks that mention it.")
    mentions: int
    communities: list[str]


class NeighbourOut(BaseModel):
    id: str
    name: str | None
    type: str | None
    relation: str | None
    weight: float | None
    description: str | None = None
    outgoing: bool = Field(description="True when the relation points from the entity to this neighbour.")


class MentionOut(BaseModel):
    """A chunk that mentions an entity: the entity's provenance."""

    chunk_id: str
    document_id: str
    source: str
    ord: int
    count: int = Field(description="Mentions of the entity in the chunk.")
    text: str


class CommunitySummary(BaseModel):
    id: str
    level: int | None
    title: str | None
    summary: str | None
    size: int | None


class MemberOut(BaseModel):
    id: str
    name: str | None
    type: str | None


class CommunityOut(CommunitySummary):
    parent_id: str | None
    children: list[str]
    members: list[MemberOut]


class CypherRequest(BaseModel):
    """A read-only Cypher statement with parameters."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"query": "MATCH (e:Entity) WHERE e.name = $name RETURN e.id, e.type", "params": {"name": "Scrooge"}},
        {"query": "MATCH (e:Entity)<-[:MENTIONS]-(c:Chunk) RETURN e.name AS entity, count(c) AS chunks "
                  "ORDER BY chunks DESC LIMIT 10"},
    ]})

    query: str = Field(min_length=1, max_length=20000)
    params: dict[str, Any] = Field(default_factory=dict)
    limit: int | None = Field(default=None, ge=1, le=CYPHER_MAX_ROWS,
                              description="Row limit (at most the server's cap, api.cypher_row_limit).")
    timeout_s: float | None = Field(default=None, ge=CYPHER_MIN_TIMEOUT_S, le=CYPHER_MAX_TIMEOUT_S,
                                    description="Timeout (at most the server's cap, api.cypher_timeout_s).")


class CypherResponse(BaseModel):
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool = Field(description="More rows existed than the limit.")


class Health(BaseModel):
    status: Literal["ok"]


class CheckOut(BaseModel):
    """One invariant of ``hopgraph doctor``."""

    name: str
    ok: bool
    detail: str


class StoreStatus(BaseModel):
    """The counts of ``hopgraph status``."""

    graph_version: int
    graph: dict[str, int] = Field(description="Graph items per kind (Document, Chunk, Entity, ...).")
    vectors: dict[str, int] = Field(description="Vectors per collection.")


class IndexOut(BaseModel):
    served_version: int = Field(description="The committed graph version whose index state answers queries.")
    lag: int = Field(description="Committed versions the graph is ahead of the served state (refreshing meanwhile).")
    last_refresh_s: float = Field(description="Seconds the last refresh took.")
    last_refresh_kind: str = Field(description="rebuild, load, delta or load+delta.")


class Ready(BaseModel):
    """Ready; the rest only for a key that may see the default collection's counts (as GET /status)."""

    status: Literal["ready"]
    graph_version: int | None = Field(default=None, description="The committed graph version (with a key).")
    chunks: int | None = Field(default=None, description="Chunk vectors (with a key).")
    index: IndexOut | None = Field(default=None, description="The served index state (with a key).")
    checks: list[CheckOut] | None = Field(default=None, description="The checks of `hopgraph doctor` (with a key).")
