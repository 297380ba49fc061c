"""hopgraph as an MCP server (the official SDK's ``MCPServer``): its tools over a ``Platform``.

Two transports serve the same tools: ``hopgraph mcp`` on stdio (the local user's own process, every tool
allowed) and ``/mcp`` of ``hopgraph serve`` (streamable HTTP, each call authorised by its API key:
``hopgraph.api.mcp_http``). A tool validates its arguments with the HTTP API's request models and calls
what the routes call, so its limits and its refusals are the API's; a refusal is a tool error (the
result's ``isError``) whose text is the problem's ``detail``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, TypeVar

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from neo4j.exceptions import ClientError, Neo4jError
from pydantic import Field, ValidationError

from hopgraph.api.auth import Scope
from hopgraph.api.problems import ProblemError
from hopgraph.api.routes.graph import cypher_bounds, entity_matches, entity_mentions
from hopgraph.api.schemas import AnswerRequest, CypherRequest, DocumentOut, EntityOut, NeighbourOut, QueryRequest
from hopgraph.app.open_platforms import OpenPlatforms
from hopgraph.app.platform import Platform
from hopgraph.core.collections import DEFAULT
from hopgraph.core.errors import (
    BadInputError,
    HopgraphError,
    NotFoundError,
    StoreUnavailableError,
    TimeLimitError,
)
from hopgraph.core.limits import QUERY_TEXT_MAX, TOP_K_MAX
from hopgraph.retrieval.registry import REGISTRY

T = TypeVar("T")
COLLECTION_HELP = ("The collection (an isolated knowledge graph) to use; 'default' holds what was ingested "
                   "without one.")
Collection = Annotated[str, Field(max_length=40, description=COLLECTION_HELP)]
log = logging.getLogger(__name__)
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
INSTRUCTIONS = (
    "hopgraph answers questions over a knowledge graph of documents (chunks, entities, relations). Use `query` "
    "for ranked passages, each with its citation [source · document · chunk], and a cited context; `ask` for an "
    "LLM's cited answer (when the server has an LLM); `lookup_entity` and `cypher` (read-only) to explore the "
    "graph; `list_documents` / `get_document` for what is indexed. Cite passages by their citation."
)


class Access(Protocol):
    """How a transport authorises a tool call and reaches the stores."""

    @property
    def query_timeout_s(self) -> float | None:
        """Seconds a query may run before its call fails (the API's ``api.query_timeout_s``); None: no limit."""
        ...

    def platform(self, ctx: Context, scope: Scope, tool: str, collection: str = DEFAULT) -> Platform:
        """The platform of ``collection``, once the call is allowed ``scope`` on it (else a ``ProblemError``
        401/403; 404 or 422 for an unknown or malformed collection)."""
        ...

    def ingest(self, ctx: Context, paths: list[str], collection: str = DEFAULT) -> dict[str, Any]:
        """Ingest files and folders into ``collection`` for an allowed call; what was done, as JSON."""
        ...


class LocalAccess:
    """``hopgraph mcp``: the local user's own process, which owns the platform; every tool is allowed."""

    query_timeout_s: float | None = None

    def __init__(self, platform: Platform) -> None:
        self._platform = platform
        self._opened = OpenPlatforms(platform)
        self._writing = threading.Lock()  # one ingest at a time (queries go on meanwhile)

    def platform(self, ctx: Context, scope: Scope, tool: str, collection: str = DEFAULT) -> Platform:
        return self._opened.get(collection)

    def close(self) -> None:
        """Close the platforms of collections other than ``default`` (the caller owns that one)."""
        self._opened.close_others()

    def warm(self) -> None:
        """Open everything and load the embedder before the first call needs them (a failure is left for
        that call to report)."""
        try:
            self._opened.warm()  # the question embedder, the stores, the index state and its libraries
        except Exception as exc:  # the first tool call reports it as its error
            log.warning("warm-up failed: %s", exc)

    def ingest(self, ctx: Context, paths: list[str], collection: str = DEFAULT) -> dict[str, Any]:
        found = [Path(p).expanduser().absolute() for p in paths]
        missing = [str(p) for p in found if not p.exists()]
        if missing:
            raise NotFoundError(f"no such file or directory: {', '.join(missing[:5])}")
        with self._writing:
            report = self._opened.get(collection).ingest(found)
        return {"status": "succeeded", "result": report.model_dump(mode="json")}


def _invalid(exc: ValidationError) -> str:
    """A validation error as the API's 422 says it: ``field: message; ...``."""
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()[:5])


