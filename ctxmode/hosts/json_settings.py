"""One JSON settings file holding ctxmode's hook entries among the user's own: how the
hosts that keep their hooks in such a file (Gemini CLI, Copilot CLI, Qwen Code) install
and uninstall there, in one flow.

The edits themselves are :mod:`ctxmode.settings`'s (byte-preserving merge and removal of
the entries ctxmode marks as its own by their command). What this module adds is what
was the same in each host's installer: a file that is no JSON object is refused; the
bytes before ctxmode's first entries are kept in the data root
(:class:`ctxmode.config_files.Ledger`) and put back on uninstall when the file is exactly
those bytes plus ctxmode's entries, else ctxmode's entries alone go; a file (and folder)
that install created goes away again once it holds nothing else, never one the user had;
every write atomic, the file's mode kept. What differs between hosts is a :class:`Shape`.

The decisions are pure (:func:`planned_install`, :func:`planned_removal`, text in, text
out); :func:`install` and :func:`uninstall` only read the file and the ledger around them
and write what was decided. Also here: the scope's path, the user folder a variable can
move, the command that runs a hook shim, and the ``trustedFolders.json`` rules Gemini and
Qwen (its fork) share.

CLI-only: never imported by a hook.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import ctxmode
from ctxmode import settings
from ctxmode.config_files import (
    BACKUP_SUFFIX,
    InstallError,
    Ledger,
    legacy_backup,
    legacy_created,
)
from ctxmode.config_files import read_text as _read
from ctxmode.config_files import unified_diff as _diff
from ctxmode.config_files import write_keeping_mode as _write
from ctxmode.hosts.settings_cli import parse_or_raise
from ctxmode.settings import SettingsError

SCOPES = ("user", "project")


@dataclass(frozen=True)
class Result:
    """What install/uninstall did (or, with dry_run, would do) to a host's settings file."""

    scope: str
    path: str
    action: str  # installed, updated, unchanged, removed, deleted, not installed
    changed: bool
    dry_run: bool
    diff: str
    hooks: int  # ctxmode handlers in the file afterwards
    notes: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()  # ctxmode's permissions.allow rules in the file afterwards


@dataclass(frozen=True)
class Shape:
    """What one host's settings file is, where hosts differ.

    ``unmerge``: the text without ctxmode's entries (its hooks; Qwen's also its allow
    rule); ``restores``: whether a text is exactly a backup plus ctxmode's entries;
    ``own_keys``: the top-level keys a file ctxmode made may hold and still count as
    holding nothing (Copilot's repository file also its ``version``); ``legacy_beside``:
    an install older than the ledger may have kept a backup beside the file
    (``<file>.ctxmode-backup``; Copilot came after it)."""

    unmerge: Callable[[str], str] = settings.unmerge
    restores: Callable[[str, str | None], bool] = settings.restores
    own_keys: frozenset[str] = frozenset({"hooks"})
    legacy_beside: bool = True


@dataclass(frozen=True)
class Change:
    """What install or uninstall makes of one file: ``new`` None deletes it."""

    old: str | None
    new: str | None
    action: str
    changed: bool
    diff: str
    ours_before: bool = False  # the file held ctxmode's entries already


# --------------------------------------------------------------------------- paths


def user_folder(
    env: Mapping[str, str] | None, name: str, *, folder_var: str = "", home_var: str = ""
) -> str:
    """A host's folder in the user's home, ``~/NAME``: ``$folder_var`` is the folder
    itself when set, ``$home_var`` a home to use instead of ``$HOME``."""
    env = os.environ if env is None else env
    moved = env.get(folder_var, "").strip() if folder_var else ""
    if moved:
        return os.path.abspath(os.path.expanduser(moved))
    home = (env.get(home_var, "").strip() if home_var else "") or env.get("HOME", "").strip()
    home = os.path.expanduser(home) if home else os.path.expanduser("~")
    return os.path.join(os.path.abspath(home), name)


