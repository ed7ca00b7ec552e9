"""Compaction rows (table ``compaction``, schema 3): one per compaction of a session, with
the client's own summary of the conversation once PostCompact (or ``ctxmode import``)
brings it.

Numbering: a row's ``compact_seq`` is the ``session_resume.compact_seq`` of the
compaction's snapshot, so the summary and the snapshot of one compaction meet on
``(session_id, compact_seq)``. PreCompact records the row (origin ``hook``) when it saves
the snapshot; PostCompact fills the summary into the session's newest row that has none,
or adds a row when PreCompact left none (the summary of a compaction without snapshot).

A summary, once stored, is never replaced: the rule ``ctxmode import`` writes with
(``ON CONFLICT (session_id, compact_seq) DO UPDATE SET summary =
COALESCE(compaction.summary, excluded.summary)``), so a hook and an import of the same
compaction agree whichever comes first. The text arrives masked (the handler masks it
whole, like every payload string); the store only keeps it.

Loaded on first use (``Store.record_compaction`` and friends): only the PreCompact,
SessionStart and PostCompact hooks and the CLI need it, never a capture hook.
"""

from __future__ import annotations

from ctxmode.store.connection import _Tx
from ctxmode.store.values import as_text, dicts, iso_utc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctxmode.migrations import _sqlite3

ORIGINS = ("hook", "import")


def record_compaction(
    conn: _sqlite3.Connection,
    session_id: str,
    compact_seq: int,
    trigger: str,
    origin: str = "hook",
    now: str | None = None,
) -> None:
    """``Store.record_compaction``: the row of compaction ``compact_seq`` (kept if it exists;
    an empty trigger is filled in)."""
    if origin not in ORIGINS:
        raise ValueError(f"origin must be one of {ORIGINS}, not {origin!r}")
    with _Tx(conn):
        conn.execute(
            "INSERT INTO compaction (session_id, compact_seq, trigger, origin, created_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id, compact_seq) DO UPDATE SET "
            "trigger = CASE WHEN compaction.trigger = '' THEN excluded.trigger "
            "ELSE compaction.trigger END",
            (as_text(session_id), int(compact_seq), as_text(trigger), origin, now or iso_utc()),
        )


def add_summary(
    conn: _sqlite3.Connection,
    session_id: str,
    summary: str,
    trigger: str = "",
    now: str | None = None,
) -> int:
    """``Store.add_compaction_summary``: put ``summary`` on the session's newest compaction
    row when that row has none yet; otherwise (no row, or the newest already has its
    summary: PreCompact did not run this time) add a row numbered after every compaction
    and snapshot of the session. One transaction. Returns the row's ``compact_seq``."""
    sid = as_text(session_id)
    stamp = now or iso_utc()
    with _Tx(conn):
        row = conn.execute(
            "SELECT id, compact_seq, summary FROM compaction WHERE session_id = ? "
            "ORDER BY compact_seq DESC LIMIT 1",
            (sid,),
        ).fetchone()
        if row is not None and row[2] is None:
            conn.execute(
                "UPDATE compaction SET summary = ?, summary_at = ?, trigger = CASE "
                "WHEN trigger = '' THEN ? ELSE trigger END WHERE id = ?",
                (as_text(summary), stamp, as_text(trigger), row[0]),
            )
            return int(row[1])
        seq = int(
            conn.execute(
                "SELECT MAX(COALESCE((SELECT MAX(compact_seq) FROM compaction "
                "WHERE session_id = ?1), 0), COALESCE((SELECT MAX(compact_seq) FROM "
                "session_resume WHERE session_id = ?1 AND kind = 'compact'), 0)) + 1",
                (sid,),
            ).fetchone()[0]
        )
        conn.execute(
            "INSERT INTO compaction (session_id, compact_seq, trigger, summary, summary_at, "
            "origin, created_at) VALUES (?, ?, ?, ?, ?, 'hook', ?) "
            "ON CONFLICT (session_id, compact_seq) DO UPDATE SET "
            "summary = COALESCE(compaction.summary, excluded.summary), "
            "summary_at = COALESCE(compaction.summary_at, excluded.summary_at)",
            (sid, seq, as_text(trigger), as_text(summary), stamp, stamp),
        )
        return seq


def compactions(conn: _sqlite3.Connection, session_id: str | None) -> list[dict[str, Any]]:
    """``Store.compactions``: compaction rows (all columns), by session and number."""
    if session_id is None:
        cursor = conn.execute("SELECT * FROM compaction ORDER BY session_id, compact_seq")
    else:
        cursor = conn.execute(
            "SELECT * FROM compaction WHERE session_id = ? ORDER BY compact_seq",
            (as_text(session_id),),
        )
    return dicts(cursor)
