"""Session links: edges the walk follows between the sessions of one conversation, beyond the entities
they share. A conversation is the set of people who speak in a document (``ChatContext.speakers``);
its dated sessions, in time order, link each to the next, so that PPR mass reaching one session
flows on to the sessions just before and after it (what was said next, and what led to it). Each
chunk's links to a neighbouring session weigh 1 in all, shared among that session's chunks."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp


def session_links(chats: Sequence[str], docs: Sequence[str]) -> sp.csr_matrix:
    """The symmetric (chunk, chunk) session links of chunk rows with their stored ``ChatContext`` JSON
    ('' outside a conversation) and their documents (one session per document and date)."""
    n = len(chats)
    sessions: dict[tuple[str, str], list[int]] = defaultdict(list)   # (document, session time) -> rows
    speakers: dict[tuple[str, str], set[str]] = defaultdict(set)
    for j, raw in enumerate(chats):
        if not raw:
            continue
        ctx = json.loads(raw)
        if not ctx.get("session"):
            continue
        key = (docs[j], ctx["session"])
        sessions[key].append(j)
        speakers[key].update(ctx.get("speakers", []))
    threads: dict[frozenset[str], list[tuple[str, str]]] = defaultdict(list)
    for key, who in speakers.items():
        if who:
            threads[frozenset(who)].append(key)
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    for keys in threads.values():
        keys.sort(key=lambda k: (k[1], k[0]))
        for a, b in itertools.pairwise(keys):
            ra, rb = np.asarray(sessions[a]), np.asarray(sessions[b])
            rows += [np.repeat(ra, len(rb)), np.repeat(rb, len(ra))]
            cols += [np.tile(rb, len(ra)), np.tile(ra, len(rb))]
            vals += [np.full(len(ra) * len(rb), 1.0 / len(rb)), np.full(len(ra) * len(rb), 1.0 / len(ra))]
    if not rows:
        return sp.csr_matrix((n, n))
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
