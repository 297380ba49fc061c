"""Context synthesis: entities, relations, communities, a mode's own lists (RAPTOR's tree summaries) and
chunks under a token budget, each item cited with its document and chunk id."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hopgraph.core.records import RetrievedChunk
from hopgraph.core.text import estimate_tokens, words_for_tokens


def build_context(results: list[RetrievedChunk], entities: list[str], relations: list[str],
                  communities: list[str], budget: int, extra: Mapping[str, Sequence[str]] | None = None) -> str:
    """Sections in order of density (entities, relations, communities, the mode's ``extra`` lists by
    title, then passages), cut at ``budget``."""
    lines: list[str] = []
    used = 0

    def take(line: str) -> bool:
        nonlocal used
        cost = estimate_tokens(line)
        if used + cost > budget:
            return False
        lines.append(line)
        used += cost
        return True

    for title, items in (("Entities", entities), ("Relations", relations), ("Communities", communities),
                         *(extra or {}).items()):
        if items and take(f"## {title}"):
            for item in items:
                if not take(f"- {item}"):
                    break
    images = [r for r in results if r.image]
    if images and take("## Images"):
        for r in images:
            via = f" (entities: {', '.join(r.entities)})" if r.entities else ""
            captions = " | ".join(c.strip() for c in r.text.splitlines() if c.strip())
            if not take(f"[{r.citation.document_id}] {r.image}{via}: {captions}"):
                break
    passages = [r for r in results if not r.image]
    if passages and take("## Passages"):
        for r in passages:
            cite = f"[{r.citation.document_id}#{r.citation.chunk_id}]"
            text = " ".join(r.text.split())
            if not take(f"{cite} {text}"):
                room = words_for_tokens(budget - used) - 4
                if room > 20:
                    take(f"{cite} {' '.join(text.split()[:room])} ...")
                break
    return "\n".join(lines)
