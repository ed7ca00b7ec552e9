"""The CLI's commands: name → (module, attribute), imported only when used.

Loading every command module costs ~90 ms; the model runs ``ctxmode search`` from a
snapshot's hints, so each invocation imports only the module of its own command.
"""

from __future__ import annotations

import importlib

import click

COMMANDS: dict[str, tuple[str, str]] = {
    "bench": ("ctxmode.cli.bench_cmd", "bench_command"),
    "config": ("ctxmode.cli.config_cmd", "config_group"),
    "demo": ("ctxmode.cli.demo", "demo_cmd"),
    "doctor": ("ctxmode.cli.doctor", "doctor_cmd"),
    "dump": ("ctxmode.cli.dump", "dump"),
    "import": ("ctxmode.cli.import_cmd", "import_cmd"),
    "install": ("ctxmode.cli.install_cmd", "install"),
    "purge": ("ctxmode.cli.sessions", "purge_cmd"),
    "search": ("ctxmode.cli.search", "search"),
    "sessions": ("ctxmode.cli.sessions", "sessions_cmd"),
    "show-snapshot": ("ctxmode.cli.sessions", "show_snapshot_cmd"),
    "stats": ("ctxmode.cli.stats", "stats"),
    "statusline": ("ctxmode.cli.statusline_cmd", "statusline_cmd"),
    "uninstall": ("ctxmode.cli.install_cmd", "uninstall"),
    "view": ("ctxmode.cli.view", "view_cmd"),
}


def load(name: str) -> click.Command:
    module, attribute = COMMANDS[name]
    command = getattr(importlib.import_module(module), attribute)
    assert isinstance(command, click.Command) and command.name == name, (name, command)
    return command


def all_commands() -> list[click.Command]:
    return [load(name) for name in COMMANDS]
