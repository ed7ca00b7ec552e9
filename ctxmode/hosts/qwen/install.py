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

import json
import os
import sys
from collections.abc import Mapping, Sequence

from ctxmode import settings
from ctxmode.config_files import InstallError, Report, UsageError, display_path
from ctxmode.config_files import read_text as _read
from ctxmode.hosts import json_settings, qwen, settings_cli
from ctxmode.hosts.claude_code import settings_permissions
from ctxmode.settings import HookSpec, SettingsError

SCOPES = json_settings.SCOPES
# What ``ctxmode install --help`` says of this host (after its --host name).
HELP = "Qwen Code (~/.qwen/settings.json, or $QWEN_HOME; --project DIR: DIR/.qwen/settings.json)"
HOST_ARGUMENT = "--host qwen"


# The Qwen settings cannot be changed safely; the message says why and where.
QwenConfigError = InstallError
# What install/uninstall did (or, with dry_run, would do) to Qwen's settings.json; its
# ``rules``: ctxmode's permissions.allow rules in the file afterwards.
QwenResult = json_settings.Result


# --------------------------------------------------------------------------- paths


def qwen_home(env: Mapping[str, str] | None = None) -> str:
    """Qwen's user folder: ``$QWEN_HOME`` itself (0.24.4's override), else ``~/.qwen``."""
    return json_settings.user_folder(env, ".qwen", folder_var=qwen.USER_DIR_ENV)


def settings_path(
    scope: str, project_dir: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    return json_settings.scoped_path(
        scope, project_dir, qwen_home(env), qwen.SETTINGS_FILES, "Qwen"
    )


def trust_path(env: Mapping[str, str] | None = None) -> str:
    return os.path.join(qwen_home(env), qwen.TRUST_FILE)


# --------------------------------------------------------------------------- handlers


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
    return [
        HookSpec(
            event,
            json_settings.shim_command(SHIMS[event], python, package_dir, HOST_ARGUMENT),
            timeout,
            matcher,
        )
        for event, timeout, matcher in qwen.HOOKS
    ]


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


# What trustedFolders.json says of a folder (Gemini's rules: Qwen Code is its fork).
folder_trust = json_settings.folder_trust


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


# Claude Code's shape, ctxmode's allow rule with its hooks: both go on uninstall.
SHAPE = json_settings.Shape(unmerge=_unmerge_all, restores=_restores)


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
    rules, why_no_rule = lookup_rules(scope, python)
    specs = hook_specs(python, package_dir)
    change = json_settings.install(
        path, lambda text: _merge_all(text, specs, rules), SHAPE, dry_run=dry_run, env=env
    )
    notes = project_notes(path, project_dir or "", env) if scope == "project" else []
    if why_no_rule:
        notes.append(why_no_rule)
    return json_settings.result(
        scope,
        path,
        change,
        dry_run=dry_run,
        notes=notes,
        rules=settings_permissions.current(change.new or ""),
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
    change = json_settings.uninstall(path, SHAPE, dry_run=dry_run, env=env)
    return json_settings.result(scope, path, change, dry_run=dry_run)


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
