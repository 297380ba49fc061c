"""The CLIP path (extra ``clip``), run in its own environment (.venv-clip, `make clip-venv`) because
open_clip's torchvision would break `transformers` in the main one: a tiny randomly initialized
open_clip model is saved and reloaded through hopgraph's real loading code."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from tests.paths import REPO_ROOT
from tests.processes import cli_env

CLIP_PYTHON = REPO_ROOT / ".venv-clip" / "bin" / "python"


def test_tiny_clip_model_saves_reloads_and_embeds(tmp_path: Path) -> None:
    if not CLIP_PYTHON.exists():
        pytest.skip("the CLIP environment is missing: run `make clip-venv`")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([str(CLIP_PYTHON), str(REPO_ROOT / "tests" / "clip_check.py"), str(tmp_path)],
                         capture_output=True, text=True, env=cli_env(env), timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["dim"] == 32 and found["text_shape"] == [3, 32] and found["image_shape"] == [3, 32]
    assert found["reload_same_text"] and found["reload_same_image"] and found["matches_saved_model"]
    assert found["unit_norm"] and found["distinct_texts"]
    assert set(found["errors"]) == {str(tmp_path / "broken.jpg"), str(tmp_path / "missing.png")}
    assert all("unreadable image" in why for why in found["errors"].values())
    assert "cannot load open_clip model" in found["bad_checkpoint"]


def test_clip_ingest_and_image_queries(arcadedb: ServerInfo, tmp_path: Path) -> None:
    """With CLIP configured: image vectors land in `images`, an unreadable image is a warning (its
    captions stay searchable), text and image queries find the right image, deletion removes it."""
    if not CLIP_PYTHON.exists():
        pytest.skip("the CLIP environment is missing: run `make clip-venv`")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1", "HOPGRAPH_CONFIG": "/nonexistent",
           "HOPGRAPH_GRAPH__URI": arcadedb.uri, "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password,
           "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port), "HOPGRAPH_GRAPH__DATABASE": "cliptest"}
    out = subprocess.run([str(CLIP_PYTHON), str(REPO_ROOT / "tests" / "clip_pipeline_check.py"), str(tmp_path)],
                         capture_output=True, text=True, env=cli_env(env), timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["ingested"] == 4 and found["images_after_ingest"] == 3 and found["images_after_delete"] == 2
    assert list(found["warnings"]) == [str(tmp_path / "photos" / "broken.jpg")]
    assert "unreadable image" in found["warnings"][str(tmp_path / "photos" / "broken.jpg")]
    assert found["image_top"].endswith("green.png") and found["image_entities"]
    assert found["text_top"].endswith("red.png") and "kg" in found["text_signals"]
