"""LLM-free knowledge-graph extraction with spaCy.

Entities: named entities (typed by their NER label) and noun-chunk concepts (lemmatized, stop words
and determiners stripped, type ``CONCEPT``). Relations, each keeping the chunks that support it and
the supporting sentence as a short description:

- subject-verb-object and subject-verb-preposition-object from the dependency parse, typed by the
  predicate lemma (``found``, ``bear_in``);
- prepositional attachments between entities (``Curie Institute`` -in-> ``Warsaw``), typed by the
  preposition;
- sentence-level co-occurrence (``co_occurs``) of pairs with at least one named entity; the
  retrieval snapshot turns its support counts into PMI weights.
"""

from __future__ import annotations

import bisect
import itertools
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from hopgraph.core.errors import StoreUnavailableError
from hopgraph.core.records import (
    CO_OCCURS,
    CONCEPT,
    IDENTIFIER,
    Chunk,
    Entity,
    Mention,
    Relation,
    entity_id,
    majority_label,
    relation_id,
)
from hopgraph.core.settings import ExtractionSettings
from hopgraph.core.text import normalize_name
from hopgraph.ingest.identifiers import identifiers, is_identifier
from hopgraph.ingest.speakers import Speaker, speakers
from hopgraph.ingest.vocatives import addressed

log = logging.getLogger(__name__)

_SUBJ = {"nsubj", "nsubjpass", "csubj"}
#: words by which the speaker of a chat turn names themselves
_FIRST_PERSON = {"i", "me", "myself"}
_OBJ = {"dobj", "attr", "oprd", "dative"}
_STRIP_POS = {"DET", "PRON", "PUNCT", "NUM", "SYM", "CCONJ", "PART", "ADP", "SPACE", "X", "INTJ"}
#: entity labels whose names may hold a verb ("Gone with the Wind"); a person, organisation or place
#: with one is a misread sentence ("Glimmerstore is Ansel Fairweather")
_TITLE_LABELS = {"WORK_OF_ART", "EVENT", "LAW"}
#: words before a name that are no part of it: "Mr Scrooge" is Scrooge (a name's variants then stay
#: one entity), "Old Marley" is Marley
_HONORIFICS = {"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor", "doctor", "sir", "dame", "madam", "lady",
               "lord", "master", "mister", "old", "young", "little", "saint", "st", "king", "queen", "prince",
               "princess", "president", "uncle", "aunt", "auntie", "captain", "general", "colonel", "father", "mother",
               "brother", "sister", "judge", "senator", "governor", "mayor", "officer", "detective", "agent", "coach",
               "pastor", "reverend", "rev", "hey", "hi", "hello", "dear", "thanks", "congrats"}


def surface(tokens: Sequence[Any], text: Callable[[Any], str] = lambda t: t.text) -> str:
    """Tokens joined as they are written: "Calder-Ruiz" and "e-mail" stay whole (spaCy splits at
    hyphens); tokens that were not next to each other get one space between them."""
    out = ""
    for prev, tok in zip([None, *tokens], tokens, strict=False):
        gap = "" if prev is None else (prev.whitespace_ and " " if tok.i == prev.i + 1 else " ")
        out += gap + text(tok)
    return " ".join(out.split())


def joining(tok: Any) -> bool:
    """A hyphen written inside a word ("e-mail", "Calder-Ruiz")."""
    return tok.text == "-" and not tok.whitespace_ and tok.i > 0 and not tok.doc[tok.i - 1].whitespace_


def joined(tokens: list[Any]) -> list[Any]:
    """``tokens`` without the word-joining hyphens whose word on either side is not among them."""
    kept = {t.i for t in tokens}
    return [t for t in tokens if not joining(t) or {t.i - 1, t.i + 1} <= kept]


def with_given_names(ent: Any, taken: set[int]) -> tuple[int, list[Any]]:
    """An entity's start and tokens, with the capitalised proper nouns right before it that modify it
    ("Teodor" of "Teodor Vasquez-Lind", where the recognizer found only the surname) and that no other
    span has ``taken``."""
    start = ent.start
    while start > ent.sent.start:
        prev = ent.doc[start - 1]
        if prev.pos_ != "PROPN" or not prev.text[:1].isupper() or prev.ent_type_ or prev.dep_ != "compound" \
                or not ent.start <= prev.head.i < ent.end or prev.text.endswith(".") or prev.i in taken \
                or prev.text.lower() in _HONORIFICS:
            break
        start -= 1
    return start, list(ent.doc[start:ent.end])