def scoped_path(
    scope: str,
    project_dir: str | None,
    user_dir: str,
    files: Mapping[str, tuple[str, str]],
    label: str,
) -> str:
    """The scope's file (``files``: scope → (``"user"`` or ``"project"``, its path below
    that folder, ``/``-separated)); ``label`` names the host in the error for an unknown
    scope."""
    if scope not in SCOPES:
        raise InstallError(f"unknown scope {scope!r} for {label} (expected user or project)")
    base, name = files[scope]
    if base == "user":
        return os.path.join(user_dir, *name.split("/"))
    if not project_dir:
        raise InstallError("the project scope needs a project directory")
    root = os.path.realpath(os.path.expanduser(project_dir))
    if not os.path.isdir(root):
        raise InstallError(f"project directory not found: {root}")
    return os.path.join(root, *name.split("/"))


# --------------------------------------------------------------------------- handlers


def sh_quote(text: str) -> str:
    """Single-quoted for ``sh -c``/``bash -c`` always (a path with spaces or $ stays one word)."""
    return "'" + text.replace("'", "'\\''") + "'"


def shim_command(
    shim: str, python: str | None = None, package_dir: str | None = None, argument: str = ""
) -> str:
    """The command that runs the package's hook shim ``shim`` with this interpreter
    (``-I -S``: no user site, no site-packages), then ``argument`` (``--host NAME``)."""
    python = os.path.abspath(python or sys.executable)
    package_dir = os.path.abspath(package_dir or os.path.dirname(ctxmode.__file__))
    script = os.path.join(package_dir, "hooks", shim + ".py")
    command = f"{sh_quote(python)} -I -S {sh_quote(script)}"
    return f"{command} {argument}" if argument else command


# --------------------------------------------------------------------------- trust


def folder_trust(trust_text: str | None, folder: str) -> str | None:
    """What a ``trustedFolders.json`` (Gemini's, Qwen's) says of ``folder``:
    ``TRUST_FOLDER`` (the folder or a parent is trusted), ``DO_NOT_TRUST``, or None (not
    named). The most specific rule wins; ``TRUST_PARENT`` on a path trusts the folder
    that holds it."""
    if not trust_text:
        return None
    try:
        rules = json.loads(trust_text)
    except ValueError:
        return None
    if not isinstance(rules, dict):
        return None
    target = os.path.realpath(os.path.expanduser(folder))
    best: tuple[int, str] | None = None
    for path, level in rules.items():
        if not isinstance(path, str) or not isinstance(level, str):
            continue
        base = os.path.realpath(os.path.expanduser(path))
        if level == "TRUST_PARENT":
            base, level = os.path.dirname(base), "TRUST_FOLDER"
        if within(target, base) and (best is None or len(base) > best[0]):
            best = (len(base), level)
    return best[1] if best is not None else None


def within(target: str, base: str) -> bool:
    """Whether the real path ``target`` is ``base`` or below it."""
    return target == base or target.startswith(base.rstrip("/") + "/")


# --------------------------------------------------------------------------- decisions


def holds_nothing(text: str | None, own_keys: frozenset[str] = Shape.own_keys) -> bool:
    """Whether a settings text holds nothing but an empty ``hooks`` (and ``own_keys``)."""
    if text is None:
        return True
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return False
    if not isinstance(value, dict):
        return False
    hooks = value.get("hooks")
    return set(value) <= own_keys and (not hooks or hooks == {})


def ours_alone(text: str, shape: Shape) -> bool:
    """Whether a settings text holds ctxmode's entries and nothing else."""
    try:
        return bool(settings.registrations(text)) and holds_nothing(
            shape.unmerge(text), shape.own_keys
        )
    except SettingsError:
        return False


def planned_install(
    path: str, old: str | None, merge: Callable[[str], str], seed: str | None = None
) -> Change:
    """The file ``path`` (text ``old``, None: there is none) with ctxmode's entries
    (``merge``: the host's entries into a text); a file ctxmode creates starts as ``seed``."""
    parse_or_raise(old or "", path)
    base = old if old is not None else seed
    try:
        new = merge(base or "")
    except SettingsError as exc:
        raise InstallError(f"{path}: {exc}") from None
    changed = new != (old or "") or old is None
    had = bool(old and settings.registrations(old))
    action = "unchanged" if not changed else ("updated" if had else "installed")
    return Change(old, new, action, changed, _diff(old, new, path) if changed else "", had)