@contextlib.contextmanager
def _as_tool_error() -> Iterator[None]:
    """hopgraph's errors, the API's problems and the driver's rejections as tool errors with their text."""
    try:
        yield
    except ToolError:
        raise
    except ProblemError as exc:
        raise ToolError(exc.detail) from exc
    except ValidationError as exc:
        raise ToolError(_invalid(exc)) from exc
    except StoreUnavailableError as exc:
        raise ToolError(f"a store is unavailable: {exc}") from exc
    except HopgraphError as exc:
        raise ToolError(str(exc)) from exc
    except ClientError as exc:  # a statement the graph database refused (as POST /cypher says it)
        raise ToolError(f"the graph database rejected the statement: {exc.message or exc}") from exc
    except Neo4jError as exc:
        raise ToolError(f"a store is unavailable: {exc}") from exc


async def _call(access: Access, ctx: Context, scope: Scope, tool: str, work: Callable[[Platform], T],
                timeout_s: float | None = None, collection: str = DEFAULT) -> T:
    """Authorise the call on ``collection`` and run ``work`` on a worker thread (the event loop keeps
    serving)."""
    def run() -> T:
        return work(access.platform(ctx, scope, tool, collection))

    with _as_tool_error():
        if timeout_s is None:
            return await anyio.to_thread.run_sync(run)
        try:
            with anyio.fail_after(timeout_s):
                return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
        except TimeoutError:
            raise TimeLimitError(f"the {tool} took longer than query_timeout_s={timeout_s:g}s") from None


