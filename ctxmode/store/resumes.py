"""Resume snapshots (``session_resume``): saving, numbering, and the claim.

The claim **(contract)**: :meth:`Resumes.claim_resume` selects and marks a snapshot in
one ``BEGIN IMMEDIATE`` transaction, so of any number of racing processes exactly one
receives it. A snapshot nobody should receive is retired instead
(:meth:`Resumes.discard_unclaimed`): marked consumed by one of :data:`RETIRE_REASONS`.
"""

from __future__ import annotations

import time

from ctxmode.store.connection import Connection, _Tx, guarded
from ctxmode.store.sessions import CLIENT_PREFIX
from ctxmode.store.values import as_text, dicts, iso_utc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctxmode.migrations import _sqlite3

RESUME_KINDS = ("compact", "end")

# ``consumed_by`` values that mean a snapshot was retired unread (``discard_unclaimed``)
# rather than claimed by a session: the handlers' reasons, shared with stats and the CLI.
RETIRE_REASONS = ("clear", "resumed", "superseded")


# The flag (``session_meta.flags``) of a session that ended by /clear: nothing of it may
# reach a later session (SessionEnd retires its snapshots; no hand-over builds one).
ENDED_BY_CLEAR = "ended_clear"

# Whether session {sid} has events stored after its newest end snapshot (or has none).
_AFTER_LAST_END = (
    "EXISTS (SELECT 1 FROM session_events e WHERE e.session_id = {sid} AND e.created_at > "
    "COALESCE((SELECT MAX(r.created_at) FROM session_resume r "
    "WHERE r.session_id = {sid} AND r.kind = 'end'), ''))"
)
# Other sessions recorded by hooks (not imported, not cleared) with no end snapshot since
# their last event: (id, preferred work tree, newest event, client). The cheap test
# first: a session whose last event is older than its newest end snapshot ended with it.
_UNENDED = (
    "SELECT m.session_id, {here}, (SELECT MAX(e.created_at) FROM session_events e "
    "WHERE e.session_id = m.session_id), c.value FROM session_meta m "
    f"LEFT JOIN store_meta c ON c.key = '{CLIENT_PREFIX}' || m.session_id "
    "WHERE m.session_id != ? AND m.event_count > 0 "
    f"AND instr(m.flags, ',{ENDED_BY_CLEAR},') = 0 AND COALESCE(m.last_hook, '') != 'import' "
    "AND m.last_event_at > COALESCE((SELECT MAX(r.created_at) FROM session_resume r "
    "WHERE r.session_id = m.session_id AND r.kind = 'end'), '') "
    "AND " + _AFTER_LAST_END.format(sid="m.session_id")
)
# The end snapshot claim_resume(kind="end", exclude_session=…) would take: (preferred work
# tree, created_at), ordered as it orders.
_RIVAL = (
    "SELECT {here}, r.created_at FROM session_resume r "
    "LEFT JOIN session_meta m ON m.session_id = r.session_id "
    "WHERE r.consumed = 0 AND r.kind = 'end' AND r.session_id != ?"
)


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
    def unended_sessions(
        self,
        *,
        exclude_session: str,
        prefer_worktree: str | None = None,
        max_age_seconds: float | None = None,
        now: float | None = None,
        limit: int = 4,
    ) -> list[tuple[str, str | None]]:
        """Sessions a hand-over should give the end snapshot of, but which have none up to
        date: ``(session id, its client's identity or None)``, the first first.

        A session ended without its end snapshot when its client ended without running
        SessionEnd (Claude Code 2.1.197 does so at the end of `claude -p` when a background
        hook was still running, see ctxmode.inflight) or was killed: it has events stored
        after its newest end snapshot, or has none. So has a session still running: the
        caller tells them apart by the client (``set_client``, ctxmode.liveness). Listed
        are those that come before the snapshot :meth:`claim_resume` would take with the
        same filters, in its order: their newest event against that snapshot's time.
        Sessions the user cleared (:data:`ENDED_BY_CLEAR`) and imported ones never are.
        """
        clock = time.time() if now is None else now
        since = "" if max_age_seconds is None else iso_utc(clock - max_age_seconds)
        here = "0"
        sql = _UNENDED
        params: list[object] = [as_text(exclude_session)]
        rival = _RIVAL
        rival_params: list[object] = [as_text(exclude_session)]
        if since:
            sql += " AND m.last_event_at >= ?"  # (last_event_at: at least the newest event's)
            params.append(since)
            rival += " AND r.created_at >= ?"
            rival_params.append(since)
        if prefer_worktree is not None:
            here = "(m.worktree IS ?)"  # the first parameter of both: it is in the SELECT
            params.insert(0, as_text(prefer_worktree))
            rival_params.insert(0, as_text(prefer_worktree))
        rows = self.conn.execute(
            sql.format(here=here) + " ORDER BY 2 DESC, 3 DESC LIMIT ?", [*params, int(limit)]
        ).fetchall()
        if not rows:
            return []
        best = self.conn.execute(
            rival.format(here=here) + " ORDER BY 1 DESC, r.created_at DESC, r.id DESC LIMIT 1",
            rival_params,
        ).fetchone()
        # Not those the claim would prefer to them: no more recent than its snapshot.
        floor = (int(best[0]), str(best[1])) if best is not None else (-1, "")
        return [
            (str(sid), None if client is None else str(client))
            for sid, first, last, client in rows
            if (int(first), str(last)) > floor and str(last) >= since
        ]

    @guarded
    def save_missing_end(self, session_id: str, snapshot: str, event_count: int) -> bool:
        """Store ``snapshot`` as the session's end snapshot if the session still has events
        stored after its newest one (:meth:`unended_sessions`), retiring its unclaimed end
        snapshots; in one transaction, so of processes racing to fill the same gap exactly
        one stores. Stamped with the session's newest event: when it ended, as far as the
        store knows (the hand-over says so; the claim orders by it). Returns whether this
        one stored it."""
        sid = as_text(session_id)
        with _Tx(self.conn) as conn:
            ended = conn.execute(
                f"SELECT MAX(created_at), {_AFTER_LAST_END.format(sid='?')} "
                "FROM session_events WHERE session_id = ?",
                (sid, sid, sid),
            ).fetchone()
            if ended[0] is None or ended[1] != 1:
                return False
            conn.execute(
                "UPDATE session_resume SET consumed = 1, consumed_at = ?, consumed_by = ? "
                "WHERE session_id = ? AND consumed = 0 AND kind = 'end'",
                (iso_utc(), "superseded", sid),
            )
            conn.execute(
                "INSERT INTO session_resume (session_id, compact_seq, kind, snapshot, "
                "event_count, created_at) VALUES (?, ?, 'end', ?, ?, ?)",
                (sid, _next_seq(conn, sid, "end"), as_text(snapshot), int(event_count), ended[0]),
            )
        return True

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
