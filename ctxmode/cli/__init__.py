"""The ctxmode command line (click). The only package that imports click.

Each command lives in its own module and is a thin edge: it parses options, calls
plain functions of the core (which raise ``ctxmode`` errors, never click ones) and
formats the result. Commands are registered in :data:`COMMANDS` below.
"""

from __future__ import annotations

import click

from ctxmode import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ctxmode")
def main() -> None:
    """ctxmode: a memory for Claude Code that survives compaction.

    Hooks record each session of a project in a local SQLite store; after a
    compaction the next session start receives a small <session_resume> snapshot.
    These commands show and manage what is stored.
    """


def _register() -> None:
    # Imported here so that each module owns its command and stays small.
    from ctxmode.cli import commands

    for command in commands.ALL:
        main.add_command(command)


_register()
