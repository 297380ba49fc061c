"""Ingestion on a Ray cluster (``ingest.engine = "ray"``): the per-document work of each write batch —
chunking, spaCy extraction, chunk, entity-name and relation-type embedding — runs as a Ray task; the
ingest process stays the one ordered writer (entity resolution against the store, the graph and
vector writes, pending → complete, communities, the change log), so the stores end as after a local
ingest.

It slots in where the local extraction workers do (``Ingestor._ingest_changed``): batches go out in
order, at most two per task slot in flight (backpressure: a slow writer holds the cluster back, and
no more than that many batches are ever in memory), and come back in order; each comes back as the
same ``Prepared`` batch the local engine builds, with its ``Extraction`` and an embedder that answers
from the vectors the task computed (``Precomputed``: any text it lacks is embedded here).

Why tasks, and not Ray Data ``map_batches`` or an actor pool: the writer must take batches in their
order and at its own pace, and the records (chunks, extractions) are nested objects, not columns;
Ray Data would turn them into Arrow blocks and back, and needs its own extra (pyarrow). Tasks keep
the models loaded all the same — Ray reuses a worker process for the job's next task, and each
process keeps its models (``_LOADED``; the engine stays connected across the runs of one ingestor,
so a server's uploads and scheduled jobs load them once, ``model_loads``; the alias map reaches a
worker process whole once, then as what entity resolution changed, see ``alias_sync``) — and fail
over better than actors: a task whose worker or whole node dies is retried by Ray on any node left
(``max_retries``), where an actor pool would wait for its dead actor to be restarted on a node with
room for it. A task declares as many CPUs as the threads it embeds with (``task_options``: no node
runs more threads than it has cores), and on a cluster with GPUs a share of them (its embedder then
runs on the GPU it is given).

A task embeds with as many intra-op threads as the ingest process would (``threads``; Ray starts its
workers with one): the float sums of a matrix product depend on how many threads split it, and on
hotpotqa-100 one thread instead of two moved 3 of 1,124 chunk vectors and 292 entity vectors by ~1e-7,
which the RAPTOR tree's UMAP turned into other clusters (``benchmarks/ray_identity.py``).

Every address stays on the loopback range by default: with no address, a private Ray instance starts
at 127.0.0.2 (Ray rewrites 127.0.0.1 to the machine's outward address; other 127.0.0.x it keeps), and a
driver connecting to a loopback head joins the head's node (its IP is the head's).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from hopgraph.core.errors import StoreUnavailableError
from hopgraph.core.records import IngestReport
from hopgraph.core.settings import ChunkingSettings, EmbedderSettings, ExtractionSettings, Settings
from hopgraph.ingest.alias_sync import AliasCache, AliasChain, AliasShipper
from hopgraph.ingest.batches import Prepared, prepare, stage
from hopgraph.ingest.chunking import Chunker
from hopgraph.ingest.extraction import Extraction
from hopgraph.ingest.extractors import local_extractor
from hopgraph.ingest.relation_vectors import type_text
from hopgraph.ingest.source_text import SourceText
from hopgraph.ingest.texts import merge_relations
from hopgraph.vectors.embedders import Embedder, make_embedder

log = logging.getLogger(__name__)

#: the node IP of a private Ray instance (127.0.0.1 would be rewritten to the outward interface)
LOOPBACK_NODE = "127.0.0.2"
#: batches in flight per task slot of the cluster (the backpressure window)
_IN_FLIGHT_PER_TASK = 2
#: retries of a batch whose worker or node died
_RETRIES = 5
_CONNECT_TIMEOUT_S = 5.0
#: environment the tasks run with (models ship with packages; nothing is downloaded)
_TASK_ENV = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


class RayUnavailableError(StoreUnavailableError):
    """The Ray cluster cannot be reached, or lost a batch beyond its retries."""


@dataclass
class Computed:
    """One batch as a task sends it back: chunked, extracted (None with another extractor than spaCy),
    the texts it embedded with their vectors, and what it skipped and how long each stage took."""

    prepared: Prepared | None
    extraction: Extraction | None
    texts: list[str] = field(default_factory=list)
    vectors: np.ndarray | None = None
    skipped: dict[str, str] = field(default_factory=dict)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    node: str = ""
    loaded: bool = False  # this task loaded the worker process's models (its first task for these settings)
    alias_entries: int = 0  # alias entries this task fetched (the links of the chain its process lacked)


class Precomputed:
    """An embedder answering from vectors computed on the cluster; texts it lacks go to ``inner``."""

    def __init__(self, inner: Embedder, texts: Sequence[str], vectors: np.ndarray | None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.known: dict[str, np.ndarray] = dict(zip(texts, vectors, strict=True)) if vectors is not None else {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.known]
        found = dict(zip(missing, self.inner.embed(missing), strict=True)) if missing else {}
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = self.known[t] if t in self.known else found[t]
        return out

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self.inner.count_tokens(texts)

    def warm(self) -> None:
        self.inner.warm()

    def load(self) -> bool:
        return self.inner.load()


def torch_threads() -> int:
    """The intra-op threads torch gives this process (what a local ingest embeds with)."""
    import torch

    return int(torch.get_num_threads())


class WorkerSettings(BaseModel):
    """What a Ray task is given: the models' and the chunker's settings and the chunk limit. Never the
    stores' or the LLM's credentials (``Settings`` holds them; a task's arguments are pickled in clear)."""

    model_config = ConfigDict(frozen=True)

    embedder: EmbedderSettings
    chunking: ChunkingSettings
    extraction: ExtractionSettings
    max_document_chunks: int

    @classmethod
    def of(cls, settings: Settings) -> WorkerSettings:
        return cls(embedder=settings.embedder, chunking=settings.chunking, extraction=settings.extraction,
                   max_document_chunks=settings.ingest.max_document_chunks)


class _Worker:
    """What one worker process keeps between tasks: its embedder, chunker and spaCy model."""

    def __init__(self, settings: WorkerSettings, threads: int) -> None:
        import torch

        torch.set_num_threads(threads)  # the ingest process's count: the same float sums, the same vectors
        self.settings = settings
        self.embedder = make_embedder(settings.embedder)
        c = settings.chunking
        self.chunker = Chunker(self.embedder.count_tokens, c.max_tokens, c.overlap_tokens, c.sections)
        self.aliases = AliasCache()
        # None for an extractor that is not local (the LLM): the ingest process extracts the batch
        self.extractor = local_extractor(settings.extraction, resolve=lambda eid: self.aliases.aliases.get(eid, eid))

    def warm(self) -> None:
        """Load the embedding and spaCy models now."""
        self.embedder.embed(["warm"])
        if self.extractor is not None:
            self.extractor.extract([])

    def run(self, batch: list[SourceText]) -> Computed:
        """Chunk, extract and embed one batch as the local engine would (chunk texts in one call, as
        ``vector_points`` embeds them; then entity names and relation types)."""
        report = IngestReport()
        prepared = prepare(self.chunker, batch, self.settings.max_document_chunks, report)
        out = Computed(prepared, None, skipped=report.skipped, stage_seconds=report.stage_seconds)
        if prepared is None:
            return out
        if self.extractor is not None:
            with stage(report, "extract"):
                out.extraction = self.extractor.extract(prepared.to_extract)
        with stage(report, "embed"):
            groups = [[c.text for c in prepared.chunks]]
            if out.extraction is not None:
                groups.append(list(dict.fromkeys(e.name for e in out.extraction.entities.values())))
                groups.append(sorted({type_text(r) for r in merge_relations(out.extraction.relations)}))
            out.texts = [t for g in groups for t in g]
            out.vectors = np.concatenate([self.embedder.embed(g) for g in groups if g] or
                                         [np.zeros((0, self.embedder.dim), dtype=np.float32)])
        return out


_LOADED: dict[str, _Worker] = {}


def run_batch(settings: WorkerSettings, batch: list[SourceText], aliases: AliasChain, threads: int) -> Computed:
    """The task: one batch, on the models this worker process loaded for these settings, embedding
    with ``threads`` intra-op threads, resolving entities by the alias map ``aliases`` stands for."""
    import ray

    key = settings.model_dump_json() + f"/{threads}"
    worker = _LOADED.get(key)
    loaded = worker is None
    if worker is None:
        _LOADED.clear()
        worker = _LOADED[key] = _Worker(settings, threads)
    if not batch:  # a warm-up task
        worker.warm()
    fetched = worker.aliases.update(aliases, ray.get)
    out = worker.run(batch)
    out.alias_entries = fetched
    out.node = ray.util.get_node_ip_address()
    out.loaded = loaded
    return out


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a concrete address (``host:port`` or ``ray://host:port``); None for ``auto``."""
    bare = address.removeprefix("ray://")
    host, sep, port = bare.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def task_options(cpus: float, gpus: float, threads: int, node_cpus: float) -> tuple[dict[str, Any], int]:
    """The Ray options of a batch task and how many tasks are kept in flight: a task declares as many
    CPUs as the intra-op threads it embeds with (so that the tasks Ray packs on a node never run more
    threads than it has cores), but no more than the largest node has (``node_cpus``; a task asking for
    more would never be scheduled), and on a cluster with GPUs an equal share of them per task slot."""
    threads = max(1, min(threads, int(node_cpus)))
    slots = max(1, int(cpus) // threads)
    opts: dict[str, Any] = {"num_cpus": threads, "max_retries": _RETRIES}
    if gpus:
        opts.update(num_gpus=min(1.0, gpus / slots), max_calls=0)
    return opts, slots * _IN_FLIGHT_PER_TASK


class RayEngine:
    """Connects to the cluster at ``start``, sends batches out and yields them back in order."""

    def __init__(self, settings: Settings, address: str | None = None) -> None:
        self.settings = settings
        self.address = address or settings.ingest.ray_address or os.environ.get("RAY_ADDRESS") or None
        self._owned = False  # this engine called ray.init (and shuts it down)
        self._task: Any = None
        self.window = 1
        self.threads = 1  # intra-op threads of the tasks' embedders: the ingest process's (set at start)
        self.gpus = 0.0
        self.nodes: list[str] = []  # the node IPs the cluster reported at start
        self.by_node: Counter[str] = Counter()  # batches computed per node IP
        self.model_loads = 0  # worker processes that loaded the models for a task of this engine
        self._aliases: AliasShipper | None = None  # the alias map as the cluster holds it (while connected)
        self.alias_entries_fetched = 0  # alias entries the workers fetched for this engine's tasks

    def task_settings(self) -> WorkerSettings:
        """What every task is given: no credentials leave this process."""
        return WorkerSettings.of(self.settings)

    def start(self) -> None:
        """Connect (or start a private instance); a cluster that cannot be reached is a
        ``RayUnavailableError`` raised before the ingest writes anything."""
        import ray

        os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
        if not ray.is_initialized():
            self._connect(ray)
            self._aliases = None  # the references of an earlier connection are gone
        res = ray.cluster_resources()
        cpus, self.gpus = float(res.get("CPU", 0)), float(res.get("GPU", 0))
        alive = [n for n in ray.nodes() if n.get("Alive")]
        self.nodes = sorted(str(n["NodeManagerAddress"]) for n in alive)
        node_cpus = max((float(n.get("Resources", {}).get("CPU", 0)) for n in alive), default=1.0)
        self.threads = torch_threads()
        opts, self.window = task_options(cpus, self.gpus, self.threads, node_cpus)
        self._task = ray.remote(**opts)(run_batch)
        if self._aliases is None:
            self._aliases = AliasShipper(ray.put)
        log.info("Ray: %d node(s) %s, %g CPUs, %g GPUs", len(self.nodes), self.nodes, cpus, self.gpus)

    def _connect(self, ray: Any) -> None:
        env = {"env_vars": {k: os.environ.get(k, v) for k, v in _TASK_ENV.items()}}
        common: dict[str, Any] = {"log_to_driver": False, "runtime_env": env}
        address = self.address
        try:
            if address in (None, "local"):
                ray.init(address="local", _node_ip_address=LOOPBACK_NODE, include_dashboard=False,
                         object_store_memory=256 * 2**20, **common)
            else:
                hp = _host_port(address)
                if hp is not None:
                    with socket.create_connection(hp, timeout=_CONNECT_TIMEOUT_S):
                        pass
                node = hp[0] if hp is not None and _is_loopback(hp[0]) and not address.startswith("ray://") else None
                ray.init(address=address, _node_ip_address=node, **common)
        except (OSError, ConnectionError, RuntimeError, TimeoutError, ValueError) as exc:
            raise RayUnavailableError(f"cannot reach the Ray cluster at {address or 'a local instance'}: {exc} "
                                      "(ingest.ray_address, or hopgraph ingest --ray ADDRESS); nothing was "
                                      "written") from exc
        self._owned = True

    def warm_up(self) -> None:
        """Load the models in as many worker processes as the cluster has worker CPUs (otherwise the
        first batches do); benchmarks time ingestion, not model loading."""
        import ray

        if self._task is None:
            self.start()
        settings = ray.put(self.task_settings())
        done = ray.get([self._task.remote(settings, [], AliasChain(""), self.threads)
                        for _ in range(self.window // _IN_FLIGHT_PER_TASK)])
        self.model_loads += sum(got.loaded for got in done)

    def prepared(self, batches: Iterable[list[SourceText]], aliases: Mapping[str, str], embedder: Embedder,
                 report: IngestReport) -> Iterator[tuple[list[SourceText], Prepared | None]]:
        """The batches, chunked, extracted and embedded on the cluster, in their order (each
        ``Prepared`` carries its extraction and an embedder holding its vectors). Up to ``window``
        batches are in flight for the whole run; results are taken as they finish and held in order
        until the writer takes them (the held ones count against the window)."""
        import ray

        if self._task is None or self._aliases is None:
            self.start()
        assert self._aliases is not None
        chain = self._aliases.chain_for(aliases)
        settings = ray.put(self.task_settings())
        todo = iter(batches)
        flying: dict[Any, int] = {}  # in-flight task -> its sequence number
        held: dict[int, tuple[list[SourceText], Computed | None]] = {}  # sent or finished, not yet yielded
        sent = taken = 0
        while True:
            while sent - taken < self.window:
                batch = next(todo, None)
                if batch is None:
                    break
                flying[self._task.remote(settings, batch, chain, self.threads)] = sent
                held[sent] = (batch, None)
                sent += 1
            if taken == sent:
                return
            while held[taken][1] is None:
                t = time.perf_counter()
                ready, _ = ray.wait(list(flying), num_returns=1)
                report.stage_seconds["ray_wait"] = report.stage_seconds.get("ray_wait", 0.0) + time.perf_counter() - t
                seq = flying.pop(ready[0])
                held[seq] = (held[seq][0], self._got(ready[0], held[seq][0], report))
            batch, got = held.pop(taken)
            taken += 1
            assert got is not None
            if got.prepared is not None:
                got.prepared.extraction = got.extraction
                got.prepared.embedder = Precomputed(embedder, got.texts, got.vectors)
            yield batch, got.prepared

    def _got(self, ref: Any, batch: list[SourceText], report: IngestReport) -> Computed:
        """A finished task's result, its stage seconds and skips added to the report."""
        import ray

        try:
            got: Computed = ray.get(ref)
        except ray.exceptions.RayTaskError:
            raise
        except ray.exceptions.RayError as exc:
            raise RayUnavailableError(f"the Ray cluster lost a batch of {len(batch)} document(s) after "
                                      f"{_RETRIES} retries ({exc}); rerun to complete the ingest") from exc
        for name, secs in got.stage_seconds.items():
            key = f"ray_{name}"
            report.stage_seconds[key] = report.stage_seconds.get(key, 0.0) + secs
        for source, reason in got.skipped.items():
            report.skipped[source] = reason
            log.warning("skipped %s: %s", source, reason)
        self.by_node[got.node] += 1
        self.model_loads += got.loaded
        self.alias_entries_fetched += got.alias_entries
        return got

    def close(self) -> None:
        """Disconnect (stopping the private instance) if this engine connected."""
        self._task = self._aliases = None
        if self._owned:
            import ray

            self._owned = False
            ray.shutdown()
