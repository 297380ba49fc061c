"""Ingestion on a Ray cluster (``ingest.engine = "ray"``): the per-document work of each write batch —
chunking, spaCy extraction, chunk, entity-name and relation-type embedding — runs as Ray tasks; the
ingest process stays the one ordered writer (entity resolution against the store, the graph and
vector writes, pending → complete, communities, the change log), so the stores end as after a local
ingest.

It slots in where the local extraction workers do (``Ingestor._ingest_changed``): batches go out in
order, at most two per parsing slot in flight (backpressure: a slow writer holds the cluster back, and
no more than that many batches are ever in memory), are taken as they finish and handed to the writer
in order; each comes back as the same ``Prepared`` batch the local engine builds, with its
``Extraction`` and an embedder that answers from the vectors the tasks computed (``Precomputed``: any
text it lacks is embedded here). A batch is parsed by one task and embedded by a second
(``ray_tasks``), which ask for different resources (``task_options``): on a cluster with GPUs the
CPU-only nodes parse while the GPU nodes embed.

Why tasks, and not Ray Data ``map_batches`` or an actor pool: the writer must take batches in their
order and at its own pace, and the records (chunks, extractions) are nested objects, not columns;
Ray Data would turn them into Arrow blocks and back, and needs its own extra (pyarrow). Tasks keep
the models loaded all the same — Ray reuses a worker process for the job's next task, and each
process keeps its models (the engine stays connected across the runs of one ingestor, so a server's
uploads and scheduled jobs load them once, ``model_loads``; the alias map reaches a worker process
whole once, then as what entity resolution changed, see ``alias_sync``) — and fail over better than
actors: a task whose worker or whole node dies is retried by Ray on any node left (``max_retries``;
a parsed batch lost with its node is parsed again), where an actor pool would wait for its dead actor
to be restarted on a node with room for it.

An embedding task embeds with as many intra-op threads as a local ingest would (``threads``:
``ingest.embed_threads``, one per core by default; Ray starts its workers with one): the float sums of
a matrix product depend on how many threads split it, and on hotpotqa-100 one thread instead of two
moved 3 of 1,124 chunk vectors and 292 entity vectors by ~1e-7, which the RAPTOR tree's UMAP turned
into other clusters (``benchmarks/ray_identity.py``).

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
from typing import Any

import numpy as np

from hopgraph.core.errors import StoreUnavailableError
from hopgraph.core.records import IngestReport
from hopgraph.core.settings import Settings
from hopgraph.ingest.alias_sync import AliasChain, AliasShipper
from hopgraph.ingest.batches import Prepared
from hopgraph.ingest.local_engine import embed_threads
from hopgraph.ingest.ray_tasks import Computed, WorkerSettings, embed_batch, parse_batch
from hopgraph.ingest.source_text import SourceText
from hopgraph.vectors.embedders import Embedder

log = logging.getLogger(__name__)

#: the node IP of a private Ray instance (127.0.0.1 would be rewritten to the outward interface)
LOOPBACK_NODE = "127.0.0.2"
#: batches in flight per parsing slot of the cluster (the backpressure window)
_IN_FLIGHT_PER_TASK = 2
#: embedding tasks sharing one GPU at a time (one computes while the other's batch moves)
_EMBEDS_PER_GPU = 2
#: retries of a batch whose worker or node died
_RETRIES = 5
_CONNECT_TIMEOUT_S = 5.0
#: environment the tasks run with (models ship with packages; nothing is downloaded)
_TASK_ENV = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


class RayUnavailableError(StoreUnavailableError):
    """The Ray cluster cannot be reached, or lost a batch beyond its retries."""


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


def task_options(cpus: float, gpus: float, threads: int, node_cpus: float
                 ) -> tuple[dict[str, Any], dict[str, Any], int]:
    """The Ray options of the parsing and the embedding tasks, and how many batches are kept in flight.
    Parsing (chunking, spaCy) declares one CPU. Embedding declares as many CPUs as the intra-op threads
    it embeds with (so that the tasks Ray packs on a node never run more threads than it has cores), but
    no more than the largest node has (``node_cpus``; a task asking for more would never be scheduled);
    on a cluster with GPUs it declares one CPU and a share of a GPU instead, so it runs on the GPU nodes
    while every node's CPUs parse. Two batches are in flight per parsing slot."""
    threads = max(1, min(threads, int(node_cpus)))
    parse: dict[str, Any] = {"num_cpus": 1, "max_retries": _RETRIES}
    embed: dict[str, Any] = {"num_cpus": threads, "max_retries": _RETRIES}
    if gpus:
        embed.update(num_cpus=1, num_gpus=1.0 / _EMBEDS_PER_GPU, max_calls=0)
    return parse, embed, max(1, int(cpus)) * _IN_FLIGHT_PER_TASK


class RayEngine:
    """Connects to the cluster at ``start``, sends batches out and yields them back in order."""

    def __init__(self, settings: Settings, address: str | None = None) -> None:
        self.settings = settings
        self.address = address or settings.ingest.ray_address or os.environ.get("RAY_ADDRESS") or None
        self._owned = False  # this engine called ray.init (and shuts it down)
        self._parse: Any = None  # the two remote functions, while connected
        self._embed: Any = None
        self.window = 1
        self.threads = 1  # intra-op threads of the tasks' embedders: the ingest process's (set at start)
        self.gpus = 0.0
        self.nodes: list[str] = []  # the node IPs the cluster reported at start
        self.by_node: Counter[str] = Counter()  # batches parsed per node IP
        self.embedded_on: Counter[str] = Counter()  # batches embedded per node IP
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
        self.threads = embed_threads(self.settings.ingest.embed_threads)  # what a local ingest embeds with
        parse, embed, self.window = task_options(cpus, self.gpus, self.threads, node_cpus)
        self._parse, self._embed = ray.remote(**parse)(parse_batch), ray.remote(**embed)(embed_batch)
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

        if self._parse is None:
            self.start()
        settings = ray.put(self.task_settings())
        done = ray.get([self._submit(settings, [], AliasChain(""), warm=True)
                        for _ in range(self.window // _IN_FLIGHT_PER_TASK)])
        self.model_loads += sum(got.loads for got in done)

    def _submit(self, settings: Any, batch: list[SourceText], aliases: AliasChain, warm: bool = False) -> Any:
        """The reference of ``batch`` embedded: its embedding task is given its parsing task's result."""
        return self._embed.remote(settings, self._parse.remote(settings, batch, aliases, warm), self.threads, warm)

    def prepared(self, batches: Iterable[list[SourceText]], aliases: Mapping[str, str], embedder: Embedder,
                 report: IngestReport) -> Iterator[tuple[list[SourceText], Prepared | None]]:
        """The batches, chunked, extracted and embedded on the cluster, in their order (each
        ``Prepared`` carries its extraction and an embedder holding its vectors). Up to ``window``
        batches are in flight for the whole run; results are taken as they finish and held in order
        until the writer takes them (the held ones count against the window)."""
        import ray

        if self._parse is None or self._aliases is None:
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
                flying[self._submit(settings, batch, chain)] = sent
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
        self.embedded_on[got.embed_node] += 1
        self.model_loads += got.loads
        self.alias_entries_fetched += got.alias_entries
        return got

    def close(self) -> None:
        """Disconnect (stopping the private instance) if this engine connected."""
        self._parse = self._embed = self._aliases = None
        if self._owned:
            import ray

            self._owned = False
            ray.shutdown()
