"""What changes without a restart: the API keys and the scheduled sources. ``SIGHUP`` or
``POST /admin/reload`` (admin) read the settings again (environment and config file) and apply
those two; any other section that changed is named as needing a restart, and left as it was."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from hopgraph.api.auth import Authenticator, check_config
from hopgraph.api.deps import AppState
from hopgraph.core.service_settings import SchedulerSettings
from hopgraph.core.settings import Settings
from hopgraph.ingest.scheduler import ReingestScheduler

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reloaded:
    """What a reload applied, and what still needs a restart."""

    keys: int
    schedules: list[str]
    restart_needed: list[str]


def restart_needed(old: Settings, new: Settings) -> list[str]:
    """The changed settings sections a reload cannot apply."""
    changed = [name for name in type(old).model_fields if name not in ("api", "scheduler")
               and getattr(old, name) != getattr(new, name)]
    if old.api.model_copy(update={"api_keys": []}) != new.api.model_copy(update={"api_keys": []}):
        changed.append("api (besides api_keys)")
    return sorted(changed)


def apply(hg: AppState, new: Settings,
          start_scheduler: Callable[[SchedulerSettings], ReingestScheduler | None]) -> Reloaded:
    """Swap in ``new``'s keys and schedules (refused, changing nothing, if it would open the API on a
    non-loopback address)."""
    old = hg.settings
    check_config(old.model_copy(update={"api": old.api.model_copy(update={"api_keys": new.api.api_keys})}))
    hg.auth = Authenticator(new.api.api_keys)
    if hg.scheduler is not None:
        hg.scheduler.shutdown()
    hg.settings = old.model_copy(update={"api": old.api.model_copy(update={"api_keys": new.api.api_keys}),
                                         "scheduler": new.scheduler})
    hg.scheduler = start_scheduler(new.scheduler)
    done = Reloaded(len(new.api.api_keys), [s.name for s in new.scheduler.sources], restart_needed(old, new))
    log.info("reloaded: %d API key(s), schedules %s%s", done.keys, done.schedules or "none",
             f"; needs a restart to change: {', '.join(done.restart_needed)}" if done.restart_needed else "")
    return done
