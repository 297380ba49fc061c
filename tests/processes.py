"""The environment of every hopgraph process a test starts (CLI commands, ``serve``, scripts).

Stage caps are off in it (``HOPGRAPH_RETRIEVAL__STAGE_CAP_MS=none``): a busy machine would otherwise
make a stage overrun its cap and degrade the mode, and the test's outcome would depend on the load.
A test of degradation itself passes ``caps=True`` and injects the delay. ``test_house`` checks that
every subprocess running Python in the tests takes its ``env`` from here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

NO_STAGE_CAPS = {"HOPGRAPH_RETRIEVAL__STAGE_CAP_MS": "none"}


def cli_env(extra: Mapping[str, str] | None = None, *, caps: bool = False) -> dict[str, str]:
    """This process's environment plus ``extra``, offline models, wide output, and no stage caps
    (unless ``caps``)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "COLUMNS": "200", **(extra or {})}
    if not caps:
        env.update(NO_STAGE_CAPS)
    return env
