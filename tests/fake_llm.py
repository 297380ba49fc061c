"""A local OpenAI-compatible chat server that replays the 187 recorded gpt-4o responses of
../shared/data/christmas-carol (real HTTP on 127.0.0.1, served by uvicorn in a thread).

Replay by content: an extraction prompt gets the recorded extraction whose entity names occur most
in the prompt's text; a community-report prompt gets the recorded report sharing the most words
with it; a gleaning prompt gets ``<|COMPLETE|>`` and the Y/N check ``N``. Knobs for failure tests:
``fail_next`` (HTTP statuses to answer first), ``malformed_next`` (answers of prose), ``delay_s``;
it records every request and the most requests it saw in flight at once.
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
from fastapi.responses import JSONResponse

from api.server import background_server
from tests.conftest import free_port
from tests.paths import SHARED_DATA

RECORDED = SHARED_DATA / "christmas-carol" / "recorded-llm-responses.json"
_NAME = re.compile(r'\("entity"<\|>"?([^"<]+)"?<\|>')
_WORD = re.compile(r"[a-z]{4,}")


@dataclass
class FakeLlm:
    extractions: list[tuple[str, list[str]]] = field(default_factory=list)  # (answer, entity names)
    reports: list[tuple[str, set[str]]] = field(default_factory=list)       # (JSON answer, its words)
    requests: list[list[dict[str, str]]] = field(default_factory=list)
    fail_next: list[int] = field(default_factory=list)
    malformed_next: int = 0
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
        if last.startswith("MANY entities"):
            return "<|COMPLETE|>"
        if "Answer Y if there are still" in last:
            return "N"
        if "# Report Structure" in last:  # a community-report prompt
            words = set(_WORD.findall(last.lower()))
            return max(self.reports, key=lambda r: len(r[1] & words))[0]
        m = re.search(r"Text: (.*)\n#+\nOutput:", last, re.DOTALL)
        text = (m.group(1) if m else last).lower()
        return max(self.extractions, key=lambda e: sum(text.count(n.lower()) for n in set(e[1])))[0]

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
                return {"id": "fake", "object": "chat.completion", "created": 0, "model": body.get("model", "fake"),
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}
            finally:
                with self.lock:
                    self.in_flight -= 1

        return app


@contextlib.contextmanager
def fake_llm_server() -> Iterator[tuple[FakeLlm, str]]:
    """The replaying server on a free loopback port; yields it and its ``/v1`` base URL."""
    fake = FakeLlm.recorded()
    with background_server(fake.app(), free_port()) as url:
        yield fake, f"{url}/v1"
