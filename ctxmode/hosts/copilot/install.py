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
from collections.abc import Mapping, Sequence

from ctxmode import settings
from ctxmode.config_files import InstallError, Report, UsageError, display_path
from ctxmode.config_files import read_text as _read
from ctxmode.hosts import copilot, json_settings, settings_cli
from ctxmode.settings import HookSpec

SCOPES = json_settings.SCOPES
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
# What install/uninstall did (or, with dry_run, would do) to a Copilot hooks file.
CopilotResult = json_settings.Result
# Claude Code's shape; a file ctxmode made holds nothing once its hooks are gone but the
# repository file's ``version`` (written with them). No install older than the ledger
# wrote Copilot's files: no backup beside them to take in.
SHAPE = json_settings.Shape(own_keys=frozenset({"hooks", "version"}), legacy_beside=False)


# --------------------------------------------------------------------------- paths


def copilot_home(env: Mapping[str, str] | None = None) -> str:
    """Copilot's user folder: ``$COPILOT_HOME``, else ``~/.copilot``."""
    return json_settings.user_folder(env, ".copilot", folder_var=copilot.USER_DIR_ENV)


def settings_path(
    scope: str, project_dir: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    return json_settings.scoped_path(
        scope, project_dir, copilot_home(env), copilot.SETTINGS_FILES, "Copilot CLI"
    )


# --------------------------------------------------------------------------- handlers


def hook_specs(python: str | None = None, package_dir: str | None = None) -> list[HookSpec]:
    """ctxmode's handlers for Copilot: this interpreter on the package's shims (Copilot runs
    them with ``bash -c``), ``--host copilot``."""
    return [
        HookSpec(
            event,
            json_settings.shim_command(copilot.SHIMS[event], python, package_dir, HOST_ARGUMENT),
            timeout,
            matcher,
        )
        for event, timeout, matcher in copilot.HOOKS
    ]


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
    return any(
        json_settings.within(target, os.path.realpath(os.path.expanduser(path)))
        for path in trusted_folders(config_text)
    )


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
    specs = hook_specs(python, package_dir)
    change = json_settings.install(
        path,
        lambda text: settings.merge(text, specs),
        SHAPE,
        dry_run=dry_run,
        env=env,
        # ctxmode's own repository file starts as Copilot's format wants it: {"version": 1}.
        seed=PROJECT_SEED if scope == "project" else None,
    )
    notes = project_notes(path, project_dir or "", env) if scope == "project" else []
    return json_settings.result(scope, path, change, dry_run=dry_run, notes=notes)


def uninstall(
    scope: str = "user",
    project_dir: str | None = None,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
) -> CopilotResult:
    """Remove ctxmode's handlers from Copilot's hooks file; the file as it was before
    install when nothing else changed (its backup), else only ctxmode's entries go."""
    path = settings_path(scope, project_dir, env)
    change = json_settings.uninstall(path, SHAPE, dry_run=dry_run, env=env)
    return json_settings.result(scope, path, change, dry_run=dry_run)


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
