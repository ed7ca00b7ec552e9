"""Installing ctxmode for OpenCode: one plugin file, ctxmode's own.

OpenCode loads every ``*.js`` in ``~/.config/opencode/plugin/`` (``$XDG_CONFIG_HOME``) and
in a project's ``.opencode/plugin/``, with no list to edit and no trust step (verified on
1.18.33). So install writes ``ctxmode.js`` there — ``plugin.js`` of this package with this
interpreter and the hook scripts' folder filled in — and uninstall deletes it: the file is
ctxmode's alone, so "byte for byte" is about everything around it. A file of that name
that is not ctxmode's (no marker line) is refused and left alone; the folders install made
for it (``plugin/``, ``.opencode/``) go again once empty, never one the user had. The
ledger (:class:`ctxmode.config_files.Ledger`) records which. The snapshot's ``ctxmode
search`` hints run through OpenCode's ``bash`` tool, which its default permissions allow.

CLI-only (``ctxmode install --host opencode``, ``doctor``): never imported by a hook.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import ctxmode
from ctxmode.config_files import InstallError, Ledger, Report, UsageError, display_path
from ctxmode.config_files import read_text as _read
from ctxmode.config_files import unified_diff as _diff
from ctxmode.config_files import write_atomic as _write_atomic
from ctxmode.hosts import json_settings, opencode, settings_cli
from ctxmode.hosts.opencode.plugin_file import installed_command as installed_command
from ctxmode.hosts.opencode.plugin_file import is_ours as is_ours
from ctxmode.settings import HookSpec

SCOPES = json_settings.SCOPES
HELP = "OpenCode (a plugin in ~/.config/opencode/plugin/, or DIR/.opencode/plugin/ with --project)"
TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugin.js")


@dataclass(frozen=True)
class OpencodeResult:
    """What install/uninstall did (or, with dry_run, would do) to the plugin file."""

    scope: str
    path: str
    action: str  # installed, updated, unchanged, deleted, not installed
    changed: bool
    dry_run: bool
    diff: str
    notes: tuple[str, ...] = ()


# --------------------------------------------------------------------------- paths


def config_home(env: Mapping[str, str] | None = None) -> str:
    """OpenCode's user folder: ``$XDG_CONFIG_HOME/opencode``, else ``~/.config/opencode``."""
    env = os.environ if env is None else env
    xdg = env.get(opencode.USER_DIR_ENV, "").strip()
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "opencode")
    home = env.get("HOME", "").strip() or os.path.expanduser("~")
    return os.path.join(os.path.abspath(home), ".config", "opencode")


