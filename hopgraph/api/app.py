"""The FastAPI app factory: stores opened once per process, one writer thread, the scheduler."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.concurrency import run_in_threadpool

from hopgraph.api import docs_pages, explorer, mcp_http, problems, reload
from hopgraph.api.auth import Authenticator
from hopgraph.api.deps import AppState
from hopgraph.api.job_store import JobStore
from hopgraph.api.job_work import work_for
from hopgraph.api.jobs import JobManager, JobWork
from hopgraph.api.limits import BodyLimit
from hopgraph.api.metrics import Metrics
from hopgraph.api.routes import admin, answer, collections, documents, export, graph, ops, query, stores
from hopgraph.api.schemas import JobOut
from hopgraph.app.platform import Platform
from hopgraph.core.collections import DEFAULT
from hopgraph.core.config import load_settings
from hopgraph.core.errors import BadInputError, HopgraphError
from hopgraph.core.service_settings import ScheduledSource, SchedulerSettings
from hopgraph.core.settings import Settings
from hopgraph.ingest.scheduler import ReingestScheduler

log = logging.getLogger(__name__)

DESCRIPTION = """\
Query a knowledge graph of your documents (chunks, entities, relations, communities in a graph
database; embeddings in Qdrant) with graph-aware retrieval modes, ingest and delete documents,
browse entities and communities, and explore the graph with read-only Cypher.

**Auth**: send an API key as `X-API-Key` or `Authorization: Bearer`. `read` keys query and explore;
`admin` keys also ingest and delete. `/health` and `/ready` need no key (`/ready` then says ready or
not ready alone; its counts and checks need a key that may see `/status`); `/metrics` needs a key over
every collection that reads every document, unless `api.metrics_public` opens it to a scraper. The
explorer page at `/ui` asks for a key when keys are configured.

**Errors** are RFC 7807 problem documents (`application/problem+json`).
"""


def create_app(settings: Settings | None = None, platform: Platform | None = None,
               scheduler: bool | None = None, reread: Callable[[], Settings] | None = None,
               freeze_after_start: bool = False) -> FastAPI:
    """Build the app. ``platform``: an already opened platform (tests share loaded models);
    ``scheduler``: run the scheduled re-ingestion (default: ``settings.scheduler.enabled``);
    ``reread``: where a reload reads the settings again (default: environment and config file);
    ``freeze_after_start``: a process that serves only this app (``hopgraph serve``) moves what its
    start loaded out of the garbage collector's sight (``gc.freeze``)."""
    settings = settings or (platform.settings if platform else Settings())
    if settings.collection != DEFAULT:
        raise BadInputError("a server serves every collection (requests choose one with ?collection=NAME): "
                            "start it without --collection or HOPGRAPH_COLLECTION")
    cfg = settings.api
    metrics = Metrics()

    def on_done(job: JobOut) -> None:
        metrics.jobs.labels(job.kind, job.status).inc()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = platform is None
        plat = platform or Platform(settings)
        jobs = JobManager(cfg.job_history, on_done=on_done, store=JobStore(settings.data_dir / "jobs.sqlite"))
        hg = AppState(settings, plat, jobs, metrics, Authenticator(cfg.api_keys))
        await run_in_threadpool(_warm_up, plat)
        if freeze_after_start:
            # modules, models and the first index state live as long as the process: a full collection
            # scanned them all again (0.27 s over 524k objects on the 2wiki store), charged to whichever
            # query set it off, such as the first one after an index refresh
            gc.freeze()
        def resumed(job: JobOut, spec: dict[str, Any]) -> JobWork | None:
            try:
                where = hg.platform_for(job.collection)
            except HopgraphError as exc:  # a collection deleted since: its jobs are dropped
                log.warning("job %s of collection %r not resumed: %s", job.id, job.collection, exc)
                return None
            return work_for(where, metrics, spec, hg.settings.scheduler.sources)

        jobs.resume(resumed)

        def reingest(source: ScheduledSource) -> JobOut:
            spec = {"op": "reingest", "source": source.name}
            where = hg.platform_for(source.collection)  # (a NotFoundError for a collection deleted: logged)
            work = work_for(where, metrics, spec, hg.settings.scheduler.sources)
            assert work is not None  # the source is one of the settings' own
            job = JobOut(id=uuid.uuid4().hex, kind="reingest", status="queued", detail=source.name,
                         created_at=time.time(), collection=source.collection)
            return jobs.submit("reingest", source.name, work, exclusive=True, spec=spec, job=job)

        def start_scheduler(cfg_s: SchedulerSettings) -> ReingestScheduler | None:
            if not ((cfg_s.enabled if scheduler is None else scheduler) and cfg_s.sources):
                return None
            started = ReingestScheduler(cfg_s, reingest)
            started.start()
            return started

        hg.scheduler = start_scheduler(settings.scheduler)
        hg.reload = lambda: reload.apply(hg, (reread or load_settings)(), start_scheduler)
        _on_sighup(hg)
        app.state.hg = hg
        try:
            async with mcp_running():
                yield
        finally:
            if hg.scheduler is not None:
                hg.scheduler.shutdown()
            await run_in_threadpool(jobs.shutdown, cfg.shutdown_grace_s)
            await run_in_threadpool(hg.close_others)
            await run_in_threadpool(plat.stop_polling)
            if owned:
                await run_in_threadpool(plat.close)

    app = FastAPI(title="hopgraph", version="0.1.0", description=DESCRIPTION, lifespan=lifespan,
                  responses={500: {"description": "Internal error (problem JSON)"}}, docs_url=None, redoc_url=None)
    problems.install(app)
    docs_pages.install(app)
    explorer.install(app)
    for router in (query.router, answer.router, documents.router, graph.router, export.router, admin.router,
                   stores.router, ops.router, collections.router):
        app.include_router(router)
    mcp_running = mcp_http.install(app, cfg.host)  # the MCP tools at /mcp (streamable HTTP)
    app.middleware("http")(metrics.middleware)
    if cfg.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=cfg.cors_origins, allow_methods=["*"],
                           allow_headers=["*"], allow_credentials="*" not in cfg.cors_origins)
    # file uploads may be large; every JSON body (documents sent as JSON too) has the JSON limit
    app.add_middleware(BodyLimit, limit_for=lambda path, ctype: cfg.max_upload_bytes
                       if path == "/documents" and ctype.startswith("multipart/") else cfg.max_body_bytes)
    return app


def _on_sighup(hg: AppState) -> None:
    """SIGHUP reloads keys and schedules (where this process may take signals: the main thread)."""
    loop = asyncio.get_running_loop()

    def reload_now() -> None:
        try:
            hg.reload()
        except HopgraphError as exc:  # a bad config file: keep serving as before, say why
            log.error("reload refused: %s", exc)

    try:
        loop.add_signal_handler(signal.SIGHUP, lambda: loop.run_in_executor(None, reload_now))
    except (RuntimeError, ValueError, NotImplementedError, AttributeError):
        log.debug("SIGHUP not available here: reload through POST /admin/reload")


def _warm_up(platform: Platform) -> None:
    """Open both stores, apply pending migrations and load the models before serving (the embedding
    model loads on its own thread meanwhile: the warm-up embedding waits for it)."""
    applied = platform.admin.migrate()
    if applied:
        log.info("applied migrations: %s", ", ".join(applied))
    platform.recover()  # a killed server's half-done work: the re-queued jobs complete it
    platform.warm(poll=True)  # the index state loaded from disk (or built once) before the first request