def planned_removal(
    path: str, old: str, backup: str | None, shape: Shape, *, ours_made_it: bool
) -> Change:
    """The file ``path`` (text ``old``, with ctxmode's entries) without them: ``backup``
    when that is all they changed, else ``old`` less ctxmode's entries; deleted when
    that leaves nothing and ctxmode had created it (``ours_made_it``)."""
    new: str | None
    if shape.restores(old, backup):
        new = backup
    else:
        try:
            new = shape.unmerge(old)
        except SettingsError as exc:
            raise InstallError(f"{path}: {exc}") from None
        if holds_nothing(new, shape.own_keys) and ours_made_it:
            new = None  # ctxmode's own file: it goes away again (never an empty one of theirs)
    action = "deleted" if new is None else "removed"
    return Change(old, new, action, True, _diff(old, new, path), True)


# --------------------------------------------------------------------------- the file


def install(
    path: str,
    merge: Callable[[str], str],
    shape: Shape,
    *,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
    seed: str | None = None,
) -> Change:
    """Merge ctxmode's entries into the settings file ``path`` (see :func:`planned_install`),
    writing through a symlink, never over it."""
    target = os.path.realpath(path)
    change = planned_install(path, _read(target), merge, seed)
    if not dry_run:
        # The user's bytes before ctxmode's first entries (uninstall restores them) and
        # what this write creates, noted in the data root before the file changes; a
        # backup an older version kept beside the file moves in.
        ledger = Ledger.load(env)
        noted = ledger.adopt(target, _beside(target, shape), lambda t: ours_alone(t, shape))
        if change.changed:
            ledger.before_write(target, change.old, ours_before=change.ours_before)
        if noted or change.changed:
            ledger.save()
        if change.changed:
            assert change.new is not None
            _write(target, change.new)
    return change


def uninstall(
    path: str, shape: Shape, *, dry_run: bool = False, env: Mapping[str, str] | None = None
) -> Change | None:
    """Remove ctxmode's entries from the settings file ``path`` (see
    :func:`planned_removal`); None when it holds none."""
    target = os.path.realpath(path)
    old = _read(target)
    if old is None:
        return None
    try:
        settings.parse(old, path)  # a file that is no JSON is an error that names it
    except SettingsError as exc:
        raise InstallError(str(exc)) from None
    if not settings.registrations(old):
        return None
    parse_or_raise(old, path)
    ledger = Ledger.load(env)
    beside = _beside(target, shape)
    legacy = legacy_backup(beside)
    backup = ledger.backup_text(target)
    if backup is None:
        backup = legacy
    # A file with ctxmode's entries that the ledger does not know: an older install's own
    # unless that install kept a backup of the user's bytes beside it (and no host without
    # such older installs, Copilot, ever created a file the ledger does not know).
    unknown = shape.legacy_beside and legacy_created(legacy, lambda t: ours_alone(t, shape))
    made_it = ledger.created(target, unknown=unknown)
    change = planned_removal(path, old, backup, shape, ours_made_it=made_it)
    if not dry_run:
        if change.new is None:
            os.unlink(target)
        else:
            _write(target, change.new)
        ledger.forget(target)
        for stale in beside:
            with contextlib.suppress(OSError):
                os.unlink(stale)
        ledger.remove_created_dirs(os.path.dirname(target))
        ledger.try_save()
    return change


def _beside(target: str, shape: Shape) -> list[str]:
    """Where an install older than the ledger kept the file's backup (none for Copilot)."""
    return [target + BACKUP_SUFFIX] if shape.legacy_beside else []


def result(
    scope: str,
    path: str,
    change: Change | None,
    *,
    dry_run: bool,
    notes: list[str] | None = None,
    rules: list[str] | None = None,
) -> Result:
    """The :class:`Result` of ``change`` (None: uninstall found nothing of ctxmode's)."""
    if change is None:
        return Result(scope, path, "not installed", False, dry_run, "", 0)
    hooks = 0
    if change.new is not None and change.action in _KEPT:
        hooks = len(settings.registrations(change.new))
    return Result(
        scope,
        path,
        change.action,
        change.changed,
        dry_run,
        change.diff,
        hooks,
        tuple(notes or ()),
        tuple(rules or ()),
    )


_KEPT = ("installed", "updated", "unchanged")  # actions after which ctxmode's entries are there
