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
    with EntryWatch(folder) as watch:
        for name in sorted(os.listdir(folder)):
            if accept(name):
                return name
        return watch.wait(accept, bound)


class EntryWatch:
    """Entries made in ``folder`` from the moment the watch is in place (``with``): one
    made and gone again before :meth:`wait` is called is still seen."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.fd = -1

    def __enter__(self) -> EntryWatch:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if libc.inotify_add_watch(self.fd, os.fsencode(self.folder), IN_CREATE | IN_MOVED_TO) < 0:
            os.close(self.fd)
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {self.folder}")
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)

    def wait(self, accept: Callable[[str], bool], bound: float) -> str | None:
        """The first entry made since the watch began that ``accept``s; None if none came
        within ``bound`` seconds."""
        while True:
            ready, _, _ = select.select([self.fd], [], [], bound)
            if not ready:
                return None
            data = os.read(self.fd, 64 * 1024)
            offset = 0
            while offset < len(data):
                _, _, _, length = _HEADER.unpack_from(data, offset)
                start = offset + _HEADER.size
                name = data[start : start + length].rstrip(b"\0").decode(errors="replace")
                offset = start + length
                if accept(name):
                    return name
