"""Domain records shared by every package, with stable content-derived ids.

Ids are short hex digests of normalized content or names, so re-ingesting the same
input yields the same ids and every write can be an idempotent MERGE / upsert.
Part of hopgraph.core: imports nothing of the project outside it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, computed_field

from hopgraph.core.text import normalize_name

if TYPE_CHECKING:  # numpy is imported where the arrays are voted: the CLI's light commands never load it
    import numpy as np


def stable_id(prefix: str, *parts: str) -> str:
    """A deterministic id: ``prefix`` + 20 hex chars of SHA-256 over the parts."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:20]
    return f"{prefix}_{digest}"


#: the entity type of a graph document's own nodes (scoped to it, never merged with other entities)
GRAPH_NODE = "GRAPH_NODE"

#: the relation type of two entities named in one sentence: an untyped link, weaker evidence than a
#: typed relation (community weights, beam type weights), never embedded unless asked for
CO_OCCURS = "co_occurs"


def content_hash(text: str | bytes) -> str:
    """SHA-256 of a document's content (text is hashed as UTF-8)."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def document_id(source: str) -> str:
    """A document is identified by where it comes from, so a changed file keeps its id."""
    return stable_id("doc", source)


def chunk_id(doc_id: str, text: str) -> str:
    """A chunk is identified by its document and its content."""
    return stable_id("chk", doc_id, text)


def entity_id(name: str) -> str:
    """An entity is identified by its normalized name (NER types are too noisy to split on)."""
    return stable_id("ent", normalize_name(name))


def relation_id(source_id: str, type_: str, target_id: str) -> str:
    """A relation is identified by its endpoints and type."""
    return stable_id("rel", source_id, type_, target_id)


#: the key of ``QueryResult.timings_ms`` for the wait on models still loading (apart from the stages and
#: ``total``)
MODEL_LOAD = "model_load"


class Document(BaseModel):
    """A source document (a text file, a corpus record, an image with captions or a graph)."""

    id: str
    source: str
    title: str = ""
    content_hash: str
    kind: Literal["text", "image", "graph"] = "text"
    uri: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class ChatContext(BaseModel):
    """Where a chunk of a conversation stands in time (``ingest.conversations``)."""

    session: str = Field(default="", description="ISO 8601 start of the chunk's session ('' when undated).")
    speakers: list[str] = Field(default_factory=list, description="Who speaks in the chunk, in order.")
    dates: list[tuple[str, str]] = Field(default_factory=list, description="The days its turns mention "
                                         "('yesterday', 'last week', '8 May'), resolved against the session's "
                                         "date, as inclusive ISO intervals.")


class Chunk(BaseModel):
    """A window of a document's text (``chat``: its place in a conversation, for chat logs)."""

    id: str
    document_id: str
    text: str
    ord: int = Field(ge=0)
    n_tokens: int = Field(default=0, ge=0)
    chat: ChatContext | None = None

    def chat_json(self) -> str:
        """Its chat context as the graph stores it (``Chunk.chat_json``): JSON, '' outside a conversation."""
        return self.chat.model_dump_json() if self.chat is not None else ""


class Section(BaseModel):
    """A part of a document under one heading (or one paragraph, with ``chunking.sections =
    paragraphs``); its chunks never span two sections."""

    id: str
    document_id: str
    title: str = Field(default="", description="Its heading ('' before the first heading).")
    path: str = Field(default="", description="Headings from the top down to it, joined by ' > '.")
    level: int = Field(default=0, ge=0, le=6)
    ord: int = Field(ge=0)
    chunk_ids: list[str] = Field(default_factory=list)


def section_id(doc_id: str, ord_: int, path: str) -> str:
    """A section is identified by its document, its position and its headings."""
    return stable_id("sec", doc_id, str(ord_), path)


class Entity(BaseModel):
    """A named thing found in chunks."""

    id: str
    name: str
    type: str
    description: str = ""
    description_chunk: str = Field(default="", description="The chunk the description comes from: the "
                                   "supporting chunk with the smallest id wins, whatever the ingest order.")


class Mention(BaseModel):
    """A chunk mentions an entity ``count`` times; ``label`` is the type the extractor gave it there
    (the majority over those mentions; "" when it gives none). An entity's type is the majority label
    over all its mentions (``majority_label``), not the first one seen."""

    chunk_id: str
    entity_id: str
    count: int = Field(default=1, ge=1)
    label: str = ""


#: the type of noun-phrase concepts (a named-entity label beats it on a tied vote)
CONCEPT = "CONCEPT"
#: the type of identifiers ("INC-2402", "v2.3"; ``ingest.identifiers``)
IDENTIFIER = "IDENTIFIER"
#: the type of people (spaCy's label; a chat's speakers get it too)
PERSON = "PERSON"


def majority_label(votes: Mapping[str, int]) -> str:
    """The label with most votes ("" ignored); ties go to a named-entity label over ``CONCEPT``, then to
    the first label alphabetically (so the vote never depends on the order mentions were read)."""
    best = [(n, label != CONCEPT, label) for label, n in votes.items() if label and n > 0]
    if not best:
        return ""
    top = max(n for n, _, _ in best)
    return min((not named, label) for n, named, label in best if n == top)[1]