def plugin_path(
    scope: str, project_dir: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    return json_settings.scoped_path(
        scope, project_dir, config_home(env), opencode.SETTINGS_FILES, "OpenCode"
    )


# --------------------------------------------------------------------------- the plugin


def hook_specs(python: str | None = None, package_dir: str | None = None) -> list[HookSpec]:
    """What the plugin runs for each OpenCode hook: this interpreter on the package's shims
    (the plugin spawns it, no shell), ``--host opencode``; timeouts in milliseconds."""
    python = os.path.abspath(python or sys.executable)
    package_dir = os.path.abspath(package_dir or os.path.dirname(ctxmode.__file__))
    specs = []
    for hook, timeout, _matcher in opencode.HOOKS:
        shim = opencode.SHIMS.get(hook.removeprefix("event:"))
        if shim is None:  # system.transform: the plugin's own, no script
            continue
        script = os.path.join(package_dir, "hooks", shim + ".py")
        command = f"{shlex.quote(python)} -I -S {shlex.quote(script)} --host opencode"
        specs.append(HookSpec(hook, command, timeout))
    return specs


def timeouts() -> dict[str, int]:
    """Each shim's timeout in the plugin (ms): the longest of the hooks it serves."""
    found: dict[str, int] = {}
    for hook, timeout, _matcher in opencode.HOOKS:
        shim = opencode.SHIMS.get(hook.removeprefix("event:"))
        if shim is not None:
            found[shim] = max(timeout, found.get(shim, 0))
    return found


def render(
    python: str | None = None,
    package_dir: str | None = None,
    limits: Mapping[str, int] | None = None,
) -> str:
    """The plugin as install writes it: the template with this interpreter, the hooks
    folder and the timeouts (``limits``, ms per shim; :func:`timeouts` by default) in."""
    python = os.path.abspath(python or sys.executable)
    package_dir = os.path.abspath(package_dir or os.path.dirname(ctxmode.__file__))
    with open(TEMPLATE, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    for i, line in enumerate(lines):
        # JSON string literals are JS string literals: any path is quoted safely.
        if line == 'const PYTHON = "@PYTHON@";':
            lines[i] = f"const PYTHON = {json.dumps(python)};"
        elif line == 'const HOOKS = "@HOOKS@";':
            lines[i] = f"const HOOKS = {json.dumps(os.path.join(package_dir, 'hooks'))};"
        elif line.startswith("const TIMEOUTS = "):
            lines[i] = f"const TIMEOUTS = {json.dumps(dict(limits or timeouts()))};"
    return "\n".join(lines)


# --------------------------------------------------------------------------- install


def install(
    scope: str = "user",
    project_dir: str | None = None,
    dry_run: bool = False,
    python: str | None = None,
    package_dir: str | None = None,
    env: Mapping[str, str] | None = None,
) -> OpencodeResult:
    """Write ctxmode's plugin (replacing an older one of ctxmode's; never another file)."""
    path = plugin_path(scope, project_dir, env)
    target = os.path.realpath(path)
    old = _read(target)
    if old is not None and not is_ours(old):
        raise InstallError(
            f"{path} exists and is not ctxmode's plugin: left untouched (move it away first)"
        )
    new = render(python, package_dir)
    changed = new != old
    action = "unchanged" if not changed else ("updated" if old is not None else "installed")
    diff = _diff(old, new, path) if changed else ""
    if changed and not dry_run:
        ledger = Ledger.load(env)
        ledger.before_write(target, old, ours_before=old is not None)
        ledger.save()
        os.makedirs(os.path.dirname(target), exist_ok=True)
        _write_atomic(target, new, 0o644)
    notes = []
    if scope == "project":
        notes.append(
            f"{path} names this machine's ctxmode: each user runs "
            "`ctxmode install --host opencode --project DIR` for a plugin that runs for them"
        )
    return OpencodeResult(scope, path, action, changed, dry_run, diff, tuple(notes))


def uninstall(
    scope: str = "user",
    project_dir: str | None = None,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
) -> OpencodeResult:
    """Delete ctxmode's plugin, and the folders install made for it once they are empty."""
    path = plugin_path(scope, project_dir, env)
    target = os.path.realpath(path)
    old = _read(target)
    if not is_ours(old):
        return OpencodeResult(scope, path, "not installed", False, dry_run, "")
    diff = _diff(old, None, path)
    if not dry_run:
        os.unlink(target)
        ledger = Ledger.load(env)
        ledger.forget(target)
        ledger.remove_created_dirs(os.path.dirname(target))
        ledger.try_save()
    return OpencodeResult(scope, path, "deleted", True, dry_run, diff)


def dry_run_main(argv: Sequence[str]) -> int:
    """``install.sh --host opencode --dry-run`` (see :func:`ctxmode.hosts.settings_cli.dry_run_main`)."""
    return settings_cli.dry_run_main(argv, "opencode", "OpenCode", install)


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
    """``ctxmode install --host opencode``: install, then say what was done (``report``)."""
    if statusline:
        raise UsageError("--statusline is Claude Code's; OpenCode has no status line command")
    result = install(scope, project_dir, dry_run=dry_run)
    for note in result.notes:
        report.note(f"note: {note}")
    if dry_run:
        report.write(result.diff or "nothing to change\n")
        return
    verb = {"installed": "installed", "updated": "updated", "unchanged": "already installed"}
    line = (
        f"ctxmode {ctxmode.__version__} {verb[result.action]} for OpenCode: a plugin in "
        f"{display_path(result.path)}"
    )
    if verify:
        from ctxmode import proof
        from ctxmode.hosts.opencode import proof as opencode_proof

        outcome = opencode_proof.verify(result.path)
        if not outcome.ok:
            raise InstallError(
                proof.failed(line, outcome, "OpenCode", "ctxmode uninstall --host opencode")
            )
        line += proof.verified(outcome, "a sample OpenCode session")
    report.say(line)


def cli_uninstall(
    report: Report, scope: str, project_dir: str | None, *, dry_run: bool = False
) -> None:
    """``ctxmode uninstall --host opencode``: uninstall, then say what was done."""
    result = uninstall(scope, project_dir, dry_run=dry_run)
    if dry_run:
        report.write(result.diff or "nothing to change: ctxmode is not installed for OpenCode\n")
        return
    where = display_path(result.path)
    if result.action == "not installed":
        report.say(f"ctxmode is not installed in {where}: nothing changed")
    else:
        report.say(f"ctxmode's OpenCode plugin removed: {where} deleted")
