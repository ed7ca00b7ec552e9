"""OpenCode's session history: where it is, and its records as the plugin would have handed them.

OpenCode 1.18.33 keeps every project's sessions in one SQLite database,
``$XDG_DATA_HOME/opencode/opencode.db`` (default ``~/.local/share/opencode/``): ``session``
(``id``, ``directory``, ``parent_id``, ``time_updated``), ``message`` (``data``: ``role``,
``summary``, ``mode``) and ``part`` (``data``: ``type`` ``text`` / ``tool`` / ``compaction``
/ ...). Facts: the database the real CLI wrote for the recorded session
(``tests/fixtures/opencode-1.18.33/history/``, scripts/record_opencode_fixtures.py).

``ctxmode import`` reads files by byte offset (``import_progress``), so each session is one
*virtual* file, ``<db>#<session id>``: :func:`open_bytes` serialises its messages, oldest
first, one JSON line each (``{"session", "directory", "id", "role", "at", "summary", "parts"}``,
canonical JSON), and :func:`stat` gives that text's size and the session's last update.
A session only grows at its end, so the offset read so far stays valid; a message changed
after it was read (a reverted session) changes the head hash and the file is read again
(the store skips what it holds). The database is opened read-only (``mode=ro``: the file
and its WAL are never written, checkpointed or left locked; SQLite's ``-shm`` index marks the
reader as for any reader), one short query at a time.

:func:`read` turns the lines into :class:`Call` items holding the neutral input the plugin's
hooks would have received — a tool part ``completed`` → ``tool.execute.after``, ``error`` →
``tool.error``; a user message's own text parts → ``chat.message`` — converted by
``hosts.opencode.neutral``, and :class:`Boundary` items: a user message with a
``compaction`` part, its summary the text of the ``summary`` assistant message after it.
A call's id is OpenCode's ``callID``, which the hooks record too: what they captured is not
imported twice. A tool still running, or a compaction whose summary is not written yet, in the
session's last message stops the offset (read again next time); once a later message
follows, the tool never ended (no hook fired) and the compaction has no summary.

Not on the hook path (only ``ctxmode import`` and ``doctor`` load it).
"""

from __future__ import annotations

import errno
import io
import os

from ctxmode import payload
from ctxmode.history import Boundary, Call, Chunk
from ctxmode.hosts import opencode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ctxmode.payload import HookInput

CLIENT = opencode.NAME  # the host these sessions are of (session_meta.client)
DB_NAME = "opencode.db"
SEP = "#"  # <db path>#<session id>: one session, one virtual file
# The bare quotes cannot occur inside a JSON string (they are escaped there).
BOUNDARY_MARK = b'"type":"compaction"'
BUSY_MS = 2000


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def data_dir(env: Mapping[str, str]) -> str:
    """``$XDG_DATA_HOME/opencode``, else ``~/.local/share/opencode`` (HOME from ``env``)."""
    base = env.get("XDG_DATA_HOME", "").strip()
    if not base:
        home = env.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".local", "share")
    return os.path.join(base, "opencode")


def split(path: str) -> tuple[str, str]:
    """``(db path, session id)`` of a virtual file; ``("", "")`` for any other path."""
    db, sep, sid = path.rpartition(SEP)
    if not sep or not sid.startswith("ses_") or os.path.basename(db) != DB_NAME:
        return "", ""
    return db, sid


def _connect(db: str) -> Any:
    """OpenCode's database, read-only (never created, written or checkpointed by us)."""
    import sqlite3
    from urllib.parse import quote

    conn = sqlite3.connect(f"file:{quote(db)}?mode=ro", uri=True, timeout=BUSY_MS / 1000)
    conn.execute("PRAGMA query_only = 1")
    # A byte that is no UTF-8 (a tool's raw output) spoils one character, not the session.
    conn.text_factory = lambda raw: raw.decode("utf-8", "replace")
    return conn


