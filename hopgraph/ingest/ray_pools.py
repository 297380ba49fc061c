"""The actor pools of a Ray engine: how many parse and embed actors each node gets (``plan_pools``), and
the pools themselves (``Pools``): made once per engine, each actor pinned (softly) to the node the plan
gave it, declaring exactly the CPUs (and GPU share) it runs with. An actor that dies is dropped and a
replacement is asked for; the replacement joins its pool once Ray has placed it and its model is loaded.

The plan splits a CPU-only cluster's CPUs about evenly between the kinds (spaCy costs about what
embedding does per document): ``(CPUs // 2) // threads`` embed actors of ``threads`` threads each (at
least one; ``threads`` at most a node's CPUs, and one CPU is always left to parse), placed on the nodes
with the most free CPUs, and one one-thread parse actor per CPU left. On a cluster with GPUs (and an
embedder allowed on one) each GPU node gets two embed actors per GPU (one CPU thread and half a GPU each,
at most one per CPU), and every other CPU parses.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from hopgraph.core.errors import StoreUnavailableError
from hopgraph.ingest.ray_tasks import EmbedActor, ParseActor, WorkerSettings

log = logging.getLogger(__name__)

#: embed actors sharing one GPU (one computes while the other's batch moves)
EMBEDS_PER_GPU = 2
#: seconds a pool may wait for Ray to place its first actor (and for the model to load in it)
PLACE_TIMEOUT_S = 180.0


class RayUnavailableError(StoreUnavailableError):
    """The Ray cluster cannot be reached, has no room for the actors, or lost a batch beyond its retries."""


@dataclass(frozen=True)
class NodePlan:
    """The actors one node runs: ``parse`` one-thread parse actors and ``embed`` embed actors."""

    node_id: str
    parse: int
    embed: int


@dataclass(frozen=True)
class PoolPlan:
    """Per node, its actors; the embed actors' threads and Ray resources (the parse actors': one CPU)."""

    nodes: tuple[NodePlan, ...]
    embed_threads: int
    embed_resources: dict[str, float] = field(default_factory=dict)

    @property
    def parse_actors(self) -> int:
        return sum(n.parse for n in self.nodes)

    @property
    def embed_actors(self) -> int:
        return sum(n.embed for n in self.nodes)


def plan_pools(nodes: dict[str, tuple[float, float]], threads: int, gpu_embed: bool = True) -> PoolPlan:
    """The actors of a cluster whose nodes have ``{node id: (CPUs, GPUs)}``: embed actors of ``threads``
    threads (fewer where no node has that many CPUs) or GPU shares, and one parse actor per CPU left.
    A cluster with fewer than two CPUs has no room for both kinds: ``RayUnavailableError``."""
    cpus = {n: int(c) for n, (c, _) in nodes.items()}
    gpus = {n: g for n, (_, g) in nodes.items()}
    total = sum(cpus.values())
    if total < 2:
        raise RayUnavailableError(f"the Ray cluster has {total} CPU(s): an ingest needs two, one for a parse "
                                  "actor and one for an embed actor")
    embed = dict.fromkeys(cpus, 0)
    if gpu_embed and any(gpus.values()):
        for n in cpus:
            embed[n] = min(int(gpus[n] * EMBEDS_PER_GPU), cpus[n])
        t, resources = 1, {"num_cpus": 1.0, "num_gpus": 1.0 / EMBEDS_PER_GPU}
    else:
        t = max(1, min(threads, max(cpus.values()), total - 1))
        free = dict(cpus)
        for _ in range(max(1, (total // 2) // t)):
            node = max(free, key=lambda k: free[k])
            if free[node] < t or sum(free.values()) - t < 1:
                break
            embed[node] += 1
            free[node] -= t
        resources = {"num_cpus": float(t)}
    plan = tuple(NodePlan(n, cpus[n] - (embed[n] * int(resources["num_cpus"])), embed[n]) for n in cpus)
    if not sum(p.embed for p in plan) or not sum(p.parse for p in plan):
        raise RayUnavailableError(f"the Ray cluster's nodes ({nodes}) leave no room for both a parse and an "
                                  "embed actor")
    return PoolPlan(plan, t, resources)


@dataclass
class Member:
    """An actor of a pool, its node and how many calls it has in flight."""

    handle: Any
    kind: str
    node: str = ""
    busy: int = 0


class Pools:
    """The parse and embed actors of one engine."""

    def __init__(self, settings: WorkerSettings, plan: PoolPlan, env: dict[str, str]) -> None:
        import ray

        self.plan = plan
        self._settings = ray.put(settings)
        self._env = env
        self.live: dict[str, list[Member]] = {"parse": [], "embed": []}
        self.pending: dict[Any, tuple[str, Any]] = {}  # info reference -> (kind, handle) not placed yet
        self.loads = 0  # models loaded by the actors of these pools (each reports its own)
        self.infos: list[dict[str, Any]] = []  # what each actor reported when it joined
        self.start_error = ""  # why the last actor that failed to start failed
        for node in plan.nodes:
            for _ in range(node.embed):
                self._create("embed", node.node_id)
        for node in plan.nodes:
            for _ in range(node.parse):
                self._create("parse", node.node_id)
        self._join(wait=True)

    def _create(self, kind: str, node_id: str | None) -> None:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        threads = self.plan.embed_threads if kind == "embed" else ParseActor.threads
        opts: dict[str, Any] = {"max_restarts": 0, "max_concurrency": 1,
                                "runtime_env": {"env_vars": {**self._env, "OMP_NUM_THREADS": str(threads)}}}
        if node_id is not None:
            opts["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id, soft=True)
        handle: Any
        if kind == "embed":
            handle = ray.remote(EmbedActor).options(**opts, **self.plan.embed_resources).remote(self._settings,
                                                                                             threads)
        else:
            handle = ray.remote(ParseActor).options(**opts, num_cpus=1).remote(self._settings)
        self.pending[handle.info.remote()] = (kind, handle)

    def _join(self, wait: bool = False, need: str | None = None) -> None:
        """Add the actors Ray has placed (and whose model loaded) to their pools: with ``wait``, waiting up
        to ``PLACE_TIMEOUT_S`` for all of them; with ``need``, until one of that kind is live."""
        import ray

        deadline = time.monotonic() + PLACE_TIMEOUT_S
        while self.pending:
            left = max(0.0, deadline - time.monotonic())
            waiting = wait or (need is not None and not self.live[need])
            ready, _ = ray.wait(list(self.pending), num_returns=len(self.pending) if wait or not waiting else 1,
                                timeout=left if waiting else 0.0)
            for ref in ready:
                kind, handle = self.pending.pop(ref)
                try:
                    info = ray.get(ref)
                except ray.exceptions.RayActorError as exc:  # its model failed to load, or its node left
                    log.warning("a %s actor did not start: %s", kind, exc)
                    self.start_error = f"{kind} actor: {str(exc)[:300]}"
                    continue
                self.loads += int(info["loads"])
                self.infos.append(info)
                self.live[kind].append(Member(handle, kind, str(info["node"])))
            if wait or not (need is not None and not self.live[need]) or time.monotonic() >= deadline:
                break
            if not ready and not self.pending:
                break
        lacking = [k for k, members in self.live.items() if not members and (wait or k == need)]
        if lacking:
            why = self.start_error or "none failed to start"
            raise RayUnavailableError(f"no {' or '.join(lacking)} actor could be placed on the Ray cluster within "
                                      f"{PLACE_TIMEOUT_S:.0f}s (the plan: {self.plan}; {why})")

    def pick(self, kind: str) -> Member:
        """The live actor of ``kind`` with the fewest calls in flight (taking in replacements placed since)."""
        if self.pending or not self.live[kind]:
            self._join(need=kind)
        member = min(self.live[kind], key=lambda m: m.busy)
        member.busy += 1
        return member

    def lost(self, member: Member) -> None:
        """``member`` died: drop it and ask for a replacement (placed wherever Ray finds room)."""
        if member in self.live[member.kind]:
            self.live[member.kind].remove(member)
            log.warning("a %s actor on %s died; a replacement is asked for", member.kind, member.node)
            self._create(member.kind, None)

    def actors(self) -> list[Any]:
        return [m.handle for members in self.live.values() for m in members]

    def close(self) -> None:
        """Kill every actor of the pools (their CPUs go back to the cluster)."""
        import ray

        for handle in [*self.actors(), *(h for _, h in self.pending.values())]:
            try:
                ray.kill(handle)
            except Exception as exc:  # already gone with its node
                log.debug("ray.kill: %s", exc)
        self.live = {"parse": [], "embed": []}
        self.pending = {}


def node_resources(ray: Any) -> dict[str, tuple[float, float]]:
    """``{node id: (CPUs, GPUs)}`` of the cluster's live nodes."""
    return {str(n["NodeID"]): (float(n.get("Resources", {}).get("CPU", 0)), float(n.get("Resources", {}).get("GPU", 0)))
            for n in ray.nodes() if n.get("Alive")}