def majority_labels(keys: np.ndarray, labels: np.ndarray, counts: np.ndarray) -> dict[int, str]:
    """``majority_label`` of many keys' votes at once, the votes as parallel arrays (int key, label,
    count): key -> its label, for the keys with a labelled vote."""
    import numpy as np

    names = sorted(set(labels.tolist()) - {""})
    if not names:
        return {}
    code = {n: i for i, n in enumerate(names)}
    col = np.fromiter((code.get(label, -1) for label in labels.tolist()), dtype=np.int64, count=len(labels))
    ok = col >= 0
    pair, at = np.unique(keys[ok].astype(np.int64) * len(names) + col[ok], return_inverse=True)
    n = np.bincount(at.ravel(), weights=counts[ok], minlength=len(pair))
    pair, n = pair[n > 0], n[n > 0]
    key, col = pair // len(names), pair % len(names)
    concept = np.asarray([name == CONCEPT for name in names])[col]
    best = np.lexsort((col, concept, -n, key))  # per key: most votes, then a named label, then alphabetical
    first = best[np.r_[True, key[best][1:] != key[best][:-1]]] if len(best) else best
    return {int(k): names[c] for k, c in zip(key[first].tolist(), col[first].tolist(), strict=True)}


def combine_mentions(mentions: Iterable[Mention]) -> list[Mention]:
    """One mention per (chunk, entity): the counts added up, the label voted by ``majority_label``."""
    votes: dict[tuple[str, str], dict[str, int]] = {}
    for m in mentions:
        v = votes.setdefault((m.chunk_id, m.entity_id), {})
        v[m.label] = v.get(m.label, 0) + m.count
    return [Mention(chunk_id=c, entity_id=e, count=sum(v.values()), label=majority_label(v))
            for (c, e), v in votes.items()]


class Relation(BaseModel):
    """A typed, weighted relation between two entities, with the chunks that support it."""

    id: str
    source_id: str
    target_id: str
    type: str
    description: str = ""
    weight: float = 1.0
    chunk_ids: list[str] = Field(default_factory=list)
    description_chunk: str = Field(default="", description="As for entities: the supporting chunk with the "
                                   "smallest id gives the description.")
    label: str = Field(default="", description="The predicate as written (\"born in\"; the type is its lemma, "
                       "\"bear_in\"), from the same chunk as the description.")

    @property
    def shown(self) -> str:
        """What people read: the surface label, else the type with spaces."""
        return self.label or self.type.replace("_", " ")

    def merged(self, other: Relation) -> Relation:
        """The same relation stated again: support is the union, the description the one from the
        smallest chunk (so it does not depend on the order chunks were read in)."""
        take = other if other.description_chunk and (
            not self.description_chunk or other.description_chunk < self.description_chunk) else self
        return self.model_copy(update={"chunk_ids": sorted(set(self.chunk_ids) | set(other.chunk_ids)),
                                       "description": take.description, "label": take.label,
                                       "description_chunk": take.description_chunk})


class Community(BaseModel):
    """A cluster of entities at one level of a hierarchy."""

    id: str
    level: int = Field(ge=0)
    title: str = ""
    summary: str = ""
    size: int = Field(default=0, ge=0)
    parent_id: str | None = None
    member_ids: list[str] = Field(default_factory=list)
    key_ids: list[str] = Field(default_factory=list, description="Members the title and summary name.")
    quoted: list[str] = Field(default_factory=list, description="Relations the summary quotes, as "
                              "'relation_id source_id target_id'.")


class SummaryNode(BaseModel):
    """A node of the RAPTOR tree: the summary of a cluster of chunks (level 1) or of summaries (level > 1),
    in one branch of the forest; a branch's root also carries the branch's leaves and centroid."""

    id: str
    branch: str
    level: int = Field(ge=1)
    text: str = ""
    children: list[str] = Field(default_factory=list, description="Chunk ids (level 1) or summary ids.")
    size: int = Field(default=0, ge=0, description="Chunks under the node.")
    central: list[str] = Field(default_factory=list, description="Its most central chunks, most central first.")
    root: bool = False
    leaves: list[str] = Field(default_factory=list, description="Root only: every chunk of the branch.")
    centroid: list[float] = Field(default_factory=list, description="Root only: mean chunk vector of the branch.")


class Citation(BaseModel):
    """Where a retrieved passage comes from."""

    document_id: str
    chunk_id: str
    source: str


class RetrievedChunk(BaseModel):
    """One ranked result of a query."""

    rank: int
    score: float
    text: str
    citation: Citation
    entities: list[str] = Field(default_factory=list, description="Entities that led to it (graph modes).")
    image: str | None = Field(default=None, description="The image path or URI, for an image document.")
    cluster: int | None = Field(default=None, description="Rank of its NLI cluster (retrieval.nli), 0 = best.")
    section: str | None = Field(default=None, description="The section it stands for (mode sections): its "
                                "headings from the top, or its paragraph.")
    confidence: float | None = Field(default=None, description="Its probability under the score-entropy "
                                     "distribution (retrieval.parts.confidence).")


