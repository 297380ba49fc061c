"""Settings of the service side: the HTTP API (``hopgraph serve``) and scheduled re-ingestion."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from hopgraph.core.access import check_groups
from hopgraph.core.limits import CYPHER_MAX_ROWS, CYPHER_MAX_TIMEOUT_S

#: a collection's name (``core.collections``): it becomes part of database and collection names on every backend
COLLECTION_NAME = r"^[a-z][a-z0-9]{0,39}$"


class ApiKey(BaseModel):
    """An API key, stored only as the SHA-256 hex digest of the key (``hopgraph api-key`` makes one)."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1, description="A label for the key: who or what holds it.")
    sha256: str = Field(
        pattern=r"^[0-9a-f]{64}$", description="SHA-256 hex digest of the key (hopgraph api-key prints it).")
    scope: Literal["read", "admin"] = Field(
        default="read", description="'read': query and explore; 'admin': also ingest, delete and reload.")
    collections: list[str] = Field(
        default_factory=lambda: ["default"], min_length=1, description="The collections the key may use "
        "(`*`: every one, and with 'admin' also create and delete collections). A key may not even learn "
        "whether another collection exists.")
    groups: list[str] = Field(
        default_factory=lambda: ["*"], min_length=1, description="The access groups a 'read' key reads inside "
        "its collections: documents ingested with one of them, and public ones (with no groups). `*`: every "
        "document. A key with groups is refused the routes that show what several documents built together "
        "(entities, communities, Cypher, status, jobs). An 'admin' key reads every document.")

    @field_validator("groups")
    @classmethod
    def _groups(cls, value: list[str]) -> list[str]:
        return ["*"] if "*" in value else check_groups(value)


class ApiSettings(BaseModel):
    """The HTTP service (``hopgraph serve``)."""

    model_config = ConfigDict(frozen=True)

    host: str = Field(
        default="127.0.0.1", description="Address hopgraph serve listens on (a non-loopback one needs API keys).")
    port: int = Field(default=8000, ge=1, le=65535, description="Port hopgraph serve listens on.")
    api_keys: list[ApiKey] = Field(
        default_factory=list,
        description="No keys: the API is open (allowed only on a loopback host). 'read' keys query and "
        "explore; 'admin' keys also ingest and delete.")
    cors_origins: list[str] = Field(default_factory=list, description="Allowed browser origins ('*' for any).")
    metrics_public: bool = Field(
        default=False, description="Serve GET /metrics without a key, to a Prometheus scraper on purpose. "
        "Otherwise it needs a key over every collection ('*') that reads every document: the metrics count "
        "every collection's requests, queries and ingests.")
    max_body_bytes: int = Field(default=2_000_000, ge=1024, description="Largest JSON request body.")
    max_upload_bytes: int = Field(default=50_000_000, ge=1024, description="Largest upload to /documents.")
    max_documents: int = Field(default=1000, ge=1, description="Documents (or files) per ingest request.")
    ingest_roots: list[Path] = Field(
        default_factory=list, description="Directories below which POST /documents/paths (and the MCP tool "
        "ingest_paths) may read server files, symlinks and '..' resolved first; empty: none (uploads only). "
        "The CLI of the user who runs serve is not bound by them: it proves it with serve.json's token.")
    query_timeout_s: float = Field(default=30.0, gt=0, description="A query running longer answers 504.")
    cypher_row_limit: int = Field(default=1000, ge=1, le=CYPHER_MAX_ROWS, description="Most rows POST /cypher returns.")
    cypher_timeout_s: float = Field(
        default=10.0, gt=0, le=CYPHER_MAX_TIMEOUT_S, description="Default time limit of POST /cypher (stopped on "
        "the server at the limit).")
    job_history: int = Field(default=200, ge=1,
                             description="Finished jobs kept for GET /jobs (in <data_dir>/jobs.sqlite).")
    shutdown_grace_s: float = Field(default=8.0, ge=0, description="On SIGTERM, how long the running job may take "
                                    "to reach its next checkpoint; it and the queued jobs run again at the next start.")


class ScheduledSource(BaseModel):
    """A named source re-ingested on a schedule: only new, changed and removed documents are touched."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(
        min_length=1, pattern=r"^[A-Za-z0-9_.-]+$", description="The source's name (letters, digits, '_', '.', "
        "'-'); its runs are recorded under it.")
    paths: list[str] = Field(min_length=1, description="Files, directories or glob patterns ('docs/**/*.md').")
    cron: str | None = Field(default=None, description="Crontab expression, e.g. '0 3 * * *'.")
    interval_s: float | None = Field(default=None, gt=0, description="Or: run every this many seconds.")
    collection: str = Field(default="default", pattern=COLLECTION_NAME, description="The collection its "
                            "documents go to (it must exist when a run starts).")
    groups: list[str] = Field(default_factory=list, description="The access groups that may read its documents "
                              "(those naming none of their own); none: public in the collection.")

    @field_validator("groups")
    @classmethod
    def _groups(cls, value: list[str]) -> list[str]:
        return check_groups(value)

    @model_validator(mode="after")
    def _one_schedule(self) -> ScheduledSource:
        if (self.cron is None) == (self.interval_s is None):
            raise ValueError(f"scheduled source {self.name!r}: give exactly one of 'cron' or 'interval_s'")
        return self


class SchedulerSettings(BaseModel):
    """Scheduled re-ingestion, run inside ``hopgraph serve`` or by ``hopgraph worker``."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = Field(default=True, description="Run the schedules inside `hopgraph serve`.")
    sources: list[ScheduledSource] = Field(
        default_factory=list, description="Sources re-ingested on a schedule ([[scheduler.sources]] tables).")
    run_on_start: bool = Field(default=False, description="Also run every source once when the scheduler starts.")
    timezone: str = Field(default="UTC", description="Time zone of the cron expressions.")
    keep_runs: int = Field(default=500, ge=1, description="Recorded runs kept per source (newest first); a run "
                           "that changed nothing only updates the source's one 'unchanged' record.")
