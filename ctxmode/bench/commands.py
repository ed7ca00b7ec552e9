"""Which hook commands to measure: the ones registered in the settings files (or a given
one), else the ones ``ctxmode install`` would write; and the interpreter each starts,
whose bare start-up is the floor."""

from __future__ import annotations

import os
import shlex
import sys
from typing import NamedTuple

from ctxmode.bench.cases import BenchError

NOT_INSTALLED = "not installed: the commands `ctxmode install` would write"


class Resolved(NamedTuple):
    """The hook commands to measure and where they came from."""

    commands: dict[str, str]
    source: str
    # False when no settings file registers ctxmode: the commands are install's plan.
    installed: bool
    # Not installed: whether install would register the captures in the background,
    # and why (one clause, ``hosts.claude_code.background_mode``).
    plan: tuple[bool, str] | None = None


def capture_plan() -> tuple[bool, str]:
    """Whether ``ctxmode install`` would register the captures in the background here,
    and why: the Claude Code it would find decides (``installer.find_client``)."""
    from ctxmode import installer
    from ctxmode.hosts import claude_code

    return claude_code.background_mode(installer.find_client().version)


def default_commands(background: bool = False) -> dict[str, str]:
    """The commands ``ctxmode install`` would write for this installation (every event;
    ``background``: the captures as install registers them for a client with async hooks)."""
    from ctxmode import installer

    return {spec.event: spec.command for spec in installer.hook_specs(background=background)}


def _settings_candidates(project_dir: str) -> list[str]:
    """Claude Code's settings files, most specific first: local, project, user."""
    from ctxmode import installer

    files = [
        os.path.join(project_dir, ".claude", "settings.local.json"),
        os.path.join(project_dir, ".claude", "settings.json"),
        os.path.join(installer.user_config_dir(), "settings.json"),
    ]
    unique: list[str] = []
    for path in files:
        if path not in unique:
            unique.append(path)
    return unique


def commands_from_settings(path: str) -> dict[str, str]:
    """ctxmode's command per event registered in a settings file (first one wins)."""
    from ctxmode import settings

    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise BenchError(f"cannot read {path}: {exc.strerror}") from None
    try:
        registrations = settings.registrations(text)
    except settings.SettingsError as exc:
        raise BenchError(str(exc)) from None
    found: dict[str, str] = {}
    for registration in registrations:
        found.setdefault(registration.event, registration.command)
    return found


def resolve_commands(settings_path: str | None = None, project_dir: str | None = None) -> Resolved:
    """The commands to measure, where they came from, and whether they are installed.

    With ``settings_path``: that file's ctxmode commands. Otherwise the installed ones
    (local, project, then user settings of the current project); when none is
    installed, the commands this installation would write, the captures in the mode
    install would choose (:func:`capture_plan`). Events a settings file lacks are
    filled in with the latter, and the source says so.
    """
    if settings_path is not None:
        found = commands_from_settings(settings_path)
        if not found:
            raise BenchError(f"no ctxmode hook is registered in {settings_path}")
        sources = [settings_path]
    else:
        if project_dir is None:
            from ctxmode import paths

            project_dir = paths.project_dir(os.getcwd(), os.environ)
        found = {}
        sources = []
        for candidate in _settings_candidates(project_dir):
            if not os.path.isfile(candidate):
                continue
            try:
                here = commands_from_settings(candidate)
            except BenchError:
                continue  # not ours to judge here: `ctxmode doctor` reports it
            new = {event: cmd for event, cmd in here.items() if event not in found}
            if new:
                found.update(new)
                sources.append(candidate)
        if not found:
            plan = capture_plan()
            return Resolved(default_commands(plan[0]), NOT_INSTALLED, False, plan)
    defaults = default_commands()
    missing = [event for event in defaults if event not in found]
    source = ", ".join(sources)
    if missing:
        source += (
            f" (not registered there, so as `ctxmode install` would write: {', '.join(missing)})"
        )
    return Resolved({**defaults, **found}, source, True)


def statusline_command(settings_path: str | None = None, project_dir: str | None = None) -> str:
    """ctxmode's status line command: the one installed in the settings file (or the
    first of local, project, user settings holding one), else the one ``ctxmode install
    --statusline`` would write. A status line composed with the user's own is measured
    without theirs: their command is not ctxmode's cost."""
    from ctxmode import installer, settings_statusline

    if settings_path is not None:
        candidates = [settings_path]
    else:
        if project_dir is None:
            from ctxmode import paths

            project_dir = paths.project_dir(os.getcwd(), os.environ)
        candidates = _settings_candidates(project_dir)
    for path in candidates:
        try:
            with open(path, encoding="utf-8") as handle:
                command = settings_statusline.current(handle.read())
        except (OSError, ValueError):
            continue
        if isinstance(command, str) and settings_statusline.is_ours(command):
            return settings_statusline.ours_alone(command)
    return installer.statusline_command()


def interpreter_of(command: str) -> str:
    """The interpreter a hook command starts (its first word, or for a shared project
    file's command the one its per-user launcher runs)."""
    from ctxmode import installer, settings

    if settings.runs_launcher(command):
        try:
            with open(installer.launcher_path(), encoding="utf-8") as handle:
                python = installer.launcher_target(handle.read())[0]
        except OSError:
            python = None
        return python or sys.executable
    try:
        words = shlex.split(command)
    except ValueError:
        words = []
    return words[0] if words else sys.executable


def floor_command(python: str) -> str:
    return f"{shlex.quote(python)} -I -S -c pass"
