"""Optional LLM extraction (``extraction.method = "llm"``) in the GraphRAG tuple format.

Per chunk: the GraphRAG entity/relationship prompt, then up to ``llm.gleaning`` "anything missed?"
rounds (each followed by a Y/N check, as GraphRAG does), answers parsed from
``("entity"<|>NAME<|>TYPE<|>DESCRIPTION)##("relationship"<|>SRC<|>TGT<|>DESCRIPTION<|>STRENGTH)…<|COMPLETE|>``.
Chunks are sent ``llm.max_concurrency`` at a time; answers are cached on disk (``ChatClient``).
The output is the same ``Extraction`` the spaCy extractor produces, so resolution, communities and
the stores do not know which extractor ran. An answer without a single parsable record is a
``LlmOutputError`` naming the chunk; individual malformed records are skipped and counted.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from hopgraph.core.records import Chunk, Entity, Mention, Relation, entity_id, relation_id
from hopgraph.core.settings import LlmSettings
from hopgraph.core.text import normalize_name
from hopgraph.ingest.extraction import Extraction
from hopgraph.ingest.llm_client import ChatClient, LlmOutputError

log = logging.getLogger(__name__)

TUPLE, RECORD, COMPLETE = "<|>", "##", "<|COMPLETE|>"
RELATED = "related"
#: GraphRAG's types -> the NER labels the rest of hopgraph (resolution's type guards) speaks
TYPE_LABELS = {"person": "PERSON", "organization": "ORG", "geo": "GPE", "location": "LOC", "event": "EVENT"}

EXTRACT_PROMPT = """-Goal-
Given a text document and a list of entity types, identify all entities of those types from the text and all \
relationships among the identified entities.

-Steps-
1. Identify all entities. For each identified entity, extract the following information:
- entity_name: Name of the entity, capitalized
- entity_type: One of the following types: [{types}]
- entity_description: Comprehensive description of the entity's attributes and activities
Format each entity as ("entity"{t}<entity_name>{t}<entity_type>{t}<entity_description>)

2. From the entities identified in step 1, identify all pairs of (source_entity, target_entity) that are *clearly \
related* to each other. For each pair of related entities, extract the following information:
- source_entity: name of the source entity, as identified in step 1
- target_entity: name of the target entity, as identified in step 1
- relationship_description: explanation as to why you think the source entity and the target entity are related
- relationship_strength: a numeric score indicating strength of the relationship between the source and target
Format each relationship as ("relationship"{t}<source_entity>{t}<target_entity>{t}<relationship_description>\
{t}<relationship_strength>)

3. Return output in English as a single list of all the entities and relationships identified in steps 1 and 2. \
Use **{r}** as the list delimiter.

4. When finished, output {c}

-Real Data-
######################
Entity_types: {types}
Text: {text}
######################
Output:
"""
CONTINUE_PROMPT = ("MANY entities and relationships were missed in the last extraction. Remember to ONLY emit "
                   "entities that match any of the previously extracted types. Add them below using the same format:\n")
LOOP_PROMPT = ("It appears some entities and relationships may have still been missed. Answer Y if there are still "
               "entities or relationships that need to be added, or N if there are none. Please answer with a single "
               "letter Y or N.\n")

_RECORD = re.compile(r"\((.*)\)", re.DOTALL)
_LIST_MARKER = re.compile(r"^(?:\d+[.)]|[-*\u2022])\s*")
#: a strength glued to the description by a mangled delimiter (``..."|>8``, ``..."</|>8``): seen in real answers
_GLUED_STRENGTH = re.compile(r"""["']?\s*<?/?\|>\s*([0-9]+(?:\.[0-9]+)?)\s*$""")


@dataclass
class Records:
    """Parsed tuples of one answer: (name, type, description) and (source, target, description, strength)."""

    entities: list[tuple[str, str, str]] = field(default_factory=list)
    relationships: list[tuple[str, str, str, float]] = field(default_factory=list)
    malformed: int = 0


def _clean(field_: str) -> str:
    return field_.strip().strip('"\'\u201c\u201d\u2018\u2019').strip()


def parse_records(text: str) -> Records:
    """Parse a GraphRAG tuple answer (records split by ``##`` or new lines; ``<|COMPLETE|>`` ends it).
    Lenient where real answers stray: numbered lists, ``relation`` for ``relationship``, curly quotes, a strength
    glued to the description; lines that are not records (headings, fences) are ignored."""
    out = Records()
    body = re.sub(re.escape(COMPLETE), "", text, flags=re.IGNORECASE)
    for raw in re.split(r"##|\n", body):
        raw = _LIST_MARKER.sub("", raw.strip())  # "3. (...)", "- (...)"
        if not raw.startswith("("):  # blank lines, markdown headings, code fences: not records
            continue
        m = _RECORD.search(raw)
        fields = [_clean(f) for f in m.group(1).split(TUPLE)] if m else []
        kind = fields[0].lower() if fields else ""
        if kind == "relation":  # real answers use both spellings
            kind = "relationship"
        if kind == "relationship" and len(fields) == 4 and (g := _GLUED_STRENGTH.search(fields[3])):
            fields = [*fields[:3], _clean(fields[3][: g.start()]), g.group(1)]
        if kind == "entity" and len(fields) >= 4 and fields[1]:
            out.entities.append((fields[1], fields[2], fields[3]))
        elif kind == "relationship" and len(fields) >= 5 and fields[1] and fields[2]:
            try:
                strength = float(fields[4])
            except ValueError:
                strength = 1.0
            out.relationships.append((fields[1], fields[2], fields[3], strength))
        else:
            out.malformed += 1
    return out


