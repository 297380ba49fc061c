"""Embedder throughput on real passages, and agreement of the int8 ONNX model with fp32.

Embeds 2,000 passages (title + text) of ../shared/data/2wiki-corpus with each embedder and prints
sentences/s; the fp32 sentence-transformers model is the baseline of the speed ratio and the
reference of the cosine agreement (target: mean cosine >= 0.99). Then the fp32 model's throughput per
batch size (``embedder.batch_size``), on the passages and on their titles (short texts, as entity
names are), against batches of 64 (the old default).

    python -m benchmarks.embed [--n 2000] [--corpus ../shared/data/2wiki-corpus/corpus.jsonl]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from benchmarks.paths import SHARED_DATA
from hopgraph.vectors.embedders import Embedder, OnnxInt8Embedder, SentenceTransformerEmbedder

CORPUS = SHARED_DATA / "2wiki-corpus" / "corpus.jsonl"


def passages(path: Path, n: int) -> tuple[list[str], list[str]]:
    """``n`` passages (title + text) and their distinct titles."""
    out, titles = [], []
    with path.open() as fh:
        for line in fh:
            rec = json.loads(line)
            out.append(f"{rec.get('title', '')}. {rec['text']}".strip(". "))
            titles.append(str(rec.get("title") or ""))
            if len(out) == n:
                break
    return out, sorted({t for t in titles if t})


def throughput(emb: Embedder, texts: list[str]) -> tuple[float, np.ndarray]:
    emb.embed(texts[:32])  # warm-up (not cached: those texts are embedded again below with the rest)
    emb_cache = getattr(emb, "_cache", None)
    if emb_cache is not None:
        emb_cache.clear()
    t = time.perf_counter()
    vecs = emb.embed(texts)
    return len(texts) / (time.perf_counter() - t), vecs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    args = ap.parse_args()
    texts, titles = passages(args.corpus, args.n)
    fp32 = SentenceTransformerEmbedder(device="cpu")
    int8 = OnnxInt8Embedder()
    base, ref = throughput(fp32, texts)
    fast, got = throughput(int8, texts)
    cos = np.sum(ref * got, axis=1)
    print(f"embed: {len(texts)} passages of {args.corpus.parent.name} "
          f"(mean {np.mean(fp32.count_tokens(texts)):.0f} word-pieces)")
    print(f"  sentence-transformers fp32 (baseline) {base:8.1f} sentences/s")
    print(f"  ONNX int8                             {fast:8.1f} sentences/s  ratio {fast / base:.2f}x")
    print(f"  cosine(int8, fp32): mean {cos.mean():.4f}, min {cos.min():.4f}, p5 {np.percentile(cos, 5):.4f} "
          f"[target mean >= 0.99: {'ok' if cos.mean() >= 0.99 else 'MISSED'}]")
    print(f"  fp32 per batch size (passages, and {len(titles)} titles as short texts), default {fp32.batch_size}:")
    rates = {size: (throughput(SentenceTransformerEmbedder(device="cpu", batch_size=size), texts)[0],
                    throughput(SentenceTransformerEmbedder(device="cpu", batch_size=size), titles)[0])
             for size in (64, 32, 16, 8, 4)}
    for size, (long, short) in rates.items():
        print(f"    batch {size:>3}: {long:7.1f} passages/s ({long / rates[64][0]:.2f}x batch 64), "
              f"{short:7.1f} titles/s ({short / rates[64][1]:.2f}x)")


if __name__ == "__main__":
    main()
