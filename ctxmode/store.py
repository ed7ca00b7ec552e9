"""The per-project SQLite store: events, session meta, resume snapshots, search.

Imported by every hook process, so it uses the C module ``_sqlite3`` directly (the
``sqlite3`` package adds ~8 ms of imports for adapters we do not use) and keeps
each hook to one short ``BEGIN IMMEDIATE`` transaction. Connections are in
autocommit mode (``isolation_level=None``); every write goes through :class:`_Tx`,
so the scope of each transaction is visible in the code.

Concurrency: WAL + ``busy_timeout`` + ``BEGIN IMMEDIATE``. A writer waits for the
lock up to the timeout, then :class:`StoreLocked` is raised and nothing of its
transaction is written. Readers never block writers.

Errors: everything raised is a :class:`StoreError`; :class:`StoreCorrupt` for a file
that is not (or no longer) a database. ``Store.open(..., recover=True)`` moves such
a file aside (``<name>.corrupt-<UTC stamp>``, with its ``-wal``/``-shm``) and starts
a fresh store, recording the incident in ``store_meta``; a valid store is never
moved or deleted.
"""

from __future__ import annotations

import os
import time

from ctxmode import paths
from ctxmode.events import MAX_DATA_CHARS, SessionEvent
from ctxmode.hashing import sha256_hex
from ctxmode.migrations import (
    SCHEMA_VERSION,
    StoreError,
    StoreTooNew,
    _sqlite3,  # imported the cheap way: see migrations._load_sqlite3
    migrate,
    user_version,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any, TypeVar

    _T = TypeVar("_T")

__all__ = [
    "Resume",
    "SearchHit",
    "Store",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "StoreMissing",
    "StoreTooNew",
    "iso_utc",
]


class StoreLocked(StoreError):
    """Another process held the write lock for longer than the busy timeout."""


class StoreCorrupt(StoreError):
    """The file is not a database, or its pages are damaged."""

    def __init__(self, message: str, identity: tuple[int, int] | None = None) -> None:
        super().__init__(message)
        # (st_dev, st_ino) of the file found bad, so that only that file is moved aside.
        self.identity = identity


class StoreMissing(StoreError):
    """A read-only open found no store at the path."""


# The session's last N events form the dedup window.
DEDUP_WINDOW = 5
MAX_EVENTS = 1000
PRUNE_INTERVAL_SECONDS = 3600.0
# Deleting an event (row, 3 indexes, FTS entry) costs ~50 µs: 2000 events ≈ 0.1 s.
PRUNE_MAX_EVENTS = 2000
RESUME_KINDS = ("compact", "end")

# Search: rank the newest SEARCH_CANDIDATES matches (see Store.search).
SEARCH_CANDIDATES = 1000
RECENCY_WEIGHT = 0.25
RECENCY_HALF_LIFE_DAYS = 7.0
SNIPPET_CHARS = 160
SNIPPET_MARK = ("**", "**")

SYNCHRONOUS_MODES = ("NORMAL", "OFF", "FULL")

# Primary SQLite result codes (exc.sqlite_errorcode & 0xff, Python 3.11+).
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CORRUPT, _SQLITE_NOTADB = 5, 6, 11, 26


# ---------------------------------------------------------------- time helpers


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


def _file_stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


# ---------------------------------------------------------------- small helpers


def _text(value: object) -> str:
    """A str SQLite can bind: lone surrogates (from JSON escapes) become '?'."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def _opt_text(value: object) -> str | None:
    return None if value is None else _text(value)


def _priority(value: object) -> int:
    try:
        number = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 3
    return 1 if number < 1 else 5 if number > 5 else number


def _error_class(exc: BaseException) -> type[StoreError]:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        primary = code & 0xFF
        if primary in (_SQLITE_BUSY, _SQLITE_LOCKED):
            return StoreLocked
        if primary in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
            return StoreCorrupt
        return StoreError
    message = str(exc).lower()  # Python 3.10: no error codes on the exception
    if "locked" in message or "busy" in message:
        return StoreLocked
    if "malformed" in message or "not a database" in message:
        return StoreCorrupt
    return StoreError


def _store_error(exc: BaseException, path: str) -> StoreError:
    error = _error_class(exc)(f"{exc} ({path})")
    error.__cause__ = exc
    return error


class _Tx:
    """``with _Tx(conn):`` is one ``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on error)."""

    __slots__ = ("conn",)

    def __init__(self, conn: _sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> _sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            try:
                self.conn.execute("COMMIT")
                return
            except BaseException:
                self._rollback()
                raise
        self._rollback()

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            try:  # noqa: SIM105 - contextlib costs ~5 ms of imports
                self.conn.execute("ROLLBACK")
            except _sqlite3.Error:
                pass  # the connection is going away with the error anyway


class _Joined:
    """Part of an enclosing :class:`_Tx` (see :meth:`Store.add_batches`): the outer
    transaction commits, or rolls everything back when an error passes through."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        return None


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _orphan_wal(path: str) -> bool:
    """A non-empty ``-wal`` without its database (SQLite would silently delete it)."""
    try:
        return os.path.getsize(path + "-wal") > 0
    except OSError:
        return False


def _probe_problem(path: str) -> str | None:
    """Why ``path`` cannot be opened as a store, or None. Only on the slow path."""
    if os.path.isdir(path):
        return "a directory is in place of the store"
    if not os.path.exists(path):
        return "a -wal file without its database" if _orphan_wal(path) else None
    try:
        conn = _sqlite3.connect(path, timeout=0.1, isolation_level=None)
    except _sqlite3.Error as exc:
        return str(exc)
    try:
        user_version(conn)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except _sqlite3.Error as exc:
        if _error_class(exc) is StoreCorrupt:
            return str(exc)
    finally:
        conn.close()
    return None


def quarantine(path: str, reason: str, expect: tuple[int, int] | None = None) -> str | None:
    """Move a bad store (and its ``-wal``/``-shm``) aside; return the new name, or None.

    Runs under the sessions-folder lock and checks again there: when ``expect`` (the
    device/inode seen by the caller) no longer matches, or a fresh probe finds the
    file healthy, another process has dealt with it and nothing is moved. So a valid
    store is never moved, even when many processes hit the same corruption at once.
    """
    folder = os.path.dirname(path)
    with paths.FileLock(folder):
        if expect is not None:
            if _identity(path) != expect:
                return None
        elif _probe_problem(path) is None:
            return None
        base = f"{path}.corrupt-{_file_stamp()}"
        target, n = base, 0
        while any(os.path.lexists(target + s) for s in ("", *paths.SIDE_FILES)):
            n += 1
            target = f"{base}-{n}"
        # Side files first: SQLite pairs "<x>-wal" with "<x>", so the moved set can
        # still be opened (and salvaged) under its new name.
        for suffix in paths.SIDE_FILES:
            try:  # noqa: SIM105 - contextlib costs ~5 ms of imports
                os.rename(path + suffix, target + suffix)
            except FileNotFoundError:
                pass
        try:  # noqa: SIM105 - contextlib costs ~5 ms of imports
            os.rename(path, target)
        except FileNotFoundError:
            pass  # only a stray -wal was there
    return target


