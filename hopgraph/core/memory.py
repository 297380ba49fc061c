"""Keep freed memory in the process for the next refresh of the index state.

A delta refresh at scale writes a few hundred MB of new arrays (the patched tables, adjacency and walk)
while the previous state is still served, then drops the previous state. glibc hands blocks above 32 MB
back to the kernel at once (they are mapped, not taken from the heap), so every refresh faults its
arrays in again. On a virtual machine whose kernel reports free pages to the host (virtio-balloon free
page reporting), pages idle for a few seconds are given back to the host too, and faulting them in
again costs about 1.5 ms per MB (measured here: 300 MB re-touched after 2 s idle, 0.45-0.65 s; after
0.5 s, or with this policy, 0.01 s). That made refreshes of the same size take 0.2 s or 0.95 s.

``keep_freed_memory`` asks glibc to serve large blocks from the heap (no ``mmap``), from one arena for
every thread (a refresh runs on a background thread, and other arenas map large blocks anyway), and
not to trim the heap: freed arrays then stay with the process and the next refresh reuses them. The
cost is that the process keeps its peak size (the served state, the next one, and the refresh's
temporaries) instead of shrinking after each refresh.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys
import threading

log = logging.getLogger(__name__)

#: ``mallopt`` parameters (glibc's malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
M_ARENA_MAX = -8
#: the trim threshold: -1 is read as the largest size (never trim). The largest positive int (2 GB)
#: would still hand back a freed block of 3 GB at the heap's top, and the next refresh would fault it
#: in again (measured: 3 GB re-touched in 2.5 s each time, against 0.11 s with -1)
NEVER = -1

_lock = threading.Lock()
_applied: bool | None = None


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed memory for reuse (once per process; later calls return the first
    outcome). False where the C library is not glibc (or refused a setting): nothing changes."""
    global _applied
    with _lock:
        if _applied is None:
            _applied = _apply()
        return _applied


def _apply() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # (musl has no mallopt; glibc returns 1 for each setting it takes)
    done = all(mallopt(param, value) == 1 for param, value in
               ((M_ARENA_MAX, 1), (M_MMAP_MAX, 0), (M_TRIM_THRESHOLD, NEVER)))
    log.debug("freed memory kept in the process: %s", done)
    return done
