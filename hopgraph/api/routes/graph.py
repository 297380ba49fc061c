"""Graph browsing and exploration: /entities, /communities, POST /cypher."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Literal

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool

from hopgraph.api.deps import problems, state
from hopgraph.api.problems import ProblemError
from hopgraph.api.schemas import (
    CommunityOut,
    CommunitySummary,
    CypherRequest,
    CypherResponse,
    EntityMatch,
    EntityOut,
    MentionOut,
    NeighbourOut,
)
from hopgraph.api.tenancy import WholeGraphPlatform
from hopgraph.app.platform import Platform
from hopgraph.core.errors import HopgraphError
from hopgraph.core.service_settings import ApiSettings

if TYPE_CHECKING:
    from hopgraph.app.served import NameMatch

router = APIRouter(tags=["graph"])


@router.get("/entities", response_model=list[EntityMatch], responses=problems(401, 403, 404, 422),
            summary="Find entities by name (exact, normalized or prefix)")
def find_entities(p: WholeGraphPlatform, name: str = Query(min_length=1, max_length=500),
                  match: Literal["exact", "normalized", "prefix"] = Query(
                      "normalized", description="exact: as written; normalized: ignoring case, articles, "
                      "possessives and punctuation; prefix: normalized names that start with it."),
                  limit: int = Query(20, ge=1, le=1000)) -> list[EntityMatch]:
    """Entities of the served index state (see ``GET /ready`` for its version), most mentioned first."""
    return entity_matches(p, name, match, limit)


def entity_matches(platform: Platform, name: str, match: NameMatch = "normalized", limit: int = 20
                   ) -> list[EntityMatch]:
    """Entities named ``name`` in the served index state, most mentioned first (``GET /entities``)."""
    return [EntityMatch(id=h.id, name=h.name, type=h.type, chunks=h.chunks)
            for h in platform.find_entities(name, match, limit)]


@router.get("/entities/{entity_id}", response_model=EntityOut, responses=problems(401, 403, 404, 422),
            summary="An entity with its mention counts and communities")
def get_entity(p: WholeGraphPlatform, entity_id: str) -> EntityOut:
    row = p.browser.entity(entity_id)
    if row is None:
        raise ProblemError(404, f"no entity {entity_id!r}")
    return EntityOut(**row)


@router.get("/entities/{entity_id}/neighbors", response_model=list[NeighbourOut],
            responses=problems(401, 403, 404, 422), summary="Related entities, strongest relation first")
def get_neighbours(p: WholeGraphPlatform, entity_id: str, skip: int = Query(0, ge=0, le=10_000_000),
                   limit: int = Query(50, ge=1, le=1000)) -> list[NeighbourOut]:
    graph = p.browser
    rows = graph.entity_neighbours(entity_id, skip=skip, limit=limit)
    if not rows and graph.entity(entity_id) is None:
        raise ProblemError(404, f"no entity {entity_id!r}")
    return [NeighbourOut(**r) for r in rows]


@router.get("/entities/{entity_id}/chunks", response_model=list[MentionOut],
            responses=problems(401, 403, 404, 422), summary="The chunks that mention an entity (provenance)")
def get_entity_chunks(p: WholeGraphPlatform, entity_id: str, limit: int = Query(50, ge=1, le=1000)) -> list[MentionOut]:
    found = entity_mentions(p, entity_id, limit)
    if found is None:
        raise ProblemError(404, f"no entity {entity_id!r}")
    return found


def entity_mentions(platform: Platform, entity_id: str, limit: int = 50) -> list[MentionOut] | None:
    """The chunks that mention an entity, most mentions first; None when there is no such entity."""
    graph = platform.browser
    found = graph.chunks_of_entities([entity_id])
    if not found and graph.entity(entity_id) is None:
        return None
    found.sort(key=lambda m: (-m.count, m.chunk.document_id, m.chunk.ord))
    return [MentionOut(chunk_id=m.chunk.chunk_id, document_id=m.chunk.document_id, source=m.chunk.source,
                       ord=m.chunk.ord, count=m.count, text=m.chunk.text) for m in found[:limit]]


@router.get("/communities", response_model=list[CommunitySummary], responses=problems(401, 403, 404, 422),
            summary="Communities, optionally of one level (0 = finest), largest first")
def list_communities(p: WholeGraphPlatform, level: int | None = Query(None, ge=0, le=100),
                     skip: int = Query(0, ge=0, le=10_000_000),
                     limit: int = Query(50, ge=1, le=1000)) -> list[CommunitySummary]:
    rows = p.browser.communities(level=level, skip=skip, limit=limit)
    return [CommunitySummary(**r) for r in rows]


@router.get("/communities/{community_id}", response_model=CommunityOut, responses=problems(401, 403, 404, 422),
            summary="A community with its parent, children and members")
def get_community(p: WholeGraphPlatform, community_id: str, members: int = Query(200, ge=0, le=5000)) -> CommunityOut:
    row = p.browser.community(community_id, member_limit=members)
    if row is None:
        raise ProblemError(404, f"no community {community_id!r}")
    return CommunityOut(**row)


@router.post("/cypher", response_model=CypherResponse, responses=problems(400, 401, 403, 404, 413, 422, 503, 504),
             summary="Run a read-only, parameterized Cypher statement")
async def run_cypher(p: WholeGraphPlatform, body: CypherRequest, request: Request) -> CypherResponse:
    """Write clauses (CREATE, MERGE, SET, DELETE, REMOVE, LOAD CSV, CALL of procedures that write...)
    are refused before the statement runs; rows are capped and the statement has a timeout."""
    hg = state(request)
    limit, timeout = cypher_bounds(hg.settings.api, body)
    try:
        res = await asyncio.wait_for(run_in_threadpool(
            p.console.explore, body.query, body.params, limit, timeout), timeout + 2.0)
    except TimeoutError:
        raise ProblemError(504, f"the statement took longer than {timeout:g}s") from None
    except HopgraphError:  # refused by the guard, or rejected by the database: said as it is
        raise
    except (OverflowError, TypeError, ValueError) as exc:  # the driver cannot pack a parameter
        raise ProblemError(400, f"a parameter cannot be sent to the graph database: {exc}") from None
    return CypherResponse(columns=res.columns, rows=res.rows, truncated=res.truncated)


def cypher_bounds(cfg: ApiSettings, body: CypherRequest) -> tuple[int, float]:
    """The row limit and the timeout of a statement: as asked, at most the server's caps."""
    return (min(body.limit or cfg.cypher_row_limit, cfg.cypher_row_limit),
            min(body.timeout_s or cfg.cypher_timeout_s, cfg.cypher_timeout_s))