def _quote_uri(path: str) -> str:
    # A URI has no relative paths: "sessions/s.db" would otherwise mean "/sessions/s.db".
    path = os.path.abspath(path).replace("\\", "/")
    if not path.startswith("/"):
        path = "/" + path  # "C:/x" -> "/C:/x", which SQLite reads as a drive path
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


# ---------------------------------------------------------------- records


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


_EVENT_FIELDS = SessionEvent.__slots__


class SearchHit(SessionEvent):
    """A stored event plus its blended ``rank`` (higher is better) and a ``snippet``."""

    __slots__ = ("rank", "snippet")

    def __init__(self, event: SessionEvent, rank: float, snippet: str) -> None:
        for name in _EVENT_FIELDS:
            setattr(self, name, getattr(event, name))
        self.rank = rank
        self.snippet = snippet

    def __repr__(self) -> str:
        return f"SearchHit({self.id!r}, {self.type!r}, rank={self.rank:.4f}, {self.snippet!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SearchHit):
            return NotImplemented
        return self.as_dict() == other.as_dict()

    __hash__ = None

    def as_dict(self) -> dict[str, object]:
        result = {name: getattr(self, name) for name in _EVENT_FIELDS}
        result["rank"] = self.rank
        result["snippet"] = self.snippet
        return result


_EVENT_COLUMNS = (
    "id, session_id, type, category, priority, data, source_hook, agent_id, agent_type, "
    "tool_use_id, bytes_avoided, created_at"
)


_E_COLUMNS = ", ".join("e." + name.strip() for name in _EVENT_COLUMNS.split(","))


def _event_from_row(row: Sequence[Any]) -> SessionEvent:
    return SessionEvent(
        row[2],
        row[3],
        row[4],
        row[5],
        id=row[0],
        session_id=row[1],
        source_hook=row[6],
        agent_id=row[7],
        agent_type=row[8],
        tool_use_id=row[9],
        bytes_avoided=row[10],
        created_at=row[11],
    )


