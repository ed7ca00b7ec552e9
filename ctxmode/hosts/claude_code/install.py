"""Install and uninstall ctxmode's hooks in a Claude Code settings file.

Plain functions with explicit parameters that return a result (pre-commit's
``install_uninstall`` style); :func:`cli_install` and :func:`cli_uninstall` word the
result, and the click commands in ``ctxmode.cli.install_cmd`` only print it. The text
surgery lives in :mod:`ctxmode.settings`, reading and writing files in
:mod:`ctxmode.config_files`; this module owns Claude Code's files: where they are per
scope, the backup, the team launcher, and the checks around them (double registration;
the proof run of the installed hooks is :mod:`ctxmode.hosts.claude_code.proof`).

Safety rules:

- A file that cannot be edited safely (malformed JSON, comments, an unexpected shape)
  raises :class:`InstallError` and is never written.
- Writes are atomic (temp file in the same directory, ``os.replace``), keep the file's
  mode, and go through a symlinked settings.json to its target (dotfile managers).
- Before ctxmode's entries first go into a file, its bytes are kept in the data root
  (:class:`ctxmode.config_files.Ledger`, never beside the file: a project's folder is the
  user's repository); nothing is written when nothing changes, so a second install is a
  no-op.
- Uninstall restores the backup byte for byte when the file is exactly "backup plus
  ctxmode's entries"; otherwise it removes ctxmode's entries surgically. It deletes a
  file only when the ledger says ctxmode created it (an empty file the user had stays).

Long on purpose (~1,000 lines): every file install and uninstall write goes through here,
so the safety rules above are checked in one place, and so does what the CLI says of it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import ctxmode
from ctxmode import paths, proof, settings
from ctxmode.config_files import (
    BACKUP_SUFFIX,
    InstallError,
    Ledger,
    Report,
    display_path,
    file_mode,
    legacy_backup,
    legacy_created,
    read_text,
    umask,
    unified_diff,
    write_atomic,
)
from ctxmode.hosts import claude_code
from ctxmode.hosts.claude_code import settings_permissions, settings_statusline
from ctxmode.settings import HookSpec, SettingsError

SCOPES = ("user", "project", "local")
# What ``ctxmode install --help`` says of this host (after its --host name).
HELP = "Claude Code (~/.claude/settings.json; --user, --project DIR or --local DIR)"
PLUGIN_NAME = "ctxmode"

# The shared project file (--project) names no path of this machine: its commands run
# the per-user launcher at this fixed place, written by `ctxmode install --project` on
# each teammate's machine, and do nothing (exit 0, no output) where there is none.
LAUNCHER = "~/.local/bin/ctxmode-hook"
LAUNCHER_TAG = "# ctxmode hook launcher"

# (event, timeout in seconds, matcher): the registration, a detail of the host.
HOOK_TABLE: tuple[tuple[str, int, str | None], ...] = claude_code.HOOKS
# The shim argument of a capture run in the background (= hookrun.BACKGROUND_FLAG; the
# installer does not import the hook harness).
BACKGROUND_FLAG = "--background"


@dataclass(frozen=True)
class InstallResult:
    """What install/uninstall did (or, with dry_run, would do) to one settings file."""

    scope: str
    path: str
    # "installed", "updated", "unchanged"; "removed", "deleted" (the file ctxmode had
    # created), "not installed"
    action: str
    changed: bool
    dry_run: bool
    diff: str  # unified diff of the change ("" when unchanged)
    backup: str | None  # backup written (None when nothing was written)
    hooks: int  # ctxmode handlers in the file afterwards
    warnings: tuple[str, ...] = ()
    launcher: str | None = None  # the per-user launcher the commands run (project scope)
    launcher_changed: bool = False  # it was (dry run: would be) written
    removed: tuple[str, ...] = ()  # files and folders ctxmode had created, removed again
    # ctxmode's status line: "added", "composed" (with the user's own), "updated",
    # "unchanged", "removed", "restored" (the user's own alone again), or "" (not touched)
    statusline: str = ""
    # Events left out for the client (claude_code.MIN_VERSIONS), and why: "" when none.
    skipped: tuple[str, ...] = ()
    skipped_why: str = ""
    client_version: tuple[int, ...] | None = None  # the Claude Code version registered for
    # ctxmode's permissions.allow rules in the file afterwards (settings_permissions), and
    # why there are none where there could be: "" when nothing to say.
    permissions: tuple[str, ...] = ()
    permissions_note: str = ""
    client_path: str | None = None  # the `claude` that told the version (None: not found)
    # What an earlier install registered and this one kept, no client being found to say
    # otherwise (events, "captures in the background"); what an update changed, in words.
    kept: tuple[str, ...] = ()
    changes: tuple[str, ...] = ()


# --------------------------------------------------------------------------- paths


def user_config_dir(env: Mapping[str, str] | None = None) -> str:
    """Claude Code's user directory: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    env = os.environ if env is None else env
    configured = env.get(claude_code.USER_DIR_ENV, "").strip()
    return os.path.abspath(os.path.expanduser(configured or claude_code.USER_DIR_DEFAULT))


