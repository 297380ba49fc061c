"""Collections: GET, POST /collections and DELETE /collections/{name}."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from hopgraph.api.auth import authorize, presented
from hopgraph.api.deps import problems, state
from hopgraph.api.problems import ProblemError
from hopgraph.api.tenancy import may_use
from hopgraph.app.collection_registry import CollectionInfo, list_collections
from hopgraph.app.collections import create_collection, delete_collection
from hopgraph.core.collections import NAME, NAME_RULE

router = APIRouter(tags=["collections"])


class CollectionRequest(BaseModel):
    """A collection to create."""

    name: str = Field(min_length=1, max_length=40, pattern=NAME.pattern, description=NAME_RULE)


def _every_collection(request: Request, key: str | None) -> None:
    """Creating and deleting collections needs an admin key that may use every collection (``*``)."""
    hg = state(request)
    authorize(hg.auth, key, "admin")
    if not may_use(hg.auth, key, "*"):  # only a key listing '*' may use the collection named '*'
        raise ProblemError(403, "creating and deleting collections needs an admin key whose collections are '*'")


@router.get("/collections", response_model=list[CollectionInfo], responses=problems(401, 403),
            summary="The collections this key may use")
def get_collections(request: Request, key: str | None = Depends(presented)) -> list[CollectionInfo]:
    hg = state(request)
    authorize(hg.auth, key, "read")
    return [c for c in list_collections(hg.settings) if may_use(hg.auth, key, c.name)]


@router.post("/collections", status_code=201, response_model=CollectionInfo,
             responses=problems(400, 401, 403, 409, 422),
             summary="Create a collection (its graph database and vector collections are made now)")
async def post_collection(body: CollectionRequest, request: Request,
                          key: str | None = Depends(presented)) -> CollectionInfo:
    _every_collection(request, key)
    made: CollectionInfo = await run_in_threadpool(create_collection, state(request).settings, body.name)
    return made


@router.delete("/collections/{name}", status_code=204, responses=problems(400, 401, 403, 404, 422),
               summary="Delete a collection with everything in it")
async def remove_collection(name: str, request: Request, key: str | None = Depends(presented)) -> None:
    """Its graph database, vector collections, index state and uploaded files are deleted; its queued jobs
    fail. ``default`` cannot be deleted."""
    _every_collection(request, key)
    hg = state(request)
    await run_in_threadpool(hg.forget, name)
    await run_in_threadpool(delete_collection, hg.settings, name)
