"""Documents and jobs: POST/GET/DELETE /documents, GET /jobs."""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from hopgraph.api.auth import Authenticator, Scope, authorize, is_loopback, presented
from hopgraph.api.deps import AppState, problems, state
from hopgraph.api.job_work import records_file, uploads_dir, work_for
from hopgraph.api.problems import ProblemError
from hopgraph.api.schemas import DocumentOut, IngestRequest, JobList, JobOut, LocalPathsRequest, QuietRuns
from hopgraph.api.tenancy import (
    AdminPlatform,
    Reader,
    ReadPlatform,
    WholeGraphPlatform,
    may_use,
    reader_of,
    refuse_readers,
)
from hopgraph.app.ownership import OWNER_HEADER, is_owner_token
from hopgraph.app.platform import Platform
from hopgraph.core.access import parse_groups
from hopgraph.core.errors import BadInputError
from hopgraph.core.records import document_id
from hopgraph.ingest.file_access import SIDECAR_SUFFIX
from hopgraph.ingest.scheduler import UNCHANGED_RUNS

router = APIRouter(tags=["documents"])

_UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/IngestRequest"}},
            "multipart/form-data": {"schema": {
                "type": "object", "required": ["files"],
                "properties": {"files": {"type": "array", "items": {"type": "string", "format": "binary"},
                                         "description": "Text, Markdown, HTML, JSONL/BEIR files or images "
                                                        "(with a sidecar .txt of captions)."}}}},
        },
    }
}


def upload_path(name: str, n: int) -> Path:
    """Where an uploaded file is kept, relative to the uploads folder: its relative path as sent
    (``other/note.md`` and ``note.md`` are two documents), each part made safe, never outside."""
    parts = [re.sub(r"[^A-Za-z0-9._-]", "_", p).lstrip(".") for p in (name or "").replace("\\", "/").split("/")]
    parts = [p for p in parts if p]
    return Path(*parts) if parts else Path(f"upload-{n}")


