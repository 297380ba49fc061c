"""An OpenAI-compatible chat client with a response cache on disk (extra ``llm``: the ``openai`` SDK).

Retries with exponential backoff on 429, 5xx, timeouts and dropped connections are the SDK's
(``llm.max_retries``; ``Retry-After`` honoured); other HTTP errors fail at once with the status and
the server's message. Every answer is cached under ``llm.cache_dir`` by a hash of the model, the
messages and the sampling parameters, so a rerun (a resumed ingest, a re-ingest of unchanged
chunks) costs no request.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, cast

from hopgraph.core.errors import StoreUnavailableError
from hopgraph.core.settings import LlmSettings

log = logging.getLogger(__name__)


class LlmError(StoreUnavailableError):
    """The LLM endpoint cannot be used or answered with an error."""


class LlmOutputError(LlmError):
    """The LLM answered, but not in the format asked for."""


class ChatClient:
    """``chat(messages) -> str``, cached and retried; thread-safe."""

    def __init__(self, cfg: LlmSettings, cache_dir: Path) -> None:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise LlmError("the LLM path needs the 'llm' extra: pip install 'hopgraph[llm]'") from exc
        key = cfg.api_key.get_secret_value() if cfg.api_key else os.environ.get("OPENAI_API_KEY")
        if not key and cfg.base_url is None:
            raise LlmError("llm.api_key (or OPENAI_API_KEY) is needed for the default OpenAI endpoint; "
                           "or set llm.base_url to a local OpenAI-compatible server")
        self.cfg = cfg
        self.cache_dir = cache_dir
        self._openai = openai
        self._client = openai.OpenAI(base_url=cfg.base_url, api_key=key or "unused", timeout=cfg.timeout_s,
                                     max_retries=cfg.max_retries)
        self._slots = threading.BoundedSemaphore(cfg.max_concurrency)
        self.requests = 0
        self.cache_hits = 0

    def _key(self, messages: list[dict[str, str]], max_tokens: int) -> str:
        blob = json.dumps({"model": self.cfg.model, "messages": messages, "temperature": self.cfg.temperature,
                           "max_tokens": max_tokens}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def _cache_path(self, key: str) -> Path:
        return self.cache_dir / key[:2] / f"{key}.json"

    def chat(self, messages: list[dict[str, str]], accept: Callable[[str], object] | None = None,
             max_tokens: int | None = None) -> str:
        """The assistant's answer to ``messages`` (from the cache when it was asked before).
        ``accept`` validates an answer before it is cached: what it raises propagates, and a
        rejected answer is never cached, so a rerun asks again."""
        limit = max_tokens or self.cfg.max_tokens
        key = self._key(messages, limit)
        cached = self._cached(key)
        if cached is not None:
            return cached
        with self._slots:
            self.requests += 1
            content = self._request(messages, limit)
        if accept is not None:
            accept(content)
        self._store(key, content)
        return content

    def stream(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> Iterator[str]:
        """The answer to ``messages`` as it is written, piece by piece (a cached answer comes in one
        piece); the whole answer is cached once the stream ends."""
        limit = max_tokens or self.cfg.max_tokens
        key = self._key(messages, limit)
        cached = self._cached(key)
        if cached is not None:
            yield cached
            return
        pieces: list[str] = []
        with self._slots:
            self.requests += 1
            with self._errors():
                events = self._client.chat.completions.create(
                    model=self.cfg.model, messages=messages, temperature=self.cfg.temperature,  # type: ignore[arg-type]
                    max_tokens=limit, stream=True)
                for event in cast(Iterable[Any], events):  # a Stream[ChatCompletionChunk]
                    piece = event.choices[0].delta.content if event.choices else None
                    if piece:
                        pieces.append(piece)
                        yield piece
        if not pieces:
            raise LlmOutputError("the LLM endpoint streamed no message content")
        self._store(key, "".join(pieces))

    def _cached(self, key: str) -> str | None:
        path = self._cache_path(key)
        if not path.is_file():
            return None
        try:
            content = str(json.loads(path.read_text(encoding="utf-8"))["content"])
        except (OSError, ValueError, KeyError):
            log.warning("ignoring an unreadable LLM cache entry %s", path)
            return None
        self.cache_hits += 1
        return content

    def _store(self, key: str, content: str) -> None:
        path = self._cache_path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps({"model": self.cfg.model, "content": content}), encoding="utf-8")
        tmp.replace(path)  # atomic: a killed run never leaves half an entry

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """The SDK's errors as :class:`LlmError` with the status and the server's message."""
        openai = self._openai
        try:
            yield
        except openai.APIStatusError as exc:
            raise LlmError(f"the LLM endpoint answered HTTP {exc.status_code}: {exc.message}") from exc
        except openai.APIConnectionError as exc:
            raise LlmError(f"cannot reach the LLM endpoint {self.cfg.base_url or 'api.openai.com'} "
                           f"after {self.cfg.max_retries} retries: {exc}") from exc
        except openai.OpenAIError as exc:
            raise LlmError(f"LLM request failed: {exc}") from exc

    def _request(self, messages: list[dict[str, str]], max_tokens: int) -> str:
        with self._errors():
            resp = self._client.chat.completions.create(
                model=self.cfg.model, messages=messages, temperature=self.cfg.temperature,  # type: ignore[arg-type]
                max_tokens=max_tokens)
        if not resp.choices or resp.choices[0].message.content is None:
            raise LlmOutputError("the LLM endpoint returned no message content")
        return str(resp.choices[0].message.content)

    def close(self) -> None:
        self._client.close()

    def stats(self) -> dict[str, Any]:
        return {"requests": self.requests, "cache_hits": self.cache_hits}
