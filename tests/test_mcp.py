"""The MCP server through the SDK's own client, on real stores and models: ``hopgraph mcp`` on stdio (the
local user's process: every tool allowed), and ``/mcp`` of ``hopgraph serve`` (streamable HTTP), where
each call is authorised by its API key as the HTTP API authorises a request."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

pytest.importorskip("mcp")

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from hopgraph.api.auth import hash_key
from hopgraph.app.answers import NO_LLM
from hopgraph.app.platform import Platform
from hopgraph.core.limits import QUERY_TEXT_MAX
from hopgraph.core.settings import Settings
from hopgraph.graphdb.bolt.arcadedb_server import ServerInfo
from hopgraph.vectors.embedders import SentenceTransformerEmbedder
from tests.api_server import ADMIN_KEY, READ_KEY, running_api
from tests.conftest import free_port, settings_for
from tests.processes import cli_env
from tests.serve_process import serve_process

ROOT_KEY = "root-key-for-mcp-tests"

HOPPER = "Grace Hopper wrote the first compiler for the UNIVAC I at Remington Rand."
LOVELACE = "Ada Lovelace published the first algorithm for the Analytical Engine of Charles Babbage."
READ_TOOLS = {"query", "ask", "list_documents", "get_document", "lookup_entity", "cypher"}


def _store_env(arcadedb: ServerInfo, settings: Settings, config: Path) -> dict[str, str]:
    """The variables that point a hopgraph process at ``settings``' stores (on the session's server)."""
    return {"HOPGRAPH_DATA_DIR": str(settings.data_dir), "HOPGRAPH_GRAPH__URI": arcadedb.uri,
            "HOPGRAPH_GRAPH__PASSWORD": arcadedb.password, "HOPGRAPH_GRAPH__HTTP_PORT": str(arcadedb.http_port),
            "HOPGRAPH_GRAPH__DATABASE": settings.graph.database, "HOPGRAPH_CONFIG": str(config)}


def _ingest(settings: Settings, embedder: SentenceTransformerEmbedder, *files: Path) -> None:
    """Ingest in this process, then close the stores for the process under test."""
    with Platform(settings, embedder=embedder) as p:
        assert p.ingest(list(files)).documents_ingested == len(files)


def _data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def _error(result: CallToolResult) -> str:
    assert result.is_error, result.structured_content
    return " ".join(getattr(c, "text", "") for c in result.content)


def test_stdio_server_answers_cited_queries_and_explores(arcadedb: ServerInfo, settings: Settings,
                                                        embedder: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    hopper, lovelace = tmp_path / "hopper.txt", tmp_path / "lovelace.txt"
    hopper.write_text(HOPPER)
    lovelace.write_text(LOVELACE)
    _ingest(settings, embedder, hopper)
    config = tmp_path / "hopgraph.toml"
    config.write_text("")
    errlog = tmp_path / "mcp-stderr.log"
    params = StdioServerParameters(command=sys.executable, args=["-m", "hopgraph.cli", "mcp"], cwd=tmp_path,
                                   env=cli_env(_store_env(arcadedb, settings, config)))

    async def session() -> None:
        with errlog.open("w") as err, anyio.fail_after(240):
            async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                assert {t.name for t in (await s.list_tools()).tools} == READ_TOOLS | {"ingest_paths"}
                found = _data(await s.call_tool("query", {"text": "Who wrote the first compiler?", "top_k": 3}))
                assert found["mode"] == "graph" and found["results"], found
                top = found["results"][0]
                assert "Grace Hopper" in top["text"] and top["citation"]["source"] == str(hopper.resolve())
                assert top["citation"]["chunk_id"] in found["context"]  # the cited context names it

                too_long = _error(await s.call_tool("query", {"text": "x" * (QUERY_TEXT_MAX + 1)}))
                assert f"at most {QUERY_TEXT_MAX}" in too_long and "text" in too_long
                assert "mode" in _error(await s.call_tool("query", {"text": "compiler", "mode": "telepathy"}))
                assert "top_k" in _error(await s.call_tool("query", {"text": "compiler", "top_k": 0}))
                assert NO_LLM in _error(await s.call_tool("ask", {"question": "Who wrote the first compiler?"}))
                refused = _error(await s.call_tool("cypher", {"statement": "MATCH (d:Document) DETACH DELETE d"}))
                assert "DETACH is a write clause" in refused

                docs = _data(await s.call_tool("list_documents", {}))["documents"]
                assert [d["id"] for d in docs] == [top["citation"]["document_id"]]
                doc = _data(await s.call_tool("get_document", {"document_id": docs[0]["id"]}))
                assert doc["source"] == str(hopper.resolve()) and doc["status"] == "complete", doc
                entity = _data(await s.call_tool("lookup_entity", {"name": "grace hopper"}))
                assert entity["entity"]["name"] == "Grace Hopper"
                assert [c["document_id"] for c in entity["chunks"]] == [docs[0]["id"]]
                rows = _data(await s.call_tool("cypher", {"statement": "MATCH (d:Document) RETURN count(d) AS n"}))
                assert rows["rows"] == [[1]]

                done = _data(await s.call_tool("ingest_paths", {"paths": [str(lovelace)]}))  # the user's own
                assert done["status"] == "succeeded" and done["result"]["documents_ingested"] == 1
                found = _data(await s.call_tool("query", {"text": "Who published the first algorithm?",
                                                          "mode": "bm25", "top_k": 1}))
                assert "Ada Lovelace" in found["results"][0]["text"]

    try:
        anyio.run(session)
    except BaseException:
        print(errlog.read_text(), file=sys.stderr)  # the server's log, shown with the failure
        raise


def test_http_endpoint_authorises_each_call_with_its_key(arcadedb: ServerInfo, embedder: SentenceTransformerEmbedder,
                                                         tmp_path: Path) -> None:
    settings = settings_for(arcadedb, tmp_path / "data")
    hopper, lovelace = tmp_path / "hopper.txt", tmp_path / "lovelace.txt"
    hopper.write_text(HOPPER)
    lovelace.write_text(LOVELACE)
    _ingest(settings, embedder, hopper)
    config = tmp_path / "hopgraph.toml"
    entry = '[[api.api_keys]]\nname = "{0}"\nsha256 = "{1}"\nscope = "{0}"\n'
    root = f'[[api.api_keys]]\nname = "root"\nsha256 = "{hash_key(ROOT_KEY)}"\nscope = "admin"\ncollections = ["*"]\n'
    config.write_text(f'[api]\ningest_roots = ["{tmp_path}"]\n' + entry.format("read", hash_key(READ_KEY))
                      + entry.format("admin", hash_key(ADMIN_KEY)) + root)
    port = free_port()

    async def call(url: str, key: str, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"},
                                    timeout=httpx2.Timeout(60, read=240))
        async with client, streamable_http_client(f"{url}/mcp", http_client=client) as (read, write), \
                ClientSession(read, write) as s:
            await s.initialize()
            names = {t.name for t in (await s.list_tools()).tools}
            assert names == READ_TOOLS | {"ingest_paths"}
            return await s.call_tool(tool, arguments)

    with serve_process(_store_env(arcadedb, settings, config), port) as (_, url):
        for headers in ({}, {"Authorization": "Bearer not-a-key"}):  # no known key: refused before MCP reads it
            r = httpx.post(f"{url}/mcp", headers={**headers, "accept": "application/json, text/event-stream"},
                           json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30)
            assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer"), r.text

        async def session() -> None:
            found = _data(await call(url, READ_KEY, "query", {"text": "Who wrote the first compiler?", "mode": "bm25",
                                                                "top_k": 3}))
            top = found["results"][0]
            assert "Grace Hopper" in top["text"] and top["citation"]["source"] == str(hopper.resolve())
            assert top["citation"]["chunk_id"] in found["context"]
            refused = _error(await call(url, READ_KEY, "ingest_paths", {"paths": [str(lovelace)]}))
            assert "ingest_paths" in refused and "'admin' scope" in refused
            outside = _error(await call(url, ADMIN_KEY, "ingest_paths", {"paths": ["/etc/hostname"]}))
            assert "outside api.ingest_roots" in outside  # an admin too reads only below the roots
            done = _data(await call(url, ADMIN_KEY, "ingest_paths", {"paths": [str(lovelace)]}))
            assert done["status"] == "succeeded" and done["result"]["documents_ingested"] == 1, done
            found = _data(await call(url, READ_KEY, "query", {"text": "Who published the first algorithm?",
                                                               "mode": "bm25", "top_k": 1}))
            assert "Ada Lovelace" in found["results"][0]["text"]
            # another collection: its tools answer from it alone, and only for keys that may use it
            made = httpx.post(f"{url}/collections", json={"name": "teamx"}, headers={"X-API-Key": ROOT_KEY},
                              timeout=120)
            assert made.status_code == 201, made.text
            done = _data(await call(url, ROOT_KEY, "ingest_paths", {"paths": [str(hopper)], "collection": "teamx"}))
            assert done["status"] == "succeeded" and done["result"]["documents_ingested"] == 1, done
            found = _data(await call(url, ROOT_KEY, "query", {"text": "Who published the first algorithm?",
                                                               "mode": "bm25", "collection": "teamx"}))
            assert found["results"] and all("Ada Lovelace" not in r["text"] for r in found["results"])
            refused = _error(await call(url, READ_KEY, "query", {"text": "compiler", "collection": "teamx"}))
            assert "may not use collection 'teamx'" in refused

        anyio.run(session)
        jobs = httpx.get(f"{url}/jobs", headers={"X-API-Key": READ_KEY}, timeout=30).json()["jobs"]
        assert [j["status"] for j in jobs] == ["succeeded"]  # the MCP ingest went through the job queue
        # (the ingest into teamx is a job of that collection, listed with ?collection=teamx)


def test_http_endpoint_without_keys_is_open_as_the_api_is(settings: Settings, platform: Platform,
                                                          tmp_path: Path) -> None:
    gone = tmp_path / "gone.txt"

    async def session(url: str) -> None:
        client = httpx2.AsyncClient(timeout=httpx2.Timeout(60, read=240))
        async with client, streamable_http_client(f"{url}/mcp", http_client=client) as (read, write), \
                ClientSession(read, write) as s:
            await s.initialize()
            assert _data(await s.call_tool("list_documents", {})) == {"documents": []}
            # an admin tool is allowed without a key: refused for its path (no ingest roots), not for its scope
            assert "outside api.ingest_roots" in _error(await s.call_tool("ingest_paths", {"paths": [str(gone)]}))

    with running_api(settings, platform, scheduler=False) as url:
        anyio.run(session, url)