def _dicts(cursor: _sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


# ---------------------------------------------------------------- search helpers


def parse_query(query: str) -> list[str]:
    """Split a user query into terms: whitespace separates, ``"…"`` keeps a phrase together.

    Every other character (``* ( ) - : ^ +`` …) is literal: terms are quoted before they
    reach FTS5, so nothing in a query can be FTS syntax.
    """
    terms: list[str] = []
    buf: list[str] = []
    quoted = False

    def flush() -> None:
        term = "".join(buf).replace("\x00", "").strip()
        buf.clear()
        if term and term not in terms:
            terms.append(term)

    for char in query:
        if char == '"':
            flush()
            quoted = not quoted
        elif char.isspace() and not quoted:
            flush()
        else:
            buf.append(char)
    flush()
    return terms


def _fts_string(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _fold(text: str) -> str:
    # lower() keeps the length for almost all text; when it does not, offsets into the
    # folded string would be wrong, so match case-sensitively instead.
    folded = text.lower()
    return folded if len(folded) == len(text) else text


def _spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    folded = _fold(text)
    spans: list[tuple[int, int]] = []
    for term in terms:
        needle = _fold(term) if len(_fold(term)) == len(term) else term
        start = folded.find(needle)
        while start >= 0 and needle:
            spans.append((start, start + len(needle)))
            start = folded.find(needle, start + len(needle))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def make_snippet(
    text: str,
    terms: Sequence[str],
    *,
    width: int = SNIPPET_CHARS,
    mark: tuple[str, str] = SNIPPET_MARK,
) -> str:
    """A window of ``text`` around the first match, each match wrapped in ``mark``."""
    spans = _spans(text, terms)
    first = spans[0][0] if spans else 0
    start = max(0, min(first - width // 3, len(text) - width))
    end = min(len(text), start + width)
    out: list[str] = ["…"] if start > 0 else []
    cursor = start
    for span_start, span_end in spans:
        if span_end <= start or span_start >= end:
            continue
        span_start, span_end = max(span_start, start), min(span_end, end)
        out.append(text[cursor:span_start])
        out.append(mark[0] + text[span_start:span_end] + mark[1])
        cursor = span_end
    out.append(text[cursor:end])
    if end < len(text):
        out.append("…")
    return "".join(out)


def like_relevance(text: str, terms: Sequence[str], average_length: float) -> float:
    """BM25's term-frequency part (k1=1.2, b=0.75) over substring counts, for the LIKE path."""
    if not terms:
        return 0.0
    folded = _fold(text)
    norm = 1.2 * (0.25 + 0.75 * len(text) / max(average_length, 1.0))
    score = 0.0
    for term in terms:
        needle = _fold(term)
        frequency = folded.count(needle) if needle else 0
        score += frequency * 2.2 / (frequency + norm)
    return score


def blend(relevance: float, age_seconds: float) -> float:
    """The search rank: ``relevance × (1 + 0.25 × 0.5^(age_days / 7))``.

    Relevance dominates (the recency factor is at most 1.25); at equal relevance a
    newer event ranks higher (the factor falls strictly with age: 1.25 for the newest
    candidate, 1.125 a week older, 1.0625 two weeks older). ``age`` is measured from
    the newest candidate, not the clock, so a ranking is reproducible.
    """
    fresh: float = 0.5 ** (max(age_seconds, 0.0) / 86400.0 / RECENCY_HALF_LIFE_DAYS)
    return relevance * (1.0 + RECENCY_WEIGHT * fresh)


# ---------------------------------------------------------------- SQL

_UPSERT_META = """
INSERT INTO session_meta (session_id, project_dir, started_at, last_event_at, event_count, last_hook)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (session_id) DO UPDATE SET
    project_dir = COALESCE(NULLIF(excluded.project_dir, ''), session_meta.project_dir),
    last_event_at = MAX(session_meta.last_event_at, excluded.last_event_at),
    event_count = session_meta.event_count + excluded.event_count,
    last_hook = COALESCE(excluded.last_hook, session_meta.last_hook)
"""

_INSERT_EVENT = """
INSERT INTO session_events (session_id, type, category, priority, data, data_hash, source_hook,
    agent_id, agent_type, tool_use_id, bytes_avoided, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

# Walks idx_events_priority (session_id, priority DESC, id) in order: no sort.
_EVICT = """
DELETE FROM session_events WHERE id IN (
    SELECT id FROM session_events WHERE session_id = ?
    ORDER BY priority DESC, id ASC LIMIT ?)
"""


# ---------------------------------------------------------------- the store


class Store:
    """One open store file. Not shared between processes; cheap to open per hook."""

    def __init__(
        self,
        conn: _sqlite3.Connection,
        path: str,
        *,
        readonly: bool,
        recover: bool,
        busy_timeout_ms: int,
        identity: tuple[int, int] | None,
    ) -> None:
        self.conn = conn
        self.path = path
        self.readonly = readonly
        self.recover = recover
        self.busy_timeout_ms = busy_timeout_ms
        self._identity = identity
        self._fts: bool | None = None
        self.synchronous = "NORMAL"
        # Set when opening this store moved a corrupt one aside: (new name, reason).
        self.incident: tuple[str, str] | None = None
        # True while add_batches holds the transaction the inserts join.
        self._batching = False

    # ------------------------------------------------------------ opening

    @classmethod
    def open(
        cls,
        path: str,
        *,
        busy_timeout_ms: int = 2000,
        readonly: bool = False,
        recover: bool = False,
        synchronous: str = "NORMAL",
    ) -> Store:
        """Open (creating and migrating as needed) the store at ``path``.

        Hot path for an existing, current store: one ``stat``, the connect, two PRAGMAs.
        ``readonly`` never creates, migrates or recovers anything. ``recover`` moves a
        corrupt store aside and starts afresh (see :func:`quarantine`).

        ``synchronous``: NORMAL (default) survives process and OS crashes without
        corruption; in WAL mode it costs no fsync per commit, but a one-shot process
        pays for its WAL: one sync of the new WAL header and two at the checkpoint
        the last connection runs on close (1-15 ms on a VM disk). OFF skips them:
        still safe against a killed process, but an OS crash or power loss can
        corrupt the store (``recover`` would then start a fresh one).
        """
        if synchronous not in SYNCHRONOUS_MODES:
            raise ValueError(f"synchronous must be one of {SYNCHRONOUS_MODES}")
        if readonly:
            return cls._open_readonly(path, busy_timeout_ms)
        try:
            return cls._open_rw(path, busy_timeout_ms, recover, synchronous)
        except StoreCorrupt as exc:
            if not recover:
                raise
            return cls._replace_corrupt(
                path, busy_timeout_ms, synchronous, str(exc), expect=exc.identity
            )

    @classmethod
    def _open_rw(
        cls,
        path: str,
        busy_timeout_ms: int,
        recover: bool,
        synchronous: str = "NORMAL",
        retries: int = 2,
    ) -> Store:
        try:
            st = os.stat(path)
            identity: tuple[int, int] | None = (st.st_dev, st.st_ino)
            is_dir = (st.st_mode & 0o170000) == 0o040000
        except FileNotFoundError:
            identity, is_dir = None, False
        except OSError as exc:
            raise StoreError(f"cannot reach the store: {exc}") from exc
        if is_dir:
            raise StoreCorrupt(f"a directory is in place of the store ({path})", identity)
        if identity is None:
            identity = cls._create_file(path)
        try:
            # mode=rw: never create the file here. Between the stat above and this
            # connect, a recovering process may move a corrupt file aside; a file
            # SQLite made in its place (outside the lock) would then be replaced by
            # that process's fresh store, renamed in by _create_file, together with
            # every event written to it. Only _create_file makes a store.
            conn = _sqlite3.connect(
                f"file:{_quote_uri(path)}?mode=rw",
                timeout=busy_timeout_ms / 1000.0,
                isolation_level=None,
                check_same_thread=False,
                uri=True,
            )
        except _sqlite3.Error as exc:
            if retries > 0 and not os.path.lexists(path):
                # Moved aside since the stat: start over (wait for the fresh store).
                return cls._open_rw(path, busy_timeout_ms, recover, synchronous, retries - 1)
            raise _store_error(exc, path) from exc
        try:
            # Per connection. NORMAL in WAL mode: no fsync per commit, no corruption
            # on any crash (an OS crash may drop the last commits). See open().
            conn.execute(f"PRAGMA synchronous = {synchronous}")
            if user_version(conn) != SCHEMA_VERSION:
                migrate(conn)
        except _sqlite3.Error as exc:
            conn.close()
            error = _store_error(exc, path)
            if isinstance(error, StoreCorrupt):
                error.identity = identity
            raise error from exc
        except BaseException:
            conn.close()
            raise
        store = cls(
            conn,
            path,
            readonly=False,
            recover=recover,
            busy_timeout_ms=busy_timeout_ms,
            identity=identity,
        )
        store.synchronous = synchronous
        return store

    @staticmethod
    def _create_file(path: str) -> tuple[int, int] | None:
        """Create the store atomically: folder 0700, file 0600, WAL mode, fully migrated.

        The database is built under a temporary name and renamed into place while the
        sessions-folder lock is held, so no process ever sees a half-made store (racing
        first hooks of a project would otherwise fight over ``journal_mode``, a change
        SQLite refuses rather than waits for).
        """
        folder = os.path.dirname(path)
        try:
            paths.ensure_dir(folder)
            with paths.FileLock(folder):
                if os.path.isdir(path):
                    raise StoreCorrupt(f"a directory is in place of the store ({path})")
                if os.path.exists(path):
                    return _identity(path)  # another process made it while we waited
                if _orphan_wal(path):
                    # SQLite would delete this WAL (and whatever it holds) on open.
                    raise StoreCorrupt(f"a -wal file without its database ({path})")
                stem = os.path.basename(path) + ".new-"
                for name in os.listdir(folder):
                    if name.startswith(stem):  # left by a process killed while creating
                        os.unlink(os.path.join(folder, name))
                temp = os.path.join(folder, f"{stem}{os.getpid()}")
                # SQLite gives -wal/-shm the mode of the database file: 0600 too.
                paths.create_private_file(temp)
                try:
                    conn = _sqlite3.connect(temp, isolation_level=None)
                    try:
                        migrate(conn)
                    finally:
                        conn.close()
                    os.rename(temp, path)
                except BaseException:
                    for suffix in ("", *paths.SIDE_FILES):
                        if os.path.exists(temp + suffix):
                            os.unlink(temp + suffix)
                    raise
        except OSError as exc:
            raise StoreError(f"cannot create the store: {exc}") from exc
        except _sqlite3.Error as exc:
            raise _store_error(exc, path) from exc
        return _identity(path)

    @classmethod
    def _replace_corrupt(
        cls,
        path: str,
        busy_timeout_ms: int,
        synchronous: str,
        reason: str,
        expect: tuple[int, int] | None,
    ) -> Store:
        try:
            moved = quarantine(path, reason, expect)
        except OSError as exc:
            raise StoreCorrupt(f"{reason}; moving it aside failed: {exc}") from exc
        store = cls._open_rw(path, busy_timeout_ms, True, synchronous)
        if moved is not None:
            store.incident = (moved, reason)
            stamp = iso_utc()
            text = (
                f"{stamp} moved {os.path.basename(path)} aside to "
                f"{os.path.basename(moved)} and started a fresh store: {reason}"
            )
            try:  # noqa: SIM105 - contextlib costs ~5 ms of imports
                store.set_meta(f"incident:{stamp}", text)
            except StoreError:
                pass  # the fresh store works; losing the note is the lesser evil
        return store

    @classmethod
    def _open_readonly(cls, path: str, busy_timeout_ms: int) -> Store:
        if not os.path.isfile(path):
            raise StoreMissing(f"no store at {path}")
        try:
            conn = _sqlite3.connect(
                f"file:{_quote_uri(path)}?mode=ro",
                timeout=busy_timeout_ms / 1000.0,
                isolation_level=None,
                check_same_thread=False,
                uri=True,
            )
        except _sqlite3.Error as exc:
            raise _store_error(exc, path) from exc
        try:
            version = user_version(conn)
        except _sqlite3.Error as exc:
            conn.close()
            raise _store_error(exc, path) from exc
        if version != SCHEMA_VERSION:
            conn.close()
            if version > SCHEMA_VERSION:
                raise StoreTooNew(
                    f"store schema version {version} is newer than this ctxmode "
                    f"({SCHEMA_VERSION}): {path}"
                )
            raise StoreError(
                f"store schema version {version} predates this ctxmode ({SCHEMA_VERSION});"
                f" open it read-write once to migrate: {path}"
            )
        return cls(
            conn,
            path,
            readonly=True,
            recover=False,
            busy_timeout_ms=busy_timeout_ms,
            identity=_identity(path),
        )

    def close(self) -> None:
        # A plain close: SQLite checkpoints and removes the WAL when the last
        # connection goes. Never turn that off: one-shot hook processes would
        # otherwise grow the WAL without bound.
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ error boundary

    def _guard(self, fn: Callable[..., _T], *args: Any) -> _T:
        """Run ``fn``; map SQLite errors to StoreError; with ``recover``, heal corruption once."""
        try:
            return fn(*args)
        except _sqlite3.Error as exc:
            error = _store_error(exc, self.path)
        if not (isinstance(error, StoreCorrupt) and self.recover and not self.readonly):
            raise error
        self._heal(str(error))
        try:
            return fn(*args)
        except _sqlite3.Error as exc:
            raise _store_error(exc, self.path) from exc

    def _heal(self, reason: str) -> None:
        """Swap in a fresh store for this corrupt one (see :func:`quarantine`)."""
        try:  # noqa: SIM105 - contextlib costs ~5 ms of imports
            self.conn.close()
        except _sqlite3.Error:
            pass
        fresh = self._replace_corrupt(
            self.path, self.busy_timeout_ms, self.synchronous, reason, self._identity
        )
        self.conn = fresh.conn
        self._identity = fresh._identity
        self.incident = fresh.incident
        self._fts = None

    # ------------------------------------------------------------ events

    def add_events(
        self,
        session_id: str,
        events: Sequence[SessionEvent],
        *,
        source_hook: str,
        project_dir: str,
        now: str | None = None,
        max_events: int = MAX_EVENTS,
    ) -> int:
        """Insert ``events`` in one transaction (dedup, truncate, cap); return how many were new.

        Even with no events the session's meta row is created or touched: a session is
        known from its first hook call on. ``max_events <= 0`` means no cap.
        """
        return self._guard(
            self._add_events, session_id, events, source_hook, project_dir, now, max_events
        )

    def _add_events(
        self,
        session_id: str,
        events: Sequence[SessionEvent],
        source_hook: str,
        project_dir: str,
        now: str | None,
        max_events: int,
    ) -> int:
        stamp = now or iso_utc()
        sid = _text(session_id)
        hook = _text(source_hook)
        conn = self.conn
        with _Joined() if self._batching else _Tx(conn):
            rows: list[tuple[object, ...]] = []
            if events:
                recent = conn.execute(
                    "SELECT type, data_hash FROM session_events WHERE session_id = ? "
                    "ORDER BY id DESC LIMIT ?",
                    (sid, DEDUP_WINDOW),
                ).fetchall()
                window = [(row[0], row[1]) for row in reversed(recent)]
                for event in events:
                    data = _text(event.data)[:MAX_DATA_CHARS]
                    digest = sha256_hex(data)
                    kind = _text(event.type)
                    key = (kind, digest)
                    # The window includes the events accepted earlier in this call.
                    if key in window[-DEDUP_WINDOW:]:
                        continue
                    window.append(key)
                    rows.append(
                        (
                            sid,
                            kind,
                            _text(event.category),
                            _priority(event.priority),
                            data,
                            digest,
                            _opt_text(event.source_hook) or hook,
                            _opt_text(event.agent_id),
                            _opt_text(event.agent_type),
                            _opt_text(event.tool_use_id),
                            int(event.bytes_avoided or 0),
                            # A spooled event keeps the time its hook accepted it.
                            _opt_text(event.created_at) or stamp,
                        )
                    )
                if rows:
                    conn.executemany(_INSERT_EVENT, rows)
            meta = (sid, _text(project_dir), stamp, stamp, len(rows), hook or None)
            conn.execute(_UPSERT_META, meta)
            if rows and max_events > 0:
                count = conn.execute(
                    "SELECT event_count FROM session_meta WHERE session_id = ?", (sid,)
                ).fetchone()[0]
                if count > max_events:
                    excess = count - max_events
                    conn.execute(_EVICT, (sid, excess))
                    conn.execute(
                        "UPDATE session_meta SET event_count = event_count - ?, "
                        "evicted_count = evicted_count + ? WHERE session_id = ?",
                        (excess, excess, sid),
                    )
        return len(rows)

    def add_batches(
        self,
        batches: Sequence[tuple[str, Sequence[SessionEvent], str]],
        *,
        source_hook: str,
        project_dir: str,
        max_events: int = MAX_EVENTS,
    ) -> int:
        """Insert ``(session_id, events, marker)`` batches in ONE transaction; return how
        many were imported.

        For the spool: a batch whose ``marker`` (a ``store_meta`` key, e.g. a hash of the
        spool line) is already recorded was imported before and is skipped, and the
        markers of the imported ones are recorded in the same transaction. So a spool
        file left behind by a process killed after its commit is never imported twice.
        Markers older than a week are dropped on the way.
        """
        return self._guard(self._add_batches, batches, source_hook, project_dir, max_events)

    def _add_batches(
        self,
        batches: Sequence[tuple[str, Sequence[SessionEvent], str]],
        source_hook: str,
        project_dir: str,
        max_events: int,
    ) -> int:
        stamp = iso_utc()
        imported = 0
        with _Tx(self.conn) as conn:
            self._batching = True
            try:
                for session_id, events, marker in batches:
                    key = _text(marker)
                    seen = "SELECT 1 FROM store_meta WHERE key = ?"
                    if key and conn.execute(seen, (key,)).fetchone():
                        continue
                    self._add_events(
                        session_id, events, source_hook, project_dir, stamp, max_events
                    )
                    if key:
                        conn.execute(
                            "INSERT INTO store_meta (key, value) VALUES (?, ?)", (key, stamp)
                        )
                    imported += 1
            finally:
                self._batching = False
            conn.execute(
                "DELETE FROM store_meta WHERE key >= 'spool:' AND key < 'spool;' AND value < ?",
                (iso_utc(time.time() - 7 * 86400.0),),
            )
        return imported

    def session_events(self, session_id: str) -> list[SessionEvent]:
        """The session's events, oldest first, every field filled in."""
        return self._guard(self._session_events, session_id)

    def _session_events(self, session_id: str) -> list[SessionEvent]:
        rows = self.conn.execute(
            f"SELECT {_EVENT_COLUMNS} FROM session_events WHERE session_id = ? ORDER BY id",
            (_text(session_id),),
        ).fetchall()
        return [_event_from_row(row) for row in rows]

    def event_count(self, session_id: str) -> int:
        return self._guard(self._event_count, session_id)

    def _event_count(self, session_id: str) -> int:
        row = self.conn.execute(
            "SELECT event_count FROM session_meta WHERE session_id = ?", (_text(session_id),)
        ).fetchone()
        return int(row[0]) if row else 0

    def touch_session(
        self, session_id: str, project_dir: str, *, source_hook: str = "", now: str | None = None
    ) -> None:
        """Make the session known (meta row) without recording an event."""
        self.add_events(session_id, [], source_hook=source_hook, project_dir=project_dir, now=now)

    def session_flag(self, session_id: str, name: str) -> bool:
        """Whether :meth:`set_session_flag` marked the session with ``name``."""
        return self._guard(self._session_flag, session_id, name)

    def _session_flag(self, session_id: str, name: str) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM session_meta WHERE session_id = ? AND instr(flags, ?) > 0",
            (_text(session_id), f",{name},"),
        ).fetchone()
        return row is not None

    def set_session_flag(
        self, session_id: str, name: str, project_dir: str = "", *, now: str | None = None
    ) -> None:
        """Mark the session (creating its meta row) with ``name``, e.g. ``"cleared"``."""
        if not name or "," in name:
            raise ValueError(f"invalid flag name {name!r}")
        self._guard(self._set_session_flag, session_id, name, project_dir, now)

    def _set_session_flag(
        self, session_id: str, name: str, project_dir: str, now: str | None
    ) -> None:
        stamp = now or iso_utc()
        sid = _text(session_id)
        with _Tx(self.conn) as conn:
            conn.execute(_UPSERT_META, (sid, _text(project_dir), stamp, stamp, 0, None))
            # flags is ",a,b," so that instr() matches whole names only.
            conn.execute(
                "UPDATE session_meta SET flags = CASE WHEN flags = '' THEN ',' ELSE flags END "
                "|| ? || ',' WHERE session_id = ? AND instr(flags, ?) = 0",
                (name, sid, f",{name},"),
            )

    def open_error_keys(self, session_id: str) -> set[str]:
        """Keys of tool_error/output_error events not yet followed by an error_resolved."""
        return self._guard(self._open_error_keys, session_id)

    def _open_error_keys(self, session_id: str) -> set[str]:
        from ctxmode import fastjson

        rows = self.conn.execute(
            "SELECT type, data FROM session_events WHERE session_id = ? "
            "AND type IN ('tool_error', 'output_error', 'error_resolved') ORDER BY id",
            (_text(session_id),),
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

    # ------------------------------------------------------------ resume snapshots

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
        return self._guard(self._save_resume, session_id, snapshot, event_count, kind, now)

    def _save_resume(
        self, session_id: str, snapshot: str, event_count: int, kind: str, now: str | None
    ) -> int:
        stamp = now or iso_utc()
        sid = _text(session_id)
        conn = self.conn
        with _Tx(conn):
            conn.execute(
                "INSERT INTO session_meta (session_id, started_at, last_event_at, compact_count) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "compact_count = session_meta.compact_count + excluded.compact_count",
                (sid, stamp, stamp, 1 if kind == "compact" else 0),
            )
            seq = self._next_seq(conn, sid, kind)
            conn.execute(
                "INSERT INTO session_resume (session_id, compact_seq, kind, snapshot, "
                "event_count, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (sid, seq, kind, _text(snapshot), int(event_count), stamp),
            )
        return seq

    def next_compact_seq(self, session_id: str, kind: str = "compact") -> int:
        """The ``compact_seq`` the session's next :meth:`save_resume` of ``kind`` will get
        (unless another process saves one first)."""
        return self._guard(self._next_seq, self.conn, _text(session_id), kind)

    @staticmethod
    def _next_seq(conn: _sqlite3.Connection, sid: str, kind: str) -> int:
        return int(
            conn.execute(
                "SELECT COALESCE(MAX(compact_seq), 0) + 1 FROM session_resume "
                "WHERE session_id = ? AND kind = ?",
                (sid, kind),
            ).fetchone()[0]
        )

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
    ) -> Resume | None:
        """Atomically take the newest unclaimed snapshot matching the filters.

        One ``BEGIN IMMEDIATE`` transaction selects and marks the row, so of any number
        of racing processes exactly one receives a given snapshot. ``kind`` restricts
        to ``"compact"`` or ``"end"`` rows; ``max_age_seconds``/``min_age_seconds`` to
        rows at most / at least that old. Returns None when nothing matches.
        """
        return self._guard(
            self._claim_resume,
            claimed_by,
            session_id,
            exclude_session,
            max_age_seconds,
            now,
            kind,
            min_age_seconds,
        )

    def _claim_resume(
        self,
        claimed_by: str,
        session_id: str | None,
        exclude_session: str | None,
        max_age_seconds: float | None,
        now: float | None,
        kind: str | None,
        min_age_seconds: float | None = None,
    ) -> Resume | None:
        clock = time.time() if now is None else now
        where = ["consumed = 0"]
        params: list[object] = []
        if session_id is not None:
            where.append("session_id = ?")
            params.append(_text(session_id))
        if exclude_session is not None:
            where.append("session_id != ?")
            params.append(_text(exclude_session))
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
            row = conn.execute(
                "SELECT id, session_id, compact_seq, kind, snapshot, event_count, created_at "
                f"FROM session_resume WHERE {' AND '.join(where)} "
                "ORDER BY created_at DESC, id DESC LIMIT 1",
                params,
            ).fetchone()
            if row is None:
                return None
            marked = conn.execute(
                "UPDATE session_resume SET consumed = 1, consumed_at = ?, consumed_by = ? "
                "WHERE id = ? AND consumed = 0",
                (iso_utc(clock), _text(claimed_by), row[0]),
            ).rowcount
            if marked != 1:  # pragma: no cover - impossible under the write lock
                return None
        return Resume(row[1], row[2], row[3], row[4], row[5], row[6], id=row[0])

    def has_unclaimed(self, session_id: str, *, kind: str | None = None) -> bool:
        """Whether the session has a snapshot nobody claimed yet (one indexed lookup)."""
        return self._guard(self._has_unclaimed, session_id, kind)

    def _has_unclaimed(self, session_id: str, kind: str | None) -> bool:
        if kind is None:
            row = self.conn.execute(
                "SELECT 1 FROM session_resume WHERE session_id = ? AND consumed = 0 LIMIT 1",
                (_text(session_id),),
            ).fetchone()
        else:
            row = self.conn.execute(
                "SELECT 1 FROM session_resume WHERE session_id = ? AND consumed = 0 "
                "AND kind = ? LIMIT 1",
                (_text(session_id), kind),
            ).fetchone()
        return row is not None

    def discard_unclaimed(self, session_id: str, *, reason: str, kind: str | None = None) -> int:
        """Mark the session's unclaimed snapshots (of ``kind``) consumed by ``reason``.

        Used after /clear (nothing from before may reach a later session) and to retire
        stale end-of-session snapshots. Returns how many rows it retired.
        """
        return self._guard(self._discard_unclaimed, session_id, reason, kind)

    def _discard_unclaimed(self, session_id: str, reason: str, kind: str | None) -> int:
        sql = (
            "UPDATE session_resume SET consumed = 1, consumed_at = ?, consumed_by = ? "
            "WHERE session_id = ? AND consumed = 0"
        )
        params: list[object] = [iso_utc(), _text(reason), _text(session_id)]
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        with _Tx(self.conn) as conn:
            return int(conn.execute(sql, params).rowcount)

    def latest_resume(self, session_id: str, kind: str | None = None) -> dict[str, Any] | None:
        """The session's newest snapshot row (claimed or not), or None."""
        return self._guard(self._latest_resume, session_id, kind)

    def _latest_resume(self, session_id: str, kind: str | None) -> dict[str, Any] | None:
        sql = "SELECT * FROM session_resume WHERE session_id = ?"
        params: list[object] = [_text(session_id)]
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        rows = _dicts(self.conn.execute(sql + " ORDER BY created_at DESC, id DESC LIMIT 1", params))
        return rows[0] if rows else None

    def resumes(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Snapshot rows (all columns), oldest first."""
        return self._guard(self._resumes, session_id)

    def _resumes(self, session_id: str | None) -> list[dict[str, Any]]:
        if session_id is None:
            cursor = self.conn.execute("SELECT * FROM session_resume ORDER BY id")
        else:
            cursor = self.conn.execute(
                "SELECT * FROM session_resume WHERE session_id = ? ORDER BY id",
                (_text(session_id),),
            )
        return _dicts(cursor)

    # ------------------------------------------------------------ sessions

    def sessions(self) -> list[dict[str, Any]]:
        """session_meta rows, most recently active first."""
        return self._guard(self._sessions)

    def _sessions(self) -> list[dict[str, Any]]:
        return _dicts(
            self.conn.execute(
                "SELECT * FROM session_meta ORDER BY last_event_at DESC, started_at DESC, "
                "session_id"
            )
        )

    def dump(self, session_id: str | None = None) -> dict[str, Any]:
        """The ``ctxmode dump --json`` contract: ``{"sessions": [{…, "events", "resumes"}]}``."""
        result = []
        for meta in self.sessions():
            if session_id is not None and meta["session_id"] != session_id:
                continue
            meta["events"] = [
                {name: getattr(event, name) for name in _EVENT_FIELDS}
                for event in self.session_events(meta["session_id"])
            ]
            meta["resumes"] = self.resumes(meta["session_id"])
            result.append(meta)
        return {"sessions": result}

    def _delete_sessions(self, conn: _sqlite3.Connection, session_ids: Iterable[str]) -> int:
        deleted = 0
        for sid in session_ids:
            deleted += conn.execute(
                "DELETE FROM session_events WHERE session_id = ?", (sid,)
            ).rowcount
            conn.execute("DELETE FROM session_resume WHERE session_id = ?", (sid,))
            conn.execute("DELETE FROM session_meta WHERE session_id = ?", (sid,))
            # The session's search tally (see record_search) goes with it.
            conn.execute("DELETE FROM store_meta WHERE key = ?", (SEARCH_TALLY_PREFIX + sid,))
        return deleted

    def purge_session(self, session_id: str) -> int:
        """Delete a session's events, snapshots and meta; return the number of events deleted.

        ``secure_delete`` overwrites the freed content; :meth:`vacuum` then gives the
        pages back and folds the FTS deletions in.
        """
        return self._guard(self._purge_session, session_id)

    def _purge_session(self, session_id: str) -> int:
        self.conn.execute("PRAGMA secure_delete = ON")
        with _Tx(self.conn) as conn:
            return self._delete_sessions(conn, [_text(session_id)])

    def purge_older_than(self, days: float, *, now: float | None = None) -> int:
        """Delete every session idle for more than ``days``; return how many sessions."""
        return self._guard(self._purge_older_than, days, now)

    def _purge_older_than(self, days: float, now: float | None) -> int:
        self.conn.execute("PRAGMA secure_delete = ON")
        with _Tx(self.conn) as conn:
            ids = self._idle_ids(conn, days, now)
            self._delete_sessions(conn, ids)
        return len(ids)

    def idle_session_ids(self, days: float, *, now: float | None = None) -> list[str]:
        """The sessions :meth:`purge_older_than` would delete, oldest activity first."""
        return self._guard(self._idle_ids, self.conn, days, now)

    @staticmethod
    def _idle_ids(conn: _sqlite3.Connection, days: float, now: float | None) -> list[str]:
        # Never before 1970: the stored times are four-digit-year strings.
        cutoff = iso_utc(max((time.time() if now is None else now) - days * 86400.0, 0.0))
        rows = conn.execute(
            "SELECT session_id FROM session_meta WHERE last_event_at < ? ORDER BY last_event_at",
            (cutoff,),
        ).fetchall()
        return [row[0] for row in rows]

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
        return self._guard(self._prune_idle, days, limit, now, max_events)

    def _prune_idle(self, days: int, limit: int, now: float | None, max_events: int) -> int:
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
            self._delete_sessions(conn, chosen)
            if len(found) < limit and len(chosen) == len(found):
                conn.execute(
                    "INSERT OR REPLACE INTO store_meta (key, value) VALUES ('last_prune', ?)",
                    (repr(clock),),
                )
        return len(chosen)

    # ------------------------------------------------------------ search

    def fts_enabled(self) -> bool:
        """Whether this store has its FTS5 index (else search uses LIKE)."""
        if self._fts is None:
            row = self.conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events_fts'"
            ).fetchone()
            self._fts = row is not None
        return self._fts

    def _fts_from_id(self, high: int) -> int:
        """The smallest event id in the FTS index: every event from there on is in it,
        none before it (a large store upgraded from schema 1 indexed only its newest
        events; see migrations.install_fts). ``high + 1`` for an empty index."""
        row = self.conn.execute("SELECT rowid FROM events_fts ORDER BY rowid LIMIT 1").fetchone()
        return int(row[0]) if row else high + 1

    def search(
        self,
        query: str,
        *,
        session_id: str | None = None,
        category: str | None = None,
        type: str | None = None,
        since: str | None = None,
        limit: int = 20,
    ) -> list[SearchHit]:
        """Events whose data *values* hold every term of ``query`` (substring,
        case-insensitive), best first.

        What is searched is the text a person reads: the values of the event's JSON data,
        one per line, unescaped (see ``migrations.values_sql``): no key names, no escape
        sequences (the view ``events_text``). Terms (see :func:`parse_query`) of three or more characters go to the
        FTS5 trigram index, shorter ones to LIKE on its hits. SQLite walks the matches
        newest first (the session and ``since`` filters become a rowid range) and stops
        after :data:`SEARCH_CANDIDATES` that pass the filters; those are ranked by
        :func:`blend` of BM25 relevance and age, ties to the newer event. (BM25's IDF
        still counts every match of each term once: ~0.1-0.4 s for terms found in a
        fifth of a million events.) Without FTS5 (or on any FTS error), and for the
        events older than the index (a large store upgraded from schema 1 indexes only
        its newest events), the same terms run through LIKE over the same values,
        ranked by :func:`like_relevance`. An empty query lists the newest events that
        pass the filters. Each hit's ``snippet`` is a window of those values.
        """
        return self._guard(self._search, query, session_id, category, type, since, limit)

    def _search(
        self,
        query: str,
        session_id: str | None,
        category: str | None,
        type_: str | None,
        since: str | None,
        limit: int,
    ) -> list[SearchHit]:
        terms = parse_query(_text(query))
        long_terms = [t for t in terms if len(t) >= 3]
        candidates = max(SEARCH_CANDIDATES, limit)
        where: list[str] = []
        params: list[object] = []
        bounds = self._id_bounds(session_id, since)
        if bounds is None:
            return []
        low, high = bounds
        text = "t.text"  # events_text: the values of the event's data (migrations.m002)
        for column, value in (("session_id", session_id), ("category", category), ("type", type_)):
            if value is not None:
                where.append(f"e.{column} = ?")
                params.append(_text(value))
        if since is not None:
            where.append("e.created_at >= ?")
            params.append(since)
        rows: list[Any] = []
        like_high = high  # LIKE covers [low, like_high]: what the index does not
        if long_terms and self.fts_enabled():
            # Short terms cannot use the trigram index: LIKE checks them on the FTS hits.
            fts_where = list(where)
            fts_params = list(params)
            for term in terms:
                if len(term) < 3:
                    fts_where.append(f"{text} LIKE ? ESCAPE '\\'")
                    fts_params.append(_like_pattern(term))
            try:
                fts_from = self._fts_from_id(high)
                start = max(low, fts_from)
                if start <= high:
                    rows = self.conn.execute(
                        f"SELECT {_E_COLUMNS}, -bm25(events_fts), {text} FROM events_fts "
                        "JOIN session_events e ON e.id = events_fts.rowid "
                        "JOIN events_text t ON t.id = e.id "
                        "WHERE events_fts MATCH ? AND events_fts.rowid BETWEEN ? AND ? "
                        + "".join(f" AND {w}" for w in fts_where)
                        + " ORDER BY events_fts.rowid DESC LIMIT ?",
                        [
                            " ".join(_fts_string(t) for t in long_terms),
                            start,
                            high,
                            *fts_params,
                            candidates,
                        ],
                    ).fetchall()
                like_high = min(high, fts_from - 1)
            except _sqlite3.OperationalError:
                rows = []  # e.g. this SQLite lacks fts5: LIKE gives the same hits
        if low <= like_high:
            like_where = list(where)
            like_params = list(params)
            for term in terms:
                like_where.append(f"{text} LIKE ? ESCAPE '\\'")
                like_params.append(_like_pattern(term))
            found = self.conn.execute(
                f"SELECT {_E_COLUMNS}, 0.0, {text} "
                "FROM session_events e JOIN events_text t ON t.id = e.id "
                "WHERE e.id BETWEEN ? AND ?"
                + "".join(f" AND {w}" for w in like_where)
                + " ORDER BY e.id DESC LIMIT ?",
                [low, like_high, *like_params, candidates],
            ).fetchall()
            if found:
                average = sum(len(row[13] or "") for row in found) / len(found)
                rows += [
                    (*row[:12], like_relevance(row[13] or "", terms, average), row[13])
                    for row in found
                ]
        return self._rank(rows, terms, limit)

    @staticmethod
    def _rank(rows: Sequence[Any], terms: Sequence[str], limit: int) -> list[SearchHit]:
        if not rows:
            return []
        times = [parse_iso(row[11]) for row in rows]
        newest = max(times)
        scored = sorted(
            (
                (blend(float(row[12]), newest - stamp), row[0], row)
                for row, stamp in zip(rows, times, strict=True)
            ),
            key=lambda item: (-item[0], -item[1]),
        )
        return [
            SearchHit(_event_from_row(row), rank, make_snippet(str(row[13] or ""), terms))
            for rank, _, row in scored[: max(limit, 0)]
        ]

    def _id_bounds(self, session_id: str | None, since: str | None) -> tuple[int, int] | None:
        """The id range that can hold matches; None when it is empty.

        FTS5 can restrict a rowid range for free, which turns the session and time
        filters into index seeks instead of a walk over every match.
        """
        if session_id is not None:
            sid = _text(session_id)
            # Two subqueries, not MIN(id), MAX(id) side by side: SQLite answers a lone
            # MIN or MAX from the index edge but scans for the pair.
            row = self.conn.execute(
                "SELECT (SELECT MIN(id) FROM session_events WHERE session_id = ?), "
                "(SELECT MAX(id) FROM session_events WHERE session_id = ?)",
                (sid, sid),
            ).fetchone()
        else:
            row = self.conn.execute(
                "SELECT (SELECT MIN(id) FROM session_events), (SELECT MAX(id) FROM session_events)"
            ).fetchone()
        if row is None or row[0] is None:
            return None
        low, high = int(row[0]), int(row[1])
        if since is not None:
            low = self._first_id_since(since, low, high)
            if low > high:
                return None
        return low, high

    def _first_id_since(self, since: str, low: int, high: int) -> int:
        # Ids grow with created_at (one clock, one writer at a time), so a binary
        # search over ids finds the first event at or after ``since`` in ~20 lookups.
        # The exact created_at filter still applies on top.
        lo, hi = low, high + 1
        while lo < hi:
            mid = (lo + hi) // 2
            row = self.conn.execute(
                "SELECT id, created_at FROM session_events WHERE id >= ? ORDER BY id LIMIT 1",
                (mid,),
            ).fetchone()
            if row is None or row[1] >= since:
                hi = mid
            else:
                lo = int(row[0]) + 1
        return lo

    # ------------------------------------------------------------ bookkeeping

    def get_meta(self, key: str) -> str | None:
        row = self._guard(
            lambda: self.conn.execute(
                "SELECT value FROM store_meta WHERE key = ?", (key,)
            ).fetchone()
        )
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        def write() -> None:
            with _Tx(self.conn) as conn:
                conn.execute(
                    "INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)",
                    (key, _text(value)),
                )

        self._guard(write)

    def incidents(self) -> list[tuple[str, str]]:
        """Recorded incidents (e.g. a corrupt store moved aside), oldest first."""
        rows = self._guard(
            lambda: self.conn.execute(
                "SELECT key, value FROM store_meta WHERE key LIKE 'incident:%' ORDER BY key"
            ).fetchall()
        )
        return [(str(key), str(value)) for key, value in rows]

    def schema_version(self) -> int:
        return self._guard(user_version, self.conn)

    def integrity_check(self) -> str:
        """``"ok"``, or the problems SQLite (and the FTS index) report, one per line."""
        return self._guard(self._integrity_check)

    def _integrity_check(self) -> str:
        problems = [
            str(row[0])
            for row in self.conn.execute("PRAGMA integrity_check").fetchall()
            if row[0] != "ok"
        ]
        if self.fts_enabled() and not self.readonly:
            try:
                self.conn.execute("INSERT INTO events_fts (events_fts) VALUES ('integrity-check')")
            except _sqlite3.DatabaseError as exc:
                problems.append(f"fts: {exc}")
        return "\n".join(problems) if problems else "ok"

    def vacuum(self, *, optimize_fts: bool = False) -> int:
        """Give free pages back to the file system; return how many pages were freed.

        ``optimize_fts`` first merges the FTS index, which also drops the entries of
        deleted events from its segments for good (slow on a large store).
        """
        return self._guard(self._vacuum, optimize_fts)

    def _vacuum(self, optimize_fts: bool) -> int:
        conn = self.conn
        if optimize_fts and self.fts_enabled():
            with _Tx(conn):
                conn.execute("INSERT INTO events_fts (events_fts) VALUES ('optimize')")
        before = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
        # executescript steps the pragma to completion; execute() frees a single page.
        conn.executescript("PRAGMA incremental_vacuum;")
        after = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return before - after

    # ------------------------------------------------------------ usage statistics

    def event_totals(self, session_id: str | None = None) -> list[tuple[str, str, int, int]]:
        """``(session_id, category, events, sum of bytes_avoided)`` per session and category."""
        return self._guard(self._event_totals, session_id)

    def _event_totals(self, session_id: str | None) -> list[tuple[str, str, int, int]]:
        sql = "SELECT session_id, category, COUNT(*), TOTAL(bytes_avoided) FROM session_events"
        params: tuple[object, ...] = ()
        if session_id is not None:
            sql += " WHERE session_id = ?"
            params = (_text(session_id),)
        rows = self.conn.execute(sql + " GROUP BY session_id, category", params).fetchall()
        return [(str(r[0]), str(r[1]), int(r[2]), int(r[3])) for r in rows]

    def resume_sizes(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Snapshot rows without their text: ``bytes`` is the snapshot's UTF-8 length."""
        return self._guard(self._resume_sizes, session_id)

    def _resume_sizes(self, session_id: str | None) -> list[dict[str, Any]]:
        sql = (
            "SELECT id, session_id, compact_seq, kind, event_count, created_at, consumed, "
            "consumed_at, consumed_by, length(CAST(snapshot AS BLOB)) AS bytes "
            "FROM session_resume"
        )
        params: tuple[object, ...] = ()
        if session_id is not None:
            sql += " WHERE session_id = ?"
            params = (_text(session_id),)
        return _dicts(self.conn.execute(sql + " ORDER BY id", params))

    def record_search(self, session_id: str, output_bytes: int) -> None:
        """Add one search that printed ``output_bytes`` to the session's tally.

        The tally is ``store_meta['searches:<session id>'] = "<searches> <bytes>"``: one
        row per session, updated in one ``BEGIN IMMEDIATE`` transaction, so concurrent
        searches all count and each printed byte counts once.
        """
        self._guard(self._record_search, _text(session_id), int(output_bytes))

    def _record_search(self, session_id: str, output_bytes: int) -> None:
        key = SEARCH_TALLY_PREFIX + session_id
        with _Tx(self.conn) as conn:
            row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (key,)).fetchone()
            count, total = _parse_tally(row[0] if row else None)
            conn.execute(
                "INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)",
                (key, f"{count + 1} {total + max(output_bytes, 0)}"),
            )

    def search_tallies(self) -> dict[str, tuple[int, int]]:
        """``{session_id: (searches, output bytes)}`` recorded by :meth:`record_search`."""
        rows = self._guard(
            lambda: self.conn.execute(
                "SELECT key, value FROM store_meta WHERE key >= ? AND key < ?",
                (SEARCH_TALLY_PREFIX, SEARCH_TALLY_PREFIX[:-1] + ";"),
            ).fetchall()
        )
        return {str(key)[len(SEARCH_TALLY_PREFIX) :]: _parse_tally(value) for key, value in rows}


# store_meta keys of the per-session search tallies (see Store.record_search).
SEARCH_TALLY_PREFIX = "searches:"


def _parse_tally(value: object) -> tuple[int, int]:
    try:
        count, total = str(value).split()
        return int(count), int(total)
    except ValueError:
        return 0, 0  # absent or damaged: start again rather than fail a search
