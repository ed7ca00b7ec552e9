"""The snapshot a compression summary was given, kept to be served again (Gemini's route).

Gemini CLI fires no event after a compression; its BeforeModel hook finds the summary in
each request and appends the snapshot to it (``hosts.gemini``). That change lives for one
request only, so the hook must append the snapshot again on every request while the
summary is in the history — the *same* snapshot, claimed once in the store. It is kept
here, keyed by session and summary digest: ``<root>/resumes/<session>.<digest>.xml``
(0600, in a 0700 folder). An empty file means "nothing to add for this summary".

Making the snapshot is serialised by a lock file in the same folder, so two hooks that
see a new summary at once claim and write it once; the second serves the first's.
"""

from __future__ import annotations

import os

from ctxmode import paths
from ctxmode.hashing import sha256_hex

FOLDER = "resumes"
LOCK = ".lock"
DIGEST_CHARS = 32
# Cached snapshots older than this go when a new one is written (a summary's session is
# long over by then; a resumed session rebuilds its own).
MAX_AGE_SECONDS = 30 * 86400


def digest(summary: str) -> str:
    return sha256_hex(summary)[:DIGEST_CHARS]


def _safe(session_id: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in session_id)[:128]


def path(root: str, session_id: str, summary_digest: str) -> str:
    return os.path.join(root, FOLDER, f"{file_prefix(session_id)}{summary_digest}.xml")


def file_prefix(session_id: str) -> str:
    """How the names of a session's cached snapshots start (``ctxmode purge`` finds them)."""
    return _safe(session_id) + "."


def read(file: str) -> str | None:
    """The cached text, or None when there is none (or it cannot be used)."""
    if paths.private_problem(os.path.dirname(file)) or paths.private_problem(file):
        return None
    try:
        with open(file, "rb") as fh:
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return None


def lock(root: str) -> int:
    """Take the folder's lock (blocking; the hook's watchdog bounds the wait); the fd to
    close to release it."""
    import fcntl

    folder = os.path.join(root, FOLDER)
    paths.ensure_dir(folder)
    fd = paths.open_private(os.path.join(folder, LOCK), os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def write(file: str, text: str) -> None:
    """Write atomically as 0600; old entries of the folder are pruned."""
    folder = os.path.dirname(file)
    paths.ensure_dir(folder)
    tmp = f"{file}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, paths.FILE_MODE)
    try:
        os.fchmod(fd, paths.FILE_MODE)
        data = text.encode("utf-8", "replace")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    os.replace(tmp, file)
    _prune(folder, file)


def _prune(folder: str, keep: str) -> None:
    import time

    limit = time.time() - MAX_AGE_SECONDS
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name == LOCK or entry.path == keep:
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime < limit:
                os.unlink(entry.path)
        except OSError:
            continue
