"""spaCy extraction in worker processes: a batch split across several (``extraction.processes``).

spaCy parses on one core. Split across processes, a batch parses on all of them, beginning while the
previous batch is written and finishing while the ingest process waits, so the embedder has the cores
to itself (measured in ``benchmarks/RESULTS.md``, "Ingest, freshness and scale"). Workers run at the
lowest CPU priority:
they take what the ingest process leaves idle, and everything while it waits for them.

The workers are spawned processes (safe beside the threads of a server) that load the spaCy model
once and run the same ``SpacyExtractor`` code as the ingest process would. A pipeline that needs no
PyTorch (``torch_free``: its meta and config name nothing that runs torch) is loaded without it:
spaCy's thinc imports torch whenever it is installed, which doubles a worker's start and memory.
The pieces' extractions joined in order (``Extraction.extend``) equal the whole batch's, and aliases
(surface id -> canonical id) travel with each batch. A worker that dies is reported and the batch is
extracted in the ingest process instead: nothing is lost. A worker needs only hopgraph's modules: it is
started without the caller's script, so a plain script without ``if __name__ == "__main__":`` is never
run again in it.
"""

from __future__ import annotations

import bisect
import contextlib
import importlib.util
import itertools
import json
import logging
import multiprocessing
import os
import re
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopgraph.core.records import Chunk
from hopgraph.core.settings import ExtractionSettings
from hopgraph.ingest.extraction import Extraction, Extractor
from hopgraph.ingest.extractors import local_extractor

log = logging.getLogger(__name__)

#: the workers' CPU priority: they take the cores the ingest process leaves idle (while it writes, or
#: waits for them) and barely slow it when it needs them
_NICE = 19
#: most worker processes by default (each holds its own model and parse buffers)
MOST_PROCESSES = 4
#: packages a spaCy pipeline may require and still run without PyTorch
_TORCH_FREE_REQUIREMENTS = {"spacy", "spacy-lookups-data"}
#: words in a pipeline's components or config that say it runs PyTorch (spaCy's own torch layers,
#: transformers, LLM components)
_NEEDS_TORCH = re.compile(r"torch|transformer|(?<![a-z])llm", re.IGNORECASE)
_worker: Extractor | None = None
_aliases: Mapping[str, str] = {}
_SPAWNING = threading.Lock()


@contextlib.contextmanager
def _without_main_script() -> Iterator[None]:
    """While workers are spawned, hide the ``__main__`` module's file and spec, from which
    ``multiprocessing`` would have each child run the caller's script again (``spawn``'s preparation):
    a plain script without ``if __name__ == "__main__":`` would open the same stores in every worker."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    with _SPAWNING:
        spec, file = getattr(main, "__spec__", None), getattr(main, "__file__", None)
        main.__spec__ = None
        if file is not None:
            del main.__file__
        try:
            yield
        finally:
            main.__spec__ = spec
            if file is not None:
                main.__file__ = file


def _start(cfg: dict[str, Any]) -> None:
    """In the worker: load the model once, and leave when the ingest process is gone (killed: nothing
    else would stop a worker waiting for its next batch)."""
    global _worker
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    with contextlib.suppress(OSError):
        os.nice(_NICE)
    settings = ExtractionSettings.model_validate(cfg)
    if "torch" not in sys.modules and torch_free(settings.spacy_model):
        sys.modules["torch"] = None  # type: ignore[assignment]  # (an import of torch now fails at once)
    _worker = local_extractor(settings, resolve=lambda eid: _aliases.get(eid, eid))
    assert _worker is not None  # parser_pool starts workers for a local extractor only
    _worker.extract([])  # loads the model


def _extract(chunks: list[Chunk], aliases: Mapping[str, str]) -> Extraction:
    """In the worker: one batch."""
    global _aliases
    assert _worker is not None
    _aliases = aliases
    return _worker.extract(chunks)


def torch_free(model: str) -> bool:
    """Whether spaCy pipeline ``model`` (an installed package, else a folder, as ``spacy.load`` looks for
    it) runs without PyTorch: its ``meta.json`` requires no package but spaCy itself (and its lookups
    data, without extras), and neither its components nor its ``config.cfg`` mention torch, a
    transformer or an LLM. False where the meta or the config cannot be found or read."""
    try:
        spec = importlib.util.find_spec(model)
    except (ImportError, ValueError):  # a path, not a module name
        spec = None
    folder = Path(spec.origin).parent if spec is not None and spec.origin is not None else Path(model)
    configs = [folder / "config.cfg", *folder.glob("*/config.cfg")]  # a package keeps its data one folder down
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        required = [str(r).strip().lower() for r in meta.get("requirements", [])]
        components = " ".join(str(c) for c in meta.get("components", meta.get("pipeline", [])))
        config = " ".join(c.read_text(encoding="utf-8") for c in configs if c.is_file())
    except (OSError, ValueError, TypeError, AttributeError):
        return False
    names = {re.split(r"[<>=!~; ]", r, maxsplit=1)[0].replace("_", "-").replace(".", "-") for r in required}
    return bool(config) and names <= _TORCH_FREE_REQUIREMENTS and _NEEDS_TORCH.search(f"{components} {config}") is None


def pieces(chunks: Sequence[Chunk], n: int) -> list[list[Chunk]]:
    """``chunks`` cut into at most ``n`` consecutive pieces of about equal text length (at least one
    piece, perhaps empty)."""
    if n <= 1 or len(chunks) <= 1:
        return [list(chunks)]
    ends = list(itertools.accumulate(len(c.text) + 1 for c in chunks))
    cuts = []
    for k in range(1, n):  # after the chunk whose end is closest to k/n of the text
        target = ends[-1] * k / n
        at = bisect.bisect_left(ends, target)
        cuts.append(at if at > 0 and target - ends[at - 1] < ends[at] - target else at + 1)
    bounds = sorted({0, *(min(c, len(chunks)) for c in cuts), len(chunks)})
    return [list(chunks[a:b]) for a, b in itertools.pairwise(bounds) if b > a]


@dataclass
class Pending:
    """A batch in the workers: its pieces' futures, in order."""

    futures: list[Future[Extraction]]

    def result(self) -> Extraction:
        """The batch's extraction (the pieces' joined in order)."""
        out = Extraction()
        for future in self.futures:
            out.extend(future.result())
        return out