def has_word(tok: Any) -> bool:
    """Whether a token has a letter or a digit (an emoji, a stray quote or "!" has none)."""
    return any(ch.isalnum() for ch in tok.text)


def worded(tokens: list[Any]) -> list[Any]:
    """``tokens`` without the tokens with no letter or digit at either end: an emoji the recognizer read
    as part of a name ("😊 Awesome", "🌟 HaileyJohnson"), a stray quote ('"Blood and Wine')."""
    start, end = 0, len(tokens)
    while start < end and not has_word(tokens[start]):
        start += 1
    while end > start and not has_word(tokens[end - 1]):
        end -= 1
    return tokens[start:end]


def sentence_like(tokens: Sequence[Any]) -> bool:
    """Whether a name holds a lower-case verb, as a misread sentence does ("Glimmerstore is Ansel")."""
    return any(t.pos_ in ("VERB", "AUX") and t.text.islower() for t in tokens)


class ExtractionError(StoreUnavailableError):
    """The spaCy model cannot be loaded."""


@dataclass
class Extraction:
    """Entities, mentions and relations found in a batch of chunks."""

    entities: dict[str, Entity] = field(default_factory=dict)
    mentions: list[Mention] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)

    def add(self, other: Extraction) -> None:
        """Take in what ``other`` found (its entities are distinct from ours: a graph document's own)."""
        self.entities.update(other.entities)
        self.mentions += other.mentions
        self.relations += other.relations

    def extend(self, later: Extraction) -> None:
        """Take in the extraction of the next piece of the same batch, so that the pieces' extractions
        joined in order equal the extraction of the whole batch: an entity found in both keeps our name
        and type (its first mention) and the description of the smaller chunk (as ``SpacyExtractor``
        picks it)."""
        for eid, ent in later.entities.items():
            old = self.entities.get(eid)
            self.entities[eid] = ent if old is None else described(old, ent.description, ent.description_chunk)
        self.mentions += later.mentions
        self.relations += later.relations


def described(entity: Entity, description: str, chunk_id: str) -> Entity:
    """``entity`` met again in ``chunk_id``: the smallest chunk describes it (see ``Entity``)."""
    if chunk_id < entity.description_chunk:
        return entity.model_copy(update={"description": description, "description_chunk": chunk_id})
    return entity


class Extractor(Protocol):
    """What the pipeline needs of an extractor (spaCy here, or ``ingest.llm_extraction.LlmExtractor``);
    ``ingest.extractors`` makes one."""

    #: made from ``ExtractionSettings`` alone and run on this machine, cheaply: it is run again to rewrite
    #: stale descriptions (``ingest.forgetting``), and made again in extraction worker processes and Ray
    #: tasks (``extractors.local_extractor``); False for a remote model called once per chunk (the LLM)
    local: bool

    def extract(self, chunks: Sequence[Chunk]) -> Extraction: ...


@dataclass(frozen=True)
class _Span:
    start: int  # token index
    end: int
    eid: str
    named: bool  # found by NER here (not a noun-chunk concept), whatever type the entity got elsewhere
    label: str  # the NER label here, or CONCEPT


