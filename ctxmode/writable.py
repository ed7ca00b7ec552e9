"""Whether a folder can be made and written, found out without making anything.

The data root may not exist yet (the first hook call creates it), so ``doctor`` and the
status line cannot try it out by writing there. They look instead at the nearest folder
that does exist: it must be a folder, writable by this user (``os.access``: a root user
passes that everywhere), not on a read-only mount (``statvfs``), and not on one of the
kernel's virtual file systems (``/proc``, ``/sys``, ...), where even root can make no
folder: found in ``/proc/self/mountinfo`` (Linux; elsewhere that step is skipped).

Loaded by ``doctor`` and, only when the data root is missing, by the status line: it
imports nothing but ``os`` (the hot path's rules, docs/architecture.md).
"""

from __future__ import annotations

import os

# Kernel file systems that hold no files of ours (mkdir fails there, even for root).
VIRTUAL_FILE_SYSTEMS = frozenset(
    {
        "proc",
        "sysfs",
        "cgroup",
        "cgroup2",
        "debugfs",
        "tracefs",
        "securityfs",
        "pstore",
        "bpf",
        "configfs",
        "fusectl",
        "efivarfs",
        "mqueue",
        "binfmt_misc",
        "devpts",
        "nsfs",
        "hugetlbfs",
        "selinuxfs",
        "rpc_pipefs",
    }
)
MOUNTINFO = "/proc/self/mountinfo"


def nearest_existing(path: str) -> str:
    """``path`` itself if it exists, else its nearest parent that does."""
    current = os.path.abspath(path)
    while not os.path.lexists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def _unescape(field: str) -> str:
    """A mountinfo path: spaces, tabs, newlines and backslashes are written as ``\\ooo``."""
    if "\\" not in field:
        return field
    out, i = [], 0
    while i < len(field):
        octal = field[i + 1 : i + 4]
        if field[i] == "\\" and len(octal) == 3 and all(c in "01234567" for c in octal):
            out.append(chr(int(octal, 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def file_system(path: str, mountinfo: str = MOUNTINFO) -> str | None:
    """The type of the file system ``path`` is on (``ext4``, ``proc``, ...), from the
    mount table; None where there is none to read (not Linux) or nothing matches."""
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    target = os.path.realpath(path)
    best: tuple[int, str] | None = None
    for line in lines:
        fields = line.split(" ")
        if len(fields) < 10 or "-" not in fields[6:]:
            continue
        point = _unescape(fields[4])
        kind = fields[fields.index("-", 6) + 1]
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= best[0]):
            best = (len(point), kind)
    return best[1] if best is not None else None


def problem(folder: str, mountinfo: str = MOUNTINFO) -> str | None:
    """Why ``folder`` (existing or not) cannot be made or take new files; None if it can.

    Nothing is created: the nearest existing folder is looked at (see the module)."""
    base = nearest_existing(folder)
    if not os.path.isdir(base):
        return f"{base} is not a folder"
    # The kernel's file systems first: the same reason for root and for a user (a user
    # was told "/proc is not writable by you", as if another user could write there).
    kind = file_system(base, mountinfo)
    if kind in VIRTUAL_FILE_SYSTEMS:
        return f"{base} is on {kind}, a virtual file system of the kernel that holds no files"
    if not os.access(base, os.W_OK | os.X_OK):
        return f"{base} is not writable by you"
    try:
        read_only = bool(os.statvfs(base).f_flag & getattr(os, "ST_RDONLY", 1))
    except (OSError, AttributeError):
        read_only = False
    if read_only:
        return f"{base} is on a read-only file system"
    return None
