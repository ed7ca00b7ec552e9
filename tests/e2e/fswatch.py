"""Wait for an entry to appear in a folder, woken by the kernel (inotify), not by polling.

The e2e tests cannot make the real client's hook processes signal them; what those
processes do leave is files (an in-flight marker, say). inotify turns the file's creation
into an event to block on. Linux only, as the e2e suite is.
"""

from __future__ import annotations

import ctypes
import os
import select
import struct
from collections.abc import Callable
from pathlib import Path

IN_CREATE = 0x100
IN_MOVED_TO = 0x80
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name


def wait_for_entry(folder: Path, accept: Callable[[str], bool], bound: float) -> str | None:
    """The first entry of ``folder`` that ``accept``s, once there (an existing one at once);
    None if none came within ``bound`` seconds (a bound on a hang, never a pace)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1")
    try:
        if libc.inotify_add_watch(fd, os.fsencode(folder), IN_CREATE | IN_MOVED_TO) < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder}")
        # The watch is in place: what was made before it is in the listing, the rest
        # arrives as events.
        for name in sorted(os.listdir(folder)):
            if accept(name):
                return name
        while True:
            ready, _, _ = select.select([fd], [], [], bound)
            if not ready:
                return None
            data = os.read(fd, 64 * 1024)
            offset = 0
            while offset < len(data):
                _, _, _, length = _HEADER.unpack_from(data, offset)
                start = offset + _HEADER.size
                name = data[start : start + length].rstrip(b"\0").decode(errors="replace")
                offset = start + length
                if accept(name):
                    return name
    finally:
        os.close(fd)
