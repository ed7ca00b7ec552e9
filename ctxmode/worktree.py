"""Files changed by any route: the repository's own view, read when a snapshot is taken.

An agent changes files through the shell too (``sed -i``, ``>``, ``tee``, ``cp``/``mv``/``rm``,
generators, formatters), which no file-tool hook reports. At PreCompact, where a subprocess
is affordable, ``git status`` lists what the working tree holds changed; a path the session's
events do not name yet, modified since the session's first event, becomes a file event
(``via: "git status"``), so the snapshot's files list every changed file however it changed.
A file already dirty before the session started is left out (its mtime is older).

``start_status`` starts git and ``changed_files`` reads its answer (the hook reads the
store in between); ``reconcile`` is pure; ``new_file_events`` puts them together for the
PreCompact handler.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ctxmode.events import SessionEvent

# git must answer within this (a huge repository is skipped, never waited for).
GIT_TIMEOUT = 3.0
MAX_FILES = 200
VIA = "git status"


def start_status(tree: str, timeout: float = GIT_TIMEOUT) -> Pending:
    """``git status`` of ``tree`` started, not waited for: the hook reads the session from
    the store meanwhile (git takes about as long), then :func:`changed_files` reads it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"  # never take the index lock from under the agent
    argv = ["git", "-C", tree, "status", "--porcelain=v1", "-z", "--untracked-files=all"]
    return start(argv, env, timeout)


def changed_files(status: Pending) -> list[tuple[str, str]] | None:
    """(status, path relative to the tree) of each changed file that the ``git status``
    of :func:`start_status` lists; None if git cannot tell.

    Status: ``M`` modified, ``A`` added or untracked, ``D`` deleted, ``R`` renamed (the new
    path). Ignored files are left out, as git leaves them out.
    """
    out = status.output()
    return None if out is None else parse_status(out.decode("utf-8", "surrogateescape"))


class Pending:
    """A command :func:`start` started: :meth:`output` waits for it (bounded) once;
    :meth:`close` ends it unread, so no child outlives an error of its caller."""

    __slots__ = ("deadline", "fd", "pid", "result")

    def __init__(
        self, pid: int = 0, fd: int = -1, deadline: float = 0.0, result: bytes | None = None
    ) -> None:
        self.pid, self.fd, self.deadline, self.result = pid, fd, deadline, result

    def output(self) -> bytes | None:
        """Its stdout once it ended with status 0; None if it failed, or was still running
        at its deadline (then it is killed)."""
        if self.pid:
            pid, self.pid = self.pid, 0
            self.result = _collect(pid, self.fd, self.deadline)
        return self.result

    def close(self) -> None:
        if self.pid:
            pid, self.pid = self.pid, 0
            os.close(self.fd)
            try:
                os.kill(pid, 9)  # git status takes no lock (GIT_OPTIONAL_LOCKS=0): safe
                os.waitpid(pid, 0)
            except OSError:
                pass


def start(argv: list[str], env: dict[str, str], timeout: float) -> Pending:
    """``argv`` started with its stdout to a pipe, ``timeout`` seconds from now to end.

    posix_spawn and select, not subprocess: a hook must not load subprocess's imports
    (re, enum, collections… tests/test_bench.py); elsewhere subprocess it is (and runs
    to its end here: nothing is left to run beside the caller).
    """
    spawn = getattr(os, "posix_spawnp", None)
    if spawn is None:
        import subprocess

        try:
            proc = subprocess.run(argv, capture_output=True, env=env, timeout=timeout, check=False)
        except (OSError, subprocess.SubprocessError):
            return Pending()
        return Pending(result=proc.stdout if proc.returncode == 0 else None)
    import time

    read_end, write_end = os.pipe()
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        pid = spawn(
            argv[0],
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, devnull, 0),
                (os.POSIX_SPAWN_DUP2, write_end, 1),
                (os.POSIX_SPAWN_DUP2, devnull, 2),
                (os.POSIX_SPAWN_CLOSE, read_end),
            ],
        )
    except OSError:
        os.close(read_end)
        return Pending()
    finally:
        os.close(write_end)
        os.close(devnull)
    return Pending(pid, read_end, time.monotonic() + timeout)


