"""LLM-free entity extraction with spaCy named-entity recognition."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from hopgraph.models import Chunk, Entity, Mention, entity_id, normalize_name
from hopgraph.settings import ExtractionSettings

log = logging.getLogger(__name__)


class ExtractionError(RuntimeError):
    """The spaCy model cannot be loaded."""


@dataclass
class Extraction:
    """Entities and mentions found in a batch of chunks."""

    entities: dict[str, Entity] = field(default_factory=dict)
    mentions: list[Mention] = field(default_factory=list)


class SpacyExtractor:
    """Named entities per chunk; one Entity per (normalized name, label)."""

    def __init__(self, cfg: ExtractionSettings) -> None:
        self.cfg = cfg
        self.labels = set(cfg.entity_labels)

    @cached_property
    def nlp(self):  # type: ignore[no-untyped-def]
        import spacy

        try:
            nlp = spacy.load(self.cfg.spacy_model, disable=["parser", "lemmatizer", "tagger",
                                                            "attribute_ruler"])
        except OSError as exc:
            raise ExtractionError(f"cannot load spaCy model {self.cfg.spacy_model!r}: {exc}") from exc
        return nlp

    def extract(self, chunks: Sequence[Chunk]) -> Extraction:
        """Entities and MENTIONS of the chunks (description: the first sentence-ish context seen)."""
        out = Extraction()
        docs = self.nlp.pipe((c.text for c in chunks), batch_size=self.cfg.batch_size,
                             n_process=self.cfg.n_process)
        for chunk, doc in zip(chunks, docs, strict=True):
            counts: Counter[str] = Counter()
            for ent in doc.ents:
                if ent.label_ not in self.labels:
                    continue
                name = " ".join(ent.text.split())
                if len(normalize_name(name)) < 2:
                    continue
                eid = entity_id(name, ent.label_)
                counts[eid] += 1
                if eid not in out.entities:
                    context = chunk.text[max(0, ent.start_char - 80) : ent.end_char + 80]
                    out.entities[eid] = Entity(id=eid, name=_display(name), type=ent.label_,
                                               description=" ".join(context.split()))
            out.mentions.extend(Mention(chunk_id=chunk.id, entity_id=e, count=n) for e, n in counts.items())
        return out


def _display(name: str) -> str:
    """A readable canonical name: no leading article or trailing possessive."""
    for art in ("the ", "The "):
        if name.startswith(art) and len(name) > len(art) + 1:
            name = name[len(art) :]
    if name.endswith(("'s", "\u2019s")):
        name = name[:-2]
    return name.strip()
