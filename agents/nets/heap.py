"""Keep the process's freed memory for reuse instead of handing it back to the OS after
every training step (:func:`keep_freed_memory`).

Why: a PPO minibatch of the card network (default recipe, 1,024 rows) allocates and frees
about 17 MB per step, its largest tensors being the per-card scorer's (1,024 x 52 x 32
floats, 6.8 MB each). glibc's default heap (a dynamic mmap threshold, a trim threshold of
twice it) hands such blocks back to the OS when they are freed at the end of the step, and
the next step takes them back one 4 KB page fault at a time, each page zeroed by the
kernel: some 3,000 page faults per minibatch, a quarter of the update's CPU time
(docs/learning.md, "A leaner update"). With fixed thresholds above those sizes the freed
blocks stay in the heap and the next step reuses them. Nothing computed changes.

The cost: the process keeps up to :data:`TRIM_THRESHOLD` of freed memory (up to its peak
usage, which it needed once anyway) instead of returning it. Linux with glibc only;
elsewhere (macOS, musl) the call does nothing and returns False.
"""

from __future__ import annotations

import ctypes
import sys

#: glibc's ``mallopt`` parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: Blocks up to this size come from the heap, not from their own mmap: glibc's ceiling on
#: 64-bit (it refuses more), above the 4x wider network's per-card tensors (27 MB).
MMAP_THRESHOLD = 32 << 20
#: Free memory at the heap's top past this is returned to the OS.
TRIM_THRESHOLD = 256 << 20

_set = False


def keep_freed_memory() -> bool:
    """Set glibc's mmap and trim thresholds (:data:`MMAP_THRESHOLD`,
    :data:`TRIM_THRESHOLD`) for this process, once. True when they are set (now or by an
    earlier call), False where the C library has no glibc ``mallopt``."""
    global _set
    if _set:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # mallopt returns 1 on success; both or neither (the trim threshold alone would also
    # switch off the dynamic mmap threshold: every block past 128 KB its own mmap, worse).
    _set = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    return _set
