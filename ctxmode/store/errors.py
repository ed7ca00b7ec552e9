"""What the store raises: :class:`StoreError` and its kinds, and the mapping from SQLite's.

Everything a :class:`~ctxmode.store.Store` method raises is a :class:`StoreError`
(:func:`ctxmode.store.connection.guarded` maps SQLite's exceptions with
:func:`store_error`). ``StoreError`` and ``StoreTooNew`` live in ``ctxmode.migrations``,
which raises them before a store exists; they are re-exported here.
"""

from __future__ import annotations

from ctxmode.migrations import StoreError, StoreTooNew

__all__ = [
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "StoreMissing",
    "StoreTooNew",
    "error_class",
    "store_error",
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
