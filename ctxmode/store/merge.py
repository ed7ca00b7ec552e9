"""A repository's one store, made on its first use from the stores older versions kept.

Before 0.3 a store was keyed by the folder a session named (``CLAUDE_PROJECT_DIR`` as
given: a subfolder, a symlink, each linked worktree apart). Now one store serves a
repository (:func:`ctxmode.paths.identify`), named ``repo-<hash>.db``. When that file
does not exist yet — the rare path, taken under the sessions-folder lock — this module
finds the stores that belong to the repository and merges them into it:

- every older-scheme store (``*.db`` not named ``repo-…``) whose sessions recorded a
  project folder (``session_meta.project_dir``) that identifies as this repository;
- every ``repo-…`` store whose recorded repository path (``store_meta['repo_path']``)
  no longer exists while its git common dir is ours (same ``st_dev``/``st_ino``): the
  repository was moved on disk.

The steps, each safe to cut short: (1) each found store (``-wal``/``-shm`` first) is
renamed to its backup name ``<old>.db.merged-into-<new stem>``, which no hook opens;
(2) the new store is built under a temporary name from those backups (events, sessions,
snapshots with their claim state, compactions, import progress, ``store_meta``), with
the backups' spool files; (3) it is renamed into place: the commit. Killed before (3),
the next run finds the backups by their names and starts again from them; killed after,
everything is in the store once. The backups stay: ``ctxmode doctor`` lists them and
``ctxmode purge`` removes a purged session from them too.
"""

from __future__ import annotations

import os

from ctxmode import paths
from ctxmode.migrations import SCHEMA_VERSION, _sqlite3, migrate, user_version
from ctxmode.store.values import iso_utc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.paths import Identity

# What a backup's name carries after the old store's name: the new store's stem.
BACKUP_MARK = ".merged-into-"
# store_meta keys of the new store: the repository's key and its common dir's identity
# (how a moved repository finds its store again), and one ``merged:<old name>`` per
# store merged in.
REPO_PATH_KEY = "repo_path"
REPO_COMMON_KEY = "repo_common_id"
MERGED_PREFIX = "merged:"
# store_meta keys that describe one store file, not its sessions: never copied.
_OWN_KEYS = ("fts", "last_prune", REPO_PATH_KEY, REPO_COMMON_KEY)
# Tables copied row by row (their ``id`` renumbered in the new store).
_RENUMBERED = ("session_events", "session_resume", "compaction")


def common_id(identity: Identity) -> str | None:
    """``"<st_dev>:<st_ino>"`` of the repository's common git dir (None outside git)."""
    if not identity.common_dir:
        return None
    try:
        st = os.stat(identity.common_dir)
    except OSError:
        return None
    return f"{st.st_dev}:{st.st_ino}"


def backup_path(old: str, store_path: str) -> str:
    """``<old>.db.merged-into-<new stem>``: the name an old store keeps after the merge."""
    stem = os.path.splitext(os.path.basename(store_path))[0]
    return old + BACKUP_MARK + stem


def backups(store_path: str) -> list[list[str]]:
    """Each backup merged into ``store_path``, with its ``-wal``/``-shm``, by name."""
    folder = os.path.dirname(store_path)
    stem = os.path.splitext(os.path.basename(store_path))[0]
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    tail = BACKUP_MARK + stem
    groups = []
    for name in names:
        if name.endswith(tail):
            members = [name] + [name + s for s in paths.SIDE_FILES if name + s in names]
            groups.append([os.path.join(folder, m) for m in members])
    return groups


