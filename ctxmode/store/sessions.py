"""Sessions (``session_meta``): counts, flags, the list, and deleting whole sessions —
on request (``purge_*``) or, bounded, from a hook (:meth:`Sessions.prune_idle`).

A session's rows live in three tables (``session_events``, ``session_resume``,
``session_meta``) and two ``store_meta`` keys (its search tally, its client); deleting a
session deletes them all in one transaction, with ``secure_delete`` on for a purge.
"""

from __future__ import annotations

import time

from ctxmode.store.connection import Connection, _Tx, guarded
from ctxmode.store.values import as_opt_text, as_text, dicts, iso_utc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ctxmode.migrations import _sqlite3

    Where = tuple[str | None, str | None, str | None, str | None]

PRUNE_INTERVAL_SECONDS = 3600.0
# Deleting an event (row, 3 indexes, FTS entry) costs ~50 µs: 2000 events ≈ 0.1 s.
PRUNE_MAX_EVENTS = 2000

# store_meta keys of the per-session search tallies (see Store.record_search).
SEARCH_TALLY_PREFIX = "searches:"
# store_meta keys of the client process each session last ran in (see Store.set_client).
CLIENT_PREFIX = "client:"

# Creates the session's row or adds to it (events.add_events, set_session_flag). The
# last four values are where the session runs (worktree, branch, cwd, client; see
# Context.where): a NULL keeps what the row had, so the spool's import, which cannot
# know them, changes none.
UPSERT_META = """
INSERT INTO session_meta (session_id, project_dir, started_at, last_event_at, event_count,
    last_hook, worktree, branch, cwd, client)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (session_id) DO UPDATE SET
    project_dir = COALESCE(NULLIF(excluded.project_dir, ''), session_meta.project_dir),
    last_event_at = MAX(session_meta.last_event_at, excluded.last_event_at),
    event_count = session_meta.event_count + excluded.event_count,
    last_hook = COALESCE(excluded.last_hook, session_meta.last_hook),
    worktree = COALESCE(excluded.worktree, session_meta.worktree),
    branch = COALESCE(excluded.branch, session_meta.branch),
    cwd = COALESCE(excluded.cwd, session_meta.cwd),
    client = COALESCE(excluded.client, session_meta.client)
"""

# (worktree, branch, cwd, client) of a session; None values leave the row's alone.
NO_WHERE: tuple[str | None, str | None, str | None, str | None] = (None, None, None, None)


