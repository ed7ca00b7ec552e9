"""Numbered schema steps, recorded in ``PRAGMA user_version``.

A hook checks one integer (``user_version == len(MIGRATIONS)``) and leaves; only a
new or older store runs the steps below. Each step runs in its own ``BEGIN
IMMEDIATE`` transaction together with the ``user_version`` bump, so an interrupted
migration leaves the store at the previous version, intact. Parallel hooks race on
the first run of a new project: the version is re-read once the write lock is held.

Never edit a released step: add ``m002_...`` and append it to :data:`MIGRATIONS`.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False


def _load_sqlite3() -> object:
    """Import ``_sqlite3`` without ``functools`` (and ``collections``): ~5 ms per hook.

    On import, ``_sqlite3`` fetches ``functools.lru_cache`` for its statement cache,
    and ``functools`` pulls in ``collections``: a third of the interpreter's own
    start-up. ``lru_cache`` is a thin shell over the C ``_functools._lru_cache_wrapper``,
    so a stand-in module offering just that is put in ``sys.modules`` for the length
    of the import, then removed: a later ``import functools`` gets the real module.
    If anything about it fails, the plain import runs.
    """
    if "_sqlite3" in sys.modules or "functools" in sys.modules:
        import _sqlite3

        return _sqlite3
    try:
        import _functools  # type: ignore[import-not-found]  # no stub: C half of functools

        def lru_cache(maxsize: int = 128, typed: bool = False) -> object:
            def decorate(function: object) -> object:
                # The 4th argument builds cache_info() results; a tuple will do.
                wrapper: object = _functools._lru_cache_wrapper(
                    function, maxsize, typed, lambda *info: info
                )
                return wrapper

            return decorate

        stand_in = type(sys)("functools")
        stand_in.lru_cache = lru_cache  # type: ignore[attr-defined]
        sys.modules["functools"] = stand_in
        try:
            import _sqlite3
        finally:
            if sys.modules.get("functools") is stand_in:
                del sys.modules["functools"]
    except Exception:  # pragma: no cover - a future _sqlite3 wanting more of functools
        import _sqlite3
    return _sqlite3


if TYPE_CHECKING:
    import _sqlite3 as _sqlite3
    from _sqlite3 import Connection
    from collections.abc import Callable, Sequence
else:
    _sqlite3 = _load_sqlite3()


class StoreError(Exception):
    """Base of every error the store raises."""


class StoreTooNew(StoreError):
    """The store was written by a newer ctxmode; it is left untouched."""


# The full-text index. Why trigram rather than unicode61 (word tokens):
# what people look up in a coding session is file names, identifiers, commands and
# error fragments: "hello.py", "snap" (for snapshot), "Error" (inside
# "AssertionError"), "app.py" (inside "src/app.py"). Trigram matches any substring of
# three or more characters, case-insensitively, exactly like the LIKE fallback, so
# both paths give the same hits; unicode61 would only find whole words (or prefixes)
# and split "hello.py" into "hello" + "py". The price is a larger index (about 1.7x
# the unicode61 one in our measurements) and no match for terms shorter than three
# characters, which search.py sends through LIKE instead.
# External content (content='session_events'): the text is stored once, in the table;
# the triggers keep the index in step with every insert, delete and update.
FTS_SCHEMA = (
    """CREATE VIRTUAL TABLE events_fts USING fts5(
        data, content='session_events', content_rowid='id', tokenize='trigram')""",
    """CREATE TRIGGER session_events_ai AFTER INSERT ON session_events BEGIN
        INSERT INTO events_fts(rowid, data) VALUES (new.id, new.data);
    END""",
    """CREATE TRIGGER session_events_ad AFTER DELETE ON session_events BEGIN
        INSERT INTO events_fts(events_fts, rowid, data) VALUES ('delete', old.id, old.data);
    END""",
    """CREATE TRIGGER session_events_au AFTER UPDATE OF data ON session_events BEGIN
        INSERT INTO events_fts(events_fts, rowid, data) VALUES ('delete', old.id, old.data);
        INSERT INTO events_fts(rowid, data) VALUES (new.id, new.data);
    END""",
)


def fts_disabled() -> bool:
    """``CTXMODE_NO_FTS=1`` builds stores without FTS5 (to test the LIKE fallback)."""
    return os.environ.get("CTXMODE_NO_FTS", "") not in ("", "0")


def m001_initial(conn: Connection) -> None:
    """Events, per-session meta, resume snapshots, bookkeeping, and the FTS index."""
    conn.execute(
        """CREATE TABLE session_events (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            type TEXT NOT NULL,
            category TEXT NOT NULL,
            priority INTEGER NOT NULL,
            data TEXT NOT NULL,
            data_hash TEXT NOT NULL,
            source_hook TEXT,
            agent_id TEXT,
            agent_type TEXT,
            tool_use_id TEXT,
            bytes_avoided INTEGER NOT NULL DEFAULT 0,
            bytes_returned INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL
        )"""
    )
    # Reading a session in order, and the last-5 dedup window.
    conn.execute("CREATE INDEX idx_events_session ON session_events(session_id, id)")
    # Eviction walks this index in order: least important (priority 5) first, oldest
    # first among equals, hence priority DESC, id ASC.
    conn.execute(
        "CREATE INDEX idx_events_priority ON session_events(session_id, priority DESC, id)"
    )
    conn.execute("CREATE INDEX idx_events_category ON session_events(category)")
    conn.execute(
        """CREATE TABLE session_meta (
            session_id TEXT PRIMARY KEY,
            project_dir TEXT,
            started_at TEXT NOT NULL,
            last_event_at TEXT NOT NULL,
            event_count INTEGER NOT NULL DEFAULT 0,
            compact_count INTEGER NOT NULL DEFAULT 0,
            evicted_count INTEGER NOT NULL DEFAULT 0,
            last_hook TEXT,
            flags TEXT NOT NULL DEFAULT ''
        )"""
    )
    conn.execute(
        """CREATE TABLE session_resume (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            compact_seq INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('compact', 'end')),
            snapshot TEXT NOT NULL,
            event_count INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            consumed INTEGER NOT NULL DEFAULT 0,
            consumed_at TEXT,
            consumed_by TEXT,
            -- numbered per session and kind: compact 1, 2, … (= the compaction count),
            -- end 1, 2, …
            UNIQUE (session_id, kind, compact_seq)
        )"""
    )
    # Only unclaimed rows are ever looked up by claim/has_unclaimed: a partial index
    # stays tiny however many snapshots were consumed.
    conn.execute(
        """CREATE INDEX idx_resume_unclaimed ON session_resume(session_id, created_at)
           WHERE consumed = 0"""
    )
    conn.execute("CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID")
    if fts_disabled():
        conn.execute("INSERT INTO store_meta(key, value) VALUES ('fts', 'disabled')")
        return
    try:
        for statement in FTS_SCHEMA:
            conn.execute(statement)
    except _sqlite3.OperationalError as exc:
        message = str(exc)
        # "no such module: fts5" (built without FTS5), "no such tokenizer: trigram"
        # (SQLite < 3.34). Anything else (disk full, ...) is a real failure.
        if "no such module" not in message and "tokenizer" not in message:
            raise
        # Nothing of FTS may stay half-made; the transaction carries on without it.
        for name in ("session_events_ai", "session_events_ad", "session_events_au"):
            conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        try:  # noqa: SIM105 - contextlib costs ~5 ms of imports
            conn.execute("DROP TABLE IF EXISTS events_fts")
        except _sqlite3.OperationalError:  # pragma: no cover - dropping needs the module
            pass
        conn.execute(
            "INSERT INTO store_meta(key, value) VALUES ('fts', ?)", (f"unavailable: {message}",)
        )
    else:
        conn.execute("INSERT INTO store_meta(key, value) VALUES ('fts', 'trigram')")


# ---------------------------------------------------------------- m002: search the values

# What search matches: the values of an event's data, as a person reads them, one per
# line, unescaped ("src/app.py", not '{"path":"src/app.py"}'), so that `search path`
# does not match every file event and a one-letter query does not match the "n" of an
# escaped newline. JSON1's json_tree walks the document in order; booleans read
# true/false, nulls and keys are left out. Data that is not JSON (cut by the store's
# size ceiling) is taken as it is. Computed inside SQLite, by the triggers: the hook's
# insert costs no Python and no json import.
_TRIGGERS = (
    "session_events_ai",
    "session_events_ad",
    "session_events_au",
    "session_events_bd",
    "session_events_bu",
)
# The newest events an upgrade indexes at once (~1 s on a slow disk): an upgrade runs in
# the first hook after it, within that hook's deadline. The older ones, below the
# smallest rowid of the index, are found by LIKE over the same values (Store.search)
# until they age out (retention_days).
UPGRADE_INDEX_ROWS = 50_000


def values_sql(column: str) -> str:
    """SQL for the searchable text of the JSON in ``column``: its values, one per line."""
    return (
        f"CASE WHEN json_valid({column}) THEN (\n"
        "SELECT group_concat(CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false'\n"
        "ELSE j.value END, char(10))\n"
        f"FROM json_tree({column}) AS j WHERE j.atom IS NOT NULL)\n"
        f"ELSE {column} END"
    )


def json_available(conn: Connection) -> bool:
    """Whether this SQLite has JSON1 (built in since 3.38; an option before)."""
    try:
        conn.execute("SELECT json_valid('{}'), (SELECT count(*) FROM json_tree('[1]'))").fetchone()
    except _sqlite3.OperationalError:
        return False
    return True


def install_fts(conn: Connection, from_id: int) -> None:
    """(Re)create the search index over the events with ``id >= from_id``.

    Contentless (``content=''``): the text, read from the view ``events_text``, is kept
    only in the index, never stored twice. Every trigger skips the rows below
    ``from_id`` (baked into its SQL), so a row is in the index exactly when its id is
    at least ``from_id``, whatever is inserted or deleted later. The rows leave the
    index *before* they leave the table (BEFORE triggers), while the view can still
    give the very text they were indexed with.
    """
    for name in _TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    conn.execute("DROP TABLE IF EXISTS events_fts")
    conn.execute("CREATE VIRTUAL TABLE events_fts USING fts5(text, content='', tokenize='trigram')")
    start = int(from_id)

    def when(row: str) -> str:
        return f" WHEN {row}.id >= {start:d}" if start > 1 else ""

    insert = (
        "INSERT INTO events_fts(rowid, text) SELECT id, text FROM events_text WHERE id = new.id;"
    )
    delete = (
        "INSERT INTO events_fts(events_fts, rowid, text) "
        "SELECT 'delete', id, text FROM events_text WHERE id = old.id;"
    )
    for name, timing, row, body in (
        ("session_events_ai", "AFTER INSERT", "new", insert),
        ("session_events_bd", "BEFORE DELETE", "old", delete),
        ("session_events_bu", "BEFORE UPDATE OF data", "old", delete),
        ("session_events_au", "AFTER UPDATE OF data", "new", insert),
    ):
        conn.execute(
            f"CREATE TRIGGER {name} {timing} ON session_events{when(row)} BEGIN\n{body}\nEND"
        )
    conn.execute(
        "INSERT INTO events_fts(rowid, text) SELECT id, text FROM events_text WHERE id >= ?",
        (start,),
    )


def reindex_fts(conn: Connection) -> None:
    """Index every event again, in both indexes of the current schema (benchmarks fill a
    store with the triggers off, then this)."""
    install_trigram(conn, 1)
    has_words = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events_words'"
    ).fetchone()
    if has_words is not None:
        install_words(conn, 1)


def m002_search_values(conn: Connection) -> None:
    """Search the values of the event data, not its JSON text (keys, escapes).

    The view ``events_text(id, text)`` gives each event's searchable text (the values;
    the raw data where SQLite lacks JSON1); the FTS index and the LIKE fallback both
    read it.
    """
    text = values_sql("data") if json_available(conn) else "data"
    conn.execute(f"CREATE VIEW events_text(id, text) AS\nSELECT id, {text}\nFROM session_events")
    has_fts = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events_fts'"
    ).fetchone()
    if has_fts is None:
        return  # a store without FTS5 searches with LIKE, over the same text
    top = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM session_events").fetchone()[0])
    install_fts(conn, max(1, top - UPGRADE_INDEX_ROWS + 1))


# ---------------------------------------------------------------- m003: identity and history


def m003_identity_history(conn: Connection) -> None:
    """Where each session ran, what each compaction's summary kept, how far imports read.

    - ``session_meta`` learns the session's work tree (the resolved root of the git work
      tree it ran in: a linked worktree's own folder, not the repository's), its branch,
      its cwd, and its client (``claude_code``, ``codex``; NULL on rows made before, which
      were all Claude Code's).
    - ``compaction``: one row per compaction of a session, numbered like the snapshots
      (``compact_seq`` = ``session_resume.compact_seq`` of its ``compact`` snapshot when
      ctxmode made one), with the client's own summary of the conversation (masked) once
      PostCompact or an import brings it.
    - ``import_progress``: per transcript file, the byte offset read so far (always at a
      line end) and a hash of its head, so that ``ctxmode import`` continues where it
      stopped and starts again on a file replaced under the same name.
    - ``session_events.call_at``: when the client started the hook call (ns since the
      epoch; NULL on rows made before). Captures run in the background can finish in any
      order; the session is read, deduplicated and evicted in the calls' order.
    """
    for column in ("worktree TEXT", "branch TEXT", "cwd TEXT", "client TEXT"):
        conn.execute(f"ALTER TABLE session_meta ADD COLUMN {column}")
    conn.execute("ALTER TABLE session_events ADD COLUMN call_at INTEGER")
    # Reading a session in the calls' order, and a call's dedup window.
    conn.execute("CREATE INDEX idx_events_call ON session_events(session_id, call_at, id)")
    conn.execute(
        """CREATE TABLE compaction (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            compact_seq INTEGER NOT NULL,
            trigger TEXT NOT NULL DEFAULT '',
            summary TEXT,
            summary_at TEXT,
            origin TEXT NOT NULL DEFAULT 'hook' CHECK (origin IN ('hook', 'import')),
            created_at TEXT NOT NULL,
            UNIQUE (session_id, compact_seq)
        )"""
    )
    conn.execute(
        """CREATE TABLE import_progress (
            path TEXT PRIMARY KEY,
            session_id TEXT,
            offset INTEGER NOT NULL DEFAULT 0,
            head_hash TEXT,
            mtime_ns INTEGER,
            records INTEGER NOT NULL DEFAULT 0,
            events INTEGER NOT NULL DEFAULT 0,
            skipped INTEGER NOT NULL DEFAULT 0,
            updated_at TEXT NOT NULL
        ) WITHOUT ROWID"""
    )


# ---------------------------------------------------------------- m004: replayed snapshots


def m004_replayed_snapshots(conn: Connection) -> None:
    """What ctxmode would have restored at a compaction it did not see.

    ``ctxmode import`` records a compaction of the client's history with its summary; the
    hooks did not run then, so no snapshot was made. ``compaction.replayed`` keeps the
    snapshot the hooks would have built at that moment (from the session's events before
    it), and ``replayed_events`` how many events it was built from. It lives on the
    compaction row, not in ``session_resume``: it is never claimed, never injected, only
    held against the summary (``stats``, ``show-snapshot``, ``view``). NULL on every row
    the hooks made, and on imported rows made before.
    """
    conn.execute("ALTER TABLE compaction ADD COLUMN replayed TEXT")
    conn.execute("ALTER TABLE compaction ADD COLUMN replayed_events INTEGER")


# ---------------------------------------------------------------- m005: a word index

# The word index beside the trigram one (issue 28). An agent asks in words ("why did the
# migration fail"), and a stored event says "migrations failed": the trigram index finds
# substrings, not words, and scores "the" as highly as "migration". unicode61 splits the
# same values into words (diacritics folded), porter reduces each to its stem, so
# "migrations", "migrated" and "migration" meet; BM25-like weights then come from how
# many events hold each word (ctxmode.store.search). Contentless like the trigram index:
# the text is indexed, never stored again. Same row range rule (``from_id`` baked into
# its triggers) and an upgrade budget like m002's: the newest UPGRADE_WORD_ROWS events
# are indexed at once; search reaches older ones through LIKE.
WORDS_TOKENIZER = "porter unicode61 remove_diacritics 2"
# Both indexes are built again at the upgrade (the trigram one over less text, below):
# fewer rows each than m002's one index, to stay within a hook's deadline.
UPGRADE_WORD_ROWS = 25_000
_WORD_TRIGGERS = (
    "session_events_words_ai",
    "session_events_words_bd",
    "session_events_words_bu",
    "session_events_words_au",
)
# The trigram index now serves what words cannot find (part of a name, a path, a flag):
# it leaves out the long text no one looks into by substring, a command's output and
# the excerpt of what a tool wrote (the word index holds them). A third of the size.
TRIGRAM_SKIPS = ("output", "excerpt", "prompt")


def _install_index(
    conn: Connection,
    table: str,
    tokenize: str,
    view: str,
    triggers: Sequence[str],
    from_id: int,
) -> None:
    """(Re)create the contentless FTS5 ``table`` over ``view`` for the events with
    ``id >= from_id``, kept in step by ``triggers`` (named for: after insert, before
    delete, before update, after update; see :func:`install_fts`)."""
    for name in triggers:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute(
        f"CREATE VIRTUAL TABLE {table} USING fts5(text, content='', tokenize='{tokenize}')"
    )
    start = int(from_id)

    def when(row: str) -> str:
        return f" WHEN {row}.id >= {start:d}" if start > 1 else ""

    insert = f"INSERT INTO {table}(rowid, text) SELECT id, text FROM {view} WHERE id = new.id;"
    delete = (
        f"INSERT INTO {table}({table}, rowid, text) "
        f"SELECT 'delete', id, text FROM {view} WHERE id = old.id;"
    )
    for name, timing, row, body in (
        (triggers[0], "AFTER INSERT", "new", insert),
        (triggers[1], "BEFORE DELETE", "old", delete),
        (triggers[2], "BEFORE UPDATE OF data", "old", delete),
        (triggers[3], "AFTER UPDATE OF data", "new", insert),
    ):
        conn.execute(
            f"CREATE TRIGGER {name} {timing} ON session_events{when(row)} BEGIN\n{body}\nEND"
        )
    conn.execute(
        f"INSERT INTO {table}(rowid, text) SELECT id, text FROM {view} WHERE id >= ?", (start,)
    )


def install_words(conn: Connection, from_id: int) -> None:
    """(Re)create the word index over the events with ``id >= from_id``."""
    _install_index(conn, "events_words", WORDS_TOKENIZER, "events_text", _WORD_TRIGGERS, from_id)


def install_trigram(conn: Connection, from_id: int) -> None:
    """(Re)create the trigram index of schema 5 (over ``events_trigram``: the values but
    :data:`TRIGRAM_SKIPS`) for the events with ``id >= from_id``."""
    for name in _TRIGGERS:  # m001's and m002's triggers, whichever the store has
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    names = ("session_events_ai", "session_events_bd", "session_events_bu", "session_events_au")
    _install_index(conn, "events_fts", "trigram", "events_trigram", names, from_id)


def trigram_values_sql(column: str) -> str:
    """:func:`values_sql`, without the values under :data:`TRIGRAM_SKIPS` (top level)."""
    skips = ", ".join(f"'{key}'" for key in TRIGRAM_SKIPS)
    return (
        f"CASE WHEN json_valid({column}) THEN (\n"
        "SELECT group_concat(CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false'\n"
        "ELSE j.value END, char(10))\n"
        f"FROM json_tree({column}) AS j WHERE j.atom IS NOT NULL\n"
        f"AND NOT (j.parent = 0 AND j.key IN ({skips})))\n"
        f"ELSE {column} END"
    )


def m005_word_index(conn: Connection) -> None:
    """A word index for ranked search, and the trigram index over less text.

    - ``events_words``: the values (``events_text``) as porter-stemmed words;
    - ``events_trigram(id, text)``: the values a substring search looks into (a command
      line, a path, an error; not a command's output or a write's excerpt), which the
      trigram index ``events_fts`` is built over again (in a store of at most
      :data:`UPGRADE_WORD_ROWS` events; a larger one keeps its index over all values).

    Made only where the trigram index is (a store built without FTS5, or with
    ``CTXMODE_NO_FTS``, searches with LIKE alone, as before); where this SQLite's FTS5
    lacks the tokenizer, the store goes on without the word index and says so in
    ``store_meta``.
    """
    text = trigram_values_sql("data") if json_available(conn) else "data"
    conn.execute(f"CREATE VIEW events_trigram(id, text) AS\nSELECT id, {text}\nFROM session_events")
    has_fts = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events_fts'"
    ).fetchone()
    if has_fts is None:
        return
    top = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM session_events").fetchone()[0])
    start = max(1, top - UPGRADE_WORD_ROWS + 1)
    if start == 1:
        # Every event fits in the upgrade's budget: the trigram index is built again over
        # less text. A larger store keeps its index as it is (over all the values, as
        # schema 2 made it): dropping a few hundred MB of index pages alone would take a
        # hook's deadline; search reads either the same way.
        install_trigram(conn, 1)
    conn.execute("SAVEPOINT words")
    try:
        install_words(conn, start)
    except _sqlite3.OperationalError as exc:
        if "tokenizer" not in str(exc) and "no such module" not in str(exc):
            raise
        conn.execute("ROLLBACK TO words")
        conn.execute(
            "INSERT OR REPLACE INTO store_meta(key, value) VALUES ('words', ?)",
            (f"unavailable: {exc}",),
        )
    conn.execute("RELEASE words")


MIGRATIONS: list[Callable[[Connection], None]] = [
    m001_initial,
    m002_search_values,
    m003_identity_history,
    m004_replayed_snapshots,
    m005_word_index,
]
SCHEMA_VERSION = len(MIGRATIONS)


def _retry_busy(conn: Connection, sql: str, attempts: int = 200) -> None:
    """Run ``sql``, retrying for ~2 s on SQLITE_BUSY: changing the journal mode needs
    an exclusive lock and SQLite fails at once instead of calling the busy handler."""
    for attempt in range(attempts):
        try:
            conn.execute(sql).fetchall()
            return
        except _sqlite3.OperationalError as exc:
            if attempt == attempts - 1 or "locked" not in str(exc):
                raise
            time.sleep(0.01)


def user_version(conn: Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: Connection, steps: Sequence[Callable[[Connection], None]] | None = None) -> int:
    """Apply the missing steps, each in its own transaction; return the resulting version.

    ``conn`` must be in autocommit mode (``isolation_level=None``). ``steps`` defaults
    to :data:`MIGRATIONS` (tests pass their own list). Raises :class:`StoreTooNew`, with
    the store untouched, when the store is newer than the steps know.
    """
    if steps is None:
        steps = MIGRATIONS
    target = len(steps)
    version = user_version(conn)
    if version == target:
        return version
    if version > target:
        raise StoreTooNew(f"store schema version {version} is newer than this ctxmode ({target})")
    if version == 0:
        # Both only take effect on a store without tables, and neither may run
        # inside a transaction. auto_vacuum first: journal_mode=WAL writes the header
        # page, which fixes the auto_vacuum setting for good. INCREMENTAL lets purge
        # hand freed pages back to the file system (Store.vacuum).
        # (Store.open builds new stores under a temporary name, so only a zero-length
        # file made by someone else gets here; retry in case another process is at it.)
        _retry_busy(conn, "PRAGMA auto_vacuum = INCREMENTAL")
        _retry_busy(conn, "PRAGMA journal_mode = WAL")
    for number, step in enumerate(steps, start=1):
        if number <= version:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read under the write lock: a parallel hook may have migrated meanwhile.
            current = user_version(conn)
            if current > target:
                raise StoreTooNew(
                    f"store schema version {current} is newer than this ctxmode ({target})"
                )
            if current >= number:
                conn.execute("COMMIT")
                version = current
                continue
            step(conn)
            # A literal, not a parameter: PRAGMA takes no bound values.
            conn.execute(f"PRAGMA user_version = {number:d}")
            conn.execute("COMMIT")
            version = number
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return version
