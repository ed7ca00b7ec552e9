"""Installing ctxmode's hooks for Qwen Code: its settings.json.

Qwen Code reads hooks from ``settings.json`` (user: ``~/.qwen``, or ``$QWEN_HOME``; project:
``DIR/.qwen``) in Claude Code's shape (timeouts in seconds), so ``ctxmode.settings`` merges
and removes ctxmode's handlers there with the same byte-preserving edits (the file holds the
user's other settings too: auth, model, ...). The user scope also gets one
``permissions.allow`` rule, ``Bash(<abs path>/ctxmode search:*)`` (Claude Code's form, which
Qwen reads as ``Bash(… search *)`` and matches per part of a compound command): the
snapshot's lookups then run in Qwen's default approval mode without asking, and nothing
that rides along with them. A project file shared with the team names no path of this
machine: the project scope gets no rule (install says so).

A project's settings load only in a trusted folder once ``security.folderTrust.enabled``
is on (off by default in 0.24.4; then ``~/.qwen/trustedFolders.json`` decides): install
says what the user must do (``project_notes``), doctor checks it; ctxmode never trusts a
folder for the user.

As for the other hosts, the bytes before ctxmode's entries came in are kept in the data
root (:class:`ctxmode.config_files.Ledger`): uninstall puts them back when the file is
exactly the backup plus ctxmode's entries, else it removes ctxmode's entries alone; a file
(and a ``.qwen`` folder) that install created goes away again once it holds nothing else.

CLI-only (``ctxmode install --host qwen``, ``doctor``): never imported by a hook.
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
from ctxmode.hosts import qwen, settings_cli
from ctxmode.hosts.claude_code import settings_permissions
from ctxmode.settings import HookSpec, SettingsError

SCOPES = ("user", "project")
# What ``ctxmode install --help`` says of this host (after its --host name).
HELP = "Qwen Code (~/.qwen/settings.json, or $QWEN_HOME; --project DIR: DIR/.qwen/settings.json)"
HOST_ARGUMENT = "--host qwen"


# The Qwen settings cannot be changed safely; the message says why and where.
QwenConfigError = InstallError


@dataclass(frozen=True)
class QwenResult:
    """What install/uninstall did (or, with dry_run, would do) to Qwen's settings.json."""

    scope: str
    path: str
    action: str  # installed, updated, unchanged, removed, deleted, not installed
    changed: bool
    dry_run: bool
    diff: str
    hooks: int  # ctxmode handlers in the file afterwards
    notes: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()  # ctxmode's permissions.allow rules in the file afterwards


# --------------------------------------------------------------------------- paths


def qwen_home(env: Mapping[str, str] | None = None) -> str:
    """Qwen's user folder: ``$QWEN_HOME`` itself (0.24.4's override), else ``~/.qwen``."""
    env = os.environ if env is None else env
    own = env.get(qwen.USER_DIR_ENV, "").strip()
    if own:
        return os.path.abspath(os.path.expanduser(own))
    home = env.get("HOME", "").strip()
    home = os.path.expanduser(home) if home else os.path.expanduser("~")
    return os.path.join(os.path.abspath(home), ".qwen")


