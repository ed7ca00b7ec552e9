"""Installing ctxmode's hooks for the Gemini CLI: its settings.json.

Gemini reads hooks from ``settings.json`` (user: ``~/.gemini``, or ``$GEMINI_CLI_HOME/.gemini``;
project: ``DIR/.gemini``) in Claude Code's shape, with a ``name`` per handler and timeouts in
milliseconds, so ``ctxmode.settings`` merges and removes ctxmode's handlers there with the
same byte-preserving edits (the file holds the user's other settings too: auth, model, ...).
User hooks run with no trust step; a project's hooks run only in a folder the user trusts
in ``~/.gemini/trustedFolders.json`` (verified on 0.61.0: not even with ``--skip-trust``),
which is the user's call: install says so (``project_notes``), doctor checks it.

As for Claude Code's file, the bytes before ctxmode's entries came in are kept in the data
root (:class:`ctxmode.config_files.Ledger`, never in the project's folder): uninstall puts
them back when the file is exactly the backup plus ctxmode's entries, else it removes
ctxmode's entries alone; a file (and a ``.gemini`` folder) that install created goes away
again once it holds nothing else, and never one the user had, even empty.

CLI-only (``ctxmode install --host gemini``, ``doctor``): never imported by a hook.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import ctxmode
from ctxmode import settings
from ctxmode.config_files import (
    BACKUP_SUFFIX,
    InstallError,
    Ledger,
    Report,
    UsageError,
    display_path,
    legacy_backup,
    legacy_created,
)
from ctxmode.config_files import read_text as _read
from ctxmode.config_files import unified_diff as _diff
from ctxmode.config_files import write_keeping_mode as _write
from ctxmode.hosts import gemini, settings_cli
from ctxmode.settings import HookSpec, SettingsError

SCOPES = ("user", "project")
# What ``ctxmode install --help`` says of this host (after its --host name).
HELP = "the Gemini CLI (~/.gemini/settings.json; --project DIR needs a folder Gemini trusts)"
HOST_ARGUMENT = "--host gemini"


# The Gemini settings cannot be changed safely; the message says why and where.
GeminiConfigError = InstallError


@dataclass(frozen=True)
class GeminiResult:
    """What install/uninstall did (or, with dry_run, would do) to Gemini's settings.json."""

    scope: str
    path: str
    action: str  # installed, updated, unchanged, removed, deleted, not installed
    changed: bool
    dry_run: bool
    diff: str
    hooks: int  # ctxmode handlers in the file afterwards
    notes: tuple[str, ...] = ()


# --------------------------------------------------------------------------- paths


def gemini_home(env: Mapping[str, str] | None = None) -> str:
    """Gemini's user folder: ``$GEMINI_CLI_HOME/.gemini`` (the CLI's home override), else
    ``~/.gemini``."""
    env = os.environ if env is None else env
    home = env.get(gemini.USER_DIR_ENV, "").strip() or env.get("HOME", "").strip()
    home = os.path.expanduser(home) if home else os.path.expanduser("~")
    return os.path.join(os.path.abspath(home), ".gemini")


