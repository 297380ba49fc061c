"""Prometheus metrics of one app (its own registry, so several apps can live in one process)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from fastapi import Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from hopgraph.core.records import IngestReport

_LATENCY_BUCKETS = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0)


class Metrics:
    """Request counts and latencies per route, query latencies per mode, ingest rates."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("hopgraph_http_requests_total", "HTTP requests.", ["route", "method", "status"],
                                registry=r)
        self.latency = Histogram("hopgraph_http_request_seconds", "HTTP request latency.", ["route", "method"],
                                 buckets=_LATENCY_BUCKETS, registry=r)
        self.queries = Counter("hopgraph_queries_total", "Queries answered.", ["mode", "degraded"], registry=r)
        self.query_latency = Histogram("hopgraph_query_seconds", "Query latency inside the retriever.", ["mode"],
                                       buckets=_LATENCY_BUCKETS, registry=r)
        self.ingested_documents = Counter("hopgraph_ingested_documents_total", "Documents ingested.", registry=r)
        self.ingested_chunks = Counter("hopgraph_ingested_chunks_total", "Chunks ingested.", registry=r)
        self.ingest_seconds = Counter("hopgraph_ingest_seconds_total", "Time spent ingesting.", registry=r)
        self.ingest_rate = Gauge("hopgraph_ingest_chunks_per_second", "Chunks per second of the last ingest.",
                                 registry=r)
        self.jobs = Counter("hopgraph_jobs_total", "Background jobs finished.", ["kind", "status"], registry=r)

    def observe_query(self, mode: str, degraded: bool, total_ms: float) -> None:
        self.queries.labels(mode, str(degraded).lower()).inc()
        self.query_latency.labels(mode).observe(total_ms / 1000)

    def observe_ingest(self, report: IngestReport) -> None:
        self.ingested_documents.inc(report.documents_ingested)
        self.ingested_chunks.inc(report.chunks)
        self.ingest_seconds.inc(report.seconds)
        if report.chunks and report.seconds > 0:
            self.ingest_rate.set(report.chunks / report.seconds)

    def render(self) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)

    async def middleware(self, request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        t0 = time.perf_counter()
        status = 500
        try:
            response = await call_next(request)
            status = response.status_code
            return response
        finally:
            route = request.scope.get("route")
            name = getattr(route, "path", None) or "unmatched"
            self.requests.labels(name, request.method, str(status)).inc()
            self.latency.labels(name, request.method).observe(time.perf_counter() - t0)
