"""Ingestion on a Ray cluster (``ingest.engine = "ray"``): the per-document work of each write batch —
chunking, spaCy extraction, chunk, entity-name and relation-type embedding — runs on two actor pools
(``ray_pools``: parse actors and embed actors, made once per engine, each loading its model once and
declaring exactly the CPUs and GPU share it runs with); the ingest process stays the one ordered writer
(entity resolution against the store, the graph and vector writes, pending → complete, communities, the
change log), so the stores end as after a local ingest.

It slots in where the local extraction workers do (``Ingestor._write_all``): the driver sends a batch to
the parse actor with the fewest calls in flight, hands the parsed batch (by reference: it moves between
the nodes without passing through the driver) to the least busy embed actor, and takes results as they
finish, handing them to the writer in order. At most two batches per actor are in flight (backpressure:
a slow writer holds the cluster back). Each comes back as the same ``Prepared`` batch the local engine
builds, with its ``Extraction`` and an embedder that answers from the vectors the actors computed
(``Precomputed``: any text it lacks is embedded here). Why actors and a queue of our own rather than
Ray Data ``map_batches``: the writer must take batches in their order and at its own pace, and the
records (chunks, extractions) are nested objects, not columns that Arrow blocks would hold.

The pools live as long as the engine: across every ingest of one ``Platform`` (a server's uploads and
its scheduled runs), until ``close``. A document whose parsing raises is a dead letter
(``IngestReport.dead_letters``): the rest of its batch is written, and a rerun tries it again. An actor
that dies (its node gone) has its batches sent to the others of its pool and a replacement asked for;
a batch whose parse actor died twice is dead-lettered whole, and a batch that fails ``_RETRIES`` times
for lost actors or objects ends the run (``RayUnavailableError``; a rerun completes it).

Embedding runs as many intra-op threads as the embed actor declares CPUs; the float sums of a matrix
product depend on how many threads split it (on hotpotqa-100 one thread instead of two moved 3 of 1,124
chunk vectors by ~1e-7, ``benchmarks/ray_identity.py``), so vectors equal a local ingest's bit for bit
where ``ingest.embed_threads`` is the same on both and fits a node.

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
from dataclasses import dataclass
from typing import Any

import numpy as np

from hopgraph.core.records import DeadLetter, IngestReport
from hopgraph.core.settings import Settings
from hopgraph.ingest.alias_sync import AliasChain, AliasShipper
from hopgraph.ingest.batches import Prepared
from hopgraph.ingest.local_engine import embed_threads
from hopgraph.ingest.ray_pools import Member, Pools, RayUnavailableError, node_resources, plan_pools
from hopgraph.ingest.ray_tasks import Computed, WorkerSettings
from hopgraph.ingest.source_text import SourceText
from hopgraph.vectors.embedders import Embedder

log = logging.getLogger(__name__)

#: the node IP of a private Ray instance (127.0.0.1 would be rewritten to the outward interface)
LOOPBACK_NODE = "127.0.0.2"
#: batches in flight per actor of the pools (the backpressure window)
_IN_FLIGHT_PER_ACTOR = 2
#: tries of a batch whose actors or objects were lost with their node
_RETRIES = 5
#: parse actors a batch may see die before its documents are dead letters
_PARSE_DEATHS = 2
_CONNECT_TIMEOUT_S = 5.0
#: environment the tasks run with (models ship with packages; nothing is downloaded)
_TASK_ENV = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}

__all__ = ["LOOPBACK_NODE", "Precomputed", "RayEngine", "RayUnavailableError"]


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


@dataclass
class _Job:
    """One batch on its way through the pools: the call it waits on, the actor running it, its failures."""

    batch: list[SourceText]
    stage: str = "parse"
    ref: Any = None  # what the driver waits on: the parse's dead letters, then the embedded batch
    parsed: Any = None  # the parsed batch (a reference the embed actor is given)
    member: Member | None = None
    deaths: int = 0  # parse actors that died with it
    tries: int = 0  # actors or objects lost with it
    done: Computed | None = None


def _died(exc: Exception, member: Member) -> bool:
    """Whether ``exc`` says that ``member`` itself died (not an actor its arguments came from)."""
    actor_id = getattr(exc, "actor_id", None)
    return actor_id is None or actor_id == member.handle._actor_id.hex()


class RayEngine:
    """Connects to the cluster and makes its actor pools at ``start``, sends batches out and yields them
    back in order; ``close`` kills the pools."""

    def __init__(self, settings: Settings, address: str | None = None) -> None:
        self.settings = settings
        self.address = address or settings.ingest.ray_address or os.environ.get("RAY_ADDRESS") or None
        self._owned = False  # this engine called ray.init (and shuts it down)
        self._pools: Pools | None = None  # the parse and embed actors, while connected
        self.window = 1
        self.threads = 1  # intra-op threads of each embed actor (set at start)
        self.gpus = 0.0
        self.nodes: list[str] = []  # the node IPs the cluster reported at start
        self.by_node: Counter[str] = Counter()  # batches parsed per node IP
        self.embedded_on: Counter[str] = Counter()  # batches embedded per node IP
        self._aliases: AliasShipper | None = None  # the alias map as the cluster holds it (while connected)
        self.alias_entries_fetched = 0  # alias entries the parse actors fetched for this engine's batches

    @property
    def model_loads(self) -> int:
        """Models the actors of this engine's pools loaded (one per actor, however many ingests they served)."""
        return self._pools.loads if self._pools is not None else 0

    def actor_infos(self) -> list[dict[str, Any]]:
        """What each live actor says it declared to Ray and runs (``ParseActor.info``, ``EmbedActor.info``)."""
        import ray

        return list(ray.get([h.info.remote() for h in self._pools.actors()])) if self._pools is not None else []

    def task_settings(self) -> WorkerSettings:
        """What every actor is given: no credentials leave this process."""
        return WorkerSettings.of(self.settings)

    def start(self) -> None:
        """Connect (or start a private instance) and make the actor pools, once per engine; a cluster that
        cannot be reached (or has no room for them) is a ``RayUnavailableError`` raised before the ingest
        writes anything."""
        import ray

        os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
        if not ray.is_initialized():
            self._connect(ray)
            self._aliases = self._pools = None  # the references and actors of an earlier connection are gone
        res = ray.cluster_resources()
        self.gpus = float(res.get("GPU", 0))
        self.nodes = sorted(str(n["NodeManagerAddress"]) for n in ray.nodes() if n.get("Alive"))
        if self._pools is None:
            plan = plan_pools(node_resources(ray), embed_threads(self.settings.ingest.embed_threads),
                              gpu_embed=self.settings.embedder.device != "cpu")
            env = {k: os.environ.get(k, v) for k, v in _TASK_ENV.items()}
            self._pools = Pools(self.task_settings(), plan, env)
            self.threads = plan.embed_threads
            self.window = _IN_FLIGHT_PER_ACTOR * (plan.parse_actors + plan.embed_actors)
            log.info("Ray: %d node(s) %s; %d parse actor(s), %d embed actor(s) of %s", len(self.nodes), self.nodes,
                     plan.parse_actors, plan.embed_actors, plan.embed_resources)
        if self._aliases is None:
            self._aliases = AliasShipper(ray.put)

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
        """Make the pools now (each actor loads its model as it starts); benchmarks time ingestion, not
        model loading."""
        self.start()

    def prepared(self, batches: Iterable[list[SourceText]], aliases: Mapping[str, str], embedder: Embedder,
                 report: IngestReport) -> Iterator[tuple[list[SourceText], Prepared | None]]:
        """The batches, chunked, extracted and embedded on the cluster, in their order (each ``Prepared``
        carries its extraction and an embedder holding its vectors; the documents that failed to parse
        are left out of it and added to ``report.dead_letters``). Up to ``window`` batches are in flight
        for the whole run; results are taken as they finish and held in order until the writer takes
        them (the held ones count against the window)."""
        import ray

        if self._pools is None or self._aliases is None:
            self.start()
        assert self._pools is not None and self._aliases is not None
        for members in self._pools.live.values():
            for m in members:
                m.busy = 0
        chain = self._aliases.chain_for(aliases)
        todo = iter(batches)
        jobs: dict[int, _Job] = {}
        waiting: dict[Any, int] = {}  # the reference a job waits on -> its sequence number
        sent = taken = 0
        try:
            while True:
                while sent - taken < self.window:
                    batch = next(todo, None)
                    if batch is None:
                        break
                    jobs[sent] = job = _Job(batch)
                    waiting[self._parse(job, chain)] = sent
                    sent += 1
                if taken == sent:
                    return
                while jobs[taken].done is None:
                    t = time.perf_counter()
                    ready, _ = ray.wait(list(waiting), num_returns=1)
                    report.stage_seconds["ray_wait"] = (report.stage_seconds.get("ray_wait", 0.0)
                                                        + time.perf_counter() - t)
                    seq = waiting.pop(ready[0])
                    ref = self._advance(jobs[seq], chain, report)
                    if ref is not None:
                        waiting[ref] = seq
                job = jobs.pop(taken)
                taken += 1
                got = job.done
                assert got is not None
                if got.prepared is not None:
                    got.prepared.extraction = got.extraction
                    got.prepared.embedder = Precomputed(embedder, got.texts, got.vectors)
                yield job.batch, got.prepared
        finally:
            for ref in waiting:  # a failed or stopped run: what is still queued on the actors is dropped
                try:
                    ray.cancel(ref)
                except Exception as exc:
                    log.debug("ray.cancel: %s", exc)

    def _parse(self, job: _Job, chain: AliasChain) -> Any:
        """Send ``job`` to the least busy parse actor; the reference of its dead letters."""
        assert self._pools is not None
        job.member = self._pools.pick("parse")
        job.stage = "parse"
        job.ref, job.parsed = job.member.handle.parse.options(num_returns=2).remote(job.batch, chain)
        return job.ref

    def _advance(self, job: _Job, chain: AliasChain, report: IngestReport) -> Any:
        """Take the call ``job`` waited on: a parse goes on to the least busy embed actor, an embedding is
        the job done (None); a call whose actor or objects were lost is sent again."""
        import ray

        assert self._pools is not None and job.member is not None
        member, job.member = job.member, None
        member.busy -= 1
        try:
            ray.get(job.ref)
        except ray.exceptions.RayTaskError:
            raise  # an error in our code, not a lost node: a document's own failure is a dead letter
        except ray.exceptions.RayError as exc:
            if isinstance(exc, ray.exceptions.RayActorError) and _died(exc, member):
                self._pools.lost(member)
            job.tries += 1
            job.deaths += job.stage == "parse"
            if job.deaths >= _PARSE_DEATHS:
                log.warning("the parse actors died twice on a batch of %d document(s): dead letters", len(job.batch))
                job.done = Computed(None, dead=[DeadLetter(
                    source=s.document.source, document_id=s.document.id, content_hash=s.document.content_hash,
                    error=f"its parse actor died {job.deaths} times ({type(exc).__name__})", attempts=job.deaths)
                    for s in job.batch])
                self._account(job.done, report)
                return None
            if job.tries >= _RETRIES:
                raise RayUnavailableError(f"the Ray cluster lost a batch of {len(job.batch)} document(s) "
                                          f"{job.tries} times ({exc}); rerun to complete the ingest") from exc
            return self._parse(job, chain)
        if job.stage == "parse":
            job.member = self._pools.pick("embed")
            job.stage = "embed"
            job.ref = job.member.handle.embed.remote(job.parsed)
            return job.ref
        job.done = ray.get(job.ref)
        job.parsed = None
        self._account(job.done, report)
        return None

    def _account(self, got: Computed, report: IngestReport) -> None:
        """A finished batch's stage seconds, skips and dead letters added to the report."""
        for name, secs in got.stage_seconds.items():
            key = f"ray_{name}"
            report.stage_seconds[key] = report.stage_seconds.get(key, 0.0) + secs
        for source, reason in got.skipped.items():
            report.skipped[source] = reason
            log.warning("skipped %s: %s", source, reason)
        for dead in got.dead:
            report.dead_letters.append(dead)
            log.warning("dead letter %s: %s", dead.source, dead.error)
        if got.node:
            self.by_node[got.node] += 1
        if got.embed_node:
            self.embedded_on[got.embed_node] += 1
        self.alias_entries_fetched += got.alias_entries

    def close(self) -> None:
        """Kill the actor pools, and disconnect (stopping the private instance) if this engine connected."""
        if self._pools is not None:
            self._pools.close()
        self._pools = self._aliases = None
        if self._owned:
            import ray

            self._owned = False
            ray.shutdown()
