"""The alias map as cluster workers hold it (``ingest.alias_sync``): whole once, then deltas; every
worker's copy equals the ingest process's map after any sequence of changes."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from hopgraph.ingest.alias_sync import AliasCache, AliasDelta, AliasShipper, apply, delta


def stored() -> tuple[AliasShipper, list[AliasDelta]]:
    """A shipper whose ``put`` keeps what it stores (a reference is the delta itself)."""
    store: list[AliasDelta] = []

    def put(d: AliasDelta) -> AliasDelta:
        store.append(d)
        return d

    return AliasShipper(put, max_deltas=3), store


def fetch(links: Sequence[object]) -> list[AliasDelta]:
    return [d for d in links if isinstance(d, AliasDelta)]


def test_the_map_is_sent_once_then_only_what_changed() -> None:
    shipper, store = stored()
    first = {f"e{i}": "c" for i in range(10)}
    worker = AliasCache()
    assert worker.update(shipper.chain_for(first), fetch) == 10 and worker.aliases == first
    assert shipper.chain_for(dict(first)) is shipper.chain and len(store) == 1  # unchanged: nothing sent
    assert worker.update(shipper.chain, fetch) == 0

    second = {**first, "e10": "c", "e0": "d"}
    del second["e1"]
    chain = shipper.chain_for(second)
    assert len(chain.links) == 2 and store[-1] == AliasDelta({"e0": "d", "e10": "c"}, ("e1",))
    assert worker.update(chain, fetch) == 3 and worker.aliases == second
    late = AliasCache()  # a worker process that starts now fetches the base and the delta
    assert late.update(chain, fetch) == 13 and late.aliases == second
    assert shipper.entries_sent == 13


def test_a_large_change_or_a_long_chain_starts_a_new_base() -> None:
    shipper, _ = stored()
    m = {f"e{i}": "c" for i in range(4)}
    old = shipper.chain_for(m).id
    grown = {**m, **{f"n{i}": "c" for i in range(4)}}  # as many new entries as the map had
    assert shipper.chain_for(grown).id != old and len(shipper.chain.links) == 1
    worker = AliasCache()
    worker.update(shipper.chain, fetch)
    for i in range(4):  # three deltas at most, then a new base
        grown = {**grown, f"x{i}": "c"}
        shipper.chain_for(grown)
    assert len(shipper.chain.links) == 1 and len(shipper.chain.links[0].set) == 12
    assert worker.update(shipper.chain, fetch) == 12 and worker.aliases == grown


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.dictionaries(st.sampled_from("abcdefgh"), st.sampled_from("xyz"), max_size=8), max_size=8),
       st.lists(st.booleans(), min_size=8, max_size=8))
def test_every_worker_copy_equals_the_map_after_any_changes(maps: list[dict[str, str]], wakes: list[bool]) -> None:
    shipper, _ = stored()
    steady, sleepy = AliasCache(), AliasCache()  # one updated at every run, one only now and then
    for m, wake in zip(maps, wakes, strict=False):
        chain = shipper.chain_for(m)
        steady.update(chain, fetch)
        assert steady.aliases == m
        if wake:
            sleepy.update(chain, fetch)
            assert sleepy.aliases == m
    for m in maps:
        d = delta(shipper.shipped, m)
        back = dict(shipper.shipped)
        apply(back, d)
        assert back == m
