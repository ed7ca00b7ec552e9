"""Installing ctxmode's hooks for GitHub Copilot CLI: settings.json, or a repository's file.

Copilot reads the user's hooks from ``~/.copilot/settings.json`` (``$COPILOT_HOME`` moves the
folder) under ``"hooks"``, and a repository's from ``.github/hooks/*.json`` as ``{"version": 1,
"hooks": {…}}``: ctxmode writes its own file there, ``.github/hooks/ctxmode.json``. Copilot
1.0.102 accepts Claude Code's matcher-group shape (``{"hooks": [{"type": "command",
"command": …, "timeout": …}]}``) under its camelCase event names beside its flat one
(``{"type": "command", "bash": …, "timeoutSec": …}``), with the same native payloads
(verified: tests/e2e/test_copilot_e2e.py), so ``ctxmode.settings`` merges and removes
ctxmode's handlers with the same byte-preserving edits as for the other hosts. User hooks
run with no trust step; a repository's only in a folder Copilot trusts (``project_notes``,
doctor).

As for the other hosts, the bytes before ctxmode's entries came in are kept in the data root
(:class:`ctxmode.config_files.Ledger`): uninstall puts them back when the file is exactly the
backup plus ctxmode's entries, else it removes ctxmode's entries alone; a file (and a
folder) that install created goes away again once it holds nothing else.

CLI-only (``ctxmode install --host copilot``, ``doctor``): never imported by a hook.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import ctxmode
from ctxmode import settings
from ctxmode.config_files import (
    InstallError,
    Ledger,
    Report,
    UsageError,
    display_path,
)
from ctxmode.config_files import read_text as _read
from ctxmode.config_files import unified_diff as _diff
from ctxmode.config_files import write_keeping_mode as _write
from ctxmode.hosts import copilot, settings_cli
from ctxmode.settings import HookSpec, SettingsError

SCOPES = ("user", "project")
# What ``ctxmode install --help`` says of this host (after its --host name).
HELP = (
    "GitHub Copilot CLI (~/.copilot/settings.json; --project DIR writes "
    ".github/hooks/ctxmode.json, run in folders Copilot trusts)"
)
HOST_ARGUMENT = "--host copilot"
# A repository's hook file starts with its format version (Copilot's docs, 1.0.102).
PROJECT_SEED = '{\n  "version": 1\n}\n'

# The Copilot files cannot be changed safely; the message says why and where.
CopilotConfigError = InstallError


@dataclass(frozen=True)
class CopilotResult:
    """What install/uninstall did (or, with dry_run, would do) to a Copilot hooks file."""

    scope: str
    path: str
    action: str  # installed, updated, unchanged, removed, deleted, not installed
    changed: bool
    dry_run: bool
    diff: str
    hooks: int  # ctxmode handlers in the file afterwards
    notes: tuple[str, ...] = ()


# --------------------------------------------------------------------------- paths


def copilot_home(env: Mapping[str, str] | None = None) -> str:
    """Copilot's user folder: ``$COPILOT_HOME``, else ``~/.copilot``."""
    env = os.environ if env is None else env
    moved = env.get(copilot.USER_DIR_ENV, "").strip()
    if moved:
        return os.path.abspath(os.path.expanduser(moved))
    home = env.get("HOME", "").strip()
    home = os.path.expanduser(home) if home else os.path.expanduser("~")
    return os.path.join(os.path.abspath(home), ".copilot")


