"""The CLIP path (extra ``clip``), run in its own environment (.venv-clip, `make clip-venv`) because
open_clip's torchvision would break `transformers` in the main one: a tiny randomly initialized
open_clip model is saved and reloaded through hopgraph's real loading code."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hopgraph.settings import REPO_ROOT

CLIP_PYTHON = REPO_ROOT / ".venv-clip" / "bin" / "python"


def test_tiny_clip_model_saves_reloads_and_embeds(tmp_path: Path) -> None:
    if not CLIP_PYTHON.exists():
        pytest.skip("the CLIP environment is missing: run `make clip-venv`")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([str(CLIP_PYTHON), str(REPO_ROOT / "tests" / "clip_check.py"), str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["dim"] == 32 and found["text_shape"] == [3, 32] and found["image_shape"] == [3, 32]
    assert found["reload_same_text"] and found["reload_same_image"] and found["matches_saved_model"]
    assert found["unit_norm"] and found["distinct_texts"]
    assert set(found["errors"]) == {str(tmp_path / "broken.jpg"), str(tmp_path / "missing.png")}
    assert all("unreadable image" in why for why in found["errors"].values())
    assert "cannot load open_clip model" in found["bad_checkpoint"]
