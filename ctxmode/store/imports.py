"""What ``ctxmode import`` writes: a transcript's events, sessions and compactions, and how
far each transcript was read (``import_progress``, schema 3).

One transcript chunk is one transaction (:func:`import_chunk`): its events, its sessions'
``session_meta`` rows, its ``compaction`` rows and its progress row commit together, so a
killed import neither loses nor doubles anything: the next run starts from the progress
saved with the last commit.

Deduplication against what the hooks captured: a tool call whose ``tool_use_id`` the
session already has is skipped whole (the set is loaded once per session and chunk); an
event without one (a prompt) is skipped when the session has an event of the same type and
data hash. Imported events keep the transcript's session id and time, are marked
``source_hook = 'import'``, and are capped and evicted per session as the hooks' are.

Compactions: ``compact_seq`` 1, 2, … per session in file order, origin ``import``; a
conflict with the hook's row of the same compaction keeps the summary already there
(see ``store/compactions.py``). Loaded on first use by the CLI only, never by a hook.
"""

from __future__ import annotations

from ctxmode.events import MAX_DATA_CHARS
from ctxmode.hashing import sha256_hex
from ctxmode.store.connection import _Tx, guarded
from ctxmode.store.events import _INSERT_CALL_EVENT, ORDER, evict_over_cap
from ctxmode.store.values import (
    EVENT_COLUMNS,
    as_opt_text,
    as_priority,
    as_text,
    event_from_row,
    iso_utc,
    parse_iso,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ctxmode.events import SessionEvent
    from ctxmode.migrations import _sqlite3
    from ctxmode.store import Store

SOURCE = "import"

if TYPE_CHECKING:
    # (session id, [(end, compact_seq)], events) → the snapshot of each events[:end].
    Replay = Callable[[str, list[tuple[int, int]], list[SessionEvent]], list[str]]

# A session's row as an import makes or completes it: the earliest start and latest event
# win, the hooks' project, cwd, branch, client and worktree are kept when they have them.
_UPSERT_META = """
INSERT INTO session_meta (session_id, project_dir, started_at, last_event_at, event_count,
    last_hook, cwd, branch, client, worktree)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (session_id) DO UPDATE SET
    project_dir = COALESCE(NULLIF(session_meta.project_dir, ''), excluded.project_dir),
    started_at = MIN(session_meta.started_at, excluded.started_at),
    last_event_at = MAX(session_meta.last_event_at, excluded.last_event_at),
    event_count = session_meta.event_count + excluded.event_count,
    last_hook = COALESCE(session_meta.last_hook, excluded.last_hook),
    cwd = COALESCE(session_meta.cwd, excluded.cwd),
    branch = COALESCE(session_meta.branch, excluded.branch),
    client = COALESCE(session_meta.client, excluded.client),
    worktree = COALESCE(session_meta.worktree, excluded.worktree)
"""

_UPSERT_COMPACTION = """
INSERT INTO compaction (session_id, compact_seq, trigger, summary, summary_at, origin, created_at)
VALUES (?, ?, ?, ?, ?, 'import', ?)
ON CONFLICT (session_id, compact_seq) DO UPDATE SET
    summary = COALESCE(compaction.summary, excluded.summary),
    summary_at = CASE WHEN compaction.summary IS NULL THEN excluded.summary_at
        ELSE compaction.summary_at END,
    trigger = CASE WHEN compaction.trigger = '' THEN excluded.trigger ELSE compaction.trigger END
"""

_UPSERT_PROGRESS = """
INSERT INTO import_progress (path, session_id, offset, head_hash, mtime_ns, records, events,
    skipped, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (path) DO UPDATE SET
    session_id = excluded.session_id, offset = excluded.offset, head_hash = excluded.head_hash,
    mtime_ns = excluded.mtime_ns, records = excluded.records, events = excluded.events,
    skipped = excluded.skipped, updated_at = excluded.updated_at
"""


class SessionPart:
    """One session's share of a chunk: its events (in order) and what its meta row learns."""

    __slots__ = (
        "branch",
        "client",
        "cwd",
        "events",
        "first_at",
        "last_at",
        "project_dir",
        "session_id",
        "worktree",
    )

    def __init__(self, session_id: str, project_dir: str, client: str) -> None:
        self.session_id = session_id
        self.project_dir = project_dir
        self.client = client  # the host whose transcript this is (``session_meta.client``)
        self.events: list[SessionEvent] = []
        self.cwd = ""
        self.branch = ""
        self.worktree = ""  # the git work tree the cwd is in, when it still exists
        self.first_at = ""
        self.last_at = ""


class Progress:
    """A row of ``import_progress``: how far ``path`` was read, and what it held so far."""

    __slots__ = (
        "events",
        "head_hash",
        "mtime_ns",
        "offset",
        "path",
        "records",
        "session_id",
        "skipped",
    )

    def __init__(
        self,
        path: str,
        session_id: str = "",
        offset: int = 0,
        head_hash: str = "",
        mtime_ns: int = 0,
        records: int = 0,
        events: int = 0,
        skipped: int = 0,
    ) -> None:
        self.path = path
        self.session_id = session_id
        self.offset = offset
        self.head_hash = head_hash
        self.mtime_ns = mtime_ns
        self.records = records
        self.events = events
        self.skipped = skipped


class DryRun(Exception):
    """Raised inside the transaction of a dry run: it rolls back, the counts stay."""

    def __init__(self, added: int) -> None:
        super().__init__(added)
        self.added = added


@guarded
def progress(store: Store, path: str) -> Progress | None:
    """The saved progress of ``path``, or None when it was never imported."""
    row = store.conn.execute(
        "SELECT path, session_id, offset, head_hash, mtime_ns, records, events, skipped "
        "FROM import_progress WHERE path = ?",
        (as_text(path),),
    ).fetchone()
    if row is None:
        return None
    return Progress(
        row[0], row[1] or "", int(row[2]), row[3] or "", int(row[4] or 0), *map(int, row[5:])
    )


@guarded
def offsets(store: Store) -> dict[str, int]:
    """``{path: offset}`` of every transcript imported into this store (for ``doctor``)."""
    rows = store.conn.execute("SELECT path, offset FROM import_progress").fetchall()
    return {str(path): int(offset) for path, offset in rows}


@guarded
def known_calls(store: Store, session_id: str) -> set[str]:
    """The ``tool_use_id``s the session has events of (the hooks', or an earlier import's)."""
    rows = store.conn.execute(
        "SELECT DISTINCT tool_use_id FROM session_events "
        "WHERE session_id = ? AND tool_use_id IS NOT NULL",
        (as_text(session_id),),
    ).fetchall()
    return {str(row[0]) for row in rows}


@guarded
def import_chunk(
    store: Store,
    parts: Sequence[SessionPart],
    compactions: Sequence[tuple[str, int, str, str | None, str]],
    done: Progress | None,
    *,
    max_events: int,
    dry_run: bool = False,
    seen: dict[str, set[tuple[str, str]]] | None = None,
    replay: Replay | None = None,
) -> int:
    """Write one transcript chunk in one transaction; return how many events were new.

    ``compactions``: ``(session_id, compact_seq, trigger, masked summary or None, at)``.
    ``done``: the file's progress after this chunk, its ``events`` not counting this
    chunk's (added here); None keeps none.
    ``dry_run``: do it all, count, and roll back.
    ``seen``: per session, the ``(type, data hash)`` of the events without a
    ``tool_use_id`` that earlier chunks of the same file added, kept up to date here: a
    dry run's chunks roll back, and the cap may have evicted them since, and the next
    chunk would add them again where one read of the whole file would not.
    ``replay``: ``(session id, [(end, compact_seq)], the session's events)`` → for each
    compaction, the snapshot the hooks would have built from ``events[:end]`` (those
    before it), kept in ``compaction.replayed`` for
    each compaction of the chunk's sessions that has neither one yet nor a snapshot of the
    hooks' (schema 4; never claimed or injected). Given with a file's last chunk, so that
    a file read in windows replays from the same events as one read whole.
    """
    conn = store.conn
    added = 0
    try:
        with _Tx(conn):
            for part in parts:
                added += _insert_part(conn, part, max_events, seen)
            for sid, seq, trigger, summary, at in compactions:
                stamp = at or iso_utc()
                conn.execute(
                    _UPSERT_COMPACTION,
                    (as_text(sid), int(seq), as_text(trigger), summary,
                     stamp if summary is not None else None, stamp),
                )  # fmt: skip
                # The session has had at least this many compactions.
                conn.execute(
                    "UPDATE session_meta SET compact_count = MAX(compact_count, ?) "
                    "WHERE session_id = ?",
                    (int(seq), as_text(sid)),
                )
            if replay is not None:
                named = {p.session_id for p in parts} | {c[0] for c in compactions}
                for sid in sorted(as_text(n) for n in named):
                    _replay_session(conn, sid, replay)
            if done is not None:
                conn.execute(
                    _UPSERT_PROGRESS,
                    (done.path, done.session_id or None, done.offset, done.head_hash,
                     done.mtime_ns, done.records, done.events + added, done.skipped, iso_utc()),
                )  # fmt: skip
            if dry_run:
                raise DryRun(added)
    except DryRun as stop:
        return stop.added
    return added


def _insert_part(
    db: _sqlite3.Connection,
    part: SessionPart,
    max_events: int,
    seen: dict[str, set[tuple[str, str]]] | None = None,
) -> int:
    """The work of one session inside :func:`import_chunk`'s transaction."""
    sid = as_text(part.session_id)
    known_calls = {
        row[0]
        for row in db.execute(
            "SELECT DISTINCT tool_use_id FROM session_events "
            "WHERE session_id = ? AND tool_use_id IS NOT NULL",
            (sid,),
        )
    }
    known_other = {
        (row[0], row[1])
        for row in db.execute(
            "SELECT type, data_hash FROM session_events WHERE session_id = ? "
            "AND tool_use_id IS NULL",
            (sid,),
        )
    }
    if seen is not None:
        known_other |= seen.setdefault(sid, set())
        seen[sid] = known_other  # what this chunk adds is seen by the next
    rows: list[tuple[object, ...]] = []
    stamp = iso_utc()
    for event in part.events:
        tool_use_id = as_opt_text(event.tool_use_id)
        if tool_use_id is not None and tool_use_id in known_calls:
            continue
        data = as_text(event.data)[:MAX_DATA_CHARS]
        digest = sha256_hex(data)
        kind = as_text(event.type)
        if tool_use_id is None:
            if (kind, digest) in known_other:
                continue
            known_other.add((kind, digest))
        created = as_opt_text(event.created_at) or stamp
        # The call's place among the hooks' events (events.ORDER): its time in the
        # transcript, in the hooks' unit (ns); NULL would sort it before them all.
        call_at = int(parse_iso(created) * 1_000_000_000) or None
        rows.append(
            (sid, kind, as_text(event.category), as_priority(event.priority), data, digest,
             SOURCE, as_opt_text(event.agent_id), as_opt_text(event.agent_type), tool_use_id,
             int(event.bytes_avoided or 0), created, call_at)
        )  # fmt: skip
    if rows:
        db.executemany(_INSERT_CALL_EVENT, rows)
    first = part.first_at or stamp
    last = part.last_at or first
    db.execute(
        _UPSERT_META,
        (sid, as_text(part.project_dir), first, last, len(rows), SOURCE,
         part.cwd or None, part.branch or None, part.client or None, part.worktree or None),
    )  # fmt: skip
    if rows:
        evict_over_cap(db, sid, max_events)
    return len(rows)


# A session's events in the calls' order, each with its place (imported events carry
# their transcript time as call_at; rows without one are older and come first).
_SESSION_EVENTS = f"""
SELECT {EVENT_COLUMNS}, call_at FROM session_events WHERE session_id = ? ORDER BY {ORDER}
"""


def _replay_session(conn: _sqlite3.Connection, sid: str, replay: Replay) -> None:
    """Keep the snapshot the hooks would have built at each compaction of ``sid`` that
    has none yet, unless the hooks built one (``session_resume``): the session's events
    are read once, each compaction's are those before its time."""
    todo = conn.execute(
        "SELECT compact_seq, created_at FROM compaction c WHERE session_id = ?1 "
        "AND replayed IS NULL AND NOT EXISTS (SELECT 1 FROM session_resume r "
        "WHERE r.session_id = ?1 AND r.kind = 'compact' AND r.compact_seq = c.compact_seq) "
        "ORDER BY created_at, compact_seq",
        (sid,),
    ).fetchall()
    # A compaction of no known time: which events came before it is unknown.
    todo = [(int(seq), int(parse_iso(as_text(at)) * 1_000_000_000)) for seq, at in todo]
    todo = [(seq, limit) for seq, limit in todo if limit]
    if not todo:
        return
    rows = conn.execute(_SESSION_EVENTS, (sid,)).fetchall()
    events = [event_from_row(r[:-1]) for r in rows]
    stamps = [r[-1] for r in rows]
    points: list[tuple[int, int]] = []
    end = 0
    for seq, limit in todo:
        while end < len(stamps) and (stamps[end] is None or stamps[end] <= limit):
            end += 1
        if end:
            points.append((end, seq))
    if not points:
        return
    snapshots = replay(sid, points, events)
    conn.executemany(
        "UPDATE compaction SET replayed = ?, replayed_events = ? "
        "WHERE session_id = ? AND compact_seq = ?",
        [(text, n, sid, seq) for (n, seq), text in zip(points, snapshots, strict=True)],
    )
