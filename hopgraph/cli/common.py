"""What every CLI command shares: the consoles, settings with logging, and the one mapping of
hopgraph's errors onto a message and an exit code."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator

import typer
from rich.console import Console
from rich.logging import RichHandler
from rich.markup import escape

from hopgraph.core.config import load_settings as strict_settings
from hopgraph.core.errors import ConflictError, HopgraphError, classify
from hopgraph.core.settings import Settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

console = Console()
err = Console(stderr=True)


#: the collection ``hopgraph --collection NAME`` chose (None: ``HOPGRAPH_COLLECTION``, else ``default``)
COLLECTION: str | None = None
#: ``hopgraph -v`` (1), ``-q`` (-1) or neither (0)
VERBOSITY: int = 0
#: the command is a long-running service (``serve``, ``worker``, ``mcp``): it logs at the setting's level
SERVICE: bool = False
#: the level of a command's logs unless ``log_level`` is set or ``-v``/``-q`` given
COMMAND_LEVEL = "WARNING"


def log_level(s: Settings) -> str:
    """The level this invocation logs at: ``-q`` ERROR, ``-v`` INFO (DEBUG where the setting asks for
    it), else the ``log_level`` setting where set or for a service, else WARNING."""
    if VERBOSITY < 0:
        return "ERROR"
    setting = s.log_level.upper()
    if VERBOSITY > 0:
        return "DEBUG" if setting == "DEBUG" else "INFO"
    return setting if SERVICE or "log_level" in s.model_fields_set else COMMAND_LEVEL


def load_settings() -> Settings:
    """The settings of this invocation, placed in its collection, with logging set up from them and
    ``-v``/``-q`` (see ``log_level``; a service's settings carry the level it logs at)."""
    from hopgraph.core.collections import placed

    with reported():
        s = placed(strict_settings(), COLLECTION)
    level = log_level(s)
    logging.basicConfig(level=level, format="%(message)s", datefmt="[%X]",
                        handlers=[RichHandler(console=err, show_path=False)])
    for noisy in ("neo4j", "httpx", "sentence_transformers", "urllib3"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))
    if SERVICE and level != s.log_level.upper():
        s = s.model_copy(update={"log_level": level})
    return s


def fail(exc: HopgraphError) -> typer.Exit:
    """Print ``exc`` as one line and return the Exit of its kind (see ``hopgraph.core.errors``)."""
    err.print(f"[bold red]error:[/] {escape(str(exc))}")
    return typer.Exit(code=classify(exc)[0])


@contextlib.contextmanager
def reported() -> Iterator[None]:
    """Turn a hopgraph error raised in the block into its message and exit code."""
    try:
        yield
    except HopgraphError as exc:
        raise fail(exc) from exc


def not_served(s: Settings) -> None:
    """Writes while `hopgraph serve` owns the embedded stores must go through its API."""
    from hopgraph.app.ownership import embedded_owner

    other = embedded_owner(s)
    if other is not None:
        raise fail(ConflictError(
            f"hopgraph serve (pid {other.pid}) owns the stores in {s.data_dir}; send the work through its API "
            f"(POST {other.url}/documents, DELETE {other.url}/documents/ID) or stop it first"))
