"""The values the store writes and reads back: text SQLite can bind, priorities, ISO-8601
UTC stamps (without ``datetime``: ~2 ms per hook), and rows turned into records."""

from __future__ import annotations

import time

from ctxmode.events import SessionEvent

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from ctxmode.migrations import _sqlite3

# ---------------------------------------------------------------- time


def iso_utc(epoch: float | None = None) -> str:
    """``2026-12-02T14:51:20.123Z`` for ``epoch`` (default: now). No datetime import."""
    if epoch is None:
        epoch = time.time()
    millis = int(epoch * 1000)
    seconds, millis = divmod(millis, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _days_from_civil(year: int, month: int, day: int) -> int:
    # Howard Hinnant's algorithm: days since 1970-01-01 of a proleptic Gregorian date.
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def parse_iso(stamp: str) -> float:
    """Epoch seconds of ``YYYY-MM-DDTHH:MM:SS[.mmm]Z``; 0.0 when it does not parse."""
    try:
        days = _days_from_civil(int(stamp[0:4]), int(stamp[5:7]), int(stamp[8:10]))
        seconds = int(stamp[11:13]) * 3600 + int(stamp[14:16]) * 60 + int(stamp[17:19])
        fraction = stamp[19:].rstrip("Z")
        extra = float("0" + fraction) if fraction.startswith(".") else 0.0
    except (ValueError, TypeError):
        return 0.0
    return days * 86400 + seconds + extra


def file_stamp() -> str:
    """Now as ``20261202T145120Z``, for file names."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


# ---------------------------------------------------------------- into SQLite


def as_text(value: object) -> str:
    """A str SQLite can bind: lone surrogates (from JSON escapes) become '?'."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def as_opt_text(value: object) -> str | None:
    return None if value is None else as_text(value)


def as_priority(value: object) -> int:
    """1 (critical) … 5 (minor); 3 for what is not a number."""
    try:
        number = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 3
    return 1 if number < 1 else 5 if number > 5 else number


# ---------------------------------------------------------------- out of SQLite

EVENT_FIELDS = SessionEvent.__slots__

# The columns event_from_row reads, in its order.
EVENT_COLUMNS = (
    "id, session_id, type, category, priority, data, source_hook, agent_id, agent_type, "
    "tool_use_id, bytes_avoided, created_at"
)


_WIDTH = EVENT_COLUMNS.count(",") + 1
# A session's own events: its id is the query's, not a column read 1,000 times.
SESSION_EVENT_COLUMNS = EVENT_COLUMNS.replace(" session_id,", "")
_new = object.__new__


def events_from_rows(rows: Iterable[Sequence[Any]]) -> list[SessionEvent]:
    """Events from rows of exactly :data:`EVENT_COLUMNS`; see :func:`session_events_from_rows`."""
    events: list[SessionEvent] = []
    append = events.append
    for row in rows:
        event = _new(SessionEvent)
        (
            event.id,
            event.session_id,
            event.type,
            event.category,
            event.priority,
            event.data,
            event.source_hook,
            event.agent_id,
            event.agent_type,
            event.tool_use_id,
            event.bytes_avoided,
            event.created_at,
        ) = row
        append(event)
    return events


def session_events_from_rows(rows: Iterable[Sequence[Any]], session_id: str) -> list[SessionEvent]:
    """The events of ``session_id`` from rows of exactly :data:`SESSION_EVENT_COLUMNS`.

    Each record is made without a call of ``SessionEvent.__init__`` (keyword arguments,
    a frame per row) and its slots are filled from the row in one unpacking: about 6x
    faster; with the session id not read per row, ~8 M of a PreCompact's instructions on
    a 1,000-event session (ctxmode bench).
    """
    events: list[SessionEvent] = []
    append = events.append
    for row in rows:
        event = _new(SessionEvent)
        (
            event.id,
            event.type,
            event.category,
            event.priority,
            event.data,
            event.source_hook,
            event.agent_id,
            event.agent_type,
            event.tool_use_id,
            event.bytes_avoided,
            event.created_at,
        ) = row
        event.session_id = session_id
        append(event)
    return events


def event_from_row(row: Sequence[Any]) -> SessionEvent:
    """One event from a row that starts with :data:`EVENT_COLUMNS` (search adds more)."""
    return events_from_rows((row[:_WIDTH],))[0]


def dicts(cursor: _sqlite3.Cursor) -> list[dict[str, Any]]:
    """The cursor's rows as ``{column: value}``."""
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
