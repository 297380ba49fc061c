"""Run by tests/test_clip.py inside the separate CLIP environment (.venv-clip): builds a tiny,
randomly initialized open_clip model, saves it, and loads it back through hopgraph's ClipEmbedder.
Prints one JSON line of findings; the test asserts on them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from hopgraph.core.settings import ClipSettings
from hopgraph.vectors.clip import ClipEmbedder, ClipError, import_open_clip

open_clip = import_open_clip()

TINY = {"embed_dim": 32,
        "vision_cfg": {"image_size": 32, "layers": 2, "width": 64, "patch_size": 8, "head_width": 32},
        "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 64, "heads": 2, "layers": 2}}


def build_tiny(tmp: Path) -> tuple[Path, Path, object]:
    """A tiny random open_clip model: its config JSON, its saved checkpoint, and the model."""
    config = tmp / "tiny-clip-test.json"
    config.write_text(json.dumps(TINY))
    open_clip.add_model_config(config)
    torch.manual_seed(0)
    model = open_clip.create_model("tiny-clip-test")
    ckpt = tmp / "tiny-clip.pt"
    torch.save(model.state_dict(), ckpt)
    model.eval()
    return config, ckpt, model


def main(tmp: Path) -> None:
    config, ckpt, model = build_tiny(tmp)

    rng = np.random.default_rng(0)
    images = []
    for i in range(3):
        p = tmp / f"img{i}.png"
        Image.fromarray(rng.integers(0, 255, (40, 48, 3), dtype=np.uint8)).save(p)
        images.append(p)
    broken = tmp / "broken.jpg"
    broken.write_bytes(b"not an image at all")
    missing = tmp / "missing.png"

    cfg = ClipSettings(enabled=True, model=str(config), checkpoint=str(ckpt), device="cpu", batch_size=2)
    first, second = ClipEmbedder(cfg), ClipEmbedder(cfg)
    texts = ["a brown dog", "two children on a beach", "a red car"]
    t1, t2 = first.embed_texts(texts), second.embed_texts(texts)
    i1, i2 = first.embed_images([*images, broken, missing]), second.embed_images(images)
    with torch.inference_mode():
        direct = model.encode_text(open_clip.get_tokenizer("tiny-clip-test")(texts)).numpy()
    direct /= np.linalg.norm(direct, axis=1, keepdims=True)
    try:
        ClipEmbedder(ClipSettings(enabled=True, model=str(config), checkpoint=str(tmp / "nope.pt"), device="cpu"))
        refused = ""
    except ClipError as exc:
        refused = str(exc)
    print(json.dumps({
        "dim": first.dim, "name": first.name, "text_shape": list(t1.shape), "image_shape": list(i1.vectors.shape),
        "reload_same_text": bool(np.allclose(t1, t2, atol=1e-6)),
        "reload_same_image": bool(np.allclose(i1.vectors, i2.vectors, atol=1e-6)),
        "matches_saved_model": bool(np.allclose(t1, direct, atol=1e-5)),
        "unit_norm": bool(np.allclose(np.linalg.norm(np.vstack([t1, i1.vectors]), axis=1), 1.0, atol=1e-5)),
        "errors": i1.errors, "ok_paths": i1.paths, "bad_checkpoint": refused,
        "distinct_texts": bool(float(np.abs(t1[0] - t1[1]).sum()) > 1e-3),
    }))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