def settings_path(
    scope: str, project_dir: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    if scope not in SCOPES:
        raise QwenConfigError(f"unknown scope {scope!r} for Qwen (expected user or project)")
    base, name = qwen.SETTINGS_FILES[scope]
    if base == "user":
        return os.path.join(qwen_home(env), name)
    if not project_dir:
        raise QwenConfigError("the project scope needs a project directory")
    root = os.path.realpath(os.path.expanduser(project_dir))
    if not os.path.isdir(root):
        raise QwenConfigError(f"project directory not found: {root}")
    return os.path.join(root, *name.split("/"))


def trust_path(env: Mapping[str, str] | None = None) -> str:
    return os.path.join(qwen_home(env), qwen.TRUST_FILE)


# --------------------------------------------------------------------------- handlers


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


# Each event's shim (ctxmode/hooks/<shim>.py): Qwen's events are Claude Code's.
SHIMS = {
    "PostToolUse": "post_tool_use",
    "PostToolUseFailure": "post_tool_use_failure",
    "UserPromptSubmit": "user_prompt_submit",
    "PreCompact": "pre_compact",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "PostCompact": "post_compact",
    "Stop": "stop",
}


def hook_specs(python: str | None = None, package_dir: str | None = None) -> list[HookSpec]:
    """ctxmode's handlers for Qwen: this interpreter on the package's shims (Qwen runs
    them through a shell), ``--host qwen``."""
    python = os.path.abspath(python or sys.executable)
    package_dir = os.path.abspath(package_dir or os.path.dirname(ctxmode.__file__))
    specs = []
    for event, timeout, matcher in qwen.HOOKS:
        script = os.path.join(package_dir, "hooks", SHIMS[event] + ".py")
        command = f"{_sh_quote(python)} -I -S {_sh_quote(script)} {HOST_ARGUMENT}"
        specs.append(HookSpec(event, command, timeout, matcher))
    return specs


def lookup_rules(scope: str, python: str | None = None) -> tuple[list[str], str]:
    """(ctxmode's ``permissions.allow`` rules for a scope, why none): the snapshot's
    lookups, run by this installation's ``ctxmode``, allowed in the default approval mode."""
    from ctxmode.handlers import lookup_program

    program = lookup_program(os.path.abspath(python or sys.executable))
    rule = settings_permissions.rule_for(program)
    if scope == "project":
        how = (
            f"; to allow them, add {json.dumps(rule)} to permissions.allow in your own "
            "~/.qwen/settings.json"
        )
        return [], (
            "a file shared with the team names no path of this machine, so the snapshot's "
            "lookups ask before they run" + (how if rule else "")
        )
    if rule is None:
        return [], (
            "no ctxmode program beside this interpreter: the snapshot's lookups run a bare "
            "`ctxmode`, which Qwen asks about before it runs"
        )
    return [rule], ""


def _merge_all(old: str, specs: list[HookSpec], rules: list[str]) -> str:
    return settings_permissions.merge(settings.merge(old, specs), rules)


def _unmerge_all(text: str) -> str:
    return settings_permissions.unmerge(settings.unmerge(text))


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


def folder_trust_enabled(user_text: str | None) -> bool:
    """Whether the user's settings turn Qwen's folder trust on
    (``security.folderTrust.enabled``; off by default in 0.24.4)."""
    try:
        value = json.loads(user_text) if user_text and user_text.strip() else {}
    except ValueError:
        return False
    security = value.get("security") if isinstance(value, dict) else None
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    return isinstance(trust, dict) and trust.get("enabled") is True


def project_notes(path: str, project_dir: str, env: Mapping[str, str] | None = None) -> list[str]:
    """What a user must know about a project-scope install. Qwen (0.24.4) loads a
    project's settings, its hooks with them, in any folder while folder trust is off (its
    default); once ``security.folderTrust.enabled`` is on, only in a folder trusted in
    ``~/.qwen/trustedFolders.json``. ctxmode does not trust a folder on the user's behalf
    (that enables all of the project's Qwen settings)."""
    trust_file = trust_path(env)
    notes = [
        f"{path} names this machine's ctxmode: each user runs "
        "`ctxmode install --host qwen --project DIR` for hooks that run for them"
    ]
    if not folder_trust_enabled(_read(settings_path("user", env=env))):
        return notes
    level = folder_trust(_read(trust_file), project_dir)
    if level == "DO_NOT_TRUST":
        notes.append(
            f"Qwen will not run these hooks: {display_path(trust_file)} marks "
            f"{project_dir} DO_NOT_TRUST"
        )
    elif level != "TRUST_FOLDER":
        notes.append(
            "your Qwen settings turn folder trust on, and Qwen runs a project's hooks only "
            f"in a trusted folder: trust {os.path.realpath(project_dir)} once (qwen's trust "
            f"dialog, or /permissions), which records it in {display_path(trust_file)}; "
            "ctxmode does not do it for you. The user scope (`ctxmode install --host qwen`) "
            "needs no trust"
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
) -> QwenResult:
    """Merge ctxmode's handlers into Qwen's settings.json (a backup of the bytes before)."""
    path = settings_path(scope, project_dir, env)
    target = os.path.realpath(path)
    old = _read(target)
    settings_cli.parse_or_raise(old or "", path)
    rules, why_no_rule = lookup_rules(scope, python)
    try:
        new = _merge_all(old or "", hook_specs(python, package_dir), rules)
    except SettingsError as exc:
        raise QwenConfigError(f"{path}: {exc}") from None
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
    if why_no_rule:
        notes.append(why_no_rule)
    return QwenResult(
        scope,
        path,
        action,
        changed,
        dry_run,
        diff,
        len(settings.registrations(new)),
        tuple(notes),
        tuple(settings_permissions.current(new)),
    )


def uninstall(
    scope: str = "user",
    project_dir: str | None = None,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
) -> QwenResult:
    """Remove ctxmode's handlers from Qwen's settings.json; the file as it was before
    install when nothing else changed (its backup), else only ctxmode's entries go."""
    path = settings_path(scope, project_dir, env)
    target = os.path.realpath(path)
    old = _read(target)
    if old is None or not settings.registrations(old):
        return QwenResult(scope, path, "not installed", False, dry_run, "", 0)
    settings_cli.parse_or_raise(old, path)
    ledger = Ledger.load(env)
    beside = [target + BACKUP_SUFFIX]
    legacy = legacy_backup(beside)
    backup = ledger.backup_text(target)
    if backup is None:
        backup = legacy
    new: str | None
    if _restores(old, backup):
        new = backup
    else:
        try:
            new = _unmerge_all(old)
        except SettingsError as exc:
            raise QwenConfigError(f"{path}: {exc}") from None
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
    return QwenResult(scope, path, "deleted" if new is None else "removed", True, dry_run, diff, 0)


def _restores(current: str, backup: str | None) -> bool:
    """Whether ``current`` is exactly ``backup`` plus ctxmode's handlers and allow rules
    (so that putting the backup back removes them and nothing else); never a backup that
    holds ctxmode's own entries (an earlier install's, not the user's)."""
    if backup is None:
        return False
    try:
        if settings.registrations(backup) or settings_permissions.current(backup):
            return False
        specs = [reg.spec() for reg in settings.registrations(current)]
        rules = settings_permissions.current(current)
        return bool(specs) and _merge_all(backup, specs, rules) == current
    except SettingsError:
        return False


def _ours_alone(text: str) -> bool:
    """Whether a settings text holds ctxmode's handlers (and rules) and nothing else."""
    try:
        return bool(settings.registrations(text)) and _holds_nothing(_unmerge_all(text))
    except SettingsError:
        return False


def dry_run_main(argv: Sequence[str]) -> int:
    """``install.sh --host qwen --dry-run`` (see :func:`ctxmode.hosts.settings_cli.dry_run_main`)."""
    return settings_cli.dry_run_main(argv, "qwen", "Qwen", install)


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
    """``ctxmode install --host qwen``: install, then say what was done (``report``)."""
    if statusline:
        raise UsageError("--statusline is Claude Code's; Qwen Code's is its own")
    result = install(scope, project_dir, dry_run=dry_run)
    also = "; the snapshot's lookups are allowed (permissions.allow)" if result.rules else ""
    from ctxmode.hosts.qwen import proof

    settings_cli.say_installed(
        report,
        result,
        option="qwen",
        label="Qwen Code",
        proof=proof if verify else None,
        sample="a sample Qwen session",
        also=also,
    )


def cli_uninstall(
    report: Report, scope: str, project_dir: str | None, *, dry_run: bool = False
) -> None:
    """``ctxmode uninstall --host qwen``: uninstall, then say what was done (``report``)."""
    settings_cli.say_uninstalled(
        report, uninstall(scope, project_dir, dry_run=dry_run), label="Qwen Code"
    )
