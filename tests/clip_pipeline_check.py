"""Run by tests/test_clip.py in .venv-clip with the whole of hopgraph installed: images with
captions are ingested with a tiny CLIP model (image vectors in the `images` collection, an
unreadable image reported as a warning), then found by text and by image. Prints one JSON line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from hopgraph.app.platform import Platform
from hopgraph.core.settings import (
    ClipSettings,
    EmbedderSettings,
    ImageRetrievalSettings,
    RetrievalSettings,
    Settings,
)
from tests.clip_check import build_tiny


def main(tmp: Path) -> None:
    config, ckpt, _ = build_tiny(tmp)
    folder = tmp / "photos"
    folder.mkdir()
    colours = {"red": (220, 20, 20), "green": (20, 200, 40), "blue": (20, 40, 220)}
    captions = {"red": "A brown dog runs across a red field .", "green": "Two children play soccer on green grass .",
                "blue": "A man in a blue kayak paddles on a lake ."}
    rng = np.random.default_rng(1)
    for name, rgb in colours.items():
        pixels = np.clip(np.array(rgb) + rng.integers(-10, 10, (48, 48, 3)), 0, 255).astype(np.uint8)
        Image.fromarray(pixels).save(folder / f"{name}.png")
        (folder / f"{name}.txt").write_text(captions[name] + "\n")
    (folder / "broken.jpg").write_bytes(b"\xff\xd8\xff" + b"truncated")  # JPEG magic, then garbage
    (folder / "broken.txt").write_text("A cat sleeps on a sofa .\n")
    # a random CLIP model's text-image scores are noise: weigh them low so captions and the KG decide
    retrieval = RetrievalSettings(modes={"image": ImageRetrievalSettings(clip_weight=0.1)})
    settings = Settings(data_dir=tmp / "data", embedder=EmbedderSettings(kind="onnx-int8"), retrieval=retrieval,
                        clip=ClipSettings(enabled=True, model=str(config), checkpoint=str(ckpt), device="cpu"))
    with Platform(settings) as p:
        report = p.ingest([folder])
        images_after_ingest = p.vectors.count("images")
        by_text = p.query("a dog running in a field", mode="image", top_k=3)
        by_image = p.query_image(str(folder / "green.png"), top_k=3)
        green = next(r.citation.document_id for r in by_image.results if r.image and r.image.endswith("green.png"))
        p.delete(green)
        images_after_delete = p.vectors.count("images")
    print(json.dumps({
        "ingested": report.documents_ingested, "warnings": report.warnings, "skipped": report.skipped,
        "images_after_ingest": images_after_ingest, "images_after_delete": images_after_delete,
        "text_top": by_text.results[0].image if by_text.results else None,
        "text_signals": sorted(by_text.timings_ms),
        "image_top": by_image.results[0].image if by_image.results else None,
        "image_entities": by_image.results[0].entities if by_image.results else [],
    }))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