class Sessions(Connection):
    """The store's session methods (a part of :class:`ctxmode.store.Store`)."""

    @guarded
    def event_count(self, session_id: str) -> int:
        row = self.conn.execute(
            "SELECT event_count FROM session_meta WHERE session_id = ?", (as_text(session_id),)
        ).fetchone()
        return int(row[0]) if row else 0

    @guarded
    def session_flag(self, session_id: str, name: str) -> bool:
        """Whether :meth:`set_session_flag` marked the session with ``name``."""
        row = self.conn.execute(
            "SELECT 1 FROM session_meta WHERE session_id = ? AND instr(flags, ?) > 0",
            (as_text(session_id), f",{name},"),
        ).fetchone()
        return row is not None

    @guarded
    def set_client(self, session_id: str, client: str) -> None:
        """Record the client process the session runs in now (``ctxmode.liveness``: a
        pid and its start), so that a later hand-over can tell a session still running
        from one whose client ended without its SessionEnd (``unended_sessions``)."""
        with _Tx(self.conn) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)",
                (CLIENT_PREFIX + as_text(session_id), as_text(client)),
            )

    @guarded
    def set_session_flag(
        self,
        session_id: str,
        name: str,
        project_dir: str = "",
        *,
        now: str | None = None,
        where: Where = NO_WHERE,
    ) -> None:
        """Mark the session (creating its meta row) with ``name``, e.g. ``"cleared"``.

        ``where``: (worktree, branch, cwd, client) to record on the row."""
        if not name or "," in name:
            raise ValueError(f"invalid flag name {name!r}")
        stamp = now or iso_utc()
        sid = as_text(session_id)
        with _Tx(self.conn) as conn:
            conn.execute(
                UPSERT_META,
                (sid, as_text(project_dir), stamp, stamp, 0, None, *map(as_opt_text, where)),
            )
            # flags is ",a,b," so that instr() matches whole names only.
            conn.execute(
                "UPDATE session_meta SET flags = CASE WHEN flags = '' THEN ',' ELSE flags END "
                "|| ? || ',' WHERE session_id = ? AND instr(flags, ?) = 0",
                (name, sid, f",{name},"),
            )

    @guarded
    def sessions(self) -> list[dict[str, Any]]:
        """session_meta rows, most recently active first."""
        return dicts(
            self.conn.execute(
                "SELECT * FROM session_meta ORDER BY last_event_at DESC, started_at DESC, "
                "session_id"
            )
        )

    # ------------------------------------------------------------ deleting sessions

    @guarded
    def purge_session(self, session_id: str) -> int:
        """Delete a session's events, snapshots and meta; return the number of events deleted.

        ``secure_delete`` overwrites the freed content; ``Store.vacuum`` then gives the
        pages back and folds the FTS deletions in.
        """
        self.conn.execute("PRAGMA secure_delete = ON")
        with _Tx(self.conn) as conn:
            return _delete_sessions(conn, [as_text(session_id)])

    @guarded
    def purge_older_than(self, days: float, *, now: float | None = None) -> int:
        """Delete every session idle for more than ``days``; return how many sessions."""
        self.conn.execute("PRAGMA secure_delete = ON")
        with _Tx(self.conn) as conn:
            ids = _idle_ids(conn, days, now)
            _delete_sessions(conn, ids)
        return len(ids)

    @guarded
    def idle_session_ids(self, days: float, *, now: float | None = None) -> list[str]:
        """The sessions :meth:`purge_older_than` would delete, oldest activity first."""
        return _idle_ids(self.conn, days, now)

    @guarded
    def prune_idle(
        self,
        days: int = 30,
        *,
        limit: int = 20,
        now: float | None = None,
        max_events: int = PRUNE_MAX_EVENTS,
    ) -> int:
        """Remove sessions idle for more than ``days``; return how many.

        Bounded work for a hook: at most ``limit`` sessions and (after the first one)
        ``max_events`` events per call, about 50 µs per event; nothing at all within an
        hour of the last complete prune (one read of ``store_meta``). While a backlog
        remains the prune time is not recorded, so the next call carries on.
        """
        clock = time.time() if now is None else now
        row = self.conn.execute("SELECT value FROM store_meta WHERE key = 'last_prune'").fetchone()
        if row is not None:
            try:
                if 0 <= clock - float(row[0]) < PRUNE_INTERVAL_SECONDS:
                    return 0
            except ValueError:
                pass
        cutoff = iso_utc(clock - days * 86400.0)
        with _Tx(self.conn) as conn:
            found = conn.execute(
                "SELECT session_id, event_count FROM session_meta WHERE last_event_at < ? "
                "ORDER BY last_event_at LIMIT ?",
                (cutoff, limit),
            ).fetchall()
            chosen: list[str] = []
            budget = 0
            for session_id, count in found:
                if chosen and budget + count > max_events:
                    break
                chosen.append(session_id)
                budget += count
            _delete_sessions(conn, chosen)
            if len(found) < limit and len(chosen) == len(found):
                conn.execute(
                    "INSERT OR REPLACE INTO store_meta (key, value) VALUES ('last_prune', ?)",
                    (repr(clock),),
                )
        return len(chosen)


def _idle_ids(conn: _sqlite3.Connection, days: float, now: float | None) -> list[str]:
    # Never before 1970: the stored times are four-digit-year strings.
    cutoff = iso_utc(max((time.time() if now is None else now) - days * 86400.0, 0.0))
    rows = conn.execute(
        "SELECT session_id FROM session_meta WHERE last_event_at < ? ORDER BY last_event_at",
        (cutoff,),
    ).fetchall()
    return [row[0] for row in rows]


def _delete_sessions(conn: _sqlite3.Connection, session_ids: Iterable[str]) -> int:
    """Delete the sessions' rows (in the caller's transaction); return the events deleted."""
    deleted = 0
    for sid in session_ids:
        deleted += conn.execute("DELETE FROM session_events WHERE session_id = ?", (sid,)).rowcount
        conn.execute("DELETE FROM session_resume WHERE session_id = ?", (sid,))
        # The client's summaries of its compactions (schema 3) are the session's text too.
        conn.execute("DELETE FROM compaction WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM session_meta WHERE session_id = ?", (sid,))
        # The session's search tally (see Store.record_search) and client go with it.
        conn.execute("DELETE FROM store_meta WHERE key = ?", (SEARCH_TALLY_PREFIX + sid,))
        conn.execute("DELETE FROM store_meta WHERE key = ?", (CLIENT_PREFIX + sid,))
    return deleted