def _collect(pid: int, fd: int, deadline: float) -> bytes | None:
    """Read ``pid``'s stdout from ``fd`` to its end, killing it at ``deadline``; reap it."""
    import select
    import time

    chunks: list[bytes] = []
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                data = os.read(fd, 65536)
                if not data:
                    break
                chunks.append(data)
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None


def parse_status(text: str) -> list[tuple[str, str]]:
    """``git status --porcelain=v1 -z`` → (status, path) pairs (pure)."""
    out: list[tuple[str, str]] = []
    fields = text.split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        x, y, path = entry[0], entry[1], entry[3:]
        if x == "R" or x == "C":
            i += 1  # the source path follows
        if x == "?" or x == "A":
            status = "A"
        elif x == "D" or y == "D":
            status = "D"
        elif x in "RC":
            status = "R"
        else:
            status = "M"
        out.append((status, path))
        if len(out) >= MAX_FILES:
            break
    return out


def reconcile(
    changed: Iterable[tuple[str, str]],
    known: set[str],
    mtimes: dict[str, float | None],
    since: float,
) -> list[tuple[str, dict[str, object]]]:
    """File events for the changes the session's events miss (pure).

    ``known``: paths the session's file events name; ``mtimes``: each path's mtime (None:
    gone); ``since``: the session's first event (epoch seconds): older changes are not its.
    """
    drafts: list[tuple[str, dict[str, object]]] = []
    for status, path in changed:
        if path in known or path.endswith("/"):
            continue
        mtime = mtimes.get(path)
        if status == "D":
            drafts.append(("file_delete", {"path": path, "via": VIA}))
        elif mtime is not None and mtime >= since:
            if status == "A":
                drafts.append(("file_write", {"path": path, "kind": "create", "via": VIA}))
            else:
                drafts.append(("file_edit", {"path": path, "summary": "changed", "via": VIA}))
    return drafts


def mtimes_of(tree: str, paths: Iterable[str]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for path in paths:
        try:
            out[path] = os.stat(os.path.join(tree, path)).st_mtime
        except OSError:
            out[path] = None
    return out


def new_file_events(
    events: Sequence[SessionEvent], tree: str, status: Pending, source_hook: str
) -> list[SessionEvent]:
    """File events for what ``git status`` (``status``, of ``tree``: :func:`start_status`)
    shows changed since the session's first event (``events``: the session's, oldest
    first) that no event names yet."""
    if not events:
        status.close()  # nothing to reconcile with: no need to wait for git
        return []
    changed = changed_files(status)
    if not changed:
        return []
    from ctxmode import fastjson

    known: set[str] = set()
    for event in events:
        if event.category == "file":
            try:
                path = fastjson.loads_data(event.data).get("path")
            except (fastjson.JSONDecodeError, AttributeError):
                continue
            if isinstance(path, str):
                known.add(path)
    # Usually the session's own edits are all git shows: nothing is left to stat or draft.
    changed = [item for item in changed if item[1] not in known]
    if not changed:
        return []
    since = epoch(str(events[0].created_at))
    drafts = reconcile(changed, known, mtimes_of(tree, [path for _, path in changed]), since)
    if not drafts:
        return []
    from ctxmode import redact
    from ctxmode.events import make

    found = []
    for type_, data in drafts:
        data["path"] = redact.mask(str(data["path"]))  # a path is payload text too
        found.append(make(type_, data, source_hook=source_hook))
    return found


def epoch(stamp: str) -> float:
    """An ISO-8601 UTC stamp of the store (``2026-12-02T14:51:20.123Z``) → epoch seconds,
    whole (0.0 when it does not parse). The store's own parser: ``calendar`` and
    ``time.strptime`` would load re, enum, datetime and locale (~30 ms) into the hook."""
    from ctxmode.store.values import parse_iso

    return parse_iso(stamp[:19])
