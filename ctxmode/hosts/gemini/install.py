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

import os
from collections.abc import Mapping, Sequence

from ctxmode import settings
from ctxmode.config_files import InstallError, Report, UsageError, display_path
from ctxmode.config_files import read_text as _read
from ctxmode.hosts import gemini, json_settings, settings_cli
from ctxmode.settings import HookSpec

SCOPES = json_settings.SCOPES
# What ``ctxmode install --help`` says of this host (after its --host name).
HELP = "the Gemini CLI (~/.gemini/settings.json; --project DIR needs a folder Gemini trusts)"
HOST_ARGUMENT = "--host gemini"


# The Gemini settings cannot be changed safely; the message says why and where.
GeminiConfigError = InstallError
# What install/uninstall did (or, with dry_run, would do) to Gemini's settings.json.
GeminiResult = json_settings.Result
# Claude Code's shape: ctxmode's handlers are its hooks, the file held nothing else when
# it holds no other key; an older version may have kept a backup beside it.
SHAPE = json_settings.Shape()


# --------------------------------------------------------------------------- paths


def gemini_home(env: Mapping[str, str] | None = None) -> str:
    """Gemini's user folder: ``$GEMINI_CLI_HOME/.gemini`` (the CLI's home override), else
    ``~/.gemini``."""
    return json_settings.user_folder(env, ".gemini", home_var=gemini.USER_DIR_ENV)


def settings_path(
    scope: str, project_dir: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    return json_settings.scoped_path(
        scope, project_dir, gemini_home(env), gemini.SETTINGS_FILES, "Gemini"
    )


def trust_path(env: Mapping[str, str] | None = None) -> str:
    return os.path.join(gemini_home(env), gemini.TRUST_FILE)


# --------------------------------------------------------------------------- handlers


def hook_specs(python: str | None = None, package_dir: str | None = None) -> list[HookSpec]:
    """ctxmode's handlers for Gemini: this interpreter on the package's shims (Gemini runs
    them with ``bash -c``), ``--host gemini`` (BeforeModel's shim is Gemini's alone)."""
    return [
        HookSpec(
            event,
            json_settings.shim_command(
                gemini.SHIMS[event],
                python,
                package_dir,
                HOST_ARGUMENT if event != "BeforeModel" else "",
            ),
            timeout,
            matcher,
            name=gemini.HANDLER_NAMES[event],
        )
        for event, timeout, matcher in gemini.HOOKS
    ]


# --------------------------------------------------------------------------- trust


# What trustedFolders.json says of a folder (Qwen's file has the same rules).
folder_trust = json_settings.folder_trust


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
    specs = hook_specs(python, package_dir)
    change = json_settings.install(
        path, lambda text: settings.merge(text, specs), SHAPE, dry_run=dry_run, env=env
    )
    notes = project_notes(path, project_dir or "", env) if scope == "project" else []
    return json_settings.result(scope, path, change, dry_run=dry_run, notes=notes)


def uninstall(
    scope: str = "user",
    project_dir: str | None = None,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
) -> GeminiResult:
    """Remove ctxmode's handlers from Gemini's settings.json; the file as it was before
    install when nothing else changed (its backup), else only ctxmode's entries go."""
    path = settings_path(scope, project_dir, env)
    change = json_settings.uninstall(path, SHAPE, dry_run=dry_run, env=env)
    return json_settings.result(scope, path, change, dry_run=dry_run)


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
