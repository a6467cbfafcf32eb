"""Peak memory of one call, measured in a fresh Python process (shared by the benchmarks).

The child runs ``setup`` (imports, building inputs, a warm-up call), then samples its resident set
every 0.2 ms from a thread while ``call`` runs once; glibc is told to return freed blocks above
64 KiB to the system, so the resident set follows the live memory. Separate processes keep the
implementations' allocator states apart and leave the timing process with the default allocator.
"""

from __future__ import annotations

import subprocess
import sys

_POLL = (
    "import ctypes, gc, os, threading, time\n"
    "libc = ctypes.CDLL('libc.so.6'); libc.mallopt(-3, 1 << 16)  # M_MMAP_THRESHOLD\n"
    "page = os.sysconf('SC_PAGE_SIZE')\n"
    "statm = lambda: [int(v) for v in open('/proc/self/statm').read().split()]\n"
    "rss = lambda: (statm()[1] - ({anon} and statm()[2])) * page\n"
    "gc.collect(); libc.malloc_trim(0)\n"
    "base = peak = rss(); stop = False\n"
    "def poll():\n"
    "    global peak\n"
    "    while not stop:\n"
    "        peak = max(peak, rss()); time.sleep(0.0002)\n"
    "t = threading.Thread(target=poll, daemon=True); t.start()\n"
    "{call}\n"
    "peak = max(peak, rss()); stop = True; t.join()\n"
    "print(peak - base)\n"
)


def peak_rss_bytes(setup: str, call: str, anon: bool = False) -> int:
    """Bytes by which a fresh process's resident set grows while ``call`` runs after ``setup``;
    ``anon=True`` leaves out file-backed pages (memory-mapped input read from disk).

    ``setup`` may end the child early by printing a number and exiting (e.g. CUDA memory)."""
    code = setup + _POLL.format(call=call, anon=int(anon))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1])
