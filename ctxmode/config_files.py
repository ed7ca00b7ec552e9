"""A client's configuration files, changed safely: what every host's install shares.

Each host's ``install`` module (``ctxmode/hosts/<name>/install.py``) decides *what* to write
in its client's files; this module is *how* a file is read, written, backed up and shown:

- :func:`read_text`: the file's text, None when it does not exist; a file that is not
  UTF-8 or cannot be read raises :class:`InstallError` and is never written.
- :func:`write_atomic`: replace a file in one step (a temp file in the same folder, then
  ``os.replace``): a crash leaves the old file or the new one, and its mode is kept.
- :data:`BACKUP_SUFFIX`: the bytes before ctxmode's first change are kept beside the file
  (``settings.json.ctxmode-backup``), so that uninstall can restore them exactly.
- :func:`unified_diff` (what ``--dry-run`` prints) and :func:`display_path` (``~/...``).
- :class:`Report`: what an install or uninstall tells the user, which the click command
  (``ctxmode.cli.install_cmd``) only prints.

CLI-only: never imported by a hook.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import tempfile

BACKUP_SUFFIX = ".ctxmode-backup"


class InstallError(Exception):
    """The change cannot be made safely; the message says why (and which file)."""


class UsageError(InstallError):
    """The command asked for something this host does not have (a scope, an option)."""


class Report:
    """What an install or uninstall tells the user, in order: ``(stream, text)`` with
    ``stream`` "out" or "err" and ``text`` as it is printed. The click command only prints
    it (also when the host raised :class:`InstallError` after saying part of it)."""

    __slots__ = ("messages",)

    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []

    def say(self, line: str) -> None:
        """A line on stdout."""
        self.messages.append(("out", line + "\n"))

    def note(self, line: str) -> None:
        """A line on stderr (``warning: ...``, ``note: ...``)."""
        self.messages.append(("err", line + "\n"))

    def write(self, text: str) -> None:
        """Text on stdout as it is (a diff)."""
        self.messages.append(("out", text))


def read_text(path: str) -> str | None:
    """The file's text, or None when it does not exist."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstallError(f"{path}: not UTF-8 text (byte {exc.start}); left untouched") from None


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def file_mode(path: str) -> int | None:
    """The file's permission bits, or None when it does not exist."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return None


def write_atomic(
    path: str, text: str, mode: int | None = None, *, folder_mode: int | None = None
) -> None:
    """Replace ``path`` in one step; a crash leaves the old file or the new one.

    ``mode``: the new file's permission bits (None: ``0666`` less the umask). Missing
    folders are made (with ``folder_mode``, else the umask's default)."""
    directory = os.path.dirname(path)
    if folder_mode is None:
        os.makedirs(directory, exist_ok=True)
    else:
        os.makedirs(directory, mode=folder_mode, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp"
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode if mode is not None else 0o666 & ~umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_keeping_mode(path: str, text: str) -> None:
    """Write atomically, keeping the file's mode (a new file: 0600 in a 0700 folder, as a
    file of the user's own that may name their paths)."""
    mode = file_mode(path)
    write_atomic(path, text, 0o600 if mode is None else mode, folder_mode=0o700)


def unified_diff(old: str | None, new: str | None, path: str) -> str:
    """The change from ``old`` to ``new`` (None: no file) as a unified diff ("" if none)."""
    if old == new:
        return ""
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        (new or "").splitlines(keepends=True),
        fromfile=path if old is not None else "/dev/null",
        tofile=path if new is not None else "/dev/null",
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def display_path(path: str) -> str:
    """``path`` with the home directory shown as ``~``."""
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path
