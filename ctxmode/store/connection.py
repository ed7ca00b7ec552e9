"""One open store file: opening (create, migrate, recover), transactions, the error guard.

Imported by every hook process, so it uses the C module ``_sqlite3`` directly (the
``sqlite3`` package adds ~8 ms of imports for adapters we do not use). Connections are
in autocommit mode (``isolation_level=None``); every write goes through :class:`_Tx`,
one ``BEGIN IMMEDIATE`` … ``COMMIT``, so the scope of each transaction is visible.

Concurrency: WAL + ``busy_timeout`` + ``BEGIN IMMEDIATE``. A writer waits for the lock
up to the timeout, then :class:`StoreLocked` is raised and nothing of its transaction
is written. Readers never block writers.

Errors: every public method of the store is wrapped by :func:`guarded`, which maps
SQLite's exceptions to :class:`StoreError` and, for a store opened with ``recover``,
heals corruption once: the damaged file is moved aside (``<name>.corrupt-<UTC stamp>``,
with its ``-wal``/``-shm``; see :func:`quarantine`), a fresh
store takes its place, the incident is recorded in ``store_meta``, and the call runs
again. A valid store is never moved or deleted.

Creation: a new store is built under a temporary name and renamed into place under the
sessions-folder lock; connections open existing files only (``mode=rw``), so no
process can create a store outside that lock.

Reading without write access (a lookup in a client's sandbox, a folder of mode 0500):
see :func:`_read_connection`.

Long on purpose (~700 lines): every way a store file is opened (create, migrate,
recover, read where the folder is read-only) is one concern, and every hook imports
this one module (another costs a hook ~0.1 ms).
"""

from __future__ import annotations

import os

from ctxmode import paths
from ctxmode.migrations import (
    SCHEMA_VERSION,
    StoreError,
    StoreTooNew,
    _sqlite3,  # imported the cheap way: see migrations._load_sqlite3
    migrate,
    user_version,
)
from ctxmode.store.values import as_text, file_stamp, iso_utc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Concatenate, ParamSpec, TypeVar

    _P = ParamSpec("_P")
    _T = TypeVar("_T")
    _C = TypeVar("_C", bound="Connection")

# ---------------------------------------------------------------- what the store raises

# Everything a Store method raises is a StoreError (``guarded`` maps SQLite's exceptions
# with ``store_error``). StoreError and StoreTooNew live in ctxmode.migrations, which
# raises them before a store exists. Kept in this module, not one of their own: every
# hook imports them, and a module costs a hook ~0.1 ms to load.


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


class StoreOutdated(StoreError):
    """A read-only open found an older schema (a read-write open migrates it)."""


# Primary SQLite result codes (exc.sqlite_errorcode & 0xff, Python 3.11+).
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_CORRUPT, _SQLITE_NOTADB = 5, 6, 11, 26


def error_class(exc: BaseException) -> type[StoreError]:
    """The kind of :class:`StoreError` a SQLite exception means."""
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


def store_error(exc: BaseException, path: str) -> StoreError:
    """``exc`` as the :class:`StoreError` to raise, naming the store's ``path``."""
    error = error_class(exc)(f"{exc} ({path})")
    error.__cause__ = exc
    return error


SYNCHRONOUS_MODES = ("NORMAL", "OFF", "FULL")


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


