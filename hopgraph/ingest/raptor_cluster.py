"""RAPTOR's clustering (Sarthi et al., 2024) as pure functions of vectors.

- ``soft_clusters``: UMAP to a few dimensions, then a Gaussian mixture whose component count the BIC
  picks; a node joins every cluster it belongs to with probability >= ``membership_threshold``
  (soft membership), and always its most likely one. As in RAPTOR, a global pass (UMAP with
  ``sqrt(n)`` neighbours) is followed by a local pass inside each global cluster, and a cluster that
  is still too big to summarise is clustered again.
- ``partition``: the forest's branches, k-means over unit chunk vectors (hard membership, so that a
  change touches few branches); a branch stays a pure function of its chunks.

Every result depends only on the input vectors, their order and the seed: callers sort by id.
"""

from __future__ import annotations

import functools
import logging
import math
import sys
import warnings
from collections import defaultdict
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from hopgraph.core.linalg import unit
from hopgraph.core.summary_settings import RaptorSettings

#: children of one summary, at most (RAPTOR caps a cluster by its tokens; chunks here are ~256 tokens)
CLUSTER_MAX = 10


log = logging.getLogger(__name__)


@functools.cache
def _umap() -> ModuleType:
    """The ``umap`` module, with its numba functions cached on disk: umap-learn compiles them in every
    process that fits and does not cache them; numba keeps the machine code beside the module (or in its
    user cache where that folder is read-only) until the module's files change, so an installation compiles
    them once. A cache entry is keyed by the Python function, not by the options it was compiled with: where
    two dispatchers wrap one function (umap's serial and parallel layout step), only the serial one caches."""
    import umap
    from numba.core.dispatcher import Dispatcher

    found = {id(v): v for name, module in list(sys.modules.items()) if name.split(".")[0] == "umap"
             for v in list(vars(module).values()) if isinstance(v, Dispatcher)}
    wrapping: dict[object, list[Dispatcher]] = defaultdict(list)
    for dispatcher in found.values():
        wrapping[dispatcher.py_func].append(dispatcher)
    for group in wrapping.values():
        for dispatcher in _cacheable(group):
            try:
                cache_on_disk(dispatcher)
            except RuntimeError as exc:  # numba found no writable cache folder
                log.debug("UMAP's compiled functions are not cached: %s", exc)
                return umap
    return umap


def _cacheable(group: list[Any]) -> list[Any]:
    """Of the dispatchers that wrap one Python function, those that may cache: the only one, or the only
    serial one (numba would hand one's cache entry to the other)."""
    if len(group) == 1:
        return group
    serial = [d for d in group if not d.targetoptions.get("parallel")]
    return serial if len(serial) == 1 else []


def cache_on_disk(dispatcher: Any) -> None:
    """Have numba ``dispatcher`` keep its machine code on disk; a cache file that cannot be read (corrupt,
    unreadable) or written (a full disk) costs a compile, logged, instead of failing the call."""
    dispatcher.enable_caching()
    cache = dispatcher._cache  # the FunctionCache enable_caching set
    cache.load_overload = _or_none(cache.load_overload)
    cache.save_overload = _or_none(cache.save_overload)


def _or_none(step: Callable[..., Any]) -> Callable[..., Any]:
    """``step``, returning None (numba's "not cached") instead of raising; the first failure of a process is
    a warning, the others are logged at debug level."""

    @functools.wraps(step)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return step(*args, **kwargs)
        except Exception as exc:  # whatever the cache's failure, the code is compiled instead
            level = logging.DEBUG if _CACHE_FAILED else logging.WARNING
            _CACHE_FAILED.add(step.__name__)
            log.log(level, "numba's cache failed (%s of %s: %s); UMAP's code is compiled in this process",
                    step.__name__, args[0] if args else "?", exc)
            return None

    return guarded


#: the cache steps that failed in this process (the first failure is logged as a warning)
_CACHE_FAILED: set[str] = set()


