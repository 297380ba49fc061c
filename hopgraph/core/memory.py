"""Keep freed memory in the process for the next refresh of the index state.

A delta refresh at scale writes a few hundred MB of new arrays (the patched tables, adjacency and walk)
while the previous state is still served, then drops the previous state. glibc hands blocks above 32 MB
back to the kernel at once (they are mapped, not taken from the heap), so every refresh faults its
arrays in again. On a virtual machine whose kernel reports free pages to the host (virtio-balloon free
page reporting), pages idle for a few seconds are given back to the host too, and faulting them in
again costs time in proportion to their size, which a refresh whose memory went idle first pays on
top of its own work (``python -m benchmarks.freshness --synthetic ...`` with and without
``--release-freed-memory``).

``keep_freed_memory`` asks glibc to serve large blocks from the heap (no ``mmap``), from one arena for
every thread (a refresh runs on a background thread, and other arenas map large blocks anyway), and
not to trim the heap: freed arrays then stay with the process and the next refresh reuses them. The
cost is that the process keeps its peak size (the served state, the next one, and the refresh's
temporaries) instead of shrinking after each refresh.

A fresh process still has to reach that size, and its first refreshes pay for it: they are slower than
the ones after (``python -m benchmarks.freshness --synthetic ...`` with and without ``--no-pregrow``).
``pregrow`` touches that memory once, ahead of them, on a server's background thread: what it frees
stays in the heap for the refreshes' arrays.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys
import threading
import time

log = logging.getLogger(__name__)

#: ``mallopt`` parameters (glibc's malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
M_ARENA_MAX = -8
#: the trim threshold: -1 is read as the largest size (never trim). The largest positive int (2 GB)
#: would still hand back a larger freed block at the heap's top, and the next refresh would fault it
#: in again, paying the re-touch cost the module docstring describes on every refresh
NEVER = -1

_lock = threading.Lock()
_applied: bool | None = None
_grown = 0
_grow_lock = threading.Lock()
#: ``pregrow`` writes memory in steps this large, letting go of the processor between them
STEP = 64 << 20
#: ``pregrow`` grows again for a size this many times what it grew for (a corpus that grows a little
#: with every refresh does not make every refresh write gigabytes again)
AGAIN = 1.25


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed memory for reuse (once per process; later calls return the first
    outcome). False where the C library is not glibc (or refused a setting): nothing changes."""
    global _applied
    with _lock:
        if _applied is None:
            _applied = _apply()
        return _applied


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")


def _apply() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = _libc().mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # (musl has no mallopt; glibc returns 1 for each setting it takes)
    done = all(mallopt(param, value) == 1 for param, value in
               ((M_ARENA_MAX, 1), (M_MMAP_MAX, 0), (M_TRIM_THRESHOLD, NEVER)))
    log.debug("freed memory kept in the process: %s", done)
    return done


def pregrow(nbytes: int) -> int:
    """Have the heap hold ``nbytes`` free in one piece: allocate them, write every page (the kernel and,
    on a VM, the host find the pages now rather than during a refresh) and free them, which the heap
    keeps. A call for no more than ``AGAIN`` times an earlier one's size does nothing; nothing either
    where freed memory is not kept (the pages would be handed back at once). Returns the bytes written."""
    global _grown
    with _grow_lock:
        if not _applied or nbytes <= _grown * AGAIN:
            return 0
        libc = _libc()
        libc.malloc.argtypes, libc.malloc.restype = [ctypes.c_size_t], ctypes.c_void_p
        libc.free.argtypes, libc.free.restype = [ctypes.c_void_p], None
        block = libc.malloc(nbytes)
        if not block:
            log.warning("could not set %d MB aside for index refreshes", nbytes >> 20)
            return 0
        try:
            for start in range(0, nbytes, STEP):  # (memset lets go of the GIL; the sleep, of the processor)
                ctypes.memset(block + start, 0, min(STEP, nbytes - start))
                time.sleep(0)
        finally:
            libc.free(block)
        _grown = nbytes
        log.info("set %d MB aside in the heap for index refreshes", nbytes >> 20)
        return nbytes