def settings_path(
    scope: str, project_dir: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    if scope not in SCOPES:
        raise CopilotConfigError(
            f"unknown scope {scope!r} for Copilot CLI (expected user or project)"
        )
    base, name = copilot.SETTINGS_FILES[scope]
    if base == "user":
        return os.path.join(copilot_home(env), name)
    if not project_dir:
        raise CopilotConfigError("the project scope needs a project directory")
    root = os.path.realpath(os.path.expanduser(project_dir))
    if not os.path.isdir(root):
        raise CopilotConfigError(f"project directory not found: {root}")
    return os.path.join(root, *name.split("/"))


# --------------------------------------------------------------------------- handlers


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def hook_specs(python: str | None = None, package_dir: str | None = None) -> list[HookSpec]:
    """ctxmode's handlers for Copilot: this interpreter on the package's shims (Copilot runs
    them with ``bash -c``), ``--host copilot``."""
    python = os.path.abspath(python or sys.executable)
    package_dir = os.path.abspath(package_dir or os.path.dirname(ctxmode.__file__))
    specs = []
    for event, timeout, matcher in copilot.HOOKS:
        script = os.path.join(package_dir, "hooks", copilot.SHIMS[event] + ".py")
        command = f"{_sh_quote(python)} -I -S {_sh_quote(script)} {HOST_ARGUMENT}"
        specs.append(HookSpec(event, command, timeout, matcher))
    return specs


# --------------------------------------------------------------------------- trust


def trusted_folders(config_text: str | None) -> list[str]:
    """The folders Copilot's config.json trusts (``trusted_folders``; newer releases also
    write ``trustedFolders``)."""
    if not config_text:
        return []
    try:
        value = json.loads(config_text)
    except ValueError:
        return []
    if not isinstance(value, dict):
        return []
    found: list[str] = []
    for key in ("trusted_folders", "trustedFolders"):
        items = value.get(key)
        if isinstance(items, list):
            found.extend(item for item in items if isinstance(item, str))
    return found


def folder_trusted(config_text: str | None, folder: str) -> bool:
    """Whether Copilot trusts ``folder`` (a trusted folder trusts what is below it)."""
    target = os.path.realpath(os.path.expanduser(folder))
    for path in trusted_folders(config_text):
        base = os.path.realpath(os.path.expanduser(path))
        if target == base or target.startswith(base.rstrip("/") + "/"):
            return True
    return False


def config_path(env: Mapping[str, str] | None = None) -> str:
    return os.path.join(copilot_home(env), copilot.CONFIG_FILE)


def project_notes(path: str, project_dir: str, env: Mapping[str, str] | None = None) -> list[str]:
    """What a user must know about a project-scope install: Copilot (1.0.102) runs a
    repository's hooks only in a folder it trusts (its trust prompt, ``trusted_folders`` in
    ~/.copilot/config.json; ``--trust-folder`` or ``COPILOT_ALLOW_ALL`` for one prompt-mode
    run), and ctxmode does not trust a folder on the user's behalf: that trusts all of the
    repository's Copilot configuration."""
    notes = [
        f"{path} names this machine's ctxmode: each user runs "
        "`ctxmode install --host copilot --project DIR` for hooks that run for them"
    ]
    config = config_path(env)
    if not folder_trusted(_read(config), project_dir):
        notes.append(
            "Copilot runs a repository's hooks only in a folder it trusts: trust "
            f"{os.path.realpath(project_dir)} once (copilot's trust prompt: \"this and future "
            f'sessions"), which records it in {display_path(config)}; ctxmode does not do it '
            "for you. The user scope (`ctxmode install --host copilot`) needs no trust"
        )
    return notes


# --------------------------------------------------------------------------- files


def _holds_nothing(text: str | None) -> bool:
    """Whether a hooks file holds nothing but an empty ``hooks`` (and the repository
    file's ``version``, which ctxmode wrote with it)."""
    if text is None:
        return True
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return False
    if not isinstance(value, dict):
        return False
    hooks = value.get("hooks")
    return set(value) <= {"hooks", "version"} and (not hooks or hooks == {})


def install(
    scope: str = "user",
    project_dir: str | None = None,
    dry_run: bool = False,
    python: str | None = None,
    package_dir: str | None = None,
    env: Mapping[str, str] | None = None,
) -> CopilotResult:
    """Merge ctxmode's handlers into Copilot's hooks file (a backup of the bytes before)."""
    path = settings_path(scope, project_dir, env)
    target = os.path.realpath(path)
    old = _read(target)
    settings_cli.parse_or_raise(old or "", path)
    # ctxmode's own repository file starts as Copilot's format wants it: {"version": 1}.
    base = old if old is not None or scope != "project" else PROJECT_SEED
    try:
        new = settings.merge(base or "", hook_specs(python, package_dir))
    except SettingsError as exc:
        raise CopilotConfigError(f"{path}: {exc}") from None
    changed = new != (old or "") or old is None
    had = bool(old and settings.registrations(old))
    action = "unchanged" if not changed else ("updated" if had else "installed")
    diff = _diff(old, new, path) if changed else ""
    if not dry_run and changed:
        # The user's bytes before ctxmode's first entries (uninstall restores them) and
        # what this write creates, noted in the data root before the file changes.
        ledger = Ledger.load(env)
        ledger.before_write(target, old, ours_before=had)
        ledger.save()
        _write(target, new)
    notes = project_notes(path, project_dir or "", env) if scope == "project" else []
    return CopilotResult(
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
) -> CopilotResult:
    """Remove ctxmode's handlers from Copilot's hooks file; the file as it was before
    install when nothing else changed (its backup), else only ctxmode's entries go."""
    path = settings_path(scope, project_dir, env)
    target = os.path.realpath(path)
    old = _read(target)
    if old is None or not settings.registrations(old):
        return CopilotResult(scope, path, "not installed", False, dry_run, "", 0)
    settings_cli.parse_or_raise(old, path)
    ledger = Ledger.load(env)
    backup = ledger.backup_text(target)
    new: str | None
    if settings.restores(old, backup):
        new = backup
    else:
        try:
            new = settings.unmerge(old)
        except SettingsError as exc:
            raise CopilotConfigError(f"{path}: {exc}") from None
        if _holds_nothing(new) and ledger.created(target, unknown=False):
            new = None  # ctxmode's own file: it goes away again (never an empty one of theirs)
    diff = _diff(old, new, path)
    if not dry_run:
        if new is None:
            os.unlink(target)
        else:
            _write(target, new)
        ledger.forget(target)
        ledger.remove_created_dirs(os.path.dirname(target))
        ledger.try_save()
    return CopilotResult(
        scope, path, "deleted" if new is None else "removed", True, dry_run, diff, 0
    )


def dry_run_main(argv: Sequence[str]) -> int:
    """``install.sh --host copilot --dry-run`` (see :func:`ctxmode.hosts.settings_cli.dry_run_main`)."""
    return settings_cli.dry_run_main(argv, "copilot", "Copilot CLI", install)


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
    """``ctxmode install --host copilot``: install, then say what was done (``report``)."""
    if statusline:
        raise UsageError("--statusline is Claude Code's; Copilot CLI's is its own")
    result = install(scope, project_dir, dry_run=dry_run)
    from ctxmode.hosts.copilot import proof

    settings_cli.say_installed(
        report,
        result,
        option="copilot",
        label="Copilot CLI",
        proof=proof if verify else None,
        sample="a sample Copilot CLI session",
    )


def cli_uninstall(
    report: Report, scope: str, project_dir: str | None, *, dry_run: bool = False
) -> None:
    """``ctxmode uninstall --host copilot``: uninstall, then say what was done (``report``)."""
    settings_cli.say_uninstalled(
        report, uninstall(scope, project_dir, dry_run=dry_run), label="Copilot CLI"
    )
