"""The ctxmode command line (click). The only package that imports click.

Each command lives in its own module and is a thin edge: it parses options, calls
plain functions of the core (which raise ``ctxmode`` errors, never click ones) and
formats the result. Commands are listed in :mod:`ctxmode.cli.commands` and imported
on first use.
"""

from __future__ import annotations

import click

from ctxmode import __version__
from ctxmode.cli import commands


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when invoked or listed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(commands.COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in commands.COMMANDS:
            return None
        return commands.load(cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ctxmode")
def main() -> None:
    """ctxmode: a memory for Claude Code that survives compaction.

    Hooks record each session of a project in a local SQLite store; after a
    compaction the next session start receives a small <session_resume> snapshot.
    These commands show and manage what is stored.
    """
