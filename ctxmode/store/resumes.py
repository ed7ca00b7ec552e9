"""Resume snapshots (``session_resume``): saving, numbering, and the claim.

The claim **(contract)**: :meth:`Resumes.claim_resume` selects and marks a snapshot in
one ``BEGIN IMMEDIATE`` transaction, so of any number of racing processes exactly one
receives it. A snapshot nobody should receive is retired instead
(:meth:`Resumes.discard_unclaimed`): marked consumed by one of :data:`RETIRE_REASONS`.
"""

from __future__ import annotations

import time

from ctxmode.store.connection import Connection, _Tx, guarded
from ctxmode.store.values import as_text, dicts, iso_utc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctxmode.migrations import _sqlite3

RESUME_KINDS = ("compact", "end")

# ``consumed_by`` values that mean a snapshot was retired unread (``discard_unclaimed``)
# rather than claimed by a session: the handlers' reasons, shared with stats and the CLI.
RETIRE_REASONS = ("clear", "resumed", "superseded")


class Resume:
    """A snapshot row handed to exactly one claimer."""

    __slots__ = ("compact_seq", "created_at", "event_count", "id", "kind", "session_id", "snapshot")

    def __init__(
        self,
        session_id: str,
        compact_seq: int,
        kind: str,
        snapshot: str,
        event_count: int,
        created_at: str,
        id: int | None = None,
    ) -> None:
        self.session_id = session_id
        self.compact_seq = compact_seq
        self.kind = kind
        self.snapshot = snapshot
        self.event_count = event_count
        self.created_at = created_at
        self.id = id

    def __repr__(self) -> str:
        return f"Resume({self.session_id!r}, seq={self.compact_seq}, kind={self.kind!r})"

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in Resume.__slots__}