def settings_path(scope: str, project_dir: str | None = None) -> str:
    """The settings file of a scope (project scopes need the project directory)."""
    if scope not in SCOPES:
        raise InstallError(f"unknown scope {scope!r} (expected one of {', '.join(SCOPES)})")
    base, name = claude_code.SETTINGS_FILES[scope]
    if base == "user":
        return os.path.join(user_config_dir(), *name.split("/"))
    if not project_dir:
        raise InstallError(f"the {scope} scope needs a project directory")
    root = os.path.abspath(os.path.expanduser(project_dir))
    if not os.path.isdir(root):
        raise InstallError(f"project directory not found: {root}")
    return os.path.join(root, *name.split("/"))


def _sh_quote(text: str) -> str:
    """Single-quote for ``sh -c`` always (a path with spaces or $ must stay one word)."""
    return "'" + text.replace("'", "'\\''") + "'"


def _slashes(path: str) -> str:
    # Claude Code runs commands through sh (Git Bash on Windows): forward slashes work
    # everywhere, backslashes would be eaten as escapes.
    return path.replace("\\", "/")


def hook_command(python: str, script: str) -> str:
    """The command Claude Code runs: the pinned interpreter, isolated, on one shim."""
    return f"{_sh_quote(_slashes(python))} -I -S {_sh_quote(_slashes(script))}"


def _interpreter(python: str | None) -> str:
    python = python or sys.executable
    if not python:
        raise InstallError("cannot tell which Python runs ctxmode (sys.executable is empty)")
    # abspath, not realpath: a venv's python is a symlink, and resolving it would
    # escape the venv (and its site-packages) for the base interpreter.
    return os.path.abspath(python)


def hook_specs(
    python: str | None = None,
    package_dir: str | None = None,
    events: Sequence[str] | None = None,
    background: bool = False,
) -> list[HookSpec]:
    """ctxmode's handlers for an interpreter and an installed package directory
    (``events``: only these; None: every event of the table). ``background``: the
    captures (``claude_code.BACKGROUND_EVENTS``) run with ``"async": true`` and say so
    to their shim (``--background``, see ctxmode.inflight)."""
    python = _interpreter(python)
    package_dir = os.path.abspath(package_dir or os.path.dirname(ctxmode.__file__))
    specs = []
    for event, timeout, matcher in HOOK_TABLE:
        if events is not None and event not in events:
            continue
        script = os.path.join(package_dir, "hooks", settings.SHIMS[event] + ".py")
        command = hook_command(python, script)
        behind = background and event in claude_code.BACKGROUND_EVENTS
        if behind:
            command += " " + BACKGROUND_FLAG
        specs.append(HookSpec(event, command, timeout, matcher, background=behind))
    return specs


def statusline_command(python: str | None = None, package_dir: str | None = None) -> str:
    """The ``statusLine`` command: the pinned interpreter on the status line shim."""
    package_dir = os.path.abspath(package_dir or os.path.dirname(ctxmode.__file__))
    script = os.path.join(package_dir, "hooks", settings_statusline.SHIM + ".py")
    return hook_command(_interpreter(python), script)


def lookup_rules(scope: str, python: str | None = None) -> tuple[list[str], str]:
    """(ctxmode's ``permissions.allow`` rules for a scope, why none) — see
    :mod:`ctxmode.hosts.claude_code.settings_permissions`: the snapshot's lookups, run by this
    installation's ``ctxmode``, then run without asking in the default permission mode."""
    from ctxmode.handlers import lookup_program

    program = lookup_program(_interpreter(python))
    rule = settings_permissions.rule_for(program)
    if scope == "project":
        how = (
            f"; to allow them, add {json.dumps(rule)} to permissions.allow in your own "
            "~/.claude/settings.json or the project's .claude/settings.local.json"
        )
        return [], (
            "a file shared with the team names no path of this machine, so the snapshot's "
            "lookups ask before they run" + (how if rule else "")
        )
    if rule is None:
        return [], (
            f"no ctxmode command by absolute path beside {_interpreter(python)} ({program}): "
            "the snapshot's lookups ask before they run"
        )
    return [rule], ""


def _statusline_action(before: str, after: str) -> str:
    """What installing the status line did to it (see :attr:`InstallResult.statusline`)."""
    old = settings_statusline.current(before)
    new = settings_statusline.current(after)
    if old == new:
        return "unchanged"
    if settings_statusline.is_ours(old):
        return "updated"
    return "composed" if isinstance(old, str) else "added"


def team_command(shim: str) -> str:
    """The command of a shared project file: this user's launcher, else nothing at all.

    The same text on every machine. ``sh`` expands ``~``; a missing launcher makes the
    hook exit 0 silently, so a teammate without ctxmode never sees a hook error.
    """
    return f"[ -x {LAUNCHER} ] && exec {LAUNCHER} {shim}; exit 0"