class QueryFilters(BaseModel):
    """Restrict results to some documents: by id, or by source prefix (a folder, a JSONL file)."""

    document_ids: list[str] | None = Field(default=None, max_length=1000)
    source_prefix: str | None = Field(default=None, min_length=1, max_length=4096)

    def allows(self, document_id: str, source: str) -> bool:
        if self.document_ids is not None and document_id not in self.document_ids:
            return False
        return self.source_prefix is None or source.startswith(self.source_prefix)


class QueryResult(BaseModel):
    """The answer to a query: ranked chunks with citations."""

    query: str
    mode: str
    results: list[RetrievedChunk]
    timings_ms: dict[str, float] = Field(default_factory=dict, description="Milliseconds per stage and in all "
                                         "(`total`); `model_load`, when present: the wait for a model still "
                                         "loading (a cold process's first query), left out of `total`.")
    notes: list[str] = Field(default_factory=list, description="Degraded stages and other remarks.")
    context: str = Field(default="", description="Cited context under the token budget.")
    explain: dict[str, Any] = Field(default_factory=dict, description="Seeds, paths and per-signal scores.")
    index_version: int = Field(default=0, description="The committed graph version whose index state answered.")
    graph_version: int = Field(default=0, description="The graph's committed version as last seen (a server "
                               "refreshes its state in the background: this may be ahead of index_version).")
    confidence: float | None = Field(default=None, description="1 - the normalized entropy of the top scores "
                                     "(retrieval.parts.confidence): near 1 when one result stands out.")
    extras: dict[str, Any] = Field(default_factory=dict, description="The mode's own output, by name (`hopgraph "
                                   "modes` says which modes have any).")

    @computed_field(description="A stage overran its cap and a cheaper mode answered (see notes).")  # type: ignore[prop-decorator]
    @property
    def degraded(self) -> bool:
        return any(n.startswith("degraded") for n in self.notes)


class DeadLetter(BaseModel):
    """A document whose parsing or extraction failed (after a retry where its worker died): not written,
    so a rerun tries it again."""

    source: str
    document_id: str
    content_hash: str = ""
    error: str = Field(description="what failed: the exception's type and message")
    attempts: int = Field(default=1, description="tries the run gave it")


class IngestReport(BaseModel):
    """What an ingestion run did."""

    documents_seen: int = 0
    documents_ingested: int = 0
    documents_unchanged: int = 0
    chunks: int = 0
    entities: int = 0
    mentions: int = 0
    relations: int = 0
    entities_merged: int = 0
    communities: int = 0
    summaries: int = Field(default=0, description="Nodes of the RAPTOR tree after the run (0: not built).")
    documents_deleted: int = 0
    conversations: int = Field(default=0, description="Documents read as conversations (speaker-tagged lines).")
    dated_chunks: int = Field(default=0, description="Chunks of conversations with a session date.")
    redated_chunks: int = Field(default=0, description="Chunks of conversations stored before a change of the "
                                "rules that date chat turns, whose turn dates this run resolved again.")
    skipped: dict[str, str] = Field(default_factory=dict, description="source -> reason")
    warnings: dict[str, str] = Field(default_factory=dict,
                                     description="source -> what was left out (e.g. an unreadable image file)")
    seconds: float = 0.0
    stage_seconds: dict[str, float] = Field(default_factory=dict, description=(
        "seconds per pipeline stage; stages run side by side (extraction, embedding and writing overlap), so "
        "they can sum past the run's seconds"))
    stage_wait: dict[str, float] = Field(default_factory=dict, description=(
        "seconds a stage waited for the stage before it (``embed``: for extraction; ``write``: for embedding)"))
    stage_threads: dict[str, int] = Field(default_factory=dict, description=(
        "the share of the cores each stage was given: extraction processes, embedding threads, writer threads"))
    bound: str = Field(default="", description="the stage that bounded this run's throughput (the busiest)")
    extraction_workers: int = Field(default=0, description="spaCy worker processes this run's batches were "
                                    "parsed in (0: in the ingest process; see extraction.processes)")
    dead_letters: list[DeadLetter] = Field(default_factory=list, description=(
        "documents whose parsing or extraction failed; the rest of the run landed, and a rerun tries them again"))


class Answer(BaseModel):
    """An LLM's answer from a mode's cited context, with its citations checked against that context."""

    question: str
    answer: str
    mode: str
    model: str = Field(description="The LLM that answered.")
    citations: list[Citation] = Field(default_factory=list, description="Cited passages, in first-cited order.")
    invalid_citations: list[str] = Field(
        default_factory=list, description="Labels the answer cites that name nothing in the context it was given.")
    uncited_sentences: list[str] = Field(default_factory=list, description="Sentences that cite nothing.")
    retrieval: QueryResult = Field(description="The retrieval whose context the LLM was given.")
    timings_ms: dict[str, float] = Field(default_factory=dict)

    @computed_field(description="Every citation names a passage of the context.")  # type: ignore[prop-decorator]
    @property
    def citations_valid(self) -> bool:
        return not self.invalid_citations
