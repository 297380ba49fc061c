"""The FastAPI app factory: stores opened once per process, one writer thread, the scheduler."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.concurrency import run_in_threadpool

from api import docs_pages, problems
from api.auth import Authenticator
from api.deps import AppState
from api.job_store import JobStore
from api.job_work import work_for
from api.jobs import JobManager
from api.limits import BodyLimit
from api.metrics import Metrics
from api.routes import documents, export, graph, ops, query
from api.schemas import JobOut
from hopgraph.app.platform import Platform
from hopgraph.core.service_settings import ScheduledSource
from hopgraph.core.settings import Settings
from ingest.scheduler import ReingestScheduler

log = logging.getLogger(__name__)

DESCRIPTION = """\
Query a knowledge graph of your documents (chunks, entities, relations, communities in a graph
database; embeddings in Qdrant) with graph-aware retrieval modes, ingest and delete documents,
browse entities and communities, and explore the graph with read-only Cypher.

**Auth**: send an API key as `X-API-Key` or `Authorization: Bearer`. `read` keys query and explore;
`admin` keys also ingest and delete. `/health`, `/ready` and `/metrics` need no key.

**Errors** are RFC 7807 problem documents (`application/problem+json`).
"""


def create_app(settings: Settings | None = None, platform: Platform | None = None,
               scheduler: bool | None = None) -> FastAPI:
    """Build the app. ``platform``: an already opened platform (tests share loaded models);
    ``scheduler``: run the scheduled re-ingestion (default: ``settings.scheduler.enabled``)."""
    settings = settings or (platform.settings if platform else Settings())
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
        jobs.resume(lambda job, spec: work_for(plat, metrics, spec))
        run_schedules = settings.scheduler.enabled if scheduler is None else scheduler
        if run_schedules and settings.scheduler.sources:

            def reingest(source: ScheduledSource) -> JobOut:
                spec = {"op": "reingest", "source": source.name}
                work = work_for(plat, metrics, spec)
                assert work is not None  # the source is one of the settings' own
                return jobs.submit("reingest", source.name, work, exclusive=True, spec=spec)

            hg.scheduler = ReingestScheduler(settings.scheduler, reingest)
            hg.scheduler.start()
        app.state.hg = hg
        try:
            yield
        finally:
            if hg.scheduler is not None:
                hg.scheduler.shutdown()
            await run_in_threadpool(jobs.shutdown, cfg.shutdown_grace_s)
            await run_in_threadpool(plat.retriever.keeper.stop_polling)
            if owned:
                await run_in_threadpool(plat.close)

    app = FastAPI(title="hopgraph", version="0.1.0", description=DESCRIPTION, lifespan=lifespan,
                  responses={500: {"description": "Internal error (problem JSON)"}}, docs_url=None, redoc_url=None)
    problems.install(app)
    docs_pages.install(app)
    for router in (query.router, documents.router, graph.router, export.router, ops.router):
        app.include_router(router)
    app.middleware("http")(metrics.middleware)
    if cfg.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=cfg.cors_origins, allow_methods=["*"],
                           allow_headers=["*"], allow_credentials="*" not in cfg.cors_origins)
    # file uploads may be large; every JSON body (documents sent as JSON too) has the JSON limit
    app.add_middleware(BodyLimit, limit_for=lambda path, ctype: cfg.max_upload_bytes
                       if path == "/documents" and ctype.startswith("multipart/") else cfg.max_body_bytes)
    return app


def _warm_up(platform: Platform) -> None:
    """Open both stores, apply pending migrations and load the models before serving."""
    applied = platform.graph.migrate()
    if applied:
        log.info("applied migrations: %s", ", ".join(applied))
    platform.recover()  # a killed server's half-done work: the re-queued jobs complete it
    platform.vectors.count("chunks")
    platform.embedder.embed(["warm up"])
    keeper = platform.retriever.keeper
    keeper.refresh()  # loaded from disk (or built once) before the first request, never inside one
    keeper.start_polling(platform.settings.index.poll_s)