class ExtractionWorker:
    """``processes`` spaCy processes; ``submit`` splits a batch among them."""

    def __init__(self, cfg: ExtractionSettings, processes: int = 1) -> None:
        self.cfg = cfg
        self.processes = max(1, processes)
        self._pool: ProcessPoolExecutor | None = None

    @property
    def running(self) -> bool:
        return self._pool is not None

    def start(self) -> None:
        """Start every worker and load its model (otherwise the first batch does)."""
        Pending([self._submit([], {}) for _ in range(self.processes)]).result()  # each submit spawns one

    def submit(self, chunks: Sequence[Chunk], aliases: Mapping[str, str]) -> Pending:
        return Pending([self._submit(piece, dict(aliases)) for piece in pieces(chunks, self.processes)])

    def _submit(self, chunks: list[Chunk], aliases: dict[str, str]) -> Future[Extraction]:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.processes, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_start, initargs=(self.cfg.model_dump(),))
        try:
            with _without_main_script():  # a submit spawns a worker when none is idle
                return self._pool.submit(_extract, chunks, aliases)
        except BrokenProcessPool as exc:  # one died while idle (a new pool is never broken: one retry)
            log.warning("an extraction worker died (%s): starting the workers again", exc)
            self.close()
            return self._submit(chunks, aliases)

    def result(self, pending: Pending, fallback: Extractor, chunks: Sequence[Chunk]) -> Extraction:
        """The batch's extraction; extracted by ``fallback`` (in this process) if a worker died (the
        next batch starts new ones)."""
        try:
            return pending.result()
        except (BrokenProcessPool, CancelledError) as exc:  # cancelled: a piece's pool was replaced
            log.warning("an extraction worker died (%s): extracting %d chunks in the ingest process",
                        exc, len(chunks))
            self.close()
            return fallback.extract(chunks)

    def close(self) -> None:
        """Stop the workers (pending batches are cancelled)."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.shutdown(wait=True, cancel_futures=True)


def cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def parser_pool(extractor: Extractor, cfg: ExtractionSettings) -> ExtractionWorker | None:
    """The worker processes a batch of an ingest is split among (``extraction.processes``); None where
    batches are parsed in the ingest process (an extractor that is not ``local``, spaCy's own ``n_process``,
    or one core)."""
    if not extractor.local or cfg.n_process > 1:
        return None
    processes = cfg.processes or min(cores(), MOST_PROCESSES)
    return ExtractionWorker(cfg, processes=processes) if processes > 1 else None
