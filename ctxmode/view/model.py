"""What ``ctxmode view`` shows, read from a store into one JSON-able dict (the page's model).

Read-only and bounded whatever the store holds: the timeline of a session is counted by
SQLite into at most :data:`BUCKETS` time buckets per category (one ``GROUP BY`` per
session), and only the newest events, at most :data:`DETAIL_LIMIT` over the whole page,
travel with their data, so a 100,000-event store makes a page of the same size as a
3,000-event one. The page says how many events each session holds and how many it shows.

Everything here is text as the store holds it: the data is already masked (the hooks
mask every string before anything stores it), so the page shows secrets exactly as
stored, ``[REDACTED:…]``. Escaping is the page's job (``ctxmode.view.page``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxmode.events import CATEGORIES
from ctxmode.store.values import parse_iso
from ctxmode.wording import snapshot_state

if TYPE_CHECKING:
    from collections.abc import Callable

    from ctxmode.migrations import _sqlite3

# Time buckets of a session's timeline (bars per category lane).
BUCKETS = 96
# Events embedded with their data, over all sessions of the page.
DETAIL_LIMIT = 3000
# A session shown with fewer events than this only when the page's budget ran out.
SESSION_DETAIL_FLOOR = 100
# Sessions on one page, most recently active first (the rest are counted, not shown).
MAX_SESSIONS = 200
# Characters of a session's first prompt used as its title.
TITLE_CHARS = 120
# The columns of an embedded event, in the order of its list (compact: a list per event).
EVENT_COLUMNS = ("id", "created_at", "category", "type", "priority", "data", "source_hook", "agent")


def _rows(conn: _sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    return list(conn.execute(sql, params).fetchall())


def _has_table(conn: _sqlite3.Connection, name: str) -> bool:
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return found is not None


def _columns(conn: _sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}


def _title(conn: _sqlite3.Connection, session_id: str) -> str:
    """The session's first prompt, as ``ctxmode sessions`` titles it."""
    row = conn.execute(
        "SELECT data FROM session_events WHERE session_id = ? AND type = 'user_prompt' "
        "ORDER BY id LIMIT 1",
        (session_id,),
    ).fetchone()
    if row is None:
        return ""
    import json

    text = str(row[0])
    try:
        value = json.loads(text)
        if isinstance(value, dict) and isinstance(value.get("text"), str):
            text = value["text"]
    except ValueError:
        pass
    text = " ".join(text.split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


def _timeline(conn: _sqlite3.Connection, session_id: str) -> dict[str, Any]:
    """Events per category per time bucket, counted by SQLite (bounded by BUCKETS)."""
    first, last, total = conn.execute(
        "SELECT min(created_at), max(created_at), count(*) FROM session_events "
        "WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    if not total:
        return {"start_ms": 0, "width_ms": 0, "buckets": 0, "counts": {}}
    start = parse_iso(str(first))
    span = max(parse_iso(str(last)) - start, 0.0)
    width = max(span / BUCKETS, 0.001)  # seconds; a one-instant session is one bucket
    counts: dict[str, list[int]] = {}
    for category, bucket, count in conn.execute(
        "SELECT category, CAST((julianday(created_at) - julianday(?)) * 86400.0 / ? AS INTEGER)"
        " AS b, count(*) FROM session_events WHERE session_id = ? GROUP BY category, b",
        (str(first), width, session_id),
    ):
        lane = counts.setdefault(str(category), [0] * BUCKETS)
        index = min(max(int(bucket or 0), 0), BUCKETS - 1)  # the last instant closes the span
        lane[index] += int(count)
    return {
        "start_ms": round(start * 1000),
        "width_ms": round(width * 1000, 3),
        "buckets": BUCKETS,
        "counts": counts,
    }


def _events(conn: _sqlite3.Connection, session_id: str, limit: int) -> list[list[Any]]:
    """The session's newest ``limit`` events, oldest first, as lists of EVENT_COLUMNS: in
    the order of the calls, as every command reads them (``ctxmode.store.events.ORDER``),
    not of their arrival (background captures can finish in any order)."""
    if limit <= 0:
        return []
    # A store from before schema 3 has no call_at: its events arrived in the calls' order.
    newest = "call_at DESC, id DESC" if "call_at" in _columns(conn, "session_events") else "id DESC"
    rows = _rows(
        conn,
        "SELECT id, created_at, category, type, priority, data, source_hook, agent_type "
        f"FROM session_events WHERE session_id = ? ORDER BY {newest} LIMIT ?",
        (session_id, limit),
    )
    rows.reverse()
    return [[*row[:7], row[7] or ""] for row in rows]


def coverage(summary: str | None, snapshot: str | None) -> Any:
    """What the compaction summary kept of the snapshot's key items, or None.

    ``ctxmode.snapshot.coverage.coverage`` answers (``total``, ``kept``, ``items``,
    ``restored``); without a summary every item counts as restored by the snapshot alone.
    Looked up by name so that the page still shows both texts side by side when that
    module is missing or fails: an optional view must not cost the page.
    """
    if not snapshot:
        return None
    try:
        import importlib

        module = importlib.import_module("ctxmode.snapshot.coverage")
        compare = getattr(module, "coverage", None)
        return compare(snapshot, summary) if callable(compare) else None
    except Exception:
        return None


def _compactions(
    conn: _sqlite3.Connection, session_id: str, resumes: list[dict[str, Any]], has_table: bool
) -> list[dict[str, Any]]:
    """The session's compactions: the client's record (``compaction``) joined with the
    snapshot ctxmode stored for it (``session_resume``, kind ``compact``, same number)."""
    by_seq: dict[int, dict[str, Any]] = {}
    if has_table:
        # Schema 4: an imported compaction's replayed snapshot (what the hooks would have
        # built; never injected), shown where the hooks' snapshot is missing.
        replay = (
            "replayed, replayed_events"
            if "replayed" in _columns(conn, "compaction")
            else "NULL, NULL"
        )
        for seq, trigger, summary, summary_at, origin, created_at, replayed, count in conn.execute(
            "SELECT compact_seq, trigger, summary, summary_at, origin, created_at, "
            f"{replay} FROM compaction WHERE session_id = ? ORDER BY compact_seq",
            (session_id,),
        ):
            by_seq[int(seq)] = {
                "seq": int(seq),
                "at": created_at,
                "trigger": trigger or "",
                "summary": summary,
                "summary_at": summary_at,
                "origin": origin,
                "snapshot": None,
            }
            if replayed:
                text = str(replayed)
                by_seq[int(seq)]["snapshot"] = {
                    "kind": "compact",
                    "seq": int(seq),
                    "created_at": created_at,
                    "state": "replayed",
                    "consumed_at": None,
                    "consumed_by": None,
                    "events": count,
                    "bytes": len(text.encode("utf-8")),
                    "text": text,
                }
    for resume in resumes:
        if resume["kind"] != "compact":
            continue
        seq = int(resume["compact_seq"])
        entry = by_seq.setdefault(
            seq,
            {
                "seq": seq,
                "at": resume["created_at"],
                "trigger": "",
                "summary": None,
                "summary_at": None,
                "origin": None,
                "snapshot": None,
            },
        )
        entry["snapshot"] = _snapshot(resume)
    result = [by_seq[seq] for seq in sorted(by_seq)]
    for entry in result:
        snap = entry["snapshot"]
        entry["coverage"] = coverage(entry["summary"], snap["text"] if snap else None)
    return result


def _snapshot(resume: dict[str, Any]) -> dict[str, Any]:
    text = str(resume["snapshot"])
    return {
        "kind": resume["kind"],
        "seq": resume["compact_seq"],
        "created_at": resume["created_at"],
        "state": snapshot_state(resume),
        "consumed_at": resume.get("consumed_at"),
        "consumed_by": resume.get("consumed_by"),
        "events": resume.get("event_count"),
        "bytes": len(text.encode("utf-8")),
        "text": text,
    }


def build_model(
    conn: _sqlite3.Connection,
    *,
    project: str,
    store_path: str,
    generated_at: str,
    session_id: str | None = None,
    detail_limit: int = DETAIL_LIMIT,
    max_sessions: int = MAX_SESSIONS,
    keep: Callable[[dict[str, Any]], bool] | None = None,
) -> dict[str, Any]:
    """The page's model: sessions (most recently active first), each with its timeline,
    compactions, snapshots and newest events. Reads only; bounded by the limits above.

    ``session_id``: that session alone (all of the page's event budget goes to it).
    ``keep``: only the sessions whose ``session_meta`` row it accepts (a worktree, a client).
    """
    meta_columns = _columns(conn, "session_meta")
    optional = [name for name in ("worktree", "branch", "cwd", "client") if name in meta_columns]
    select = ", ".join(
        [
            "session_id",
            "project_dir",
            "started_at",
            "last_event_at",
            "event_count",
            "compact_count",
            "evicted_count",
            *optional,
        ]
    )
    sql = f"SELECT {select} FROM session_meta"
    params: tuple[Any, ...] = ()
    if session_id is not None:
        sql += " WHERE session_id = ?"
        params = (session_id,)
    sql += " ORDER BY last_event_at DESC, started_at DESC, session_id"
    names = select.split(", ")
    metas = [dict(zip(names, row, strict=True)) for row in _rows(conn, sql, params)]
    if keep is not None:
        metas = [meta for meta in metas if keep(meta)]
    hidden = max(len(metas) - max_sessions, 0)
    metas = metas[:max_sessions]

    has_compaction = _has_table(conn, "compaction")
    all_resumes: dict[str, list[dict[str, Any]]] = {}
    cursor = conn.execute("SELECT * FROM session_resume ORDER BY id")
    resume_names = [d[0] for d in cursor.description]
    for row in cursor:
        resume = dict(zip(resume_names, row, strict=True))
        all_resumes.setdefault(str(resume["session_id"]), []).append(resume)

    share = max(detail_limit // max(len(metas), 1), SESSION_DETAIL_FLOOR)
    remaining = detail_limit
    sessions = []
    for meta in metas:
        sid = str(meta["session_id"])
        total = int(
            conn.execute(
                "SELECT count(*) FROM session_events WHERE session_id = ?", (sid,)
            ).fetchone()[0]
        )
        take = min(total, share, remaining)
        remaining -= take
        resumes = all_resumes.get(sid, [])
        sessions.append(
            {
                "session_id": sid,
                "title": _title(conn, sid),
                "project_dir": meta.get("project_dir"),
                "started_at": meta["started_at"],
                "last_event_at": meta["last_event_at"],
                "events_total": total,
                "evicted": int(meta.get("evicted_count") or 0),
                "compact_count": int(meta.get("compact_count") or 0),
                "worktree": meta.get("worktree"),
                "branch": meta.get("branch"),
                "cwd": meta.get("cwd"),
                "client": meta.get("client"),
                "timeline": _timeline(conn, sid),
                "compactions": _compactions(conn, sid, resumes, has_compaction),
                "end_snapshots": [_snapshot(r) for r in resumes if r["kind"] == "end"],
                "events": _events(conn, sid, take),
            }
        )
    return {
        "version": 1,
        "project": project,
        "store": store_path,
        "generated_at": generated_at,
        "categories": list(CATEGORIES),
        "event_columns": list(EVENT_COLUMNS),
        "detail_limit": detail_limit,
        "sessions_hidden": hidden,
        "sessions": sessions,
    }