class LlmExtractor:
    """Entities, mentions and relations per chunk from an OpenAI-compatible LLM."""

    local = False  # a remote model, too costly to call again: never re-run nor made in worker processes

    def __init__(self, cfg: LlmSettings, client: ChatClient, resolve: Callable[[str], str] | None = None) -> None:
        self.cfg = cfg
        self.client = client
        self.resolve = resolve or (lambda eid: eid)
        self.malformed = 0

    def ask(self, chunk: Chunk) -> Records:
        """The records of one chunk: the extraction answer plus the gleaning rounds."""
        prompt = EXTRACT_PROMPT.format(types=",".join(self.cfg.entity_types), t=TUPLE, r=RECORD, c=COMPLETE,
                                       text=chunk.text)
        messages = [{"role": "user", "content": prompt}]

        def usable(answer: str) -> None:
            got = parse_records(answer)
            if not got.entities and not got.relationships and answer.replace(COMPLETE, "").strip():
                raise LlmOutputError(f"chunk {chunk.id}: the LLM answer has no ('entity'{TUPLE}...) record; it "
                                     f"began with {answer.strip()[:160]!r}")

        answer = self.client.chat(messages, accept=usable)
        records = parse_records(answer)
        for round_ in range(self.cfg.gleaning):
            messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": CONTINUE_PROMPT}]
            answer = self.client.chat(messages)
            more = parse_records(answer)
            records.entities += more.entities
            records.relationships += more.relationships
            records.malformed += more.malformed
            if round_ == self.cfg.gleaning - 1:
                break
            messages += [{"role": "assistant", "content": answer}, {"role": "user", "content": LOOP_PROMPT}]
            if not self.client.chat(messages).strip().upper().startswith("Y"):
                break
        return records

    def extract(self, chunks: Sequence[Chunk]) -> Extraction:
        """Ask for every chunk (``max_concurrency`` at once) and merge the answers in chunk order."""
        with ThreadPoolExecutor(max_workers=self.cfg.max_concurrency, thread_name_prefix="llm") as pool:
            futures = [pool.submit(self.ask, c) for c in chunks]
            try:
                answers = [f.result() for f in futures]
            except BaseException:
                for f in futures:  # fail fast: chunks not yet sent are not sent
                    f.cancel()
                raise
        out = Extraction()
        for chunk, records in zip(chunks, answers, strict=True):
            self.malformed += records.malformed
            self._add(out, chunk, records)
        if self.malformed:
            log.warning("LLM extraction: %d malformed records skipped so far", self.malformed)
        return out

    def _entity(self, out: Extraction, name: str, type_: str, description: str) -> str | None:
        if len(normalize_name(name)) < 2:
            return None
        eid = self.resolve(entity_id(name))
        label = TYPE_LABELS.get(type_.lower(), type_.upper() or "UNKNOWN")
        old = out.entities.get(eid)
        if old is None:
            out.entities[eid] = Entity(id=eid, name=name, type=label, description=description[:600])
        elif description and description not in old.description and len(old.description) < 600:
            out.entities[eid] = old.model_copy(update={"description": f"{old.description} {description}"[:600]})
        return eid

    def _add(self, out: Extraction, chunk: Chunk, records: Records) -> None:
        here: dict[str, str] = {}
        for name, type_, desc in records.entities:
            eid = self._entity(out, name, type_, desc)
            if eid:
                here[normalize_name(name)] = eid
        for src, dst, desc, strength in records.relationships:
            ids = []
            for name in (src, dst):  # a relationship may name an entity it did not declare
                ids.append(here.get(normalize_name(name)) or self._entity(out, name, "UNKNOWN", ""))
                if ids[-1]:
                    here.setdefault(normalize_name(name), ids[-1])
            a, b = ids
            if a and b and a != b:
                out.relations.append(Relation(id=relation_id(a, RELATED, b), source_id=a, target_id=b, type=RELATED,
                                              description=desc[:400], weight=max(strength, 0.0) / 10.0,
                                              chunk_ids=[chunk.id]))
        text = chunk.text.casefold()
        for eid in sorted(set(here.values())):
            name = out.entities[eid].name.casefold()
            out.mentions.append(Mention(chunk_id=chunk.id, entity_id=eid, count=max(1, text.count(name))))
