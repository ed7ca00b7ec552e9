"""Purging sessions for real: the store's rows, the spool's records, every copy and cache.

A session lives in several places under the data root: its rows in the project's
store, records in the spool that a hook left when the store was locked (imported by the
next hook), the ``<store>.corrupt-*`` copies that a recovery moved aside, the backups
of older stores merged into the repository's one (``*.merged-into-<store>``,
ctxmode.store.merge), and what is kept per session or per store beside them: Gemini's
cached snapshots (``resumes/<session>.*.xml``, ctxmode.resume_cache), Codex's rollout
state (``codex/<session>.json``), the digests of the secrets it masked
(``masked/<store>.bin``, ctxmode.secret_memory) and the store's page of ``ctxmode view``
(``views/<store>.html``). Deleting only the rows would let the spool bring the session
back, and leave its text on disk in the copies and caches. :func:`purge_sessions`
removes it from all of them and reports what it freed; :func:`store_files` lists what
a whole project's purge deletes.

Order matters: the spool is claimed (renamed away, as a hook importing it would) before
the rows are deleted, so no hook can import the session's spooled records in between;
the records of other sessions go back to the live spool afterwards.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxmode import paths, spool
from ctxmode.sizes import file_size

if TYPE_CHECKING:
    from ctxmode.store import Store


@dataclass
class PurgeReport:
    session_ids: list[str] = field(default_factory=list)
    events: int = 0  # rows deleted from the store
    snapshots: int = 0
    spool_records: int = 0  # spooled hook calls of those sessions dropped
    spool_bytes: int = 0
    copies: list[str] = field(default_factory=list)  # quarantined files removed
    copies_bytes: int = 0
    backups: list[str] = field(default_factory=list)  # merged backups the session left
    cached: list[str] = field(default_factory=list)  # caches and state files removed
    cached_bytes: int = 0
    store_before: int = 0
    store_after: int = 0

    @property
    def bytes_freed(self) -> int:
        store_freed = max(0, self.store_before - self.store_after)
        return store_freed + self.spool_bytes + self.copies_bytes + self.cached_bytes


def purge_sessions(
    store: Store,
    root: str,
    *,
    session_id: str | None = None,
    older_than_days: float | None = None,
    now: float | None = None,
) -> PurgeReport:
    """Remove one session (``session_id``) or every session idle for longer than
    ``older_than_days`` from the store, the spool and the quarantined copies."""
    report = PurgeReport(store_before=file_size(store.path))
    claimed, _ = spool.take(root, store.path)  # held: no hook imports it meanwhile
    try:
        if session_id is not None:
            report.session_ids = [session_id]
            report.snapshots = len(store.resumes(session_id))
            report.events = store.purge_session(session_id)
        else:
            assert older_than_days is not None
            report.session_ids = store.idle_session_ids(older_than_days, now=now)
            for sid in report.session_ids:
                report.snapshots += len(store.resumes(sid))
                report.events += store.purge_session(sid)
    finally:
        report.spool_records, report.spool_bytes = spool.release(
            claimed, root, store.path, drop=set(report.session_ids)
        )
    removed, size = remove_copies_holding(store.path, report.session_ids)
    report.copies, report.copies_bytes = removed, size
    report.backups = purge_backups(store.path, report.session_ids)
    if report.session_ids:
        from ctxmode import secret_memory

        secret_memory.forget_sessions(root, store.path, report.session_ids)
        # The store's page of `ctxmode view` shows the sessions it was made of.
        cached = [*session_files(root, report.session_ids), view_page(root, store.path)]
        report.cached_bytes = sum(_size(path) for path in cached)
        report.cached = [path for path in cached if _unlink(path)]
    # Merge the FTS index (which drops the deleted entries' traces from its segments)
    # and give the freed pages back to the file system.
    store.vacuum(optimize_fts=True)
    report.store_after = file_size(store.path)
    return report


def quarantined_copies(store_path: str) -> list[list[str]]:
    """Each ``<store>.corrupt-<stamp>`` copy with its ``-wal``/``-shm``, oldest first."""
    folder, name = os.path.split(store_path)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    prefix = name + ".corrupt-"
    bases = [n for n in names if n.startswith(prefix) and not n.endswith(paths.SIDE_FILES)]
    sets = []
    for base in bases:
        members = [base] + [base + s for s in paths.SIDE_FILES if base + s in names]
        sets.append([os.path.join(folder, m) for m in members])
    # A stray side file whose database is gone still holds data.
    grouped = {path for group in sets for path in group}
    for n in names:
        stray = os.path.join(folder, n)
        if n.startswith(prefix) and n.endswith(paths.SIDE_FILES) and stray not in grouped:
            sets.append([stray])
    return sets


def remove_copies_holding(store_path: str, session_ids: list[str]) -> tuple[list[str], int]:
    """Delete each quarantined copy whose bytes name one of ``session_ids``.

    A damaged copy cannot be edited safely, so a copy that holds a purged session goes
    whole. Session ids are stored as plain text, so a byte search finds every page (of
    the database or its WAL) that carries one.
    """
    needles = [sid.encode("utf-8") for sid in session_ids if sid]
    if not needles:
        return [], 0
    removed: list[str] = []
    size = 0
    for group in quarantined_copies(store_path):
        if not any(_file_contains(path, needles) for path in group):
            continue
        for path in group:
            try:
                file_bytes = os.path.getsize(path)
                os.unlink(path)
            except OSError:
                continue
            removed.append(path)
            size += file_bytes
    return removed, size


def purge_backups(store_path: str, session_ids: list[str]) -> list[str]:
    """Remove the sessions from the backups of older stores merged into ``store_path``;
    return the backups that held one.

    A backup is a valid store: its rows of the sessions are deleted (``secure_delete``,
    the FTS index merged, then ``VACUUM``), the rest kept. One that still holds a
    session id afterwards (damaged, unreadable, a WAL that would not fold) goes whole:
    its other sessions are in the live store since the merge.
    """
    from ctxmode.store.merge import backups

    needles = [sid.encode("utf-8") for sid in session_ids if sid]
    if not needles:
        return []
    touched: list[str] = []
    for group in backups(store_path):
        if not any(_file_contains(path, needles) for path in group):
            continue
        touched.append(group[0])
        _delete_from_backup(group[0], session_ids)
        if any(_file_contains(path, needles) for path in group if os.path.exists(path)):
            for path in group:
                try:  # noqa: SIM105
                    os.unlink(path)
                except OSError:
                    pass
    return touched


def _delete_from_backup(path: str, session_ids: list[str]) -> None:
    from ctxmode.migrations import _sqlite3

    try:
        conn = _sqlite3.connect(path, isolation_level=None)
    except _sqlite3.Error:
        return
    try:
        conn.execute("PRAGMA secure_delete = ON")
        tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}
        conn.execute("BEGIN IMMEDIATE")
        for sid in session_ids:
            for table in ("session_events", "session_resume", "session_meta", "compaction"):
                if table in tables:
                    conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))
            conn.execute("DELETE FROM store_meta WHERE key = ?", ("searches:" + sid,))
        conn.execute("COMMIT")
        for index in ("events_fts", "events_words"):
            if index in tables:  # merged segments keep no trace of the deleted rows
                conn.execute(f"INSERT INTO {index}({index}) VALUES ('optimize')")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
    except _sqlite3.Error:
        pass  # the caller finds the session still there and removes the backup whole
    finally:
        conn.close()


def _file_contains(path: str, needles: list[bytes], chunk: int = 1 << 20) -> bool:
    overlap = max(len(n) for n in needles) - 1
    tail = b""
    try:
        with open(path, "rb") as handle:
            while True:
                block = handle.read(chunk)
                if not block:
                    return False
                window = tail + block
                if any(n in window for n in needles):
                    return True
                tail = window[-overlap:] if overlap else b""
    except OSError:
        return False


# ---------------------------------------------------------------- caches and state files


def session_files(root: str, session_ids: list[str]) -> list[str]:
    """What is kept per session beside the store: the cached snapshots of
    ``resume_cache`` (with their temporary files) and what each host keeps of its own
    (its ``session_files``), for each of ``session_ids``."""
    from ctxmode import hosts, resume_cache

    found: list[str] = []
    resumes = _listing(os.path.join(root, resume_cache.FOLDER))
    for sid in session_ids:
        prefix = resume_cache.file_prefix(sid)
        found.extend(path for path in resumes if os.path.basename(path).startswith(prefix))
    for name in hosts.NAMES:
        kept = getattr(hosts.get(name), "session_files", None)
        if kept is not None:
            found.extend(kept(root, session_ids))
    return found


def _listing(folder: str) -> list[str]:
    try:
        return [os.path.join(folder, n) for n in sorted(os.listdir(folder))]
    except OSError:
        return []


def view_page(root: str, store_path: str) -> str:
    """The store's page of ``ctxmode view`` at its default place."""
    from ctxmode.view import default_output

    return default_output(root, store_path)


def store_files(root: str, store_path: str, session_ids: list[str]) -> list[str]:
    """Beside the store's own files (the CLI lists those), what a purge of the whole
    project removes: the spool, the digests of its masked secrets, its view page, and
    the caches and state files of its sessions (``session_ids``)."""
    from ctxmode import secret_memory

    candidates = [
        paths.spool_file(root, store_path),
        secret_memory.records_path(root, store_path),
        view_page(root, store_path),
        *session_files(root, session_ids),
    ]
    return [path for path in candidates if os.path.lexists(path)]


def _size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
    except OSError:
        return False
    return True
