"""Which hook commands to measure, shared by every host's bench part
(``ctxmode/hosts/<name>/bench.py``): the ctxmode commands a settings file registers, the
interpreter a command starts, whose bare start-up is the floor."""

from __future__ import annotations

import shlex
import sys

from ctxmode.bench.cases import BenchError


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


def interpreter_of(command: str) -> str:
    """The interpreter a hook command starts: its first word (this one's when none)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = []
    return words[0] if words else sys.executable


def floor_command(python: str) -> str:
    return f"{shlex.quote(python)} -I -S -c pass"
