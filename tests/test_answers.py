"""Answers (``hopgraph ask``, ``POST /answer``, ``POST /answer/stream``) end to end against a local
OpenAI-compatible server (tests/fake_llm.py) that writes its answer from the prompt it is sent, over
the real stores; and the citation check as pure logic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from hopgraph.app.platform import Platform
from hopgraph.core.answer_settings import AnswerSettings
from hopgraph.core.errors import ConflictError
from hopgraph.core.records import Citation
from hopgraph.core.settings import LlmSettings, Settings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.retrieval.parts.answer_prompt import check_citations, cited_labels, messages, sentences
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import KEYS, READ_KEY, running_api
from tests.conftest import settings_for
from tests.fake_llm import FakeLlm, fake_llm_server
from tests.paths import empty_config
from tests.processes import cli_env

SAMPLE = Path(__file__).parent.parent / "hopgraph" / "sample"
QUESTION = "Who wrote the first published algorithm for the Analytical Engine?"


# -- the citation check (pure) --------------------------------------------------------------------
def test_labels_and_sentences_are_parsed() -> None:
    text = "Ada wrote it [doc_a#chk_1, doc_b#chk_2]. She was a countess [see the notes]. Done. [chk_3]"
    assert cited_labels(text) == ["doc_a#chk_1", "doc_b#chk_2", "chk_3"]  # bracketed prose is not a label
    assert sentences(text) == ["Ada wrote it [doc_a#chk_1, doc_b#chk_2].", "She was a countess [see the notes].",
                               "Done. [chk_3]"]


def test_citations_are_resolved_flagged_and_deduplicated() -> None:
    a, b = Citation(document_id="doc_a", chunk_id="chk_1", source="a"), Citation(
        document_id="doc_b", chunk_id="chk_2", source="b")
    labels = {"doc_a#chk_1": a, "chk_1": a, "doc_b#chk_2": b, "chk_2": b}
    check = check_citations("Babbage built the engine [chk_2]. Ada wrote the notes [doc_a#chk_1][chk_1]. "
                            "The moon is made of cheese [doc_z#chk_9]. Nothing cites this sentence at all.", labels)
    assert check.cited == [b, a] and check.invalid == ["doc_z#chk_9"] and not check.valid
    assert check.uncited_sentences == ["Nothing cites this sentence at all."]
    assert check_citations("Yes. [chk_1]", labels).valid


def test_prompt_templates_are_validated_and_filled() -> None:
    with pytest.raises(ValidationError, match=r"must contain \{question\}"):
        AnswerSettings(user_prompt="{context} only")
    with pytest.raises(ValidationError, match="not a valid template"):
        AnswerSettings(user_prompt="{context} {question} {other}")
    msgs = messages("  Who?  ", "", AnswerSettings(user_prompt="Q={question} C={context}"))
    assert msgs[0]["role"] == "system" and msgs[1]["content"] == "Q=Who? C=(no passages were retrieved)"


# -- end to end -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def llm() -> Iterator[tuple[FakeLlm, str]]:
    with fake_llm_server() as served:
        yield served


def _settings(arcadedb: ServerInfo, data: Path, url: str | None, **extra: Any) -> Settings:
    llm = LlmSettings(base_url=url, api_key="test-key", model="fake-4o") if url else LlmSettings()
    return settings_for(arcadedb, data, llm=llm, **extra)


@pytest.fixture(scope="module")
def answering(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder, llm: tuple[FakeLlm, str],
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """The sample corpus ingested once, with the fake LLM configured."""
    settings = _settings(arcadedb, tmp_path_factory.mktemp("answers"), llm[1],
                         answer=AnswerSettings(top_k=4, token_budget=800))
    with Platform(settings, embedder=embedder) as p:
        p.ingest([SAMPLE])
        yield p


def test_answer_cites_only_passages_of_its_context(answering: Platform, llm: tuple[FakeLlm, str]) -> None:
    fake, _ = llm
    ans = answering.answerer.answer(QUESTION, mode="hybrid")
    retrieved = {r.citation.chunk_id for r in ans.retrieval.results}
    assert ans.citations and ans.citations_valid and not ans.uncited_sentences
    assert {c.chunk_id for c in ans.citations} <= retrieved
    assert "lovelace" in ans.citations[0].source  # the passage that answers it, cited first
    assert ans.model == "fake-4o" and ans.mode == "hybrid" and ans.timings_ms["total"] > 0
    sent = fake.requests[-1][-1]["content"]
    assert QUESTION in sent and ans.retrieval.context.strip() in sent
    asked = len(fake.requests)
    again = answering.answerer.answer(QUESTION, mode="hybrid")  # the same prompt: from the cache
    assert again.answer == ans.answer and len(fake.requests) == asked


def test_a_citation_outside_the_context_is_flagged(answering: Platform, llm: tuple[FakeLlm, str]) -> None:
    fake, _ = llm
    fake.foreign_citation = "doc_0000#chk_0000"
    ans = answering.answerer.answer("Where did Marie Curie study physics?", mode="dense")
    assert ans.invalid_citations == ["doc_0000#chk_0000"] and not ans.citations_valid
    assert ans.citations  # the real ones still resolve


def test_stream_comes_in_order_and_adds_up(answering: Platform) -> None:
    events = list(answering.answerer.stream("Which programming language did Grace Hopper create?", mode="dense"))
    kinds = [e.kind for e in events]
    assert kinds[0] == "retrieval" and kinds[-1] == "answer" and set(kinds[1:-1]) == {"delta"} and len(kinds) > 3
    final = events[-1].answer
    assert final is not None and final.citations_valid and final.citations
    assert "".join(e.text for e in events[1:-1]).strip() == final.answer


def _sse(text: str) -> list[tuple[str, Any]]:
    out = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        out.append((fields["event"], json.loads(fields["data"])))
    return out


def test_api_answers_and_streams(answering: Platform) -> None:
    s = answering.settings.model_copy(update={"api": answering.settings.api.model_copy(update={"api_keys": KEYS})})
    with running_api(s, answering, scheduler=False) as url, \
            httpx.Client(base_url=url, headers={"X-API-Key": READ_KEY}, timeout=120) as c:
        r = c.post("/answer", json={"text": QUESTION, "mode": "hybrid", "top_k": 3})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["citations_valid"] and body["citations"] and len(body["retrieval"]["results"]) == 3
        r = c.post("/answer/stream", json={"text": QUESTION, "mode": "hybrid", "top_k": 3})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = _sse(r.text)
        assert events[0][0] == "retrieval" and events[-1][0] == "answer"
        assert "".join(d for e, d in events if e == "delta").strip() == events[-1][1]["answer"] == body["answer"]
        assert c.post("/answer", json={"text": " "}).status_code == 422
        assert httpx.post(f"{url}/answer", json={"text": QUESTION}).status_code == 401


def test_no_llm_is_a_clear_409_and_exit_5(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    s = _settings(arcadedb, tmp_path / "data", None)
    s = s.model_copy(update={"api": s.api.model_copy(update={"api_keys": KEYS})})
    with Platform(s, embedder=embedder) as p:
        with pytest.raises(ConflictError, match="no LLM is configured"):
            p.answerer.answer(QUESTION)
        with running_api(s, p, scheduler=False) as url:
            for path in ("/answer", "/answer/stream"):
                r = httpx.post(f"{url}{path}", json={"text": QUESTION}, headers={"X-API-Key": READ_KEY})
                assert r.status_code == 409 and "no LLM is configured" in r.json()["detail"], r.text
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    out = subprocess.run([sys.executable, "-m", "hopgraph.cli", "ask", QUESTION], capture_output=True, text=True,
                         env=cli_env({**env, "HOPGRAPH_DATA_DIR": str(tmp_path / "cli"),
                                          "HOPGRAPH_CONFIG": empty_config(tmp_path)}), timeout=120)
    assert out.returncode == 5 and "no LLM is configured" in out.stderr, out.stderr


def test_cli_ask_streams_a_cited_answer(answering: Platform, arcadedb: ServerInfo, llm: tuple[FakeLlm, str],
                                        tmp_path: Path) -> None:
    s = answering.settings
    env = {**os.environ, "COLUMNS": "200", "HOPGRAPH_DATA_DIR": str(s.data_dir),
           "HOPGRAPH_GRAPH__URI": arcadedb.uri, "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password,
           "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port), "HOPGRAPH_GRAPH__DATABASE": s.graph.database,
           "HOPGRAPH_LLM__BASE_URL": llm[1], "HOPGRAPH_CONFIG": empty_config(tmp_path)}
    answering.close()  # one process owns the vector shard: hand it (and the index state) to the CLI
    out = subprocess.run([sys.executable, "-m", "hopgraph.cli", "ask", QUESTION, "--mode", "dense", "--json"],
                         capture_output=True, text=True, env=cli_env(env), timeout=300)
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert body["citations_valid"] and body["citations"] and body["model"] == "gpt-4o-mini"
    out = subprocess.run([sys.executable, "-m", "hopgraph.cli", "ask", QUESTION, "--mode", "dense"],
                         capture_output=True, text=True, env=cli_env(env), timeout=300)
    assert out.returncode == 0 and "lovelace.txt" in out.stdout and "not in the context" not in out.stdout, out.stdout
