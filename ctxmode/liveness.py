"""Whether a session's client process still runs: a session still at work, or one whose
client ended without running its SessionEnd hook (``handlers._end_unended``).

A client identity is ``"<pid> <start>"``: the process that started the hook, and when the
kernel started it (clock ticks since boot, from /proc), so that a pid the kernel gave to
another process since does not pass for the client. Linux only: where /proc cannot say,
:func:`this_client` gives None and :func:`gone` False (a session is taken to be running).

Loaded by SessionStart only: ``os`` at module level.
"""

from __future__ import annotations

import os


def this_client() -> str | None:
    """The client that started this hook, when it started the hook in a process group of
    its own (``hookrun.call_stamp`` says so: ``Context.call_exact``): the group leader's
    parent (the leader is this process, or the ``sh -c`` the client ran the hook with).
    None when /proc cannot tell."""
    try:
        group = os.getpgid(0)
        parent = os.getppid() if group == os.getpid() else int(_stat(group)[1])
        return f"{parent} {_start(parent)}"
    except (OSError, ValueError, IndexError, AttributeError):  # (no getpgid: Windows)
        return None


def gone(client: str) -> bool:
    """Whether the client ``client`` (:func:`this_client`) has ended: no process with its
    pid, a process that the kernel started at another time, or one that has exited and
    waits to be reaped. False when /proc cannot tell."""
    try:
        pid, start = (int(part) for part in client.split())
    except ValueError:
        return False
    try:
        fields = _stat(pid)
    except FileNotFoundError:
        return os.path.isdir("/proc/self")  # no such process (where /proc is there at all)
    except (OSError, ValueError, IndexError):
        return False
    try:
        return fields[0] in (b"Z", b"X") or int(fields[19]) != start
    except (ValueError, IndexError):
        return False


def _stat(pid: int) -> list[bytes]:
    """The fields of ``/proc/<pid>/stat`` after the command name: state, ppid, …"""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return fh.read().rsplit(b")", 1)[1].split()


def _start(pid: int) -> int:
    return int(_stat(pid)[19])