def _write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` in one step: a job reading it (a queued ingest) sees the old or the new file,
    never a half-written one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def full_admin(auth: Authenticator, key: str | None) -> bool:
    """Whether ``key`` is an admin of every collection (or no keys are configured): the only key an owner
    token empowers, and one that may widen any document's groups."""
    found = None if auth.open else auth.key_of(key or "")
    return auth.open or (found is not None and found.scope == "admin" and "*" in found.collections)


def held_groups(auth: Authenticator, key: str | None) -> list[str] | None:
    """The access groups ``key`` holds, whose documents its ingests may widen (``ingest.caller``); None:
    any document's (a full admin, or a key whose groups include ``*``)."""
    if full_admin(auth, key):
        return None
    found = auth.key_of(key or "")
    groups = list(found.groups) if found is not None else []
    return None if "*" in groups else groups


async def _json_documents(request: Request, hg: AppState, p: Platform, key: str | None) -> JobOut:
    try:
        payload = json.loads(await request.body())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ProblemError(400, f"the body is not valid JSON: {exc}") from None
    try:
        body = IngestRequest.model_validate(payload)
    except ValidationError as exc:
        raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]) from None
    if len(body.documents) > hg.settings.api.max_documents:
        raise ProblemError(413, f"at most {hg.settings.api.max_documents} documents per request")
    records: list[dict[str, Any]] = [d.model_dump(exclude_none=True) for d in body.documents]
    job_id = uuid.uuid4().hex
    path = await run_in_threadpool(records_file, p, job_id, records)
    return _submit(hg, p, "ingest", f"{len(records)} JSON document(s) into {body.collection}",
                   {"op": "ingest_records", "collection": body.collection, "records": str(path),
                    "holds": held_groups(hg.auth, key)}, job_id)


def _submit(hg: AppState, p: Platform, kind: str, detail: str, spec: dict[str, Any],
            job_id: str | None = None) -> JobOut:
    """Queue the work of ``spec`` on collection ``p`` as a durable job."""
    work = work_for(p, hg.metrics, spec)
    if work is None:
        raise ProblemError(400, f"cannot run {spec.get('op')!r}")
    job = JobOut(id=job_id or uuid.uuid4().hex, kind=kind, status="queued", detail=detail, created_at=time.time(),
                 collection=p.settings.collection)
    return hg.jobs.submit(kind, detail, work, spec=spec, job=job)


async def _uploaded_files(request: Request, hg: AppState, p: Platform, replace: bool, key: str | None) -> JobOut:
    form = await request.form(max_files=hg.settings.api.max_documents, max_fields=100)
    files = [f for f in form.getlist("files") if isinstance(f, UploadFile)]
    given = form.get("groups")
    try:
        groups = parse_groups(given) if isinstance(given, str) else []
    except BadInputError as exc:
        raise RequestValidationError([{"loc": ("body", "groups"), "msg": str(exc), "type": "value_error"}]) from None
    if not files:
        raise RequestValidationError([{"loc": ("body", "files"), "msg": "no files uploaded in field 'files'",
                                       "type": "missing"}])
    folder = uploads_dir(p)
    staged: dict[Path, bytes] = {}
    for n, f in enumerate(files):
        rel = upload_path(f.filename or "", n)
        if rel in staged:
            raise ProblemError(409, f"two uploaded files are both called {rel}")
        if rel.name.endswith(SIDECAR_SUFFIX):
            raise ProblemError(422, f"{rel} is a groups sidecar: give an upload's access groups in its "
                                    "'groups' field (or the front matter of a Markdown file)")
        data = await f.read()
        target = folder / rel
        if not replace and target.is_file() and await run_in_threadpool(target.read_bytes) != data:
            raise ProblemError(409, f"a different document {rel} was uploaded before; send it with ?replace=true "
                                    "to replace it, or under another name")
        staged[rel] = data
    paths = [folder / rel for rel in staged]  # nothing is written unless every file may be
    for path, data in zip(paths, staged.values(), strict=True):
        await run_in_threadpool(_write_atomically, path, data)
    return _submit(hg, p, "ingest", f"{len(paths)} uploaded file(s): {', '.join(f.name for f in paths[:5])}",
                   {"op": "ingest_paths", "paths": [str(f) for f in paths], "uploads": True,
                    "holds": held_groups(hg.auth, key), **({"groups": groups} if groups else {})})


@router.post("/documents", status_code=202, response_model=JobOut, openapi_extra=_UPLOAD_BODY,
             responses=problems(400, 401, 403, 404, 409, 413, 415, 422),
             summary="Ingest documents (JSON records or uploaded files) as a background job")
async def add_documents(p: AdminPlatform, request: Request, replace: bool = Query(
        False, description="Uploads: replace a document uploaded before under the same path (else 409)."),
                        key: str | None = Depends(presented)) -> JobOut:
    """Queue an ingest job and answer at once with its id; poll ``GET /jobs/{id}``. An uploaded file
    is identified by its relative path; a different file under a path taken is a 409 unless
    ``replace=true``. JSON records are identified by (collection, id): re-sending one updates it.
    Unchanged documents are skipped; bad files are reported per file in the job's result, and so is a
    document whose access groups this key may not widen (stored with groups it does not hold all of)."""
    hg = state(request)
    ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if ctype == "application/json":
        return await _json_documents(request, hg, p, key)
    if ctype == "multipart/form-data":
        return await _uploaded_files(request, hg, p, replace, key)
    raise ProblemError(415, "send application/json (IngestRequest) or multipart/form-data with 'files'")


@router.post("/documents/paths", status_code=202, response_model=JobOut,
             responses=problems(400, 401, 403, 404, 422),
             summary="Ingest files and folders from the server's own disk (a server on loopback only)")
async def add_local_paths(p: AdminPlatform, body: LocalPathsRequest, request: Request,
                          key: str | None = Depends(presented)) -> JobOut:
    """Queue an ingest of absolute paths the server itself reads: how ``hopgraph ingest`` works while
    ``hopgraph serve`` owns the stores of the same machine. Refused (403) unless the server listens on
    a loopback address, so a remote client can never have it read its disk; 403 for a path outside
    ``api.ingest_roots`` unless the request shows the owner token of ``serve.json`` (``hopgraph ingest``
    of the server's own user) with a full admin key (or none, where none are configured); 404 names a
    missing path. Every file the walk reaches is checked again on its real path (a link out of the
    roots, or into the data dir, is skipped with its reason in the job's result)."""
    return submit_local_paths(state(request), p, body.paths, key, request.headers.get(OWNER_HEADER), body.groups)


def outside_roots(paths: list[Path], roots: list[Path]) -> list[str]:
    """The ``paths`` that do not lie below one of ``roots`` once symlinks and '..' are resolved (on the
    real paths: a link below a root to a file elsewhere is outside)."""
    real = [r.expanduser().resolve() for r in roots]
    return [str(p) for p in paths if not any(p.resolve().is_relative_to(r) for r in real)]


def submit_local_paths(hg: AppState, p: Platform, names: list[str], key: str | None, owner_token: str | None = None,
                       groups: list[str] | None = None) -> JobOut:
    """Queue the ingest of absolute paths on this server's disk (``POST /documents/paths``, the MCP tool
    ``ingest_paths``) for the API key ``key``: refused unless the server listens on loopback, the paths are
    absolute, lie below ``api.ingest_roots`` (symlinks and '..' resolved; not asked of a full admin showing
    the ``owner_token`` of ``serve.json``) and exist. The job's run checks every file it reaches the same
    way (``ingest.caller``). ``groups``: the access groups of the documents that name none of their own."""
    owner = full_admin(hg.auth, key) and is_owner_token(hg.settings, owner_token)
    if not is_loopback(hg.settings.api.host):
        raise ProblemError(403, f"this server listens on {hg.settings.api.host}: it ingests paths on its own "
                                "disk only when it listens on a loopback address; upload the files instead")
    paths = [Path(n) for n in names]
    relative = [str(f) for f in paths if not f.is_absolute()]
    if relative:
        raise ProblemError(400, f"paths must be absolute: {', '.join(relative[:5])}")
    outside = [] if owner else outside_roots(paths, hg.settings.api.ingest_roots)
    if outside:
        where = ", ".join(str(r) for r in hg.settings.api.ingest_roots) or "none are configured"
        raise ProblemError(403, f"{', '.join(outside[:5])}: outside api.ingest_roots ({where}); the server reads "
                                "only below them (upload the files instead)")
    missing = [str(f) for f in paths if not f.exists()]
    if missing:
        raise ProblemError(404, f"no such file or directory on the server: {', '.join(missing[:5])}")
    roots = None if owner else [str(r) for r in hg.settings.api.ingest_roots]
    return _submit(hg, p, "ingest", f"{len(paths)} local path(s): {', '.join(f.name for f in paths[:5])}",
                   {"op": "ingest_paths", "paths": [str(f) for f in paths], "roots": roots,
                    "holds": held_groups(hg.auth, key), **({"groups": groups} if groups else {})})


@router.get("/documents", response_model=list[DocumentOut], responses=problems(401, 403, 404, 422),
            summary="List documents")
def list_documents(p: ReadPlatform, reader: Reader, skip: int = Query(0, ge=0, le=10_000_000),
                   limit: int = Query(100, ge=1, le=1000)) -> list[DocumentOut]:
    """Ingested documents in id order (for a key with access groups: those it reads, once indexed)."""
    if reader is None:
        docs = p.browser.list_documents(skip=skip, limit=limit)
    else:
        ids = p.readable_documents(reader)[skip:skip + limit]
        found = p.browser.document_states(ids)
        docs = [found[i] for i in ids if i in found]
    return [DocumentOut(id=d.id, source=d.source, status=d.status, content_hash=d.content_hash,
                        groups=list(d.groups) if reader is None and d.groups is not None else None) for d in docs]


@router.get("/documents/{source}/{record_id}", response_model=DocumentOut, responses=problems(401, 403, 404, 422),
            summary="A JSON record's document, by the (source prefix, id) it was sent with")
def get_record(p: ReadPlatform, reader: Reader, source: str, record_id: str) -> DocumentOut:
    """The document of the record sent as ``{"collection": source, "documents": [{"id": record_id, ...}]}``
    (the body's ``collection`` is the source prefix of its records); for a key with access groups, one it
    reads."""
    doc_id = document_id(f"{source}#{record_id}")
    found = p.browser.document_states([doc_id]).get(doc_id)
    if found is None or (reader is not None and doc_id not in p.readable_documents(reader)):
        raise ProblemError(404, f"no record {record_id!r} with source prefix {source!r}")
    return DocumentOut(id=found.id, source=found.source, status=found.status, content_hash=found.content_hash)


@router.delete("/documents/{source}/{record_id}", status_code=202, response_model=JobOut,
               responses=problems(401, 403, 404, 422), summary="Delete a JSON record's document, by the (source "
               "prefix, id) it was sent with")
def delete_record(p: AdminPlatform, source: str, record_id: str, request: Request) -> JobOut:
    """Queue the deletion of the record's document (as ``DELETE /documents/{doc_id}``)."""
    return delete_document(p, document_id(f"{source}#{record_id}"), request)


@router.delete("/documents/{doc_id}", status_code=202, response_model=JobOut, responses=problems(401, 403, 404, 422),
               summary="Delete a document and everything only it supported")
def delete_document(p: AdminPlatform, doc_id: str, request: Request) -> JobOut:
    """Queue the deletion (chunks, mentions, orphaned entities and relations, vectors, communities)."""
    if doc_id not in p.browser.document_states([doc_id]):
        raise ProblemError(404, f"no document {doc_id!r}")
    return _submit(state(request), p, "delete", doc_id, {"op": "delete", "ids": [doc_id]})


@router.get("/jobs", response_model=JobList, responses=problems(401, 403, 404, 422),
            summary="Recent jobs and recorded scheduled runs of a collection")
def list_jobs(p: WholeGraphPlatform, request: Request, limit: int = Query(50, ge=1, le=1000)) -> JobList:
    """Jobs of this server (newest first), then scheduled re-ingestion runs recorded in the graph
    (also those of earlier servers and of ``hopgraph worker``), and the next run of each schedule."""
    hg = state(request)
    jobs = [j for j in hg.jobs.list() if j.collection == p.settings.collection]
    known = {j.result.get("run_id") for j in jobs if j.kind == "reingest"}
    active: dict[str, float] = {}  # source -> creation of its oldest queued/running job here
    for j in jobs:
        if j.kind == "reingest" and j.status in ("queued", "running"):
            active[j.detail] = min(active.get(j.detail, j.created_at), j.created_at)
    unchanged: dict[str, QuietRuns] = {}
    for run in p.browser.ingest_runs(limit=limit):
        if run.status == "unchanged":  # runs that changed nothing: a count, not rows
            unchanged[run.source] = QuietRuns(runs=int(run.report.get(UNCHANGED_RUNS, 1)),
                                              last_checked=run.started_at, skipped=run.report.get("skipped") or {})
            continue
        if run.id in known or (run.source in active and run.started_at >= active[run.source]):
            continue  # shown as this server's job (its record may land a moment before the job ends)
        status = {"running": "running", "succeeded": "succeeded", "warning": "succeeded"}.get(run.status, "failed")
        warned = run.status == "warning"  # a missing path: the run's error field names it
        jobs.append(JobOut(id=run.id, kind="reingest", status=status, detail=run.id, created_at=run.started_at,
                           started_at=run.started_at, finished_at=run.finished_at,
                           result={"source": run.source, **run.report}, error=None if warned else run.error,
                           warning=run.error if warned else None))
    here = {s.name for s in hg.settings.scheduler.sources if s.collection == p.settings.collection}
    schedules = {n: t for n, t in hg.scheduler.next_runs().items() if n in here} if hg.scheduler else {}
    return JobList(jobs=sorted(jobs, key=lambda j: -j.created_at)[:limit], schedules=schedules, unchanged=unchanged)


@router.delete("/jobs/{job_id}", response_model=JobOut, responses=problems(401, 403, 404, 409, 422),
               summary="Cancel a job")
def cancel_job(job_id: str, request: Request, key: str | None = Depends(presented)) -> JobOut:
    """A queued job is cancelled at once; a running one stops at its next checkpoint ('cancelling',
    then 'cancelled'), every document complete or untouched. A finished job cannot be cancelled (409)."""
    hg = state(request)
    _job_of(request, job_id, key, "admin")
    job = hg.jobs.cancel(job_id)
    if job is None:
        raise ProblemError(404, f"no job {job_id!r}")
    if job.status not in ("cancelling", "cancelled"):
        raise ProblemError(409, f"job {job_id} has already {job.status}")
    return job


@router.get("/jobs/{job_id}", response_model=JobOut, responses=problems(401, 403, 404, 422), summary="One job")
def get_job(job_id: str, request: Request, key: str | None = Depends(presented)) -> JobOut:
    return _job_of(request, job_id, key, "read")


def _job_of(request: Request, job_id: str, key: str | None, scope: Scope) -> JobOut:
    """The job, once the key may use its collection with ``scope`` (a job of a collection the key may
    not use is answered as unknown)."""
    hg = state(request)
    authorize(hg.auth, key, scope)
    refuse_readers(reader_of(hg.auth, key))
    job = hg.jobs.get(job_id)
    if job is None or not may_use(hg.auth, key, job.collection):
        raise ProblemError(404, f"no job {job_id!r} (finished jobs are kept for a while; see GET /jobs)")
    return job