class SpacyExtractor:
    """Entities, mentions and relations per chunk. ``resolve`` maps a surface id to its canonical id."""

    local = True

    def __init__(self, cfg: ExtractionSettings, resolve: Callable[[str], str] | None = None) -> None:
        self.cfg = cfg
        self.labels = set(cfg.entity_labels)
        self.resolve = resolve or (lambda eid: eid)

    @cached_property
    def nlp(self) -> Any:
        import spacy

        try:
            return spacy.load(self.cfg.spacy_model)
        except OSError as exc:
            raise ExtractionError(f"cannot load spaCy model {self.cfg.spacy_model!r}: {exc}") from exc

    def extract(self, chunks: Sequence[Chunk]) -> Extraction:
        out = Extraction()
        docs = self.nlp.pipe((c.text for c in chunks), batch_size=self.cfg.batch_size, n_process=self.cfg.n_process)
        for chunk, doc in zip(chunks, docs, strict=True):
            self._extract_doc(chunk, doc, out)
        return out

    # -- entities ----------------------------------------------------------------------------
    def _entity(self, out: Extraction, name: str, type_: str, context: str, chunk_id: str) -> str | None:
        key = normalize_name(name)
        if len(key) < 2 or not any(ch.isalpha() for ch in key):
            return None
        eid = self.resolve(entity_id(name))
        old = out.entities.get(eid)
        context = context[:240]
        out.entities[eid] = (described(old, context, chunk_id) if old is not None else
                             Entity(id=eid, name=name, type=type_, description=context, description_chunk=chunk_id))
        return eid

    def _spans(self, doc: Any, out: Extraction, chunk_id: str, tags: list[Speaker]) -> list[_Span]:
        spans: list[_Span] = []
        taken: set[int] = set()
        for tag in tags:  # "WolfgangSchulz:" -> the person Wolfgang Schulz (ingest.speakers)
            span = doc.char_span(tag.start, tag.end, alignment_mode="expand")
            line = doc.text[tag.start:].split("\n", 1)[0].strip()  # what the speaker says describes them
            eid = self._entity(out, tag.name, "PERSON", line, chunk_id) if span is not None else None
            if eid and span is not None:
                spans.append(_Span(span.start, span.end, eid, named=True, label="PERSON"))
                taken.update(range(span.start, span.end))
        for said in addressed(doc, [tag.name for tag in tags]):  # "Woohoo Melanie!" addresses Melanie
            if taken.intersection(range(said.start, said.end)):
                continue
            eid = self._entity(out, said.name, "PERSON", doc[said.name_start].sent.text.strip(), chunk_id)
            if eid:
                spans.append(_Span(said.name_start, said.end, eid, named=True, label="PERSON"))
                taken.update(range(said.start, said.end))
        for found in identifiers(doc.text):  # "INC-2402", "v2.3" (ingest.identifiers)
            span = doc.char_span(found.start, found.end, alignment_mode="expand")
            if span is None or taken.intersection(range(span.start, span.end)):
                continue
            eid = self._entity(out, found.name, IDENTIFIER, span.sent.text.strip(), chunk_id)
            if eid:
                spans.append(_Span(span.start, span.end, eid, named=True, label=IDENTIFIER))
                taken.update(range(span.start, span.end))
        for ent in doc.ents:
            if ent.label_ not in self.labels or taken.intersection(range(ent.start, ent.end)):
                continue
            start, toks = with_given_names(ent, taken) if ent.label_ in ("PERSON", "ORG") else (ent.start, list(ent))
            toks = [t for t in toks if t.pos_ != "DET" and t.text not in ("'s", "\u2019s")]
            while toks and toks[0].pos_ == "INTJ":  # "Hey Li Hua", "Wow Li Hua": the greeting is no part
                toks = toks[1:]
            toks = worded(toks)
            if not toks or (ent.label_ not in _TITLE_LABELS and sentence_like(toks)):
                continue
            name = surface(toks)
            label = IDENTIFIER if is_identifier(name) else ent.label_
            eid = self._entity(out, name, label, ent.sent.text.strip(), chunk_id)
            if eid:
                spans.append(_Span(start, ent.end, eid, named=True, label=label))
                taken.update(range(start, ent.end))
        if self.cfg.noun_chunks:
            for nc in doc.noun_chunks:
                if nc.root.i in taken or nc.root.pos_ not in ("NOUN", "PROPN"):
                    continue
                # the tokens of the phrase that no named entity took: "an American literary periodical"
                # gives the concept "literary periodical" beside the entity "American"
                toks = joined([t for t in nc if t.i not in taken and not t.is_stop
                               and (joining(t) or (t.pos_ not in _STRIP_POS and has_word(t)))])
                name = surface(toks, lambda t: t.lemma_.lower() if t.pos_ == "NOUN" and not joining(t) else t.text)
                if not toks or len(name.split()) > self.cfg.max_concept_tokens:
                    continue
                if len(name) < self.cfg.min_concept_chars:
                    continue
                eid = self._entity(out, name, CONCEPT, nc.sent.text.strip(), chunk_id)
                if eid:
                    spans.append(_Span(toks[0].i, toks[-1].i + 1, eid, named=False, label=CONCEPT))
        return spans

    # -- relations ---------------------------------------------------------------------------
    def _turns(self, text: str, tags: list[Speaker]) -> tuple[list[int], list[tuple[int, str]]]:
        """The speaker tags' line starts, and each line's end and speaker entity (``speaker_facts``)."""
        if not self.cfg.speaker_facts:
            return [], []
        starts: list[int] = []
        lines: list[tuple[int, str]] = []
        for tag in tags:
            end = text.find("\n", tag.end)
            starts.append(tag.start)
            lines.append((len(text) if end < 0 else end, self.resolve(entity_id(tag.name))))
        return starts, lines

    def _extract_doc(self, chunk: Chunk, doc: Any, out: Extraction) -> None:
        tags = speakers(doc.text)
        spans = self._spans(doc, out, chunk.id, tags)
        turn_starts, turns = self._turns(doc.text, tags)
        # per sentence and span, so the result does not depend on which chunks share a batch
        named_at = {i for s in spans if s.named for i in range(s.start, s.end)}
        counts = Counter(s.eid for s in spans)
        votes: dict[str, Counter[str]] = {}
        for s in spans:
            votes.setdefault(s.eid, Counter())[s.label] += 1
        out.mentions.extend(Mention(chunk_id=chunk.id, entity_id=e, count=n, label=majority_label(votes[e]))
                            for e, n in counts.items())
        by_token: dict[int, str] = {}
        for s in spans:
            for i in range(s.start, s.end):
                by_token[i] = s.eid

        def ent_of(tok: Any) -> str | None:
            if tok.i in by_token:
                return by_token[tok.i]
            if turns and tok.lower_ in _FIRST_PERSON:  # "Caroline: I went …": the speaker
                k = bisect.bisect_right(turn_starts, tok.idx) - 1
                if k >= 0 and tok.idx < turns[k][0] and turns[k][1] in out.entities:
                    return turns[k][1]
            for t in tok.subtree:  # the entity inside a larger phrase ("the founder of X" -> X is not taken)
                if t.i in by_token and t.head.i == tok.i:
                    return by_token[t.i]
            return None

        def add(src: str | None, type_: str, dst: str | None, sentence: str, label: str = "") -> None:
            if src and dst and src != dst:
                out.relations.append(Relation(id=relation_id(src, type_, dst), source_id=src, target_id=dst,
                                              type=type_, description=sentence[:240], chunk_ids=[chunk.id],
                                              description_chunk=chunk.id, label=label))

        for sent in doc.sents:
            text = sent.text.strip()
            for tok in sent:
                if tok.pos_ in ("VERB", "AUX"):
                    subjects = [c for c in tok.children if c.dep_ in _SUBJ]
                    if not subjects and tok.dep_ == "conj" and tok.head.pos_ in ("VERB", "AUX"):
                        subjects = [c for c in tok.head.children if c.dep_ in _SUBJ]
                    if not subjects and tok.dep_ == "acl":  # "a periodical published in X"
                        subjects = [tok.head]
                    # (object, type as lemmas, label as written): "born in" is the label of bear_in
                    objects: list[tuple[Any, str, str]] = [(c, tok.lemma_.lower(), tok.text.lower())
                                                           for c in tok.children if c.dep_ in _OBJ]
                    for prep in (c for c in tok.children if c.dep_ in ("prep", "agent")):
                        objects += [(p, f"{tok.lemma_.lower()}_{prep.lemma_.lower()}",
                                     f"{tok.text.lower()} {prep.text.lower()}")
                                    for p in prep.children if p.dep_ == "pobj"]
                    for s in subjects:
                        for o, rel, label in objects:
                            add(ent_of(s), rel, ent_of(o), text, label)
                elif tok.i in by_token and tok.pos_ in ("NOUN", "PROPN"):
                    for prep in (c for c in tok.children if c.dep_ == "prep"):
                        for p in (c for c in prep.children if c.dep_ == "pobj"):
                            add(by_token[tok.i], prep.lemma_.lower(), ent_of(p), text, prep.text.lower())
            in_sent = sorted({by_token[i] for i in range(sent.start, sent.end) if i in by_token})
            named = {by_token[i] for i in range(sent.start, sent.end) if i in named_at}
            for a, b in itertools.combinations(in_sent[: self.cfg.max_cooccurring], 2):
                if a in named or b in named:  # concept-concept pairs are too weak to keep
                    add(a, CO_OCCURS, b, text)
