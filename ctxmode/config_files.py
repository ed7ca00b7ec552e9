"""A client's configuration files, changed safely: what every host's install shares.

Each host's ``install`` module (``ctxmode/hosts/<name>/install.py``) decides *what* to write
in its client's files; this module is *how* a file is read, written, backed up and shown:

- :func:`read_text`: the file's text, None when it does not exist; a file that is not
  UTF-8 or cannot be read raises :class:`InstallError` and is never written.
- :func:`write_atomic`: replace a file in one step (a temp file in the same folder, then
  ``os.replace``): a crash leaves the old file or the new one, and its mode is kept.
- :class:`Ledger`: what ctxmode made and kept, in its private data root
  (``<root>/installed.json``), never beside the user's files: which files it created
  (only those may uninstall delete, once they hold nothing else), which folders it made
  for them (removed again once empty), and each file's backup, the bytes before
  ctxmode's entries came in, under ``<root>/backups/`` (so that uninstall can restore
  them exactly, and ``doctor`` can say where they are). Older versions kept the backup
  beside the file (:data:`BACKUP_SUFFIX`): :meth:`Ledger.adopt` moves it in.
- :func:`unified_diff` (what ``--dry-run`` prints) and :func:`display_path` (``~/...``).
- :class:`Report`: what an install or uninstall tells the user, which the click command
  (``ctxmode.cli.install_cmd``) only prints.

CLI-only: never imported by a hook.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ctxmode import hashing, paths

# Where versions before 0.5 kept a file's backup: beside it (``settings.json.ctxmode-backup``,
# an untracked file in the user's repository for a project scope). Read, then moved in.
BACKUP_SUFFIX = ".ctxmode-backup"
# Under the data root: the ledger, the backups' folder, and 0.4's record of Claude Code's
# folders (``created_dirs``, ``team_files``), merged into the ledger when first read.
LEDGER_NAME = "installed.json"
BACKUPS_DIR = "backups"
_OLD_RECORD = "installed-dirs.json"


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


# --------------------------------------------------------------------------- what ctxmode made


class Ledger:
    """What ctxmode's installs (and ``config set``) made or kept, for their undoing.

    Kept in the data root as ``installed.json`` (0600), loaded with :meth:`load`,
    changed in memory, written back with :meth:`save`:

    - ``files``: each file ctxmode wrote, by its real path: ``created`` (ctxmode made
      it: uninstall may delete it once it holds nothing else; a file that existed, even
      empty, is the user's and stays) and ``backup`` (the name of its backup under
      ``<root>/backups``: the bytes before ctxmode's entries came in);
    - ``created_dirs``: folders made for such a file (removed once empty, never one the
      user had);
    - ``team_files``: Claude Code's shared project files that run the per-user launcher.
    """

    __slots__ = ("created_dirs", "files", "root", "team_files")

    def __init__(self, root: str) -> None:
        self.root = root
        self.files: dict[str, dict[str, Any]] = {}
        self.created_dirs: list[str] = []
        self.team_files: list[str] = []

    # ------------------------------------------------------------------ file

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None) -> Ledger:
        """The ledger of the data root (an empty one when there is none or it is unreadable)."""
        ledger = cls(paths.data_root(os.environ if env is None else env))
        for name in (_OLD_RECORD, LEDGER_NAME):
            value = _read_json(os.path.join(ledger.root, name))
            files = value.get("files")
            if isinstance(files, dict):
                for path, entry in files.items():
                    if isinstance(path, str) and isinstance(entry, dict):
                        ledger.files[path] = dict(entry)
            for key in ("created_dirs", "team_files"):
                items = value.get(key)
                known: list[str] = getattr(ledger, key)
                for item in items if isinstance(items, list) else []:
                    if isinstance(item, str) and item not in known:
                        known.append(item)
        return ledger

    @property
    def path(self) -> str:
        return os.path.join(self.root, LEDGER_NAME)

    def save(self) -> None:
        """Write the ledger (an empty one: the file goes). :class:`InstallError` when the
        data root cannot be written: without it, uninstall could not tell ctxmode's files
        from the user's."""
        empty = not (self.files or self.created_dirs or self.team_files)
        try:
            if empty:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)
            else:
                paths.ensure_dir(self.root)
                value = {
                    "files": self.files,
                    "created_dirs": self.created_dirs,
                    "team_files": self.team_files,
                }
                write_atomic(self.path, json.dumps(value, indent=2) + "\n", 0o600)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.root, _OLD_RECORD))  # merged in
        except OSError as exc:
            raise InstallError(_root_error(self.root, exc)) from None

    def try_save(self) -> bool:
        """:meth:`save` where the record is a nicety (an uninstall, ``config``): False
        when the data root could not take it."""
        try:
            self.save()
        except InstallError:
            return False
        return True

    # ------------------------------------------------------------------ files made

    def created(self, target: str, *, unknown: bool) -> bool:
        """Whether ctxmode created ``target`` (its real path); ``unknown``: the answer
        for a file the ledger does not know. (One with ctxmode's entries was written by
        an install older than the ledger, and those kept a backup beside every file
        they found: without one there, the file was that install's own.)"""
        entry = self.files.get(target)
        return bool(entry.get("created")) if entry is not None else unknown

    def before_write(self, target: str, old: str | None, *, ours_before: bool) -> None:
        """Note what a write of ``target`` makes (call it after :meth:`adopt`, before
        writing; then :meth:`save`): the folders it creates; the file when it is new; a
        backup of ``old`` when it holds none of ctxmode's entries (the user's own bytes,
        the file theirs); an update of ctxmode's entries keeps what was noted before."""
        self.note_dirs(os.path.dirname(target))
        if old is None:
            self.drop_backup(target)
            self.files[target] = {"created": True}
        elif not ours_before:
            self.keep_backup(target, old, created=False)
        elif target not in self.files:
            self.files[target] = {"created": True}  # an older install's (see created)

    def forget(self, target: str) -> None:
        """``target`` is the user's alone again (restored, or deleted): no entry, no backup."""
        self.drop_backup(target)
        self.files.pop(target, None)

    # ------------------------------------------------------------------ backups

    def backup_path(self, target: str) -> str:
        """Where ``target``'s backup is kept: ``<root>/backups/<folder>-<name>.<hash>``,
        e.g. ``claude-settings.json.1f2e3d4c`` (the hash of the full path keeps two
        projects' files apart; :attr:`files` maps each back to its file)."""
        folder = os.path.basename(os.path.dirname(target)).lstrip(".") or "root"
        name = f"{folder}-{os.path.basename(target)}.{hashing.sha256_hex(target)[:8]}"
        return os.path.join(self.root, BACKUPS_DIR, name)

    def keep_backup(self, target: str, text: str, *, created: bool | None = False) -> str:
        """Keep ``text`` as ``target``'s backup (0600, in the data root); its path.
        ``created``: what the file's entry says of it (None: leave it as it is)."""
        backup = self.backup_path(target)
        try:
            paths.ensure_dir(os.path.dirname(backup))
            write_atomic(backup, text, 0o600)
        except OSError as exc:
            raise InstallError(_root_error(self.root, exc)) from None
        entry = self.files.setdefault(target, {"created": False})
        entry["backup"] = os.path.basename(backup)
        if created is not None:
            entry["created"] = created
        return backup

    def backup_text(self, target: str) -> str | None:
        """The bytes kept for ``target`` (None: no backup)."""
        name = self.files.get(target, {}).get("backup")
        if not isinstance(name, str):
            return None
        return legacy_backup([os.path.join(self.root, BACKUPS_DIR, os.path.basename(name))])

    def drop_backup(self, target: str) -> None:
        entry = self.files.get(target)
        name = entry.pop("backup", None) if entry is not None else None
        if isinstance(name, str):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.root, BACKUPS_DIR, os.path.basename(name)))
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(self.root, BACKUPS_DIR))  # only when empty

    def backups(self) -> list[tuple[str, str]]:
        """(file, its backup) of every backup kept, sorted by file."""
        return sorted(
            (target, os.path.join(self.root, BACKUPS_DIR, os.path.basename(entry["backup"])))
            for target, entry in self.files.items()
            if isinstance(entry.get("backup"), str)
        )

    def adopt(self, target: str, beside: Iterable[str], ours_alone: Callable[[str], bool]) -> bool:
        """Take in what an older version kept beside the file (``beside``: where its
        backup could be): the backup moves into the data root, and the file's entry says
        whether that version had created it (:func:`legacy_created`). True when there
        was something to take in (then :meth:`save`)."""
        beside = [path for path in beside if os.path.isfile(path)]
        legacy = legacy_backup(beside)
        if legacy is not None and target not in self.files:
            self.files[target] = {"created": legacy_created(legacy, ours_alone)}
            if not ours_alone(legacy):  # the user's bytes: worth keeping
                self.keep_backup(target, legacy, created=None)
        for path in beside:
            with contextlib.suppress(OSError):
                os.unlink(path)
        return bool(beside)

    # ------------------------------------------------------------------ folders

    def note_dirs(self, folder: str) -> None:
        """Note ``folder`` and the parents a write into it will create (call it before);
        never the data root (or a folder above it): that one holds the ledger itself."""
        for missing in paths.missing_dirs(folder):
            if missing == self.root or self.root.startswith(missing.rstrip(os.sep) + os.sep):
                continue
            if missing not in self.created_dirs:
                self.created_dirs.append(missing)

    def remove_created_dirs(self, folder: str) -> list[str]:
        """Remove ``folder`` and its parents while each is empty and ctxmode made it."""
        removed = []
        current = os.path.abspath(folder)
        while current in self.created_dirs:
            try:
                os.rmdir(current)  # only ever an empty folder
            except FileNotFoundError:
                pass
            except OSError:
                break
            self.created_dirs.remove(current)
            removed.append(current)
            current = os.path.dirname(current)
        return removed


def legacy_backup(beside: Iterable[str]) -> str | None:
    """The text of the first backup an older version kept beside a file, if any."""
    for path in beside:
        if os.path.isfile(path) and not os.path.islink(path):
            with contextlib.suppress(InstallError):
                text = read_text(path)
                if text is not None:
                    return text
    return None


def legacy_created(legacy: str | None, ours_alone: Callable[[str], bool]) -> bool:
    """Whether an install older than the ledger had created a file, from the backup it
    kept beside it (``legacy``): it kept one of every file it found, and on an update one
    of its own earlier version (``ours_alone``: ctxmode's entries and nothing else). An
    empty backup is an empty file the user had."""
    return legacy is None or ours_alone(legacy)


def _read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _root_error(root: str, exc: OSError) -> str:
    return (
        f"cannot keep ctxmode's record of your files in {root} ({exc.strerror or exc}): "
        "nothing changed; see `ctxmode doctor`, or set CTXMODE_HOME to a folder you can write"
    )