class Resumes(Connection):
    """The store's snapshot methods (a part of :class:`ctxmode.store.Store`)."""

    @guarded
    def save_resume(
        self,
        session_id: str,
        snapshot: str,
        event_count: int,
        *,
        kind: str = "compact",
        now: str | None = None,
    ) -> int:
        """Store a snapshot row (one transaction) and return its ``compact_seq``.

        Numbered per session and kind: the n-th ``compact`` snapshot is compaction n
        (and bumps ``session_meta.compact_count``); ``end`` snapshots count 1, 2, … apart.
        """
        if kind not in RESUME_KINDS:
            raise ValueError(f"kind must be one of {RESUME_KINDS}, not {kind!r}")
        stamp = now or iso_utc()
        sid = as_text(session_id)
        conn = self.conn
        with _Tx(conn):
            conn.execute(
                "INSERT INTO session_meta (session_id, started_at, last_event_at, compact_count) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "compact_count = session_meta.compact_count + excluded.compact_count",
                (sid, stamp, stamp, 1 if kind == "compact" else 0),
            )
            seq = _next_seq(conn, sid, kind)
            conn.execute(
                "INSERT INTO session_resume (session_id, compact_seq, kind, snapshot, "
                "event_count, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (sid, seq, kind, as_text(snapshot), int(event_count), stamp),
            )
        return seq

    @guarded
    def next_compact_seq(self, session_id: str, kind: str = "compact") -> int:
        """The ``compact_seq`` the session's next :meth:`save_resume` of ``kind`` will get
        (unless another process saves one first)."""
        return _next_seq(self.conn, as_text(session_id), kind)

    @guarded
    def claim_resume(
        self,
        *,
        claimed_by: str,
        session_id: str | None = None,
        exclude_session: str | None = None,
        max_age_seconds: float | None = None,
        now: float | None = None,
        kind: str | None = None,
        min_age_seconds: float | None = None,
        prefer_worktree: str | None = None,
    ) -> Resume | None:
        """Atomically take the newest unclaimed snapshot matching the filters.

        One ``BEGIN IMMEDIATE`` transaction selects and marks the row, so of any number
        of racing processes exactly one receives a given snapshot. ``kind`` restricts
        to ``"compact"`` or ``"end"`` rows; ``max_age_seconds``/``min_age_seconds`` to
        rows at most / at least that old. ``prefer_worktree``: a snapshot of a session
        that ran in that work tree (``session_meta.worktree``) before any other, the
        newest of them; the worktrees of a repository share one store. Returns None
        when nothing matches.
        """
        clock = time.time() if now is None else now
        where = ["consumed = 0"]
        params: list[object] = []
        if session_id is not None:
            where.append("session_id = ?")
            params.append(as_text(session_id))
        if exclude_session is not None:
            where.append("session_id != ?")
            params.append(as_text(exclude_session))
        if kind is not None:
            where.append("kind = ?")
            params.append(kind)
        if max_age_seconds is not None:
            # ISO-8601 strings of one fixed format compare like the times they name.
            where.append("created_at >= ?")
            params.append(iso_utc(clock - max_age_seconds))
        if min_age_seconds is not None:
            where.append("created_at <= ?")
            params.append(iso_utc(clock - min_age_seconds))
        conn = self.conn
        with _Tx(conn):
            order = "created_at DESC, id DESC"
            if prefer_worktree is not None:
                # One statement, so the choice and the mark stay one atomic claim.
                order = (
                    "(SELECT worktree FROM session_meta m WHERE m.session_id = "
                    "session_resume.session_id) IS ? DESC, " + order
                )
                params.append(as_text(prefer_worktree))
            row = conn.execute(
                "SELECT id, session_id, compact_seq, kind, snapshot, event_count, created_at "
                f"FROM session_resume WHERE {' AND '.join(where)} "
                f"ORDER BY {order} LIMIT 1",
                params,
            ).fetchone()
            if row is None:
                return None
            marked = conn.execute(
                "UPDATE session_resume SET consumed = 1, consumed_at = ?, consumed_by = ? "
                "WHERE id = ? AND consumed = 0",
                (iso_utc(clock), as_text(claimed_by), row[0]),
            ).rowcount
            if marked != 1:  # pragma: no cover - impossible under the write lock
                return None
        return Resume(row[1], row[2], row[3], row[4], row[5], row[6], id=row[0])

    @guarded
    def has_unclaimed(self, session_id: str, *, kind: str | None = None) -> bool:
        """Whether the session has a snapshot nobody claimed yet (one indexed lookup)."""
        if kind is None:
            row = self.conn.execute(
                "SELECT 1 FROM session_resume WHERE session_id = ? AND consumed = 0 LIMIT 1",
                (as_text(session_id),),
            ).fetchone()
        else:
            row = self.conn.execute(
                "SELECT 1 FROM session_resume WHERE session_id = ? AND consumed = 0 "
                "AND kind = ? LIMIT 1",
                (as_text(session_id), kind),
            ).fetchone()
        return row is not None

    @guarded
    def discard_unclaimed(self, session_id: str, *, reason: str, kind: str | None = None) -> int:
        """Mark the session's unclaimed snapshots (of ``kind``) consumed by ``reason``.

        Used after /clear (nothing from before may reach a later session) and to retire
        stale end-of-session snapshots. Returns how many rows it retired.
        """
        sql = (
            "UPDATE session_resume SET consumed = 1, consumed_at = ?, consumed_by = ? "
            "WHERE session_id = ? AND consumed = 0"
        )
        params: list[object] = [iso_utc(), as_text(reason), as_text(session_id)]
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        with _Tx(self.conn) as conn:
            return int(conn.execute(sql, params).rowcount)

    @guarded
    def latest_resume(self, session_id: str, kind: str | None = None) -> dict[str, Any] | None:
        """The session's newest snapshot row (claimed or not), or None."""
        sql = "SELECT * FROM session_resume WHERE session_id = ?"
        params: list[object] = [as_text(session_id)]
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        rows = dicts(self.conn.execute(sql + " ORDER BY created_at DESC, id DESC LIMIT 1", params))
        return rows[0] if rows else None

    @guarded
    def compact_history(
        self, session_id: str, *, limit: int = 8, skip_head: str | None = None
    ) -> list[tuple[int, str, bool]]:
        """The session's newest compaction snapshots, newest first, as ``(compact_seq,
        text, handed over)``: handed over = claimed by a session (not retired unread, not
        waiting). ``skip_head``: leave out snapshots whose first 400 characters hold it
        (the caller's marker of a kind of snapshot; the store does not read snapshots)."""
        sql = (
            "SELECT compact_seq, snapshot, consumed, consumed_by FROM session_resume "
            "WHERE session_id = ? AND kind = 'compact'"
        )
        params: list[object] = [as_text(session_id)]
        if skip_head:
            sql += " AND instr(substr(snapshot, 1, 400), ?) = 0"
            params.append(skip_head)
        sql += " ORDER BY compact_seq DESC, id DESC LIMIT ?"
        params.append(int(limit))
        return [
            (int(seq), str(text), bool(consumed) and by not in RETIRE_REASONS)
            for seq, text, consumed, by in self.conn.execute(sql, params).fetchall()
        ]

    @guarded
    def resumes(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Snapshot rows (all columns), oldest first."""
        if session_id is None:
            cursor = self.conn.execute("SELECT * FROM session_resume ORDER BY id")
        else:
            cursor = self.conn.execute(
                "SELECT * FROM session_resume WHERE session_id = ? ORDER BY id",
                (as_text(session_id),),
            )
        return dicts(cursor)


def _next_seq(conn: _sqlite3.Connection, sid: str, kind: str) -> int:
    return int(
        conn.execute(
            "SELECT COALESCE(MAX(compact_seq), 0) + 1 FROM session_resume "
            "WHERE session_id = ? AND kind = ?",
            (sid, kind),
        ).fetchone()[0]
    )
