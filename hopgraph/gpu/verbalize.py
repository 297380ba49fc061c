"""Attention-weighted verbalization: the subgraph's triples ranked by how much the GNN attended to
them (mean attention over layers and heads, times the relevance of both ends), under a token budget."""

from __future__ import annotations

import torch

from hopgraph.core.text import estimate_tokens
from hopgraph.gpu.export import RELATED
from hopgraph.gpu.gnn import Attention


def ranked_triples(attn: Attention, probs: torch.Tensor, names: list[str], relation_labels: dict[int, str],
                   budget: int, node_idx: torch.Tensor | None = None) -> list[tuple[str, float]]:
    """``("source relation target", score)`` best first, cut at ``budget`` tokens. ``names`` and
    ``relation_labels`` (edge position in the RELATED store -> label) are indexed locally unless
    ``node_idx`` maps local nodes to ``names``' indices."""
    best: dict[tuple[int, int], tuple[float, int, str, int]] = {}  # unordered pair -> best directed triple
    for et, layers in attn.items():
        if not layers:
            continue
        ei = layers[0][0]
        alpha = torch.stack([a.float().mean(-1) for _, a in layers]).mean(0)
        score = alpha * (probs[ei[0]] + probs[ei[1]]) / 2
        for k, (s, t, v) in enumerate(zip(ei[0].tolist(), ei[1].tolist(), score.tolist(), strict=True)):
            pair = (min(s, t), max(s, t))
            if s != t and v > best.get(pair, (-1.0, 0, "", 0))[0]:
                label = relation_labels.get(k, "related") if et == RELATED else et[1]
                best[pair] = (v, s, label, t)
    out: list[tuple[str, float]] = []
    used = 0
    for v, s, label, t in sorted(best.values(), key=lambda b: -b[0]):
        if node_idx is not None:
            s, t = int(node_idx[s]), int(node_idx[t])
        text = f"{names[s]} {label.replace('_', ' ')} {names[t]}"
        cost = estimate_tokens(text)
        if used + cost > budget:
            break
        out.append((text, round(float(v), 4)))
        used += cost
    return out
