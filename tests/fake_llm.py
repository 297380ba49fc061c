"""A local OpenAI-compatible chat server that replays the 187 recorded gpt-4o responses of
../shared/data/christmas-carol (real HTTP on 127.0.0.1, served by uvicorn in a thread).

Replay by content: an extraction prompt gets the recorded extraction whose entity names occur most
in the prompt's text; a community-report prompt gets the recorded report sharing the most words
with it; a gleaning prompt gets ``<|COMPLETE|>`` and the Y/N check ``N``. An answer prompt (a
``# Question`` after a cited context) gets, computed from the prompt alone, the first sentence of each
of the two context passages sharing the most words with the question, each cited by its label; a
graph-QA prompt gets its last allowed answer when the graph holds a negated relation, else its first;
a tree-summary prompt gets "In short: " and the first 25 words of its text;
``stream: true`` is answered as OpenAI's server-sent chunks. Knobs for failure tests: ``fail_next``
(HTTP statuses to answer first), ``malformed_next`` (answers of prose), ``foreign_citation`` (a label
not in the context, cited once), ``delay_s``; it records every request and the most requests it saw
in flight at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from hopgraph.api.server import background_server
from tests.conftest import free_port
from tests.paths import SHARED_DATA

RECORDED = SHARED_DATA / "christmas-carol" / "recorded-llm-responses.json"
_NAME = re.compile(r'\("entity"<\|>"?([^"<]+)"?<\|>')
_WORD = re.compile(r"[a-z]{4,}")
_QUESTION = re.compile(r"# Question\n(.*?)\n\n# Answer", re.DOTALL)
_PASSAGE = re.compile(r"^\[([^\]]+)\] (.+)$", re.MULTILINE)


@dataclass
class FakeLlm:
    extractions: list[tuple[str, list[str]]] = field(default_factory=list)  # (answer, entity names)
    reports: list[tuple[str, set[str]]] = field(default_factory=list)       # (JSON answer, its words)
    requests: list[list[dict[str, str]]] = field(default_factory=list)
    fail_next: list[int] = field(default_factory=list)
    malformed_next: int = 0
    foreign_citation: str | None = None
    delay_s: float = 0.0
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def recorded(cls) -> FakeLlm:
        fake = cls()
        for item in json.loads(RECORDED.read_text(encoding="utf-8")).values():
            text = item["return"]
            if "<|>" in text:
                fake.extractions.append((text, [n.strip() for n in _NAME.findall(text)]))
            else:
                with contextlib.suppress(ValueError):
                    json.loads(text)
                    fake.reports.append((text, set(_WORD.findall(text.lower()))))
        return fake

    def answer(self, messages: list[dict[str, str]]) -> str:
        last = messages[-1]["content"]
        choice = re.search(r"Reply with one answer only: (.+)\.$", messages[0]["content"])
        if choice:  # a graph-QA prompt: a negated relation in the graph means the second answer
            options = choice.group(1).split(" or ")
            return options[-1] if re.search(r"\bnot\b|antonym", last) else options[0]
        question = _QUESTION.search(last)
        if question:
            return self._cited_answer(question.group(1), last[:question.start()])
        if last.startswith("MANY entities"):
            return "<|COMPLETE|>"
        if "Answer Y if there are still" in last:
            return "N"
        if last.startswith("Write a summary of the following"):  # a RAPTOR tree summary: the opening words
            body = last.split(":", 1)[1].strip()
            return "In short: " + " ".join(body.split()[:25])
        if "# Report Structure" in last:  # a community-report prompt
            words = set(_WORD.findall(last.lower()))
            return max(self.reports, key=lambda r: len(r[1] & words))[0]
        m = re.search(r"Text: (.*)\n#+\nOutput:", last, re.DOTALL)
        text = (m.group(1) if m else last).lower()
        return max(self.extractions, key=lambda e: sum(text.count(n.lower()) for n in set(e[1])))[0]

    def _cited_answer(self, question: str, context: str) -> str:
        asked = set(_WORD.findall(question.lower()))
        passages = _PASSAGE.findall(context)
        if not passages:
            return "The context does not say."
        best = sorted(passages, key=lambda p: -len(asked & set(_WORD.findall(p[1].lower()))))[:2]
        out = [f"{re.split(r'(?<=[.!?]) ', text.strip())[0].rstrip('.')}. [{label}]" for label, text in best]
        if self.foreign_citation:
            out.append(f"This is also said elsewhere. [{self.foreign_citation}]")
            self.foreign_citation = None
        return " ".join(out)

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> Any:
            body = await request.json()
            with self.lock:
                self.requests.append(body["messages"])
                status = self.fail_next.pop(0) if self.fail_next else 200
                prose = status == 200 and self.malformed_next > 0
                if prose:
                    self.malformed_next -= 1
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                if self.delay_s:
                    await asyncio.sleep(self.delay_s)
                if status != 200:
                    return JSONResponse({"error": {"message": f"injected {status}", "type": "test"}},
                                        status_code=status, headers={"retry-after-ms": "10"})
                content = "I am sorry, I cannot help with that." if prose else self.answer(body["messages"])
                if body.get("stream"):
                    return StreamingResponse(_chunks(content), media_type="text/event-stream")
                return {"id": "fake", "object": "chat.completion", "created": 0, "model": body.get("model", "fake"),
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}
            finally:
                with self.lock:
                    self.in_flight -= 1

        return app


def _chunks(content: str) -> Iterator[str]:
    """``content`` as OpenAI's streamed chat chunks, a few words each, then ``[DONE]``."""
    words = content.split(" ")
    for i in range(0, len(words), 3):
        piece = " ".join(words[i:i + 3]) + (" " if i + 3 < len(words) else "")
        delta = {"index": 0, "delta": {"content": piece}, "finish_reason": None}
        yield f"data: {json.dumps({'id': 'fake', 'object': 'chat.completion.chunk', 'choices': [delta]})}\n\n"
    end = {"index": 0, "delta": {}, "finish_reason": "stop"}
    yield f"data: {json.dumps({'id': 'fake', 'object': 'chat.completion.chunk', 'choices': [end]})}\n\n"
    yield "data: [DONE]\n\n"


@contextlib.contextmanager
def fake_llm_server() -> Iterator[tuple[FakeLlm, str]]:
    """The replaying server on a free loopback port; yields it and its ``/v1`` base URL."""
    fake = FakeLlm.recorded()
    with background_server(fake.app(), free_port()) as url:
        yield fake, f"{url}/v1"
