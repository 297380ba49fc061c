"""The alias map (surface entity id -> canonical id) as cluster workers hold it: sent once per engine,
then only what changed.

The ingest process keeps the map (entity resolution adds to it after each run). ``AliasShipper`` puts
it in the cluster's object store once, as a *base*, and at each later run only a *delta* (the entries
added or changed and the ids dropped since); a run's tasks get the chain of references (base, then
deltas), not the map. A worker process keeps the map it built (``AliasCache``) and fetches only the
links of the chain it has not applied yet, so the whole map crosses the network once per worker, not
once per run or per task. A chain grown past ``max_deltas``, or a delta as large as half the map,
starts a new base.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class AliasDelta:
    """Entries to set, then ids to drop."""

    set: dict[str, str]
    drop: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.set) + len(self.drop)


@dataclass(frozen=True)
class AliasChain:
    """What a task is given: the chain's id and its links (object references, or the deltas themselves
    where no object store is involved). A nested reference is not fetched by Ray before the task runs:
    the worker fetches the links it lacks."""

    id: str
    links: tuple[Any, ...] = ()


def delta(old: Mapping[str, str], new: Mapping[str, str]) -> AliasDelta:
    """What turns ``old`` into ``new``."""
    return AliasDelta({k: v for k, v in new.items() if old.get(k) != v}, tuple(sorted(old.keys() - new.keys())))


def apply(into: dict[str, str], d: AliasDelta) -> None:
    """Apply ``d`` to ``into`` in place."""
    into.update(d.set)
    for k in d.drop:
        into.pop(k, None)


@dataclass
class AliasShipper:
    """The ingest process's side: the chain the cluster holds and the map it stands for. ``put`` stores
    a delta where the workers can fetch it (``ray.put``) and returns its reference."""

    put: Callable[[AliasDelta], Any]
    max_deltas: int = 16
    chain: AliasChain = field(default_factory=lambda: AliasChain(""))
    shipped: dict[str, str] = field(default_factory=dict)
    entries_sent: int = 0  # entries put in the store since this shipper began (bases and deltas)

    def chain_for(self, aliases: Mapping[str, str]) -> AliasChain:
        """The chain that stands for ``aliases``: the current one, the current one and a new delta,
        or a new base."""
        if self.chain.id:
            d = delta(self.shipped, aliases)
            if not len(d):
                return self.chain
            if len(self.chain.links) - 1 < self.max_deltas and 2 * len(d) < len(aliases):
                self.chain = AliasChain(self.chain.id, (*self.chain.links, self.put(d)))
                self.entries_sent += len(d)
                apply(self.shipped, d)
                return self.chain
        base = AliasDelta(dict(aliases))
        self.chain = AliasChain(uuid.uuid4().hex, (self.put(base),))
        self.entries_sent += len(base)
        self.shipped = dict(aliases)
        return self.chain


@dataclass
class AliasCache:
    """A worker process's side: the map built from the links of one chain it has applied."""

    chain_id: str = ""
    applied: int = 0
    aliases: dict[str, str] = field(default_factory=dict)

    def update(self, chain: AliasChain, fetch: Callable[[Sequence[Any]], Sequence[AliasDelta]]) -> int:
        """Bring the map to ``chain``, fetching only the links not yet applied (``fetch``: ``ray.get``);
        returns how many entries were fetched."""
        if chain.id != self.chain_id:
            self.chain_id, self.applied, self.aliases = chain.id, 0, {}
        new = chain.links[self.applied:]
        fetched = list(fetch(list(new))) if new else []
        for d in fetched:
            apply(self.aliases, d)
        self.applied = len(chain.links)
        return sum(len(d) for d in fetched)