def all_backups(folder: str) -> list[str]:
    """Every backup database in a sessions folder (for ``doctor``)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [
        os.path.join(folder, n)
        for n in names
        if BACKUP_MARK in n and not n.endswith(paths.SIDE_FILES)
    ]


def ensure_store(store_path: str, identity: Identity, root: str, *, create: bool = True) -> bool:
    """Make the repository's store at ``store_path`` unless it exists; True if made.

    The stores of older schemes that belong to the repository are merged into it (see
    the module docstring). ``create=False`` (the CLI's read commands): make it only when
    there is something to merge. Runs under the sessions-folder lock.
    """
    folder = os.path.dirname(store_path)
    if not create and (
        os.path.lexists(store_path)
        or not (_pending(folder, store_path) or _belonging(folder, identity, store_path, False))
    ):
        # A command that reads: with nothing to merge it makes, locks and leaves nothing
        # (a root it cannot write, a folder of other projects' stores left as they were).
        return False
    paths.ensure_dir(folder)
    with paths.FileLock(folder):
        if os.path.lexists(store_path):
            return False  # another process made it while we waited
        found = _pending(folder, store_path) + _belonging(folder, identity, store_path, create)
        if found:
            sources = [_to_backup(old, store_path) for old in found]
            _build(store_path, identity, root, sources)
            return True
    if not create:
        return False
    # Nothing to merge: the store every first hook makes (it takes the lock itself, and
    # leaves the store alone if another process made it meanwhile).
    from ctxmode.store.connection import StoreCorrupt, _create_file

    try:
        _create_file(store_path, _own_meta(identity))
    except StoreCorrupt:
        return False  # e.g. a -wal without its database: Store.open's recovery moves it aside
    return True


def _own_meta(identity: Identity) -> tuple[tuple[str, str], ...]:
    """What the repository's store records about itself: its key and the identity of
    its common git dir (how a moved repository finds its store again)."""
    ident = common_id(identity)
    key = ((REPO_PATH_KEY, identity.project),)
    return key if ident is None else (*key, (REPO_COMMON_KEY, ident))


# ---------------------------------------------------------------- finding the stores


def _pending(folder: str, store_path: str) -> list[str]:
    """Backups of an earlier merge into ``store_path`` that was cut short (no store)."""
    return [group[0] for group in backups(store_path)]


def _belonging(folder: str, identity: Identity, store_path: str, moved: bool = True) -> list[str]:
    """The live stores of other names in ``folder`` that belong to this repository.

    ``moved``: also the stores of repositories that were moved (every ``repo-`` store is
    opened to ask): a hook's first use does that; a command that reads does not, it
    opens only the stores of older versions (none once they were merged)."""
    mine = paths.canonical(identity.project)
    ours = common_id(identity)
    target = os.path.basename(store_path)
    found = []
    known: dict[str, str] = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    for name in names:
        if not name.endswith(".db") or name == target or ".new-" in name:
            continue
        if name.startswith(paths.STORE_PREFIX) and (not moved or ours is None):
            continue  # a moved repository is only ever a git repository
        path = os.path.join(folder, name)
        facts = _inspect(path)
        if facts is None:
            continue
        projects, meta = facts
        if name.startswith(paths.STORE_PREFIX):
            recorded = meta.get(REPO_PATH_KEY)
            if (
                ours is not None
                and meta.get(REPO_COMMON_KEY) == ours
                and recorded
                and not os.path.exists(recorded)
            ):
                found.append(path)  # this repository, before it was moved
            continue
        for project in projects:
            if project not in known:
                known[project] = paths.canonical(paths.identify_dir(project).project)
            if known[project] == mine:
                found.append(path)
                break
    return found


def _inspect(path: str) -> tuple[list[str], dict[str, str]] | None:
    """(project folders its sessions recorded, its store_meta) of a store, read-only;
    None for a file that is no store this code can read.

    An idle store (no -wal) is read in place (``immutable=1``): nothing is made beside
    it, where ``mode=ro`` would leave a -wal and a -shm behind."""
    uri = _uri(path, "ro")
    if not os.path.exists(path + "-wal"):
        uri += "&immutable=1"
    try:
        conn = _sqlite3.connect(uri, uri=True, isolation_level=None, timeout=1.0)
    except _sqlite3.Error:
        return None
    try:
        version = user_version(conn)
        if not 1 <= version <= SCHEMA_VERSION:
            return None
        projects = [
            str(row[0])
            for row in conn.execute(
                "SELECT DISTINCT project_dir FROM session_meta "
                "WHERE project_dir IS NOT NULL AND project_dir != ''"
            )
        ]
        meta = {
            str(k): str(v)
            for k, v in conn.execute(
                "SELECT key, value FROM store_meta WHERE key IN (?, ?)",
                (REPO_PATH_KEY, REPO_COMMON_KEY),
            )
        }
    except _sqlite3.Error:
        return None  # damaged or foreign: `ctxmode doctor` reports it, we leave it be
    finally:
        conn.close()
    return projects, meta


def _uri(path: str, mode: str) -> str:
    quoted = os.path.abspath(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file:{quoted}?mode={mode}"


def _to_backup(old: str, store_path: str) -> str:
    """Rename a found store to its backup name (side files first); return that name."""
    if BACKUP_MARK in os.path.basename(old):
        return old  # renamed by the earlier, interrupted run
    target = backup_path(old, store_path)
    # Side files first: SQLite pairs "<x>-wal" with "<x>", so the set stays readable.
    for suffix in paths.SIDE_FILES:
        try:  # noqa: SIM105 - contextlib costs ~5 ms of imports
            os.rename(old + suffix, target + suffix)
        except FileNotFoundError:
            pass
    os.rename(old, target)
    return target


# ---------------------------------------------------------------- building the store


def _build(store_path: str, identity: Identity, root: str, sources: list[str]) -> None:
    """The new store from ``sources`` (backups), built aside and renamed into place."""
    folder = os.path.dirname(store_path)
    stem = os.path.basename(store_path) + ".new-"
    for name in os.listdir(folder):
        if name.startswith(stem):  # left by a process killed while building
            os.unlink(os.path.join(folder, name))
    temp = os.path.join(folder, f"{stem}{os.getpid()}")
    paths.create_private_file(temp)
    claimed: list[str] = []
    try:
        conn = _sqlite3.connect(temp, isolation_level=None)
        try:
            migrate(conn)
            conn.executemany(
                "INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)",
                _own_meta(identity),
            )
            for source in sources:
                # A file of our own that no hook opens: read-write, so that its WAL is
                # read whatever state its last writer left it in.
                conn.execute("ATTACH DATABASE ? AS old", (_uri(source, "rw"),))
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    _merge_one(conn, source)
                    conn.execute("COMMIT")
                finally:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    conn.execute("DETACH DATABASE old")
        finally:
            conn.close()
        claimed = _import_spools(temp, root, sources, identity.project)
        os.rename(temp, store_path)  # the commit: from here on the merge is done
    except BaseException:
        for suffix in ("", *paths.SIDE_FILES):
            if os.path.exists(temp + suffix):
                os.unlink(temp + suffix)
        raise
    from ctxmode import spool

    for name in claimed:
        spool.finish(name)


def _columns(conn: _sqlite3.Connection, schema: str, table: str) -> list[str]:
    return [str(row[1]) for row in conn.execute(f"PRAGMA {schema}.table_info({table})")]


def _merge_one(conn: _sqlite3.Connection, source: str) -> None:
    """Copy one backup's rows (attached as ``old``) into the new store, in the caller's
    transaction.

    Sessions not yet in the new store are copied whole. A session already there (one id
    in two old stores: rare) gets only the events and snapshots it lacks, its counters
    added up. Nothing is ever copied twice: the store is built afresh on every run.
    """
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS merge_seen (session_id TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM temp.merge_seen")
    conn.execute(
        "INSERT OR IGNORE INTO temp.merge_seen SELECT session_id FROM main.session_meta "
        "UNION SELECT session_id FROM main.session_events "
        "UNION SELECT session_id FROM main.session_resume"
    )
    old_tables = {
        str(r[0]) for r in conn.execute("SELECT name FROM old.sqlite_master WHERE type='table'")
    }
    copied_sessions, copied_events = _copy_sessions(conn)
    for table in ("compaction", "import_progress"):
        if table in old_tables:
            cols = _shared(conn, table)
            conn.execute(
                f"INSERT OR IGNORE INTO main.{table} ({cols}) SELECT {cols} FROM old.{table}"
            )
    _copy_meta(conn)
    name = os.path.basename(source).split(BACKUP_MARK, 1)[0]
    conn.execute(
        "INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)",
        (
            MERGED_PREFIX + name,
            f"{iso_utc()} {copied_sessions} sessions, {copied_events} events "
            f"(backup {os.path.basename(source)})",
        ),
    )
    _fill_worktrees(conn)


def _shared(conn: _sqlite3.Connection, table: str) -> str:
    """The columns ``table`` has in both stores (an old schema has fewer), minus the
    renumbered ``id``."""
    old = set(_columns(conn, "old", table))
    keep = [c for c in _columns(conn, "main", table) if c in old]
    if table in _RENUMBERED:
        keep = [c for c in keep if c != "id"]
    return ", ".join(keep)


def _copy_sessions(conn: _sqlite3.Connection) -> tuple[int, int]:
    """Events, sessions and snapshots of the attached store; (sessions, events) copied."""
    events = _shared(conn, "session_events")
    before = conn.execute("SELECT count(*) FROM main.session_events").fetchone()[0]
    # New sessions whole, in their order; a known session only what it lacks.
    conn.execute(
        f"INSERT INTO main.session_events ({events}) SELECT {events} FROM old.session_events "
        "WHERE session_id NOT IN temp.merge_seen ORDER BY id"
    )
    conn.execute(
        f"INSERT INTO main.session_events ({events}) SELECT {events} FROM old.session_events o "
        "WHERE o.session_id IN temp.merge_seen AND NOT EXISTS (SELECT 1 FROM "
        "main.session_events e WHERE e.session_id = o.session_id AND e.type = o.type "
        "AND e.data_hash = o.data_hash AND e.created_at = o.created_at) ORDER BY o.id"
    )
    copied_events = conn.execute("SELECT count(*) FROM main.session_events").fetchone()[0] - before
    meta = _shared(conn, "session_meta")
    copied = conn.execute(
        f"INSERT INTO main.session_meta ({meta}) SELECT {meta} FROM old.session_meta "
        "WHERE session_id NOT IN temp.merge_seen"
    ).rowcount
    for row in conn.execute(
        "SELECT session_id, started_at, last_event_at, compact_count, evicted_count, flags "
        "FROM old.session_meta WHERE session_id IN temp.merge_seen"
    ).fetchall():
        _add_to_session(conn, row)
    resume = _shared(conn, "session_resume")
    conn.execute(
        f"INSERT INTO main.session_resume ({resume}) SELECT {resume} FROM old.session_resume "
        "WHERE session_id NOT IN temp.merge_seen ORDER BY id"
    )
    _merge_known_resumes(conn)
    return int(copied), int(copied_events)


def _add_to_session(conn: _sqlite3.Connection, row: tuple[object, ...]) -> None:
    """A session already in the new store, as it also was in the attached one."""
    sid, started, last, compacts, evicted, flags = row
    current = conn.execute(
        "SELECT flags FROM main.session_meta WHERE session_id = ?", (sid,)
    ).fetchone()
    if current is None:  # events or snapshots only, no row yet
        conn.execute(
            "INSERT INTO main.session_meta (session_id, started_at, last_event_at) "
            "VALUES (?, ?, ?)",
            (sid, started, last),
        )
        current = ("",)
    names = [n for n in f"{current[0]},{flags or ''}".split(",") if n]
    union = "," + ",".join(dict.fromkeys(names)) + "," if names else ""
    conn.execute(
        "UPDATE main.session_meta SET started_at = min(started_at, ?), "
        "last_event_at = max(last_event_at, ?), compact_count = max(compact_count, ?), "
        "evicted_count = evicted_count + ?, flags = ?, "
        "event_count = (SELECT count(*) FROM main.session_events e WHERE e.session_id = ?) "
        "WHERE session_id = ?",
        (started, last, compacts or 0, evicted or 0, union, sid, sid),
    )


def _merge_known_resumes(conn: _sqlite3.Connection) -> None:
    """Snapshots of sessions already in the new store: a copy of one it holds (same
    kind, time and text) is skipped, keeping the claim the new store records; another
    gets the next free number of its kind."""
    rows = conn.execute(
        "SELECT session_id, compact_seq, kind, snapshot, event_count, created_at, consumed, "
        "consumed_at, consumed_by FROM old.session_resume WHERE session_id IN temp.merge_seen "
        "ORDER BY id"
    ).fetchall()
    for sid, seq, kind, text, count, created, consumed, consumed_at, consumed_by in rows:
        same = conn.execute(
            "SELECT 1 FROM main.session_resume WHERE session_id = ? AND kind = ? "
            "AND created_at = ? AND snapshot = ?",
            (sid, kind, created, text),
        ).fetchone()
        if same:
            continue
        taken = conn.execute(
            "SELECT 1 FROM main.session_resume WHERE session_id = ? AND kind = ? "
            "AND compact_seq = ?",
            (sid, kind, seq),
        ).fetchone()
        if taken:
            seq = conn.execute(
                "SELECT COALESCE(MAX(compact_seq), 0) + 1 FROM main.session_resume "
                "WHERE session_id = ? AND kind = ?",
                (sid, kind),
            ).fetchone()[0]
        conn.execute(
            "INSERT INTO main.session_resume (session_id, compact_seq, kind, snapshot, "
            "event_count, created_at, consumed, consumed_at, consumed_by) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (sid, seq, kind, text, count, created, consumed, consumed_at, consumed_by),
        )


def _copy_meta(conn: _sqlite3.Connection) -> None:
    """The attached store's ``store_meta`` rows about sessions and history: incidents,
    spool markers, merge notes; search tallies of one session in both add up."""
    from ctxmode.store.sessions import SEARCH_TALLY_PREFIX

    marks = ", ".join("?" * len(_OWN_KEYS))
    rows = conn.execute(
        f"SELECT key, value FROM old.store_meta WHERE key NOT IN ({marks})", _OWN_KEYS
    ).fetchall()
    for key, value in rows:
        have = conn.execute("SELECT value FROM main.store_meta WHERE key = ?", (key,)).fetchone()
        if have is None:
            conn.execute("INSERT INTO main.store_meta (key, value) VALUES (?, ?)", (key, value))
        elif str(key).startswith("incident:") and have[0] != value:
            # Two stores' incidents of the same millisecond: keep both.
            n = 2
            while conn.execute(
                "SELECT 1 FROM main.store_meta WHERE key = ?", (f"{key}#{n}",)
            ).fetchone():
                n += 1
            conn.execute(
                "INSERT INTO main.store_meta (key, value) VALUES (?, ?)", (f"{key}#{n}", value)
            )
        elif str(key).startswith(SEARCH_TALLY_PREFIX):
            (count_a, bytes_a), (count_b, bytes_b) = _tally(have[0]), _tally(value)
            conn.execute(
                "UPDATE main.store_meta SET value = ? WHERE key = ?",
                (f"{count_a + count_b} {bytes_a + bytes_b}", key),
            )


def _tally(value: object) -> tuple[int, int]:
    try:
        count, size = str(value).split()
        return int(count), int(size)
    except ValueError:
        return 0, 0


def _fill_worktrees(conn: _sqlite3.Connection) -> None:
    """Sessions recorded before 0.3 know their folder, not their work tree: derive it
    (the folder's work tree, when the folder is still there) so ``--worktree`` finds them."""
    for (project,) in conn.execute(
        "SELECT DISTINCT project_dir FROM main.session_meta WHERE worktree IS NULL "
        "AND project_dir IS NOT NULL AND project_dir != ''"
    ).fetchall():
        if not os.path.isdir(project):
            continue
        worktree = paths.identify_dir(project).worktree
        if worktree:
            conn.execute(
                "UPDATE main.session_meta SET worktree = ? WHERE worktree IS NULL "
                "AND project_dir = ?",
                (worktree, project),
            )


def _import_spools(temp: str, root: str, sources: list[str], project: str) -> list[str]:
    """Events an old store's hooks spooled (its store was locked), into the new store;
    the claimed spool files, to remove once the new store is in place."""
    from ctxmode import spool
    from ctxmode.store import Store

    claimed: list[str] = []
    for source in sources:
        old_name = source.split(BACKUP_MARK, 1)[0]
        if not os.path.isdir(os.path.join(root, "spool")):
            break
        name, pending = spool.take(root, old_name)
        if not name:
            continue
        claimed.append(name)
        if pending:
            store = Store.open(temp)
            try:
                store.add_batches(pending, source_hook="spool", project_dir=project)
            finally:
                store.close()
    return claimed
