"""Token-aware chunking: windows of whole sentences, with overlap, under a token budget, inside each
section of a document (``ingest.sections``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from hopgraph.core.records import Chunk, Section, chunk_id, section_id
from hopgraph.ingest.sections import SectionSplit, split_sections

TokenCounter = Callable[[Sequence[str]], list[int]]


@dataclass(frozen=True)
class Span:
    """A piece of text by character offsets, with its token count."""

    start: int
    end: int
    tokens: int


class Chunker:
    """Splits text into sentence-aligned chunks of at most ``max_tokens`` tokens."""

    def __init__(self, count_tokens: TokenCounter, max_tokens: int = 200, overlap_tokens: int = 40,
                 split: SectionSplit = "headings") -> None:
        if overlap_tokens >= max_tokens:
            raise ValueError("overlap_tokens must be smaller than max_tokens")
        self.split: SectionSplit = split
        self.count_tokens = count_tokens
        self.max_tokens = max_tokens
        self.overlap_tokens = overlap_tokens

    @cached_property
    def _sentencizer(self):  # type: ignore[no-untyped-def]
        import spacy

        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
        nlp.max_length = 50_000_000
        return nlp

    def sentences(self, text: str) -> list[Span]:
        """Sentence spans; sentences longer than the budget are cut at word boundaries (a single word
        longer than the budget, by characters)."""
        raw = [(s.start_char, s.end_char) for s in self._sentencizer(text).sents if s.text.strip()]
        counts = self.count_tokens([text[a:b] for a, b in raw])
        spans: list[Span] = []
        for (a, b), n in zip(raw, counts, strict=True):
            if n <= self.max_tokens:
                spans.append(Span(a, b, n))
            else:
                spans.extend(self._split_long(text, a, b, n))
        return spans

    def _split_long(self, text: str, a: int, b: int, n: int) -> list[Span]:
        """Cut an over-long sentence at word boundaries into pieces within the budget."""
        words: list[tuple[int, int]] = []
        i = a
        for w in text[a:b].split():
            s = text.index(w, i)
            words.append((s, s + len(w)))
            i = s + len(w)
        per = max(1, int(len(words) * self.max_tokens / n * 0.9))
        groups = [words[j : j + per] for j in range(0, len(words), per)]
        out: list[Span] = []
        while groups:
            batch, groups = groups, []
            counts = self.count_tokens([text[g[0][0] : g[-1][1]] for g in batch])
            for g, c in zip(batch, counts, strict=True):
                if c <= self.max_tokens or (len(g) == 1 and g[0][1] - g[0][0] <= 1):
                    out.append(Span(g[0][0], g[-1][1], c))
                elif len(g) == 1:  # one "word" over the budget (a URL, base64): cut it by characters
                    s, e = g[0]
                    groups += [[(s, (s + e) // 2)], [((s + e) // 2, e)]]
                else:  # denser than estimated: halve and recount
                    groups += [g[: len(g) // 2], g[len(g) // 2 :]]
        return sorted(out, key=lambda sp: sp.start)

    def windows(self, text: str) -> list[Span]:
        """Greedy windows of sentences; consecutive windows share up to ``overlap_tokens``."""
        sents = self.sentences(text)
        out: list[Span] = []
        i = 0
        while i < len(sents):
            j, total = i, 0
            while j < len(sents) and (total + sents[j].tokens <= self.max_tokens or j == i):
                total += sents[j].tokens
                j += 1
            out.append(Span(sents[i].start, sents[j - 1].end, total))
            if j >= len(sents):
                break
            # step back over trailing sentences that fit in the overlap budget
            k, back = j, 0
            while k - 1 > i and back + sents[k - 1].tokens <= self.overlap_tokens:
                k -= 1
                back += sents[k].tokens
            i = k
        return out

    def chunk(self, doc_id: str, text: str) -> list[Chunk]:
        """Chunks of one document, ids derived from the document id and the chunk text."""
        return self.chunk_document(doc_id, text)[1]

    def chunk_document(self, doc_id: str, text: str) -> tuple[list[Section], list[Chunk]]:
        """A document's sections (``ingest.sections``) and their chunks, which never span two sections;
        chunk order runs through the document. A passage repeated inside a document is stored once
        (in the section where it first appears)."""
        sections: list[Section] = []
        chunks: list[Chunk] = []
        seen: set[str] = set()
        for part in split_sections(text, self.split):
            owned: list[str] = []
            for span in self.windows(part.text):
                body = part.text[span.start : span.end].strip()
                cid = chunk_id(doc_id, body)
                if cid in seen:
                    continue
                seen.add(cid)
                owned.append(cid)
                chunks.append(Chunk(id=cid, document_id=doc_id, text=body, ord=len(chunks), n_tokens=span.tokens))
            if owned:
                ord_ = len(sections)
                sections.append(Section(id=section_id(doc_id, ord_, part.path), document_id=doc_id,
                                        title=part.title, path=part.path, level=part.level, ord=ord_,
                                        chunk_ids=owned))
        return sections, chunks