def team_specs(events: Sequence[str] | None = None) -> list[HookSpec]:
    """ctxmode's handlers for a project file shared with the team (``events``: only these)."""
    return [
        HookSpec(event, team_command(settings.SHIMS[event]), timeout, matcher)
        for event, timeout, matcher in HOOK_TABLE
        if events is None or event in events
    ]


# ``CTXMODE_CLAUDE_VERSION`` tells install the client's version where ``claude`` is not
# found (the VS Code extension brings its own), or pins it ("none": no version-gated event).
CLIENT_VERSION_ENV = "CTXMODE_CLAUDE_VERSION"


@dataclass(frozen=True)
class Client:
    """The Claude Code install found: its version (None: none answered), where it is,
    and whether the version was pinned by :data:`CLIENT_VERSION_ENV` instead."""

    version: tuple[int, ...] | None
    path: str | None = None
    pinned: bool = False


def client_candidates(env: Mapping[str, str]) -> list[str]:
    """Where Claude Code's installers put ``claude``, tried after PATH (an IDE terminal,
    cron or another shell may not have it on PATH): the native installer's
    ``~/.local/bin``, the per-user npm install of ``claude migrate-installer``
    (``~/.claude/local``), npm's global prefix (``$NPM_CONFIG_PREFIX``, the ``prefix=``
    of ``~/.npmrc``, the usual ``~/.npm-global``), Volta, nvm's Node versions (newest
    first), Homebrew and /usr/local."""
    home = env.get("HOME") or os.path.expanduser("~")
    exe = "claude.exe" if sys.platform == "win32" else "claude"
    prefixes = [env.get(name, "") for name in ("NPM_CONFIG_PREFIX", "npm_config_prefix")]
    prefixes.append(_npmrc_prefix(os.path.join(home, ".npmrc")))
    bins = [
        os.path.join(home, ".local", "bin"),
        os.path.join(home, ".claude", "local"),
        *(os.path.join(prefix, "bin") for prefix in prefixes if prefix),
        os.path.join(home, ".npm-global", "bin"),
        os.path.join(home, ".volta", "bin"),
    ]
    nvm = os.path.join(env.get("NVM_DIR") or os.path.join(home, ".nvm"), "versions", "node")
    with contextlib.suppress(OSError):
        versions = sorted(os.listdir(nvm), key=_node_version_key, reverse=True)
        bins += [os.path.join(nvm, name, "bin") for name in versions]
    bins += ["/opt/homebrew/bin", "/home/linuxbrew/.linuxbrew/bin", "/usr/local/bin"]
    seen: list[str] = []
    for folder in bins:
        path = os.path.join(os.path.expanduser(folder), exe)
        if path not in seen:
            seen.append(path)
    return seen


def _npmrc_prefix(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition("=")
                if key.strip() == "prefix" and value.strip():
                    return value.strip().strip('"')
    except OSError:
        pass
    return ""


def _node_version_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.lstrip("v").split(".") if part.isdecimal())