def _query(db: str, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of one query ([] when the database is missing, locked past the timeout or not
    OpenCode's)."""
    import sqlite3

    if not os.path.isfile(db):
        return []
    try:
        conn = _connect(db)
    except sqlite3.Error:
        return []
    try:
        rows: list[tuple[Any, ...]] = conn.execute(sql, args).fetchall()
        return rows
    except sqlite3.Error:
        return []
    finally:
        conn.close()


def sessions(db: str) -> list[tuple[str, str]]:
    """``(session id, directory)`` of every session in ``db``, oldest first."""
    rows = _query(db, "SELECT id, directory FROM session ORDER BY time_created, id")
    return [(_s(sid), _s(d)) for sid, d in rows if _s(sid)]


def export(db: str, sid: str) -> bytes:
    """The session's messages as JSON lines (see the module's docstring), oldest first."""
    import json

    rows = _query(
        db,
        "SELECT s.directory, m.id, m.time_created, m.data, p.data FROM session s"
        " JOIN message m ON m.session_id = s.id LEFT JOIN part p ON p.message_id = m.id"
        " WHERE s.id = ? ORDER BY m.time_created, m.id, p.id",
        (sid,),
    )
    out: list[bytes] = []
    current: dict[str, Any] | None = None
    for directory, mid, created, mdata, pdata in rows:
        if current is None or current["id"] != mid:
            if current is not None:
                out.append(_line(current))
            try:
                message = _d(json.loads(mdata))
            except (TypeError, ValueError):
                message = {}
            current = {
                "session": sid,
                "directory": _s(directory),
                "id": _s(mid),
                "role": _s(message.get("role")),
                "at": created if isinstance(created, int) else 0,
                "summary": message.get("summary") is True,
                "parts": [],
            }
        if pdata is not None:
            try:
                current["parts"].append(json.loads(pdata))
            except (TypeError, ValueError):
                current["parts"].append(None)
    if current is not None:
        out.append(_line(current))
    return b"".join(out)


def _line(record: dict[str, Any]) -> bytes:
    import json

    text = json.dumps(record, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return text.encode("utf-8", "surrogatepass") + b"\n"


# -- what ``ctxmode import`` and ``doctor`` call (ctxmode.hosts.contract.History) -----------


def folder(env: Mapping[str, str]) -> str:
    """Where OpenCode keeps its database (:func:`data_dir`)."""
    return data_dir(env)


def files(where: str) -> list[str]:
    """Every session of the database under ``where``, as a virtual file."""
    db = os.path.join(where, DB_NAME)
    return [db + SEP + sid for sid, _ in sessions(db)]


def project_files(where: str, project_dir: str) -> list[str]:
    """The sessions that ran in ``project_dir`` or a folder under it."""
    db = os.path.join(where, DB_NAME)
    root = project_dir.rstrip(os.sep)
    return [
        db + SEP + sid
        for sid, directory in sessions(db)
        if directory == root or directory.startswith(root + os.sep)
    ]


def claims(path: str) -> bool:
    """Whether a path given by name is a session of OpenCode's database (``<db>#ses_…``)."""
    return bool(split(path)[0])


def head_cwd(path: str) -> tuple[str, str]:
    """``(directory, session id)`` of the session."""
    db, sid = split(path)
    if not db:
        return "", ""
    rows = _query(db, "SELECT directory FROM session WHERE id = ?", (sid,))
    return (_s(rows[0][0]), sid) if rows else ("", "")


def stat(path: str) -> tuple[int, int]:
    """``(size, mtime_ns)`` of the virtual file: its text's length, the session's last
    update (OSError when the session is not there)."""
    db, sid = split(path)
    rows = _query(db, "SELECT time_updated FROM session WHERE id = ?", (sid,)) if db else []
    if not rows:
        raise FileNotFoundError(errno.ENOENT, "no such OpenCode session", path)
    updated = rows[0][0] if isinstance(rows[0][0], int) else 0
    return len(export(db, sid)), updated * 1_000_000


def open_bytes(path: str) -> io.BytesIO:
    """The virtual file's bytes (OSError when the session is not there)."""
    db, sid = split(path)
    if not db or not head_cwd(path)[1]:
        raise FileNotFoundError(errno.ENOENT, "no such OpenCode session", path)
    return io.BytesIO(export(db, sid))


def subagent_of(path: str) -> tuple[str | None, str | None]:
    """A subagent's work is a session of its own, which the plugin's hooks see under its
    own id: imported as such, none is a subagent file."""
    return None, None


def count_boundaries(data: bytes) -> int:
    """Compactions in ``data``."""
    return data.count(BOUNDARY_MARK)


def compact_summary(content: str) -> str:
    """The summary the model wrote (OpenCode adds nothing to it)."""
    return content.strip()


# -- reading ---------------------------------------------------------------------------------


def _iso(ms: int) -> str:
    import datetime

    if ms <= 0:
        return ""
    at = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _hook(raw: dict[str, Any], path: str, size: int) -> HookInput | None:
    """A payload shaped as the plugin's → the neutral input its hook would have read."""
    converted = opencode.neutral(raw, None)
    if not converted["hook_event_name"] or not converted.get("session_id"):
        return None
    converted["transcript_path"] = path
    inp = opencode._finish(payload.from_dict(converted))
    inp.size = size
    return inp


def _tool(record: dict[str, Any], part: dict[str, Any], path: str, size: int) -> HookInput | None:
    state = _d(part.get("state"))
    status = _s(state.get("status"))
    directory, sid = record["directory"], record["session"]
    if status == "completed":
        raw = {
            "hook": "tool.execute.after",
            "directory": directory,
            "input": {
                "tool": _s(part.get("tool")),
                "sessionID": sid,
                "callID": _s(part.get("callID")),
                "args": _d(state.get("input")),
            },
            "output": {
                "title": _s(state.get("title")),
                "output": _s(state.get("output")),
                "metadata": _d(state.get("metadata")),
            },
        }
    else:
        raw = {
            "hook": "tool.error",
            "directory": directory,
            "input": {"properties": {"sessionID": sid, "part": dict(part, sessionID=sid)}},
        }
    return _hook(raw, path, size)


def read(
    data: bytes,
    start: int = 0,
    *,
    agent_id: str | None = None,
    agent_type: str | None = None,
    path: str = "",
    boundaries_before: int | None = None,
    at_end: bool = False,
) -> Chunk:
    """The records of ``data[start:]`` as :class:`Chunk` (see ``ctxmode.history.Chunk``)."""
    import json

    chunk = Chunk(start)
    if boundaries_before is None:
        boundaries_before = count_boundaries(data[:start]) if start else 0
    chunk.boundaries_before = boundaries_before
    marks: list[tuple[int, int]] = []  # (line end, skipped?)
    stop = -1  # where an unfinished message starts: the offset goes no further
    open_boundary: tuple[Boundary, int] | None = None
    boundary_starts: list[int] = []
    pos, size = start, len(data)
    while pos < size and stop == -1:
        end = data.find(b"\n", pos)
        if end == -1:
            chunk.truncated = bool(data[pos:].strip())
            break
        line = data[pos:end]
        line_start, pos = pos, end + 1
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict) or not isinstance(record.get("parts"), list):
            marks.append((pos, 1))
            continue
        stamp = record.get("at")
        at = _iso(stamp if isinstance(stamp, int) else 0)
        parts = [p for p in record["parts"] if isinstance(p, dict)]
        chunk.session_id = chunk.session_id or _s(record.get("session"))
        chunk.cwd = chunk.cwd or _s(record.get("directory"))
        if at:
            chunk.first_at = chunk.first_at or at
            chunk.last_at = max(chunk.last_at, at)
        role = record.get("role")
        last = data.find(b"\n", pos) == -1  # no whole message after this one (yet)
        if open_boundary is not None and not (role == "assistant" and record.get("summary")):
            open_boundary = None  # the session went on without a summary: there is none
        if role == "user":
            compaction = next((p for p in parts if p.get("type") == "compaction"), None)
            if compaction is not None:
                trigger = "auto" if compaction.get("auto") else "manual"
                boundary = Boundary(_s(record.get("session")), trigger, at)
                chunk.items.append(boundary)
                boundary_starts.append(line_start)
                open_boundary = (boundary, line_start)
                marks.append((pos, 0))
                continue
            text = "\n".join(
                _s(p.get("text"))
                for p in parts
                if p.get("type") == "text" and not p.get("synthetic") and _s(p.get("text"))
            )
            if text:
                raw = {
                    "hook": "chat.message",
                    "directory": record["directory"],
                    "input": {"sessionID": record["session"]},
                    "output": {"parts": [{"type": "text", "text": text}]},
                }
                inp = _hook(raw, path, len(line))
                if inp is not None:
                    chunk.items.append(Call(inp, at))
            marks.append((pos, 0))
            continue
        if role == "assistant" and record.get("summary") and open_boundary is not None:
            summary = "\n".join(_s(p.get("text")) for p in parts if p.get("type") == "text")
            if last and not any(p.get("type") == "step-finish" for p in parts):
                stop = line_start  # still being written
                break
            open_boundary[0].summary = compact_summary(summary) or None
            open_boundary = None
            marks.append((pos, 0))
            continue
        calls: list[Call] = []
        for part in parts:
            if part.get("type") != "tool":
                continue
            status = _s(_d(part.get("state")).get("status"))
            if status not in ("completed", "error"):
                if last:
                    stop = line_start  # a tool still running: read this message again later
                    break
                continue  # a later message came: it never ran to an end, no hook fired
            inp = _tool(record, part, path, len(line))
            if inp is not None:
                calls.append(Call(inp, at))
        if stop != -1:
            break
        chunk.items.extend(calls)
        marks.append((pos, 0))
    safe = pos if stop == -1 else stop
    if open_boundary is not None:
        # Its summary may still come: read the compaction again next time.
        safe = min(safe, open_boundary[1])
        chunk.items = chunk.items[: chunk.items.index(open_boundary[0])]
    chunk.offset = safe
    chunk.boundaries = sum(1 for begin in boundary_starts if begin < safe)
    for line_end, bad in marks:
        if line_end > safe:
            break
        chunk.records += 1
        chunk.skipped += bad
    return chunk
