"""The optional LLM extraction path, for real over HTTP against a local OpenAI-compatible server that
replays recorded gpt-4o answers (tests/fake_llm.py), into the real stores."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopgraph.app.platform import Platform
from hopgraph.core.settings import CommunitySettings, ExtractionSettings, LlmSettings, Settings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.ingest.llm_client import LlmError, LlmOutputError
from hopgraph.ingest.llm_extraction import parse_records
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.conftest import settings_for
from tests.fake_llm import RECORDED, FakeLlm, fake_llm_server

NOVEL = RECORDED.parent / "a-christmas-carol.txt"


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[FakeLlm, str]]:
    with fake_llm_server() as (fake, url):
        yield fake, url


@pytest.fixture
def llm(server: tuple[FakeLlm, str]) -> FakeLlm:
    fake, _ = server
    fake.requests.clear()
    fake.fail_next.clear()
    fake.malformed_next, fake.delay_s, fake.max_in_flight = 0, 0.0, 0
    return fake


def _settings(arcadedb: ServerInfo, tmp_path: Path, url: str, reports: bool = False, **llm: object) -> Settings:
    return settings_for(arcadedb, tmp_path / "data", extraction=ExtractionSettings(method="llm"),
                        communities=CommunitySettings(llm_summaries=reports),
                        llm=LlmSettings(base_url=url, api_key="test-key", model="gpt-4o", **llm))


def _excerpt(tmp_path: Path, chars: int = 5000) -> Path:
    """The opening of Stave One (Marley, Scrooge, the counting-house)."""
    text = NOVEL.read_text(encoding="utf-8")
    start = text.index("STAVE ONE")
    path = tmp_path / "carol.txt"
    path.write_text(text[start : start + chars], encoding="utf-8")
    return path


def test_every_recorded_extraction_parses() -> None:
    answers = [v["return"] for v in json.loads(RECORDED.read_text()).values() if "<|>" in v["return"]]
    assert len(answers) == 84
    parsed = [parse_records(a) for a in answers]
    assert all(p.entities for p in parsed)
    # every tuple the model wrote is recovered, including numbered lists, ("relation"...), curly quotes
    # and strengths glued by a mangled delimiter ('..."|>8'); markdown headings are not records
    written_e = sum(len(re.findall(r'\(\s*["\u201c]entity', a)) for a in answers)
    written_r = sum(len(re.findall(r'\(\s*["\u201c]relation', a)) for a in answers)
    assert (written_e, written_r) == (654, 520)
    assert sum(len(p.entities) for p in parsed) == written_e and sum(len(p.relationships) for p in parsed) == written_r
    assert sum(p.malformed for p in parsed) == 0
    first = parsed[0]
    assert first.entities[0][:2] == ("Scrooge", "person")
    assert all(0 <= s <= 10 for p in parsed for *_, s in p.relationships)
    odd = parse_records('("entity"<|>A<|>person<|>x)##(garbage)##("relationship"<|>A<|>B<|>knows<|>high)<|COMPLETE|>')
    assert odd.malformed == 1 and odd.relationships == [("A", "B", "knows", 1.0)]


def test_llm_ingest_builds_the_graph_and_a_rerun_costs_no_request(
        arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder, llm: FakeLlm,
        server: tuple[FakeLlm, str], tmp_path: Path) -> None:
    s = _settings(arcadedb, tmp_path, server[1], gleaning=1, max_concurrency=3)
    with Platform(s, embedder=embedder) as p:
        report = p.ingest([_excerpt(tmp_path)])
        chunks = report.chunks
        assert report.documents_ingested == 1 and report.entities > 5 and report.relations > 3
        assert len(llm.requests) == 2 * chunks  # extraction + one gleaning round per chunk
        assert sum(m[-1]["content"].startswith("MANY entities") for m in llm.requests) == chunks
        rows = p._store.read("MATCH (e:Entity) WHERE e.name = 'Scrooge' RETURN e.type AS type, "
                                "e.description AS d")
        assert len(rows) == 1 and rows[0]["type"] == "PERSON" and len(rows[0]["d"]) > 40
        rels = p._store.read("MATCH (:Entity)-[r:RELATED]->(:Entity) RETURN r.type AS t, r.description AS d")
        assert rels and all(r["t"] == "related" and r["d"] for r in rels)
        res = p.query("Who was Scrooge's partner?", mode="local", top_k=3)
        assert res.results
        # a re-ingest of the deleted document is answered from the response cache
        doc = p._store.list_documents(limit=10)[0].id
        assert p.delete(doc)
        before = len(llm.requests)
        again = p.ingest([_excerpt(tmp_path)])
        assert again.documents_ingested == 1 and len(llm.requests) == before


def test_rate_limits_and_server_errors_are_retried(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
                                                   llm: FakeLlm, server: tuple[FakeLlm, str],
                                                   tmp_path: Path) -> None:
    llm.fail_next = [429, 503, 500]
    s = _settings(arcadedb, tmp_path, server[1], gleaning=0, max_concurrency=1)
    with Platform(s, embedder=embedder) as p:
        report = p.ingest([_excerpt(tmp_path, 1500)])
    assert report.documents_ingested == 1
    assert len(llm.requests) == report.chunks + 3 and not llm.fail_next


def test_an_error_that_is_not_transient_fails_clearly(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
                                                      llm: FakeLlm, server: tuple[FakeLlm, str],
                                                      tmp_path: Path) -> None:
    llm.fail_next = [401]
    s = _settings(arcadedb, tmp_path, server[1], gleaning=0, max_concurrency=1)
    with Platform(s, embedder=embedder) as p, pytest.raises(LlmError, match="HTTP 401"):
        p.ingest([_excerpt(tmp_path, 1500)])
    sent = [json.dumps(m) for m in llm.requests]
    assert len(sent) == len(set(sent))  # nothing was retried


def test_malformed_answers_fail_clearly_and_a_rerun_completes_without_duplicates(
        arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder, llm: FakeLlm,
        server: tuple[FakeLlm, str], tmp_path: Path) -> None:
    llm.malformed_next = 1000
    s = _settings(arcadedb, tmp_path, server[1], gleaning=0, max_concurrency=2)
    path = _excerpt(tmp_path, 3000)
    with Platform(s, embedder=embedder) as p:
        with pytest.raises(LlmOutputError, match=r"chunk chk_\w+: the LLM answer has no"):
            p.ingest([path])
        assert p._store.counts().get("Entity", 0) == 0
        llm.malformed_next = 0
        report = p.ingest([path])
        assert report.documents_ingested == 1
        names = [r["n"] for r in p._store.read("MATCH (e:Entity) RETURN e.name AS n")]
        assert len(names) == len(set(names)) and "Scrooge" in names
        docs = p._store.list_documents(limit=10)
        assert len(docs) == 1 and docs[0].status == "complete"


def test_requests_in_flight_never_exceed_the_limit(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
                                                   llm: FakeLlm, server: tuple[FakeLlm, str],
                                                   tmp_path: Path) -> None:
    llm.delay_s = 0.2
    s = _settings(arcadedb, tmp_path, server[1], gleaning=0, max_concurrency=2)
    with Platform(s, embedder=embedder) as p:
        report = p.ingest([_excerpt(tmp_path, 4000)])
    assert report.chunks >= 4 and llm.max_in_flight == 2


def test_llm_community_reports_replace_the_extractive_summaries(
        arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder, llm: FakeLlm,
        server: tuple[FakeLlm, str], tmp_path: Path) -> None:
    titles = {json.loads(v["return"])["title"] for v in json.loads(RECORDED.read_text()).values()
              if v["return"].lstrip().startswith("{")}
    s = _settings(arcadedb, tmp_path, server[1], reports=True, gleaning=0, max_concurrency=3)
    with Platform(s, embedder=embedder) as p:
        p.ingest([_excerpt(tmp_path, 6000)])
        rows = p._store.read("MATCH (c:Community) RETURN c.title AS t, c.summary AS s")
        assert rows and all(r["t"] in titles and len(r["s"]) > 100 for r in rows)
        asked = sum("# Report Structure" in m[-1]["content"] for m in llm.requests)
        assert asked == len(rows)
        hits = p.vectors.search("communities", p.embedder.embed([rows[0]["t"]])[0], limit=1)
        assert hits and hits[0].payload["title"] == rows[0]["t"]


def test_a_rejected_community_report_keeps_the_extractive_summary(
        arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder, llm: FakeLlm,
        server: tuple[FakeLlm, str], tmp_path: Path) -> None:
    s = _settings(arcadedb, tmp_path, server[1], reports=True, gleaning=0, max_concurrency=1)
    path = _excerpt(tmp_path, 6000)
    with Platform(s, embedder=embedder) as p:
        original = llm.answer

        def prose_reports(messages: list[dict[str, str]]) -> str:
            return "no JSON here" if "# Report Structure" in messages[-1]["content"] else original(messages)
        llm.answer = prose_reports  # type: ignore[method-assign]
        try:
            report = p.ingest([path])
        finally:
            llm.answer = original  # type: ignore[method-assign]
        assert report.documents_ingested == 1
        rows = p._store.read("MATCH (c:Community) RETURN c.summary AS s")
        assert rows and all(r["s"].startswith("Key entities:") for r in rows)
        assert sum("# Report Structure" in m[-1]["content"] for m in llm.requests) == len(rows)  # asked, rejected
