"""Captures still running in the background, and waiting for them (bounded).

A capture hook registered with ``"async": true`` (``ctxmode install`` on a client that
has background hooks) runs while the agent goes on: the next tool call's capture can
finish first, and PreCompact or SessionEnd can start while captures of earlier calls
are still working. Each background capture therefore holds an *in-flight marker*:

- ``<data root>/inflight/<call_at:020d>-<pid>``, 0600, in a 0700 folder, made before
  the payload is read (the session is not known yet: the file gets the session id once
  it is), under a temporary name, locked (``flock``, exclusive) and only then renamed
  into place, so a marker that can be seen is always held by its process — or by none,
  once that process is gone: the kernel drops the lock of a dead process, so a marker
  left behind by a killed hook never makes anyone wait (the first waiter removes it).
- ``call_at`` is when the client started the call (``hookrun.call_stamp``: the start of
  the hook's process group when that group is the call's own, else our clock; ns since
  the epoch), taken between the lock and the rename:
  the order of the calls, which the store records with the events and reads them back
  by (``store.events``).

Waiting is ``flock`` on the markers, so a waiter sleeps in the kernel until the capture
ends (no polling) and is woken by a timer at its bound. A capture waits for the captures
of the same session that started before it (so events are stored, deduplicated and a
failure resolved in the order of the calls; a marker not yet named counts as the
session's); PreCompact and SessionEnd wait for all of the session's captures. Both are bounded (:data:`ORDER_BOUND`, :data:`FLUSH_BOUND`); a
wait that hits its bound is written to the log by the caller.

On the hook path (background captures only): ``os`` at module level, ``fcntl`` and
``_signal`` on first use.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ctxmode.payload import HookInput

FOLDER = "inflight"  # handlers.INFLIGHT_DIR names it too
# How long a capture waits for the captures of earlier calls before it stores its own
# events anyway (the read order stays right: it is the calls' order, not the arrival).
ORDER_BOUND = 1.0
# How long PreCompact and SessionEnd wait for the session's captures still in flight.
FLUSH_BOUND = 2.0  # = handlers.FLUSH_BOUND


class Interrupted(Exception):
    """A wait cut short: its bound was reached, or the client asked the hook to stop."""


# Set when the client asks this background hook to stop (SIGTERM: `claude -p` ending;
# the kill follows about 1.5 s later on 2.1.197): waits end at once, the events are
# stored at once. ``_waiting``: a wait is blocked in flock and may be cut short.
_stopping = False
_waiting = False


def on_stop(signum: int, frame: object) -> None:
    """SIGTERM handler of a background hook: finish now instead of dying mid-way."""
    global _stopping
    _stopping = True
    if _waiting:
        raise Interrupted("the client is ending")


def stopping() -> bool:
    """Whether the client asked this background hook to stop: the client is ending.

    Claude Code 2.1.197 sends it only at the end of `claude -p` (print mode ends its
    loop by killing the background hooks still running), and in that case it goes on
    to run no SessionEnd hook once they are gone: its shutdown awaits their death on
    unref'd timers, and the event loop, empty when the last one exits, ends the
    process first. So a capture told to stop takes the session's end snapshot itself
    (``handlers.on_client_ending``).
    """
    return _stopping


END_LOCK = ".end.lock"  # no "-": never taken for a marker (pending)


def end_lock(root: str) -> int:
    """Take the data root's end-snapshot lock (exclusive, blocking); returns its fd, which
    the caller closes to release it. The captures told to stop at once build one after
    the other, so the last one sees every capture's events and retires the others'."""
    import fcntl

    from ctxmode.paths import ensure_dir

    folder = os.path.join(root, FOLDER)
    ensure_dir(folder)
    fd = os.open(os.path.join(folder, END_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


class Marker:
    """This process's in-flight marker; :meth:`leave` (or the process's end) releases it."""

    __slots__ = ("call_at", "fd", "path")

    def __init__(self, fd: int, path: str, call_at: int) -> None:
        self.fd = fd
        self.path = path
        self.call_at = call_at

    def claim(self, session_id: str) -> None:
        """Name the session (once the payload is read): its waiters only wait for it."""
        os.pwrite(self.fd, session_id.encode("utf-8", "surrogatepass")[:MAX_ID], 0)

    def leave(self) -> None:
        # Unlink first, then close: a waiter that opened the file before the unlink gets
        # its lock at the close and finds the name gone, so it never sees it as stale.
        # (try/except, not contextlib.suppress: contextlib is one more import on a hook.)
        try:  # noqa: SIM105
            os.unlink(self.path)
        except OSError:
            pass
        try:  # noqa: SIM105
            os.close(self.fd)
        except OSError:
            pass


MAX_ID = 200  # bytes of the session id a marker keeps


def enter(root: str, stamp: Callable[[], int]) -> Marker:
    """Make and lock this process's marker, take the call's stamp, publish the marker.

    Made before the payload is read, as early as the data root is known, so that a later
    call's capture finds it. One that looks before this process got that far (a hook
    can be slow to start under load) does not wait for it: the events still go into
    the store in the calls' order (``call_at``); only the dedup window and the
    resolution of a failure then see this call's events late. Raises OSError when the
    marker cannot be made.
    """
    import fcntl

    from ctxmode.paths import ensure_dir

    folder = os.path.join(root, FOLDER)
    ensure_dir(folder)
    pid = os.getpid()
    temp = os.path.join(folder, f".{pid}.tmp")
    fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        call_at = stamp()
        path = os.path.join(folder, f"{call_at:020d}-{pid}")
        os.rename(temp, path)
    except BaseException:
        os.close(fd)
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    return Marker(fd, path, call_at)


def pending(root: str, before: int | None = None) -> list[str]:
    """The published markers (of calls started before ``before``), oldest first."""
    folder = os.path.join(root, FOLDER)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = []
    for name in names:
        stamp, sep, _pid = name.partition("-")
        if not sep or not stamp.isdigit():
            continue  # a temporary name: its stamp is not taken yet, so it is later
        if before is not None and int(stamp) >= before:
            continue
        found.append(name)
    found.sort()
    return [os.path.join(folder, name) for name in found]


def wait(
    root: str,
    session_id: str,
    *,
    before: int | None = None,
    bound: float,
    clock: Callable[[], float] | None = None,
) -> tuple[int, int]:
    """Wait until the session's captures (those started before ``before``; None: all)
    have ended, ``bound`` seconds at most. Returns (waited for, still running at the bound).

    A marker whose process is gone is not waited for, and is removed.
    """
    import time

    now = clock or time.monotonic
    end = now() + bound
    waited = left = 0
    markers = pending(root, before)
    own = session_id.encode("utf-8", "surrogatepass")[:MAX_ID]
    for index, path in enumerate(markers):
        remaining = 0.0 if _stopping else end - now()
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue  # ended (and removed) before we looked
        try:
            named = os.pread(fd, MAX_ID + 1, 0)
            if named and named != own:
                continue  # another session's capture (one not named yet may be ours)
            if remaining <= 0 or not _lock(fd, remaining):
                left = len(markers) - index
                break
            waited += 1
            _remove_if_stale(fd, path)
        finally:
            os.close(fd)
    return waited, left


def wait_logged(
    root: str, log_dir: str, inp: HookInput, before: int | None, bound: float, outcome: str
) -> int:
    """:func:`wait` for ``inp``'s session, writing to the log when the bound was hit
    (``outcome``: what the caller does then). Returns how many were still running."""
    _waited, left = wait(root, inp.session_id, before=before, bound=bound)
    if left:
        from ctxmode import hooklog
        from ctxmode.wording import plural

        when = "when the client ended" if _stopping else f"after {bound:.1f}s (the bound)"
        hooklog.write(
            log_dir,
            "WARN",
            inp.event,
            f"{plural(left, 'background capture')} of this session still running {when}; {outcome}",
        )
    return left


def _lock(fd: int, seconds: float) -> bool:
    """Take a shared lock on ``fd`` within ``seconds``; False when the time ran out."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        pass
    import _signal  # type: ignore[import-not-found]  # (signal imports enum: ~1 ms)
    import threading

    if threading.current_thread() is not threading.main_thread():
        return _poll(fd, seconds)  # timers and signal handlers work in the main thread only

    def expire(signum: int, frame: object) -> None:
        raise Interrupted("bound reached")

    global _waiting
    previous = _signal.signal(_signal.SIGALRM, expire)
    try:
        _signal.setitimer(_signal.ITIMER_REAL, max(seconds, 0.001))
        try:
            _waiting = True
            if _stopping:
                return False
            fcntl.flock(fd, fcntl.LOCK_SH)
            return True
        except Interrupted:
            return False
        finally:
            _waiting = False
            _signal.setitimer(_signal.ITIMER_REAL, 0)
    finally:
        _signal.signal(_signal.SIGALRM, previous)


def _poll(fd: int, seconds: float) -> bool:
    import fcntl
    import time

    end = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= end:
                return False
            time.sleep(0.002)


def _remove_if_stale(fd: int, path: str) -> None:
    """We hold the lock and the name is still there: its process died without leaving."""
    try:
        if os.stat(path).st_ino == os.fstat(fd).st_ino:
            os.unlink(path)
    except OSError:
        pass
