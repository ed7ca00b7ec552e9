"""``ctxmode statusline``: the status line, for a terminal or a script of your own.

Claude Code runs the shim (``ctxmode/hooks/statusline.py``, registered by ``ctxmode
install --statusline``), which skips click's start-up; this command is the same code
under ctxmode's name, for status line scripts that call it.
"""

from __future__ import annotations

import click


@click.command("statusline")
@click.option(
    "--then",
    "then",
    metavar="COMMAND",
    default=None,
    help="Run COMMAND (your own status line) on the same input first; append ctxmode's line.",
)
def statusline_cmd(then: str | None) -> None:
    """Print one short line for Claude Code's status bar from the JSON on stdin:
    events recorded for the session, whether a compaction's snapshot is ready or was
    restored, compactions, and the context used, e.g.
    `ctx 312 ev · snapshot ready · 2 compactions · 71% context`.

    Exits 0 and prints nothing on stderr whatever the input (garbage prints nothing).
    """
    import os
    import sys

    from ctxmode import statusline

    args = ["--then", then] if then is not None else []
    line = statusline.run(args, sys.stdin.buffer, os.environ)
    if line:
        sys.stdout.write(line + "\n")