def build_server(access: Access) -> MCPServer:
    """The MCP server with hopgraph's tools, authorised and served through ``access``."""
    server: MCPServer = MCPServer("hopgraph", title="hopgraph", instructions=INSTRUCTIONS, version="0.1.0",
                                  log_level="WARNING")
    @server.tool(annotations=READ, title="Query the knowledge graph")
    async def query(ctx: Context,
                    text: Annotated[str, Field(description=f"The question or search text (1 to {QUERY_TEXT_MAX} "
                                                           "characters).")],
                    mode: Annotated[str, Field(description=f"Retrieval mode: {', '.join(REGISTRY.names)}; "
                                                           "'graph' follows entities and titles across passages "
                                                           "(multi-hop).")] = "graph",
                    top_k: Annotated[int, Field(description=f"Results to return (1 to {TOP_K_MAX}).")] = 10,
                    collection: Collection = DEFAULT) -> dict[str, Any]:
        """Ranked passages for a question, each with its citation (source, document_id, chunk_id), and the
        cited context built from them for an answer. Validated and answered as POST /query."""
        with _as_tool_error():
            body = QueryRequest(text=text, mode=mode, top_k=top_k)
        result = await _call(access, ctx, "read", "query",
                             lambda p: p.query(body.text, body.mode.value, body.top_k), access.query_timeout_s,
                             collection)
        return result.model_dump(mode="json", exclude={"explain"})

    @server.tool(annotations=READ, title="Answer with citations")
    async def ask(ctx: Context, question: Annotated[str, Field(description="The question.")],
                  mode: Annotated[str | None, Field(description="Retrieval mode of the context (default: the "
                                                                "server's answer.mode).")] = None,
                  top_k: Annotated[int | None, Field(description="Passages retrieved (default: the server's "
                                                                 "answer.top_k).")] = None,
                  collection: Collection = DEFAULT) -> dict[str, Any]:
        """An LLM's answer from the cited context of a retrieval, with its citations checked against that
        context (as POST /answer). Fails with the API's message when the server has no LLM configured."""
        with _as_tool_error():
            body = AnswerRequest(text=question, mode=mode, top_k=top_k)
        answer = await _call(access, ctx, "read", "ask", lambda p: p.answerer.answer(
            body.text, mode=body.mode.value if body.mode else None, top_k=body.top_k), collection=collection)
        return answer.model_dump(mode="json")

    @server.tool(annotations=READ, title="List documents")
    async def list_documents(ctx: Context, skip: Annotated[int, Field(ge=0, le=10_000_000)] = 0,
                             limit: Annotated[int, Field(ge=1, le=1000)] = 100,
                             collection: Collection = DEFAULT) -> dict[str, Any]:
        """Ingested documents in id order: id, source (file path or collection#record), status."""
        docs = await _call(access, ctx, "read", "list_documents",
                           lambda p: p.browser.list_documents(skip=skip, limit=limit), collection=collection)
        return {"documents": [_document(d).model_dump() for d in docs]}

    @server.tool(annotations=READ, title="Get a document")
    async def get_document(ctx: Context, document_id: Annotated[str, Field(min_length=1, max_length=512)],
                           entities: Annotated[int, Field(ge=0, le=1000, description="Entities it mentions to "
                                                                                     "list.")] = 50,
                           collection: Collection = DEFAULT) -> dict[str, Any]:
        """One document (by its id, e.g. from a citation): source, status, and the entities it mentions."""
        def work(p: Platform) -> dict[str, Any]:
            found = p.browser.document_states([document_id]).get(document_id)
            if found is None:
                raise NotFoundError(f"no document {document_id!r}")
            nodes = p.browser.document_graph(document_id)[0] if entities else []
            return {**_document(found).model_dump(), "entities": [
                {k: n.get(k) for k in ("id", "name", "type")} for n in nodes[:entities]]}

        return await _call(access, ctx, "read", "get_document", work, collection=collection)

    @server.tool(annotations=READ, title="Look up an entity")
    async def lookup_entity(ctx: Context, name: Annotated[str, Field(min_length=1, max_length=500)],
                            match: Literal["exact", "normalized", "prefix"] = "normalized",
                            limit: Annotated[int, Field(ge=1, le=1000, description="Matches, relations and "
                                                                                   "chunks to list.")] = 10,
                            collection: Collection = DEFAULT) -> dict[str, Any]:
        """Entities by name (normalized: ignoring case, articles and punctuation), and for the best match its
        mention counts and communities, its relations (strongest first) and the chunks that mention it
        (as GET /entities, /entities/{id}, /neighbors and /chunks)."""
        def work(p: Platform) -> dict[str, Any]:
            matches = entity_matches(p, name, match, limit)
            if not matches:
                raise NotFoundError(f"no entity named {name!r} ({match} match)")
            best = matches[0].id
            row = p.browser.entity(best)
            return {"matches": [m.model_dump() for m in matches],
                    "entity": EntityOut(**row).model_dump() if row else None,
                    "relations": [NeighbourOut(**r).model_dump() for r in p.browser.entity_neighbours(best, 0, limit)],
                    "chunks": [m.model_dump() for m in entity_mentions(p, best, limit) or []]}

        return await _call(access, ctx, "read", "lookup_entity", work, collection=collection)

    @server.tool(annotations=READ, title="Read-only Cypher")
    async def cypher(ctx: Context, statement: Annotated[str, Field(description="A read-only Cypher statement.")],
                     params: Annotated[dict[str, Any] | None, Field(description="Query parameters.")] = None,
                     limit: Annotated[int | None, Field(description="Row limit (at most the server's cap).")] = None,
                     collection: Collection = DEFAULT) -> dict[str, Any]:
        """Run read-only Cypher against the graph (labels Document, Chunk, Entity, Community; edges HAS_CHUNK,
        MENTIONS, RELATED...). Write clauses and writing procedures are refused before the statement runs, as
        POST /cypher refuses them; rows are capped."""
        with _as_tool_error():
            body = CypherRequest(query=statement, params=params or {}, limit=limit)

        def work(p: Platform) -> dict[str, Any]:
            rows, timeout = cypher_bounds(p.settings.api, body)
            try:
                res = p.console.explore(body.query, body.params, rows, timeout)
            except HopgraphError:  # refused by the guard, or rejected by the database: said as it is
                raise
            except (OverflowError, TypeError, ValueError) as exc:  # the driver cannot pack a parameter
                raise BadInputError(f"a parameter cannot be sent to the graph database: {exc}") from None
            return {"columns": res.columns, "rows": res.rows, "truncated": res.truncated}

        return await _call(access, ctx, "read", "cypher", work, collection=collection)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
          title="Ingest files (admin)")
    async def ingest_paths(ctx: Context, paths: Annotated[list[str], Field(
            min_length=1, max_length=1000, description="Absolute paths of files and folders on the server's "
                                                       "disk.")],
                           collection: Collection = DEFAULT) -> dict[str, Any]:
        """Ingest files and folders from the server's own disk (unchanged documents are skipped). Needs an
        admin key over HTTP, where it works as POST /documents/paths (a loopback server only)."""
        def work(_: Platform) -> dict[str, Any]:
            done = access.ingest(ctx, paths, collection)
            if done.get("status") == "failed":
                raise ToolError(f"the ingest failed: {done.get('error')}")
            return done

        return await _call(access, ctx, "admin", "ingest_paths", work, collection=collection)

    return server


def _document(d: Any) -> DocumentOut:
    return DocumentOut(id=d.id, source=d.source, status=d.status, content_hash=d.content_hash)