def settings_path(
    scope: str, project_dir: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    if scope not in SCOPES:
        raise GeminiConfigError(f"unknown scope {scope!r} for Gemini (expected user or project)")
    base, name = gemini.SETTINGS_FILES[scope]
    if base == "user":
        return os.path.join(gemini_home(env), name)
    if not project_dir:
        raise GeminiConfigError("the project scope needs a project directory")
    root = os.path.realpath(os.path.expanduser(project_dir))
    if not os.path.isdir(root):
        raise GeminiConfigError(f"project directory not found: {root}")
    return os.path.join(root, *name.split("/"))


def trust_path(env: Mapping[str, str] | None = None) -> str:
    return os.path.join(gemini_home(env), gemini.TRUST_FILE)


# --------------------------------------------------------------------------- handlers


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def hook_specs(python: str | None = None, package_dir: str | None = None) -> list[HookSpec]:
    """ctxmode's handlers for Gemini: this interpreter on the package's shims (Gemini runs
    them with ``bash -c``), ``--host gemini`` (BeforeModel's shim is Gemini's alone)."""
    python = os.path.abspath(python or sys.executable)
    package_dir = os.path.abspath(package_dir or os.path.dirname(ctxmode.__file__))
    specs = []
    for event, timeout, matcher in gemini.HOOKS:
        script = os.path.join(package_dir, "hooks", gemini.SHIMS[event] + ".py")
        command = f"{_sh_quote(python)} -I -S {_sh_quote(script)}"
        if event != "BeforeModel":
            command += f" {HOST_ARGUMENT}"
        specs.append(HookSpec(event, command, timeout, matcher, name=gemini.HANDLER_NAMES[event]))
    return specs


# --------------------------------------------------------------------------- trust


def folder_trust(trust_text: str | None, folder: str) -> str | None:
    """What ``trustedFolders.json`` says of ``folder``: ``TRUST_FOLDER`` (the folder or a
    parent is trusted), ``DO_NOT_TRUST``, or None (not named). The most specific rule wins;
    ``TRUST_PARENT`` on a path trusts the folder that holds it."""
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
        inside = target == base or target.startswith(base.rstrip("/") + "/")
        if inside and (best is None or len(base) > best[0]):
            best = (len(base), level)
    return best[1] if best is not None else None


def project_notes(path: str, project_dir: str, env: Mapping[str, str] | None = None) -> list[str]:
    """What a user must know about a project-scope install: Gemini (0.61.0) runs a
    project's hooks only in a folder trusted in ``~/.gemini/trustedFolders.json``, and
    ctxmode does not trust a folder on the user's behalf (that enables all of the
    project's Gemini settings). The first run then shows a warning listing the hooks."""
    trust_file = trust_path(env)
    level = folder_trust(_read(trust_file), project_dir)
    notes = [
        f"{path} names this machine's ctxmode: each user runs "
        "`ctxmode install --host gemini --project DIR` for hooks that run for them"
    ]
    if level == "DO_NOT_TRUST":
        notes.append(
            f"Gemini will not run these hooks: {display_path(trust_file)} marks "
            f"{project_dir} DO_NOT_TRUST"
        )
    elif level != "TRUST_FOLDER":
        notes.append(
            "Gemini runs a project's hooks only in a trusted folder: trust "
            f"{os.path.realpath(project_dir)} once (gemini's trust prompt, or /permissions), "
            f"which records it in {display_path(trust_file)}; ctxmode does not do "
            "it for you. The user scope (`ctxmode install --host gemini`) needs no trust"
        )
    return notes


# --------------------------------------------------------------------------- files


def _holds_nothing(text: str | None) -> bool:
    if text is None:
        return True
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return False
    if not isinstance(value, dict):
        return False
    hooks = value.get("hooks")
    return set(value) <= {"hooks"} and (not hooks or hooks == {})


def install(
    scope: str = "user",
    project_dir: str | None = None,
    dry_run: bool = False,
    python: str | None = None,
    package_dir: str | None = None,
    env: Mapping[str, str] | None = None,
) -> GeminiResult:
    """Merge ctxmode's handlers into Gemini's settings.json (a backup of the bytes before)."""
    path = settings_path(scope, project_dir, env)
    target = os.path.realpath(path)
    old = _read(target)
    settings_cli.parse_or_raise(old or "", path)
    try:
        new = settings.merge(old or "", hook_specs(python, package_dir))
    except SettingsError as exc:
        raise GeminiConfigError(f"{path}: {exc}") from None
    changed = new != (old or "") or old is None
    had = bool(old and settings.registrations(old))
    action = "unchanged" if not changed else ("updated" if had else "installed")
    diff = _diff(old, new, path) if changed else ""
    if not dry_run:
        # The user's bytes before ctxmode's first entries (uninstall restores them) and
        # what this write creates, noted in the data root before the file changes; a
        # backup an older version kept beside the file moves in.
        ledger = Ledger.load(env)
        noted = ledger.adopt(target, [target + BACKUP_SUFFIX], _ours_alone)
        if changed:
            ledger.before_write(target, old, ours_before=had)
        if noted or changed:
            ledger.save()
        if changed:
            _write(target, new)
    notes = project_notes(path, project_dir or "", env) if scope == "project" else []
    return GeminiResult(
        scope,
        path,
        action,
        changed,
        dry_run,
        diff,
        len(settings.registrations(new)),
        tuple(notes),
    )


def uninstall(
    scope: str = "user",
    project_dir: str | None = None,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
) -> GeminiResult:
    """Remove ctxmode's handlers from Gemini's settings.json; the file as it was before
    install when nothing else changed (its backup), else only ctxmode's entries go."""
    path = settings_path(scope, project_dir, env)
    target = os.path.realpath(path)
    old = _read(target)
    if old is None or not settings.registrations(old):
        return GeminiResult(scope, path, "not installed", False, dry_run, "", 0)
    settings_cli.parse_or_raise(old, path)
    ledger = Ledger.load(env)
    beside = [target + BACKUP_SUFFIX]
    legacy = legacy_backup(beside)
    backup = ledger.backup_text(target)
    if backup is None:
        backup = legacy
    new: str | None
    if settings.restores(old, backup):
        new = backup
    else:
        try:
            new = settings.unmerge(old)
        except SettingsError as exc:
            raise GeminiConfigError(f"{path}: {exc}") from None
        if _holds_nothing(new) and ledger.created(
            target, unknown=legacy_created(legacy, _ours_alone)
        ):
            new = None  # ctxmode's own file: it goes away again (never an empty one of theirs)
    diff = _diff(old, new, path)
    if not dry_run:
        if new is None:
            os.unlink(target)
        else:
            _write(target, new)
        ledger.forget(target)
        for stale in beside:
            with contextlib.suppress(OSError):
                os.unlink(stale)
        ledger.remove_created_dirs(os.path.dirname(target))
        ledger.try_save()
    return GeminiResult(
        scope, path, "deleted" if new is None else "removed", True, dry_run, diff, 0
    )


def _ours_alone(text: str) -> bool:
    """Whether a settings text holds ctxmode's handlers and nothing else."""
    try:
        return bool(settings.registrations(text)) and _holds_nothing(settings.unmerge(text))
    except SettingsError:
        return False


def dry_run_main(argv: Sequence[str]) -> int:
    """``install.sh --host gemini --dry-run`` (see :func:`ctxmode.hosts.settings_cli.dry_run_main`)."""
    return settings_cli.dry_run_main(argv, "gemini", "Gemini", install)


# --------------------------------------------------------------------------- what the CLI says


def cli_install(
    report: Report,
    scope: str,
    project_dir: str | None,
    *,
    dry_run: bool = False,
    verify: bool = False,
    statusline: bool = False,
) -> None:
    """``ctxmode install --host gemini``: install, then say what was done (``report``)."""
    if statusline:
        raise UsageError("--statusline is Claude Code's; the Gemini CLI's is its own")
    result = install(scope, project_dir, dry_run=dry_run)
    from ctxmode.hosts.gemini import proof

    settings_cli.say_installed(
        report,
        result,
        option="gemini",
        label="Gemini CLI",
        proof=proof if verify else None,
        sample="a sample Gemini session",
    )


def cli_uninstall(
    report: Report, scope: str, project_dir: str | None, *, dry_run: bool = False
) -> None:
    """``ctxmode uninstall --host gemini``: uninstall, then say what was done (``report``)."""
    settings_cli.say_uninstalled(
        report, uninstall(scope, project_dir, dry_run=dry_run), label="Gemini CLI"
    )