def _reduce(vecs: np.ndarray, neighbours: int, cfg: RaptorSettings) -> np.ndarray:
    """UMAP to ``cfg.umap_dim`` dimensions (cosine metric), deterministic for a seed."""
    umap = _umap()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # spectral init falling back to random on tiny sets, numba notes
        reducer = umap.UMAP(n_neighbors=max(2, min(neighbours, len(vecs) - 1)), n_components=cfg.umap_dim,
                            metric="cosine", random_state=cfg.seed, n_jobs=1)
        return np.asarray(reducer.fit_transform(vecs), dtype=np.float64)


def _mixture(points: np.ndarray, cfg: RaptorSettings) -> list[list[int]]:
    """Gaussian mixture with the BIC-best component count; soft memberships."""
    from sklearn.mixture import GaussianMixture

    most = min(cfg.max_clusters, len(points) - 1)
    best, best_bic = None, math.inf
    for k in range(1, most + 1):
        gm = GaussianMixture(n_components=k, random_state=cfg.seed).fit(points)
        bic = float(gm.bic(points))
        if bic < best_bic:
            best, best_bic = gm, bic
    assert best is not None
    probs = best.predict_proba(points)
    clusters: list[list[int]] = [[] for _ in range(probs.shape[1])]
    top = probs.argmax(axis=1)
    for i, row in enumerate(probs):
        for c in np.flatnonzero(row >= cfg.membership_threshold):
            clusters[int(c)].append(i)
        if row[top[i]] < cfg.membership_threshold:
            clusters[int(top[i])].append(i)
    return [c for c in clusters if c]


def _dedupe(clusters: list[list[int]]) -> list[list[int]]:
    """Distinct member lists, sorted, in a stable order."""
    return sorted({tuple(sorted(set(c))) for c in clusters if c}, key=lambda c: (c[0], len(c), c))  # type: ignore[misc]


def soft_clusters(vecs: np.ndarray, cfg: RaptorSettings, cluster_max: int = CLUSTER_MAX,
                  depth: int = 0) -> list[list[int]]:
    """Clusters of the rows of ``vecs`` (indices), overlapping where membership is soft."""
    n = len(vecs)
    if n <= cluster_max or n <= cfg.umap_dim + 1:
        return [list(range(n))]
    glob = _mixture(_reduce(vecs, int(math.sqrt(n - 1)), cfg), cfg)
    out: list[list[int]] = []
    for members in glob:
        sub = vecs[members]
        if len(members) <= cluster_max or len(members) <= cfg.umap_dim + 1:
            out.append(members)
            continue
        for local in _mixture(_reduce(sub, cfg.umap_neighbors, cfg), cfg):
            idx = [members[i] for i in local]
            if len(idx) > cluster_max and len(idx) < n and depth < 3:  # still too big: cluster it again
                out += [[idx[j] for j in c] for c in soft_clusters(vecs[idx], cfg, cluster_max, depth + 1)]
            else:
                out.append(idx)
    return [list(c) for c in _dedupe(out)]


def partition(vecs: np.ndarray, size: int, seed: int) -> list[list[int]]:
    """Disjoint groups of about ``size`` rows (k-means over unit vectors), none larger than ``2 * size``."""
    n = len(vecs)
    if n <= size:
        return [list(range(n))] if n else []
    from sklearn.cluster import KMeans

    k = math.ceil(n / size)
    labels = KMeans(n_clusters=k, n_init=4, random_state=seed).fit_predict(unit(vecs))
    groups = [np.flatnonzero(labels == c).tolist() for c in range(k)]
    out: list[list[int]] = []
    for g in groups:
        if not g:
            continue
        if len(g) > 2 * size and len(g) < n:
            out += [[g[i] for i in sub] for sub in partition(vecs[g], size, seed)]
        elif len(g) > 2 * size:  # k-means would not split it: cut it in order
            out += [g[i:i + size] for i in range(0, len(g), size)]
        else:
            out.append(g)
    return sorted(out, key=lambda g: g[0])


def centrality(vecs: np.ndarray) -> np.ndarray:
    """Cosine of each row with the mean direction of all rows (the cluster's centre)."""
    u = unit(vecs)
    centre = unit(u.mean(axis=0))
    return u @ centre if centre.any() else np.zeros(len(u), dtype=np.float32)
