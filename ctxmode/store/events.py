"""Recording events (``session_events``): insert with dedup and cap, the spool import,
reading a session's events back, and the open errors among them.

Each hook's events go in one ``BEGIN IMMEDIATE`` transaction: skip an event whose type
and data hash are among the session's last :data:`DEDUP_WINDOW`, insert the rest, add
them to the session's ``session_meta`` row, and evict beyond :data:`MAX_EVENTS` the
least important first (priority 5 before 1), oldest first among equals.

An outcome (:data:`PER_CALL`: a failure, a resolution) is a repeat only of the same
call's: two calls that fail alike are two failures, and a failure that comes back after
its resolution is open again (see :func:`dedup_key`).
"""

from __future__ import annotations

import time

from ctxmode.events import MAX_DATA_CHARS
from ctxmode.hashing import sha256_hex
from ctxmode.store.connection import Connection, _Tx, guarded
from ctxmode.store.sessions import NO_WHERE, UPSERT_META
from ctxmode.store.values import (
    SESSION_EVENT_COLUMNS,
    as_opt_text,
    as_priority,
    as_text,
    iso_utc,
    session_events_from_rows,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ctxmode.events import SessionEvent
    from ctxmode.migrations import _sqlite3

    # (session id, events, marker[, call_at]): a spooled hook call (ctxmode.spool).
    Batch = (
        tuple[str, Sequence[SessionEvent], str]
        | tuple[str, Sequence[SessionEvent], str, int | None]
    )
    from ctxmode.store.sessions import Where

# The session's last N events form the dedup window.
DEDUP_WINDOW = 5
MAX_EVENTS = 1000
# The outcomes of a call: what they say holds for that call, not for its look-alikes.
PER_CALL = frozenset({"tool_error", "output_error", "error_resolved"})


def dedup_key(kind: str, digest: str, tool_use_id: object) -> tuple[str, str, object]:
    """What makes two events the same for the dedup window: type and data, and for an
    outcome (:data:`PER_CALL`) also its call. A hook run twice for one call (two
    registrations) still stores its failure once; the same failure of a later run of the
    command is stored again: it moves the error to the newest place and counts it, and
    after an ``error_resolved`` it is open again (a repeat would have hidden it)."""
    return (kind, digest, tool_use_id if kind in PER_CALL else None)


_INSERT_EVENT = """
INSERT INTO session_events (session_id, type, category, priority, data, data_hash, source_hook,
    agent_id, agent_type, tool_use_id, bytes_avoided, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
# The same with the call's place in the session (a hook's events; see ORDER).
_INSERT_CALL_EVENT = """
INSERT INTO session_events (session_id, type, category, priority, data, data_hash, source_hook,
    agent_id, agent_type, tool_use_id, bytes_avoided, created_at, call_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

# The order of a session's events is the order of the calls (``call_at``: when the client
# started the hook, see ctxmode.inflight), then of their arrival. Background captures can
# arrive out of order; reading, the dedup window and eviction all go by this order.
# Rows without a call_at (stored before schema 3) come first: they are older.
ORDER = "call_at, id"

# Least important first, then oldest in the calls' order (not the arrival's).
_EVICT = f"""
DELETE FROM session_events WHERE id IN (
    SELECT id FROM session_events WHERE session_id = ?
    ORDER BY priority DESC, {ORDER} LIMIT ?)
"""

# The dedup window of a call: the session's last events of calls started up to it.
_WINDOW = """
SELECT type, data_hash, tool_use_id FROM session_events WHERE session_id = ?
AND (call_at IS NULL OR call_at <= ?) ORDER BY call_at DESC, id DESC LIMIT ?
"""


# The dedup window of a call placed last: the session's last events, with their places
# (the first row's is the session's latest: NULLs sort last in descending order).
_WINDOW_LAST = """
SELECT type, data_hash, call_at, tool_use_id FROM session_events WHERE session_id = ?
ORDER BY call_at DESC, id DESC LIMIT ?
"""


def evict_over_cap(conn: _sqlite3.Connection, session_id: str, max_events: int) -> None:
    """Evict the session's least important events beyond ``max_events`` (0: no cap), in one
    statement, and count them in its ``session_meta`` row. Inside the caller's transaction."""
    if max_events <= 0:
        return
    count = conn.execute(
        "SELECT event_count FROM session_meta WHERE session_id = ?", (session_id,)
    ).fetchone()[0]
    if count > max_events:
        excess = count - max_events
        conn.execute(_EVICT, (session_id, excess))
        conn.execute(
            "UPDATE session_meta SET event_count = event_count - ?, "
            "evicted_count = evicted_count + ? WHERE session_id = ?",
            (excess, excess, session_id),
        )


class Events(Connection):
    """The store's event methods (a part of :class:`ctxmode.store.Store`)."""

    @guarded
    def add_events(
        self,
        session_id: str,
        events: Sequence[SessionEvent],
        *,
        source_hook: str,
        project_dir: str,
        now: str | None = None,
        max_events: int = MAX_EVENTS,
        where: Where = NO_WHERE,
        call_at: int | None = None,
    ) -> int:
        """Insert ``events`` in one transaction (dedup, truncate, cap); return how many were new.

        ``call_at``: when the client started the call (ns; ctxmode.inflight), the events'
        place in the session whatever the order they arrive in; None: the session's next
        place (strictly after every event stored, whatever the clock says).

        Even with no events the session's meta row is created or touched: a session is
        known from its first hook call on. ``max_events <= 0`` means no cap. ``where``:
        (worktree, branch, cwd, client), recorded on the meta row in the same statement.
        """
        stamp = now or iso_utc()
        with _Tx(self.conn):
            return self._insert(
                session_id, events, source_hook, project_dir, stamp, max_events, where, call_at
            )

    def _insert(
        self,
        session_id: str,
        events: Sequence[SessionEvent],
        source_hook: str,
        project_dir: str,
        stamp: str,
        max_events: int,
        where: Where = NO_WHERE,
        call_at: int | None = None,
    ) -> int:
        """The work of :meth:`add_events`, inside the caller's transaction."""
        sid = as_text(session_id)
        hook = as_text(source_hook)
        conn = self.conn
        rows: list[tuple[object, ...]] = []
        if events:
            if call_at is None:
                # No exact place (a call whose process group is not its own, a script, a
                # test): the next of the session's own sequence, strictly after every
                # call stored so far (inside this transaction: no other writer comes
                # between), so the order is the arrival's however close the calls come.
                recent = conn.execute(_WINDOW_LAST, (sid, DEDUP_WINDOW)).fetchall()
                call_at = time.time_ns()
                last = recent[0][2] if recent else None
                if last is not None and call_at <= last:
                    call_at = last + 1
            else:
                recent = conn.execute(_WINDOW, (sid, call_at, DEDUP_WINDOW)).fetchall()
            window = [dedup_key(row[0], row[1], row[-1]) for row in reversed(recent)]
            for event in events:
                data = as_text(event.data)[:MAX_DATA_CHARS]
                digest = sha256_hex(data)
                kind = as_text(event.type)
                tool_use_id = as_opt_text(event.tool_use_id)
                key = dedup_key(kind, digest, tool_use_id)
                # The window includes the events accepted earlier in this call.
                if key in window[-DEDUP_WINDOW:]:
                    continue
                window.append(key)
                rows.append(
                    (
                        sid,
                        kind,
                        as_text(event.category),
                        as_priority(event.priority),
                        data,
                        digest,
                        as_opt_text(event.source_hook) or hook,
                        as_opt_text(event.agent_id),
                        as_opt_text(event.agent_type),
                        tool_use_id,
                        int(event.bytes_avoided or 0),
                        # A spooled event keeps the time its hook accepted it.
                        as_opt_text(event.created_at) or stamp,
                        call_at,
                    )
                )
            if rows:
                conn.executemany(_INSERT_CALL_EVENT, rows)
        meta = (
            sid,
            as_text(project_dir),
            stamp,
            stamp,
            len(rows),
            hook or None,
            *map(as_opt_text, where),
        )
        conn.execute(UPSERT_META, meta)
        if rows:
            evict_over_cap(conn, sid, max_events)
        return len(rows)

    @guarded
    def touch_session(
        self,
        session_id: str,
        project_dir: str,
        *,
        source_hook: str = "",
        now: str | None = None,
        where: Where = NO_WHERE,
    ) -> None:
        """Make the session known (meta row) without recording an event."""
        self.add_events(
            session_id, [], source_hook=source_hook, project_dir=project_dir, now=now, where=where
        )

    @guarded
    def add_batches(
        self,
        batches: Sequence[Batch],
        *,
        source_hook: str,
        project_dir: str,
        max_events: int = MAX_EVENTS,
    ) -> int:
        """Insert ``(session_id, events, marker, call_at)`` batches in ONE transaction;
        return how many were imported.

        For the spool: a batch whose ``marker`` (a ``store_meta`` key, e.g. a hash of the
        spool line) is already recorded was imported before and is skipped, and the
        markers of the imported ones are recorded in the same transaction. So a spool
        file left behind by a process killed after its commit is never imported twice.
        Markers older than a week are dropped on the way.
        """
        stamp = iso_utc()
        imported = 0
        with _Tx(self.conn) as conn:
            for batch in batches:
                session_id, events, marker = batch[0], batch[1], batch[2]
                # The spool keeps each call's order (ctxmode.inflight); older lines lack it.
                call_at = batch[3] if len(batch) > 3 else None
                key = as_text(marker)
                seen = "SELECT 1 FROM store_meta WHERE key = ?"
                if key and conn.execute(seen, (key,)).fetchone():
                    continue
                self._insert(
                    session_id,
                    events,
                    source_hook,
                    project_dir,
                    stamp,
                    max_events,
                    call_at=call_at,
                )
                if key:
                    conn.execute("INSERT INTO store_meta (key, value) VALUES (?, ?)", (key, stamp))
                imported += 1
            conn.execute(
                "DELETE FROM store_meta WHERE key >= 'spool:' AND key < 'spool;' AND value < ?",
                (iso_utc(time.time() - 7 * 86400.0),),
            )
        return imported

    @guarded
    def session_events(self, session_id: str) -> list[SessionEvent]:
        """The session's events, oldest first, every field filled in."""
        session_id = as_text(session_id)
        rows = self.conn.execute(
            f"SELECT {SESSION_EVENT_COLUMNS} FROM session_events WHERE session_id = ? "
            f"ORDER BY {ORDER}",
            (session_id,),
        ).fetchall()
        return session_events_from_rows(rows, session_id)

    @guarded
    def open_error_keys(self, session_id: str) -> set[str]:
        """Keys of tool_error/output_error events not yet followed by an error_resolved."""
        from ctxmode import fastjson

        rows = self.conn.execute(
            "SELECT type, data FROM session_events WHERE session_id = ? "
            f"AND type IN ('tool_error', 'output_error', 'error_resolved') ORDER BY {ORDER}",
            (as_text(session_id),),
        ).fetchall()
        keys: set[str] = set()
        for kind, data in rows:
            try:
                value = fastjson.loads(data)
            except fastjson.JSONDecodeError:
                continue  # plain text or truncated JSON: no key to track
            key = value.get("key") if isinstance(value, dict) else None
            if not isinstance(key, str) or not key:
                continue
            if kind == "error_resolved":
                keys.discard(key)
            else:
                keys.add(key)
        return keys