def _ask_version(command: str, env: Mapping[str, str]) -> tuple[int, ...] | None:
    try:
        proc = subprocess.run(
            [command, *claude_code.VERSION_COMMAND[1:]],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=20,
            env=dict(env),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return claude_code.parse_version(proc.stdout) if proc.returncode == 0 else None


def find_client(env: Mapping[str, str] | None = None) -> Client:
    """The Claude Code this machine runs: ``$CTXMODE_CLAUDE_VERSION``, else the first
    ``claude`` that answers ``--version``, on PATH, then where its installers put it
    (:func:`client_candidates`); ``Client(None)`` when none does."""
    env = os.environ if env is None else env
    pinned = env.get(CLIENT_VERSION_ENV, "").strip()
    if pinned:
        return Client(claude_code.parse_version(pinned), pinned=True)
    on_path = shutil.which(claude_code.VERSION_COMMAND[0], path=env.get("PATH", os.defpath))
    for candidate in ([on_path] if on_path else []) + client_candidates(env):
        if candidate != on_path and not os.access(candidate, os.X_OK):
            continue
        version = _ask_version(candidate, env)
        if version is not None:
            return Client(version, candidate)
    return Client(None)


def client_version(env: Mapping[str, str] | None = None) -> tuple[int, ...] | None:
    """The Claude Code version this machine runs (:func:`find_client`), or None."""
    return find_client(env).version


def version_text(version: tuple[int, ...] | None) -> str:
    return ".".join(map(str, version)) if version else "unknown"


def registered_events(
    scope: str, version: tuple[int, ...] | None
) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """(events to register, events left out, why) for a scope and the client's version.

    A file shared with the team never names a version-gated event: a teammate's older
    client would skip that whole file (see ``claude_code.MIN_VERSIONS``).
    """
    everything = tuple(event for event, _timeout, _matcher in HOOK_TABLE)
    wanted = claude_code.events_for(None if scope == "project" else version)
    left_out = tuple(event for event in everything if event not in wanted)
    if not left_out:
        return wanted, (), ""
    needs = ", ".join(
        f"{event} needs Claude Code {version_text(claude_code.MIN_VERSIONS[event])}"
        for event in left_out
    )
    if scope == "project":
        why = f"{needs}, and a teammate's older client would skip the whole shared file"
    elif version is None:
        why = (
            f"{needs}, and no `claude` answered --version, on PATH or where its installers "
            f"put it (set {CLIENT_VERSION_ENV} to the version you run, then install again)"
        )
    else:
        why = f"{needs}; this machine runs {version_text(version)}"
    return wanted, left_out, why


def launcher_path() -> str:
    """Where this user's launcher is (``~/.local/bin/ctxmode-hook``)."""
    return os.path.join(os.path.expanduser("~"), ".local", "bin", "ctxmode-hook")


def launcher_text(python: str | None = None, package_dir: str | None = None) -> str:
    """The launcher: a POSIX sh script that runs this installation's hook shims.

    It pins the interpreter and the package as the user-scope commands do (``-I -S``,
    no PATH lookup), and exits 0 with no output when that installation is gone.
    """
    python = _slashes(_interpreter(python))
    hooks = _slashes(
        os.path.join(os.path.abspath(package_dir or os.path.dirname(ctxmode.__file__)), "hooks")
    )
    shims = "|".join(settings.SHIMS.values())
    return (
        "#!/bin/sh\n"
        f"{LAUNCHER_TAG} (written by `ctxmode install --project`; safe to delete).\n"
        "# Runs this user's own ctxmode for the hooks of a .claude/settings.json shared with\n"
        "# a team; does nothing when that installation is gone.\n"
        f"py={_sh_quote(python)}\n"
        f"hooks={_sh_quote(hooks)}\n"
        'case "$1" in\n'
        f"    {shims}) ;;\n"
        "    *) exit 0 ;;\n"
        "esac\n"
        '[ -x "$py" ] && [ -f "$hooks/$1.py" ] || exit 0\n'
        'exec "$py" -I -S "$hooks/$1.py"\n'
    )


def launcher_target(text: str) -> tuple[str | None, str | None]:
    """(interpreter, hooks folder) a launcher's text runs, as far as it says."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        for name in ("py", "hooks"):
            if line.startswith(name + "="):
                try:
                    words = shlex.split(line[len(name) + 1 :])
                except ValueError:
                    continue
                if len(words) == 1:
                    found[name] = words[0]
    return found.get("py"), found.get("hooks")


def _check_scripts() -> None:
    hooks_dir = os.path.join(os.path.dirname(ctxmode.__file__), "hooks")
    missing = [
        name + ".py"
        for name in settings.SHIMS.values()
        if not os.path.isfile(os.path.join(hooks_dir, name + ".py"))
    ]
    if missing:
        raise InstallError(f"hook scripts missing from {hooks_dir}: {', '.join(missing)}")


# --------------------------------------------------------------------------- files


def _parse_or_raise(text: str, path: str) -> None:
    try:
        value = settings.parse(text, path)
    except SettingsError as exc:
        raise InstallError(str(exc)) from None
    if not isinstance(value, dict):
        raise InstallError(f"{path}: the top level is not a JSON object; left untouched")


# --------------------------------------------------------------------------- checks


def _other_scope_paths(scope: str, project_dir: str | None, managed: str | None) -> list[str]:
    """The settings files of the other scopes Claude Code would merge with this one:
    user, the project's settings.json and settings.local.json, and managed policy."""
    # The project as the hooks find it (CLAUDE_PROJECT_DIR, else the enclosing checkout).
    project = project_dir or paths.project_dir(os.getcwd(), os.environ)
    found = []
    for other in SCOPES:
        if other == scope:
            continue
        try:
            found.append(settings_path(other, project))
        except InstallError:
            continue
    found.append(managed or settings.managed_settings_path())
    return found


def registration_warnings(
    scope: str,
    path: str,
    project_dir: str | None,
    managed: str | None = None,
    *,
    after: str | None = None,
) -> list[str]:
    """Warn about a second copy of ctxmode's hooks: the plugin, or another scope.

    ``after``: the text of ``path`` once the command is done (None: as it is now); the
    other files are read as they are now. Where ``path`` registers nothing afterwards (an
    uninstall), nothing runs twice: the warning is then that ctxmode still runs from the
    other files. ``managed``: the managed settings file (default: this platform's).
    """
    this = _read_quietly(path) if after is None else after
    try:
        ours = bool(this and settings.registrations(this))
    except SettingsError:
        ours = False
    warnings = []
    for candidate in [path, *_other_scope_paths(scope, project_dir, managed)]:
        text = this if candidate == path else _read_quietly(candidate)
        if text is None:
            continue
        try:
            plugins = settings.enabled_plugins(text, PLUGIN_NAME)
            found = settings.registrations(text) if candidate != path else []
        except SettingsError:
            continue
        where = display_path(candidate)
        if ours:
            warnings += [
                f"the ctxmode plugin ({key}) is enabled in {where}: its hooks and these "
                "would both run; keep one (disable the plugin from Claude Code's /plugin "
                f"menu, or run `{uninstall_command(scope, project_dir)}`)"
                for key in plugins
            ]
            if found:
                warnings.append(
                    f"ctxmode hooks are also registered in {where} "
                    f"({len(found)} handlers): where the commands differ, both copies run"
                )
        elif found or plugins:
            what = f"{len(found)} handlers" if found else f"the plugin {plugins[0]}"
            warnings.append(f"ctxmode hooks are still registered in {where} ({what}): they run")
    return warnings


def uninstall_command(scope: str, project_dir: str | None) -> str:
    """The command that removes ctxmode from one scope's file, as the user types it."""
    if scope == "user" or not project_dir:
        return "ctxmode uninstall"
    return f"ctxmode uninstall --{scope} {shlex.quote(os.path.abspath(project_dir))}"


def _read_quietly(path: str) -> str | None:
    try:
        return read_text(path)
    except InstallError:
        return None


# --------------------------------------------------------------------------- commands


def install(
    scope: str = "user",
    project_dir: str | None = None,
    dry_run: bool = False,
    python: str | None = None,
    package_dir: str | None = None,
    managed: str | None = None,
    version: tuple[int, ...] | str | None = "detect",
    statusline: bool = False,
) -> InstallResult:
    """Merge ctxmode's handlers into the scope's settings file.

    ``statusline``: also set ctxmode's status line (composed with one already there,
    see :mod:`ctxmode.hosts.claude_code.settings_statusline`); one installed before is kept up to date
    either way. Not in the project scope: a status line is personal, not the team's.

    The user and local scopes run this interpreter on this package's hook scripts by
    absolute path. The project scope's file is shared with the team, so it names no
    path of this machine: its commands run :data:`LAUNCHER`, written here for this
    user (see :func:`team_command`). ``version``: the Claude Code version to register
    for (``"detect"``: :func:`client_version`); an event the client does not know is
    left out (:func:`registered_events`).
    """
    path = settings_path(scope, project_dir)
    target = os.path.realpath(path)  # write through a symlink, never over it
    old = read_text(target)
    before = old if old is not None else ""
    _parse_or_raise(before, path)
    if version == "detect":
        client = find_client() if scope != "project" else Client(None, pinned=True)
    else:
        client = Client(version if isinstance(version, tuple) else None, pinned=True)
    version = client.version
    events, skipped, skipped_why = registered_events(scope, version)
    # The captures run in the background where the client can (claude_code.background_mode);
    # a file shared with the team names no version, so it keeps them in the foreground.
    background = scope != "project" and claude_code.background_mode(version)[0]
    had = settings.registrations(before)
    kept: list[str] = []
    if version is None and not client.pinned and had:
        # No client found this time (another shell, an IDE terminal, cron): never take
        # back what an earlier install registered for the client it found then.
        earlier = {reg.event for reg in had}
        keep = tuple(event for event in skipped if event in earlier)
        events = tuple(e for e, _, _ in HOOK_TABLE if e in events or e in keep)
        skipped = tuple(event for event in skipped if event not in keep)
        kept += keep
        if not background and any(
            reg.background for reg in had if reg.event in claude_code.BACKGROUND_EVENTS
        ):
            background = True
            kept.append("captures in the background")
    specs = (
        team_specs(events)
        if scope == "project"
        else hook_specs(python, package_dir, events, background=background)
    )
    if package_dir is None:  # the running package: its hook scripts must be there
        _check_scripts()
    if statusline and scope == "project":
        raise InstallError(
            "--statusline goes in your own settings (--user or --local DIR), not in a "
            "file shared with the team"
        )
    statusline_action = ""
    rules, rules_note = lookup_rules(scope, python)
    try:
        new = settings.merge(before, specs)
        if statusline or settings_statusline.is_ours(settings_statusline.current(before)):
            new = settings_statusline.merge(new, statusline_command(python, package_dir))
            statusline_action = _statusline_action(before, new)
        new = settings_permissions.merge(new, rules)
    except SettingsError as exc:
        raise InstallError(f"{path}: {exc}") from None
    changed = new != before or old is None
    action = "unchanged" if not changed else ("updated" if had else "installed")
    warnings = tuple(registration_warnings(scope, path, project_dir, managed, after=new))
    diff = unified_diff(before, new, path) if changed else ""
    launcher: str | None = None
    launcher_text_new: str | None = None
    if scope == "project":
        launcher = launcher_path()
        old_launcher = read_text(launcher)
        text = launcher_text(python, package_dir)
        if old_launcher != text:
            if old_launcher is not None and LAUNCHER_TAG not in old_launcher:
                raise InstallError(
                    f"{launcher} exists and is not ctxmode's launcher; move it away and run "
                    "this again"
                )
            launcher_text_new = text
            diff += unified_diff(old_launcher or "", text, launcher)
    backup = None
    if not dry_run:
        # What this install makes and keeps goes into the ledger first (so that uninstall
        # can take back exactly that); a data root that cannot take it stops the install
        # before any file of the user's changes.
        ledger = Ledger.load()
        # A backup an older version left beside the file (in the user's repository, for
        # a project) moves into the data root, whether or not anything else changes.
        noted = ledger.adopt(target, _legacy_backups(path, target), _ours_alone)
        if changed:
            ours_before = _holds_ours(before)
            ledger.before_write(target, old, ours_before=ours_before)
            if old is not None and not ours_before:
                backup = ledger.backup_path(target)
        if launcher is not None and launcher_text_new is not None:
            ledger.note_dirs(os.path.dirname(launcher))
        if launcher is not None and target not in ledger.team_files:
            ledger.team_files.append(target)
            noted = True
        if noted or changed or launcher_text_new is not None:
            ledger.save()
        if changed:
            _replace_checked(target, old, new)
        if launcher is not None and launcher_text_new is not None:
            os.makedirs(os.path.dirname(launcher), exist_ok=True)
            write_atomic(launcher, launcher_text_new, 0o755 & ~umask())
    return InstallResult(
        scope,
        path,
        action,
        changed,
        dry_run,
        diff,
        backup,
        len(specs),
        warnings,
        launcher=launcher,
        launcher_changed=launcher_text_new is not None,
        skipped=skipped,
        skipped_why=skipped_why,
        client_version=version,
        statusline=statusline_action,
        permissions=tuple(rules),
        permissions_note=rules_note,
        client_path=client.path,
        kept=tuple(kept),
        changes=tuple(_changes(had, settings.registrations(new))) if had else (),
    )


def _changes(
    before: Sequence[settings.Registration], after: Sequence[settings.Registration]
) -> list[str]:
    """What an update changed in ctxmode's registration, in words ("PostCompact added",
    "captures now in the background"); a moved installation alone is not listed."""
    old = {reg.event: reg for reg in before}
    new = {reg.event: reg for reg in after}
    out = []
    added = [event for event in new if event not in old]
    removed = [event for event in old if event not in new]
    if added:
        out.append(f"{', '.join(added)} added")
    if removed:
        out.append(f"{', '.join(removed)} removed")
    modes = {new[e].background for e in new if e in old and new[e].background != old[e].background}
    if modes:
        out.append("captures now in the " + ("background" if True in modes else "foreground"))
    return out


def client_words(result: InstallResult) -> str:
    """Which client the registration is for, and how that was found (one clause)."""
    if result.client_path:
        return (
            f"Claude Code {version_text(result.client_version)} found at "
            f"{display_path(result.client_path)}"
        )
    if result.client_version is not None:
        return f"Claude Code {version_text(result.client_version)} ({CLIENT_VERSION_ENV})"
    return "Claude Code's version unknown"


def preview(result: InstallResult) -> str:
    """What ``install --dry-run`` prints: the unified diff, or that nothing would change."""
    if result.diff:
        return result.diff
    return f"nothing to change: ctxmode is already installed in {display_path(result.path)}\n"


def dry_run_main(argv: Sequence[str]) -> int:
    """``install.sh --dry-run``: the change this checkout would make, written nowhere.

    Run by the system interpreter straight from the checkout (no environment is built,
    click is not needed): ``argv`` is the interpreter and package directory the
    environment would have, then ``--user`` or ``--project DIR`` or ``--local DIR``.
    """
    python, package_dir, *rest = argv
    scope, directory = "user", None
    if rest and rest[0] in ("--project", "--local") and len(rest) == 2:
        scope, directory = rest[0][2:], rest[1]
    elif rest not in ([], ["--user"]):
        print(f"ctxmode: error: unexpected arguments {list(rest)}", file=sys.stderr)
        return 2
    try:
        result = install(scope, directory, dry_run=True, python=python, package_dir=package_dir)
    except InstallError as exc:
        print(f"ctxmode: error: {exc}", file=sys.stderr)
        return 1
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    sys.stdout.write(preview(result))
    return 0


# --------------------------------------------------------------------------- what install made


def _legacy_backups(path: str, target: str) -> list[str]:
    """Where versions before the ledger kept the backup: beside the path the user
    knows (and, for a symlink, its target)."""
    return list(dict.fromkeys([path + BACKUP_SUFFIX, target + BACKUP_SUFFIX]))


def _holds_ours(text: str) -> bool:
    """Whether a settings text holds any of ctxmode's entries (hooks, status line, rule)."""
    try:
        return bool(
            settings.registrations(text)
            or settings_statusline.is_ours(settings_statusline.current(text))
            or settings_permissions.current(text)
        )
    except SettingsError:
        return False


def _ours_alone(text: str) -> bool:
    """Whether a settings text holds ctxmode's entries and nothing else."""
    return _holds_ours(text) and _holds_nothing(text)


def _launcher_in_use(ledger: Ledger) -> bool:
    """Whether a shared project file this user installed still runs the launcher."""
    for path in ledger.team_files:
        text = _read_quietly(path)
        try:
            if text and any(
                settings.runs_launcher(r.command) for r in settings.registrations(text)
            ):
                return True
        except SettingsError:
            return True  # cannot tell: keep it
    return False


def _replace_checked(target: str, expected: str | None, new: str) -> None:
    """Write ``new`` unless the file changed since it was read (another writer won)."""
    if read_text(target) != expected:
        raise InstallError(f"{target} changed while ctxmode was editing it; run the command again")
    write_atomic(target, new, file_mode(target))


def _restorable_backup(current: str, backup: str | None) -> bool:
    """Whether ``current`` is exactly the backup plus ctxmode's own entries."""
    if backup is None:
        return False
    try:
        if settings.registrations(backup):
            return False  # the backup predates an upgrade, not the install: don't revive it
        found = settings.registrations(current)
        specs = [reg.spec() for reg in found]
        expected = settings.merge(backup, specs) if specs else backup
        line = settings_statusline.current(current)
        if settings_statusline.is_ours(line):
            assert isinstance(line, str)
            ours = settings_statusline.ours_alone(line)
            expected = settings_statusline.merge(expected, ours)
        if settings_permissions.current(backup):
            return False  # as with the hooks: an older install's, not the user's
        expected = settings_permissions.merge(expected, settings_permissions.current(current))
        return (bool(specs) or expected != backup) and expected == current
    except SettingsError:
        return False


def uninstall(
    scope: str = "user",
    project_dir: str | None = None,
    dry_run: bool = False,
    managed: str | None = None,
) -> InstallResult:
    """Remove ctxmode's handlers from the scope's settings file; leave the rest alone.

    A settings file, its ``.claude`` folder and the launcher that ctxmode had created
    go away again once nothing else is in them (or, the launcher, uses it); a folder
    the user had always stays.
    """
    path = settings_path(scope, project_dir)
    target = os.path.realpath(path)
    old = read_text(target)
    if old is None:
        return InstallResult(scope, path, "not installed", False, dry_run, "", None, 0)
    _parse_or_raise(old, path)
    found = settings.registrations(old)
    line = settings_statusline.current(old)
    statusline_action = ""
    if settings_statusline.is_ours(line):
        assert isinstance(line, str)
        composed = settings_statusline.composed_with(line) is not None
        statusline_action = "restored" if composed else "removed"
    if not found and not statusline_action and not settings_permissions.current(old):
        warnings = tuple(registration_warnings(scope, path, project_dir, managed))
        return InstallResult(scope, path, "not installed", False, dry_run, "", None, 0, warnings)

    ledger = Ledger.load()
    beside = _legacy_backups(path, target)
    legacy = legacy_backup(beside)
    backup = ledger.backup_text(target)
    if backup is None and legacy is not None and not _holds_ours(legacy):
        backup = legacy  # kept beside the file by an older version
    delete_file = False
    if _restorable_backup(old, backup):
        assert backup is not None
        new = backup
    else:
        try:
            new = settings.unmerge(settings_statusline.unmerge(settings_permissions.unmerge(old)))
        except SettingsError as exc:
            raise InstallError(f"{path}: {exc}") from None
        # A file left with nothing in it goes away again only if ctxmode created it: an
        # empty file the user had is theirs (the ledger says which; see legacy_created).
        created = ledger.created(target, unknown=legacy_created(legacy, _ours_alone))
        delete_file = _holds_nothing(new) and created
    diff = unified_diff(old, "" if delete_file else new, path)
    # As the files are once this is done: this one no longer registers anything.
    warnings = tuple(registration_warnings(scope, path, project_dir, managed, after=new))
    written_backup = None
    action = "deleted" if delete_file else "removed"
    removed: list[str] = []
    if not dry_run:
        if delete_file:
            os.unlink(target)
            ledger.forget(target)
        elif new == backup:
            _replace_checked(target, old, new)
            ledger.forget(target)  # the original is back: the backup has served
        else:
            # The bytes before, kept where the user's folders do not see them (best
            # effort: the removal itself is exact either way).
            with contextlib.suppress(InstallError):
                written_backup = ledger.keep_backup(target, old, created=None)
            _replace_checked(target, old, new)
        for stale in beside:
            with contextlib.suppress(OSError):
                os.unlink(stale)
        removed = _tidy_up(target, ledger)
    return InstallResult(
        scope,
        path,
        action,
        True,
        dry_run,
        diff,
        written_backup,
        0,
        warnings,
        removed=tuple(removed),
        statusline=statusline_action,
    )


def _tidy_up(target: str, ledger: Ledger) -> list[str]:
    """After an uninstall: the launcher no shared file uses, and emptied folders of ours
    (the ledger saved if it can be: a data root that cannot take it leaves a folder)."""
    removed = ledger.remove_created_dirs(os.path.dirname(target))
    if target in ledger.team_files:
        ledger.team_files.remove(target)
        launcher = launcher_path()
        if not _launcher_in_use(ledger):
            text = _read_quietly(launcher)
            if text is not None and LAUNCHER_TAG in text:
                with contextlib.suppress(OSError):
                    os.unlink(launcher)
                    removed.append(launcher)
            removed += ledger.remove_created_dirs(os.path.dirname(launcher))
            ledger.team_files.clear()
    ledger.try_save()
    return removed


def _holds_nothing(text: str) -> bool:
    """Whether a settings text is empty apart from ctxmode's entries."""
    try:
        rest = settings.unmerge(settings_statusline.unmerge(settings_permissions.unmerge(text)))
        return bool(settings.parse(rest) == {})
    except SettingsError:
        return False


# --------------------------------------------------------------------------- what the CLI says

_STATUSLINE_WORDS = {
    "added": "; status line set",
    "composed": "; status line: yours, then ctxmode's",
    "updated": "; status line updated",
    "unchanged": "; status line in place",
    "removed": "; status line removed",
    "restored": "; your status line restored",
}


def cli_install(
    report: Report,
    scope: str,
    project_dir: str | None,
    *,
    dry_run: bool = False,
    verify: bool = False,
    statusline: bool = False,
) -> None:
    """``ctxmode install``: install, then say what was done (``report``); with ``verify``
    the proof run follows. Raises :class:`InstallError` (what was said stays said)."""
    result = install(scope, project_dir, dry_run=dry_run, statusline=statusline)
    for warning in result.warnings:
        report.note(f"warning: {warning}")
    if result.skipped and result.client_version is not None:
        # An unknown version or a shared file is not news at each install: doctor says it.
        report.note(f"note: {', '.join(result.skipped)} not registered: {result.skipped_why}")
    where = display_path(result.path)
    if dry_run:
        report.write(preview(result))
        return
    if result.launcher is not None:
        state = "written now" if result.launcher_changed else "in place"
        report.say(
            f"{where} is shared with your team: its hooks run {LAUNCHER} ({state}, "
            "it runs this installation); a teammate's hooks do nothing until they run "
            "`ctxmode install --project DIR` (or ./install.sh --project DIR) in their checkout"
        )
    verb = {"installed": "installed", "updated": "updated", "unchanged": "already installed"}
    line = f"ctxmode {ctxmode.__version__} {verb[result.action]}: {result.hooks} hooks in {where}"
    if result.kept:
        report.note(
            f"note: Claude Code was not found (not on PATH, nor where its installers put it): "
            f"kept what the earlier install registered ({', '.join(result.kept)}); set "
            f"{CLIENT_VERSION_ENV} to the version you run to change that"
        )
    if result.action == "updated":
        # Say what changed and why: an event or the capture mode follows the client found.
        details = (
            f": {', '.join(result.changes)}, for {client_words(result)}" if result.changes else ""
        )
        line += f" (old entries replaced{details})"
    line += _STATUSLINE_WORDS.get(result.statusline, "")
    if result.permissions:
        # What the model may now run without asking, named exactly (settings_permissions).
        line += "; the snapshot's lookups run without asking: " + ", ".join(result.permissions)
    elif result.permissions_note:
        report.note(f"note: no lookup permission rule: {result.permissions_note}")
    if verify:
        from ctxmode.hosts.claude_code import proof as claude_proof

        outcome = claude_proof.verify(result.path)
        if not outcome.ok:
            raise InstallError(proof.failed(line, outcome, "Claude Code", "ctxmode uninstall"))
        # The one line install.sh ends with: what the proof run proved.
        line += proof.verified(outcome)
    report.say(line)


def cli_uninstall(
    report: Report, scope: str, project_dir: str | None, *, dry_run: bool = False
) -> None:
    """``ctxmode uninstall``: uninstall, then say what was done (``report``)."""
    result = uninstall(scope, project_dir, dry_run=dry_run)
    for warning in result.warnings:
        report.note(f"warning: {warning}")
    where = display_path(result.path)
    if dry_run:
        if result.diff:
            report.write(result.diff)
        else:
            report.say(f"nothing to change: ctxmode is not installed in {where}")
        return
    also = (
        "; also removed what ctxmode install had made: "
        + ", ".join(display_path(path) for path in result.removed)
        if result.removed
        else ""
    )
    if result.action == "not installed":
        report.say(f"ctxmode is not installed in {where}: nothing changed")
    elif result.action == "deleted":
        report.say(f"ctxmode hooks removed: {where} deleted (ctxmode had created it){also}")
    else:
        kept = f"; previous version in {display_path(result.backup)}" if result.backup else ""
        words = _STATUSLINE_WORDS.get(result.statusline, "")
        report.say(f"ctxmode hooks removed from {where}{words}{kept}{also}")