def guarded(method: Callable[Concatenate[_C, _P], _T]) -> Callable[Concatenate[_C, _P], _T]:
    """Decorate a store method: SQLite errors become :class:`StoreError`; with ``recover``,
    corruption is healed once (see :meth:`Connection._heal`) and the method runs again.

    Only the outermost guarded call guards: a guarded method called by another runs
    bare, so an error is mapped once and healing never swaps the connection in the
    middle of the caller's transaction (the caller heals and runs again as a whole).

    A store read in place where its folder cannot be written (``_pin`` set, see
    :func:`_read_connection`) is checked after each call: when its file changed while
    the call read it, the call runs again on a fresh read.
    """

    def guard(self: _C, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        if self._guarding:
            return method(self, *args, **kwargs)
        self._guarding = True
        try:
            if self._pin is not None:
                return self._read_pinned(method, args, kwargs)
            try:
                return method(self, *args, **kwargs)
            except _sqlite3.Error as exc:
                error = store_error(exc, self.path)
            if not (isinstance(error, StoreCorrupt) and self.recover and not self.readonly):
                raise error
            self._heal(str(error))
            try:
                return method(self, *args, **kwargs)
            except _sqlite3.Error as exc:
                raise store_error(exc, self.path) from exc
        finally:
            self._guarding = False

    # Not functools.wraps: functools (with collections) costs ~5 ms per hook process.
    guard.__name__ = method.__name__
    guard.__qualname__ = method.__qualname__
    guard.__doc__ = method.__doc__
    guard.__module__ = method.__module__
    return guard


def file_identity(path: str) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of ``path``, or None: which file a check was about."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def orphan_wal(path: str) -> bool:
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
        return "a -wal file without its database" if orphan_wal(path) else None
    try:
        conn = _sqlite3.connect(path, timeout=0.1, isolation_level=None)
    except _sqlite3.Error as exc:
        return str(exc)
    try:
        user_version(conn)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except _sqlite3.Error as exc:
        if error_class(exc) is StoreCorrupt:
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
            if file_identity(path) != expect:
                return None
        elif _probe_problem(path) is None:
            return None
        base = f"{path}.corrupt-{file_stamp()}"
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


def _connect(path: str, mode: str, busy_timeout_ms: int) -> _sqlite3.Connection:
    """An autocommit connection to an existing store file (``mode`` "rw" or "ro"; never
    "rwc": only ``_create_file`` makes a store)."""
    return _sqlite3.connect(
        f"file:{_quote_uri(path)}?mode={mode}",
        timeout=busy_timeout_ms / 1000.0,
        isolation_level=None,
        check_same_thread=False,
        uri=True,
    )


def _quote_uri(path: str) -> str:
    # A URI has no relative paths: "sessions/s.db" would otherwise mean "/sessions/s.db".
    path = os.path.abspath(path).replace("\\", "/")
    if not path.startswith("/"):
        path = "/" + path  # "C:/x" -> "/C:/x", which SQLite reads as a drive path
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")


class Connection:
    """One open store file. Not shared between processes; cheap to open per hook.

    The base of :class:`ctxmode.store.Store`: opening and closing, the guard's state,
    ``store_meta`` and the schema facts every subject needs.
    """

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
        self._words: bool | None = None
        self.synchronous = "NORMAL"
        # Set when opening this store moved a corrupt one aside: (new name, reason).
        self.incident: tuple[str, str] | None = None
        # True while a guarded method runs (see guarded).
        self._guarding = False
        # Set for a store read in place where its folder cannot be written: the lock
        # and the file's state that each call checks (see _read_connection).
        self._pin: _Pin | None = None
        self._read_mode = "ro"

    # ------------------------------------------------------------ opening

    @classmethod
    def open(
        cls: type[_C],
        path: str,
        *,
        busy_timeout_ms: int = 2000,
        readonly: bool = False,
        recover: bool = False,
        synchronous: str = "NORMAL",
        tidy: bool = False,
    ) -> _C:
        """Open (creating and migrating as needed) the store at ``path``.

        Hot path for an existing, current store: one ``stat``, the connect, two PRAGMAs.
        ``readonly`` never creates, migrates or recovers anything, and reads where the
        folder cannot be written too (see :func:`_read_connection`). ``recover`` moves a
        corrupt store aside and starts afresh (see the module docstring).

        ``tidy`` (with ``readonly``): read through a query-only read-write connection
        where the file can be written, so that, closed last, it removes -wal/-shm as a
        hook's connection does (a ``mode=ro`` one leaves them behind): a command a
        person runs leaves the folder as it found it.

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
            return cls._open_readonly(path, busy_timeout_ms, "rw" if tidy else "ro")
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
        cls: type[_C],
        path: str,
        busy_timeout_ms: int,
        recover: bool,
        synchronous: str = "NORMAL",
        retries: int = 2,
    ) -> _C:
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
            identity = _create_file(path)
        try:
            # mode=rw: never create the file here. Between the stat above and this
            # connect, a recovering process may move a corrupt file aside; a file
            # SQLite made in its place (outside the lock) would then be replaced by
            # that process's fresh store, renamed in by _create_file, together with
            # every event written to it. Only _create_file makes a store.
            conn = _connect(path, "rw", busy_timeout_ms)
        except _sqlite3.Error as exc:
            if retries > 0 and not os.path.lexists(path):
                # Moved aside since the stat: start over (wait for the fresh store).
                return cls._open_rw(path, busy_timeout_ms, recover, synchronous, retries - 1)
            raise store_error(exc, path) from exc
        try:
            # Per connection. NORMAL in WAL mode: no fsync per commit, no corruption
            # on any crash (an OS crash may drop the last commits). See open().
            conn.execute(f"PRAGMA synchronous = {synchronous}")
            if user_version(conn) != SCHEMA_VERSION:
                migrate(conn)
        except _sqlite3.Error as exc:
            conn.close()
            error = store_error(exc, path)
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

    @classmethod
    def _replace_corrupt(
        cls: type[_C],
        path: str,
        busy_timeout_ms: int,
        synchronous: str,
        reason: str,
        expect: tuple[int, int] | None,
    ) -> _C:
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
    def _open_readonly(cls: type[_C], path: str, busy_timeout_ms: int, mode: str = "ro") -> _C:
        if not os.path.isfile(path):
            raise StoreMissing(f"no store at {path}")
        conn, pin = _read_connection(path, busy_timeout_ms, mode)
        try:
            version = user_version(conn)
        except _sqlite3.Error as exc:
            _close_read(conn, pin)
            raise store_error(exc, path) from exc
        if version != SCHEMA_VERSION:
            _close_read(conn, pin)
            if version > SCHEMA_VERSION:
                raise StoreTooNew(
                    f"store schema version {version} is newer than this ctxmode "
                    f"({SCHEMA_VERSION}): {path}"
                )
            raise StoreOutdated(
                f"store schema version {version} predates this ctxmode ({SCHEMA_VERSION});"
                f" open it read-write once to migrate: {path}"
            )
        store = cls(
            conn,
            path,
            readonly=True,
            recover=False,
            busy_timeout_ms=busy_timeout_ms,
            identity=file_identity(path),
        )
        store._pin = pin
        store._read_mode = mode
        return store

    def close(self) -> None:
        # A plain close: SQLite checkpoints and removes the WAL when the last
        # connection goes. Never turn that off: one-shot hook processes would
        # otherwise grow the WAL without bound.
        self.conn.close()
        if self._pin is not None:
            self._pin.release()
            self._pin = None

    def _read_pinned(self, method: Callable[..., _T], args: Any, kwargs: Any) -> _T:
        """Run ``method`` on a store read in place (see :func:`_read_connection`); when
        the file changed meanwhile (a checkpoint, only possible once a -wal exists), read
        afresh and run it again. Its errors are SQLite's, mapped, unless the file changed
        under it (a page rewritten mid-read), which also means: run again."""
        for _ in range(READ_ATTEMPTS):
            pin = self._pin
            try:
                result = method(self, *args, **kwargs)
            except _sqlite3.Error as exc:
                if pin is None or pin.intact():
                    raise store_error(exc, self.path) from exc
            else:
                if pin is None or pin.intact():
                    return result
            self._reread()
        raise StoreError(
            f"cannot read the store without write access to its folder: it kept changing "
            f"while it was read, try again ({self.path})"
        )

    def _reread(self) -> None:
        """A fresh read connection in place of this one (a ``mode=ro`` one, now that a
        -wal exists, or a new pin)."""
        _close_read(self.conn, self._pin)
        self._pin = None
        try:
            self.conn, self._pin = _read_connection(
                self.path, self.busy_timeout_ms, self._read_mode
            )
        except _sqlite3.Error as exc:
            raise store_error(exc, self.path) from exc

    @guarded
    def reading(self, read: Callable[[_sqlite3.Connection], _T]) -> _T:
        """``read(conn)``: a query of the caller's own on this store's connection, guarded
        like every method (errors mapped; a store read in place runs it again when its
        file changed meanwhile). For the CLI's direct queries."""
        return read(self.conn)

    def __enter__(self: _C) -> _C:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _heal(self, reason: str) -> None:
        """Swap in a fresh store for this corrupt one (see the module docstring)."""
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
        self._words = None

    # ------------------------------------------------------------ schema and store_meta

    @guarded
    def fts_enabled(self) -> bool:
        """Whether this store has its FTS5 index (else search uses LIKE)."""
        if self._fts is None:
            row = self.conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events_fts'"
            ).fetchone()
            self._fts = row is not None
        return self._fts

    @guarded
    def words_enabled(self) -> bool:
        """Whether this store has the word index of schema 5 (else words are found as
        substrings, through the trigram index or LIKE)."""
        if self._words is None:
            row = self.conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events_words'"
            ).fetchone()
            self._words = row is not None
        return self._words

    @guarded
    def schema_version(self) -> int:
        return user_version(self.conn)

    @guarded
    def data_version(self) -> int:
        """A number that changes when another connection commits to the file (SQLite's
        ``PRAGMA data_version``; this connection's own commits leave it as it is): a
        caller can tell whether what it read is still current without reading it again."""
        row = self.conn.execute("PRAGMA data_version").fetchone()
        return int(row[0])

    @guarded
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM store_meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @guarded
    def set_meta(self, key: str, value: str) -> None:
        with _Tx(self.conn) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)",
                (key, as_text(value)),
            )

    @guarded
    def incidents(self) -> list[tuple[str, str]]:
        """Recorded incidents (e.g. a corrupt store moved aside), oldest first."""
        rows = self.conn.execute(
            "SELECT key, value FROM store_meta WHERE key LIKE 'incident:%' ORDER BY key"
        ).fetchall()
        return [(str(key), str(value)) for key, value in rows]


