"""Where the benchmarks find the developer data sets."""

from __future__ import annotations

import os
from pathlib import Path

#: the developer data sets: ``HOPGRAPH_SHARED_DATA`` when set, else ``shared/data`` beside the checkout
SHARED_DATA = Path(os.environ.get("HOPGRAPH_SHARED_DATA")
                   or Path(__file__).resolve().parents[1].parent / "shared" / "data")
