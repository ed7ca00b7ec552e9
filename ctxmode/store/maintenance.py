"""Looking after the store and reporting on it: the integrity check, vacuum, and the usage
figures ``ctxmode stats`` reads (event totals, snapshot sizes, search tallies).

Not imported by hook processes: the ``Store`` methods that need it import it on their
first call (the CLI's doctor, purge, stats and search).
"""

from __future__ import annotations

from ctxmode.migrations import _sqlite3
from ctxmode.store.connection import _Tx
from ctxmode.store.sessions import SEARCH_TALLY_PREFIX
from ctxmode.store.values import as_text, dicts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctxmode.store.connection import Connection


def integrity_check(store: Connection) -> str:
    """``Store.integrity_check``: ``"ok"``, or the problems found, one per line."""
    problems = [
        str(row[0])
        for row in store.conn.execute("PRAGMA integrity_check").fetchall()
        if row[0] != "ok"
    ]
    if store.fts_enabled() and not store.readonly:
        try:
            store.conn.execute("INSERT INTO events_fts (events_fts) VALUES ('integrity-check')")
        except _sqlite3.DatabaseError as exc:
            problems.append(f"fts: {exc}")
    if store.words_enabled() and not store.readonly:
        try:
            store.conn.execute("INSERT INTO events_words (events_words) VALUES ('integrity-check')")
        except _sqlite3.DatabaseError as exc:
            problems.append(f"word index: {exc}")
    return "\n".join(problems) if problems else "ok"


def vacuum(store: Connection, optimize_fts: bool) -> int:
    """``Store.vacuum``: give free pages back; return how many were freed."""
    conn = store.conn
    if optimize_fts and store.fts_enabled():
        with _Tx(conn):
            conn.execute("INSERT INTO events_fts (events_fts) VALUES ('optimize')")
            if store.words_enabled():
                conn.execute("INSERT INTO events_words (events_words) VALUES ('optimize')")
    before = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    # executescript steps the pragma to completion; execute() frees a single page.
    conn.executescript("PRAGMA incremental_vacuum;")
    after = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return before - after


# ---------------------------------------------------------------- usage figures


def event_totals(
    conn: _sqlite3.Connection, session_id: str | None
) -> list[tuple[str, str, int, int]]:
    """``Store.event_totals``: events and bytes avoided per session and category."""
    sql = "SELECT session_id, category, COUNT(*), TOTAL(bytes_avoided) FROM session_events"
    params: tuple[object, ...] = ()
    if session_id is not None:
        sql += " WHERE session_id = ?"
        params = (as_text(session_id),)
    rows = conn.execute(sql + " GROUP BY session_id, category", params).fetchall()
    return [(str(r[0]), str(r[1]), int(r[2]), int(r[3])) for r in rows]


def resume_sizes(conn: _sqlite3.Connection, session_id: str | None) -> list[dict[str, Any]]:
    """``Store.resume_sizes``: snapshot rows without their text, with their ``bytes``."""
    sql = (
        "SELECT id, session_id, compact_seq, kind, event_count, created_at, consumed, "
        "consumed_at, consumed_by, length(CAST(snapshot AS BLOB)) AS bytes "
        "FROM session_resume"
    )
    params: tuple[object, ...] = ()
    if session_id is not None:
        sql += " WHERE session_id = ?"
        params = (as_text(session_id),)
    return dicts(conn.execute(sql + " ORDER BY id", params))


def record_search(conn: _sqlite3.Connection, session_id: str, output_bytes: int) -> None:
    """``Store.record_search``: one more search, ``output_bytes`` more printed.

    The tally is ``store_meta['searches:<session id>'] = "<searches> <bytes>"``: one
    row per session, updated in one ``BEGIN IMMEDIATE`` transaction, so concurrent
    searches all count and each printed byte counts once.
    """
    key = SEARCH_TALLY_PREFIX + session_id
    with _Tx(conn):
        row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (key,)).fetchone()
        count, total = _parse_tally(row[0] if row else None)
        conn.execute(
            "INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)",
            (key, f"{count + 1} {total + max(output_bytes, 0)}"),
        )


def search_tallies(conn: _sqlite3.Connection) -> dict[str, tuple[int, int]]:
    """``Store.search_tallies``: ``{session_id: (searches, output bytes)}``."""
    rows = conn.execute(
        "SELECT key, value FROM store_meta WHERE key >= ? AND key < ?",
        (SEARCH_TALLY_PREFIX, SEARCH_TALLY_PREFIX[:-1] + ";"),
    ).fetchall()
    return {str(key)[len(SEARCH_TALLY_PREFIX) :]: _parse_tally(value) for key, value in rows}


def _parse_tally(value: object) -> tuple[int, int]:
    try:
        count, total = str(value).split()
        return int(count), int(total)
    except ValueError:
        return 0, 0  # absent or damaged: start again rather than fail a search