# ---------------------------------------------------------------- reading without write access

# A lookup often runs where the data root is readable but not writable: Claude Code's
# sandboxed Bash, Codex's workspace-write and read-only sandboxes, a folder of mode 0500.
# SQLite opens a WAL store read-only (``mode=ro``) only when its -wal and -shm exist or
# can be created (SQLite >= 3.22): right after a hook wrote, and while one writes, they
# exist; an idle store has neither (the last connection removed them), and a read-only
# folder cannot get them. Then everything committed is in the main file, which is read
# in place (``immutable=1``: no -wal, -shm or lock of SQLite's own) while this process
# holds SQLite's SHARED lock on it (see _Pin): nothing is copied, in memory or on disk.
_SQLITE_READONLY, _SQLITE_CANTOPEN = 8, 14
# Attempts before giving up on a store that keeps changing under the reader (each a
# ``mode=ro`` open and, when that cannot work, one read in place; no waiting between).
READ_ATTEMPTS = 8


def _cannot_open(exc: BaseException) -> bool:
    """Whether SQLite refused a read because it could not make the -wal/-shm it wanted:
    CANTOPEN (a read-only mount, a sandbox) or READONLY (a folder of mode 0500, where
    a file of its own could be opened but nothing created beside it)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_CANTOPEN, _SQLITE_READONLY)
    message = str(exc).lower()  # Python 3.10: no error codes
    return "unable to open" in message or "readonly database" in message


def _reading(conn: _sqlite3.Connection) -> None:
    """Make ``conn`` a reader: no write can slip through (query-only), and sorts and
    temporary indexes stay in memory (a sandbox may have no writable temp folder)."""
    conn.execute("PRAGMA query_only = 1")
    conn.execute("PRAGMA temp_store = MEMORY")


def _read_connection(
    path: str, busy_timeout_ms: int, mode: str = "ro"
) -> tuple[_sqlite3.Connection, _Pin | None]:
    """A query-only connection that reads the store at ``path`` as committed, never
    writing to it or its folder when it cannot (see above), with the :class:`_Pin` its
    reads depend on when it reads the main file in place (else None);
    :class:`StoreError` when it cannot read. ``mode`` "rw": where the file is read-only,
    SQLite opens it read-only all the same, and where it is not, the connection tidies
    up at its close."""
    last: BaseException | None = None
    for _ in range(READ_ATTEMPTS):
        conn = None
        try:
            conn = _connect(path, mode, busy_timeout_ms)
            _reading(conn)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the WAL
            return conn, None
        except _sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            if not _cannot_open(exc):
                raise store_error(exc, path) from exc
            last = exc
        if _wal_size(path) > 0:
            continue  # a writer is at work: its -wal/-shm make mode=ro possible
        try:
            pin = _Pin.take(path)
        except OSError as exc:
            raise StoreError(f"cannot read the store: {exc}") from exc
        if pin is None:
            continue
        try:
            conn = _in_place(path, busy_timeout_ms)
        except BaseException:
            pin.release()
            raise
        if pin.intact():
            return conn, pin
        _close_read(conn, pin)
    raise StoreError(
        f"cannot read the store without write access to its folder ({last}); it kept "
        f"changing while it was read: try again ({path})"
    )


def _in_place(path: str, busy_timeout_ms: int) -> _sqlite3.Connection:
    """A query-only connection that reads the main file as it is (``immutable=1``).

    SQLite then takes no lock and looks for no -wal: a WAL store without one reads as a
    rollback-journal database (its header's WAL mark is not acted on without a -wal).
    Only safe while the file cannot change: see :class:`_Pin`."""
    conn = _sqlite3.connect(
        f"file:{_quote_uri(path)}?mode=ro&immutable=1",
        timeout=busy_timeout_ms / 1000.0,
        isolation_level=None,
        check_same_thread=False,
        uri=True,
    )
    try:
        _reading(conn)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except _sqlite3.Error as exc:
        conn.close()
        raise store_error(exc, path) from exc
    return conn


def _close_read(conn: _sqlite3.Connection, pin: _Pin | None) -> None:
    conn.close()
    if pin is not None:
        pin.release()


def _wal_size(path: str) -> int:
    try:
        return os.stat(path + "-wal").st_size
    except OSError:
        return 0


def _signature(path: str) -> tuple[int, int, int, int]:
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _wal_state(path: str) -> tuple[int, int, int, int] | None:
    try:
        return _signature(path + "-wal")
    except OSError:
        return None


class _Pin:
    """SQLite's SHARED lock on a store's main file, held by this process while it reads
    the file in place, and the state the file and its -wal had when it was taken.

    Held, it keeps the file as it is: the last connection of a hook that writes meanwhile
    cannot take EXCLUSIVE, which it needs to checkpoint and delete the -wal at its close,
    and skips that (it never waits). The main file then changes only by a checkpoint of
    a -wal, which :meth:`intact` sees (the -wal's state or the file's changed), however
    coarse the file system's mtime; a call that read while it did runs again.
    """

    __slots__ = ("fd", "path", "signature", "wal")

    def __init__(self, fd: int, path: str, signature: tuple[int, int, int, int]) -> None:
        self.fd = fd
        self.path = path
        self.signature = signature
        self.wal = _wal_state(path)

    @classmethod
    def take(cls, path: str) -> _Pin | None:
        """The pin of ``path`` when its main file is the whole store (no -wal with
        content) and no connection holds EXCLUSIVE (a checkpoint at close under way);
        else None."""
        before = _signature(path)
        if _wal_size(path) > 0:
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            if _shared_lock(fd) and _wal_size(path) == 0 and _signature(path) == before:
                pin = cls(fd, path, before)
                fd = -1
                return pin
        finally:
            if fd >= 0:
                os.close(fd)
        return None

    def intact(self) -> bool:
        """Whether the file and its -wal are as they were when the pin was taken."""
        try:
            return _wal_state(self.path) == self.wal and _signature(self.path) == self.signature
        except OSError:
            return False

    def release(self) -> None:
        # Closing drops the lock (and, POSIX-wise, every lock this process holds on the
        # file: the connection reading in place takes none of its own).
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


# SQLite's lock bytes (os_unix.c): the SHARED range a connection read-locks.
_PENDING_BYTE = 0x40000000
_SHARED_FIRST, _SHARED_SIZE = _PENDING_BYTE + 2, 510


def _shared_lock(fd: int) -> bool:
    """Read-lock SQLite's SHARED range of an open store file, without waiting; False
    when a connection holds EXCLUSIVE. Where there is no fcntl (Windows), True: the
    checks of the file's state stand alone."""
    try:
        import fcntl
    except ImportError:
        return True
    try:
        fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, _SHARED_SIZE, _SHARED_FIRST, os.SEEK_SET)
    except OSError:
        return False
    return True


def _create_file(path: str, meta: tuple[tuple[str, str], ...] = ()) -> tuple[int, int] | None:
    """Create the store atomically: folder 0700, file 0600, WAL mode, fully migrated,
    with ``meta`` in its ``store_meta`` (what the repository's store records about it).

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
                return file_identity(path)  # another process made it while we waited
            if orphan_wal(path):
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
                    conn.executemany(
                        "INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)", meta
                    )
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
        raise store_error(exc, path) from exc
    return file_identity(path)
