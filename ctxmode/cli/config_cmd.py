"""``ctxmode config list|get|set|unset``: read and edit the JSON configuration files.

Without ``--project`` the commands work on the global file (``<config dir>/config.json``);
with it, on the project's ``.claude/ctxmode.json``, which wins over the global file.
The parsing, validation and atomic writes live in :mod:`ctxmode.config`.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import click
from click.decorators import FC

from ctxmode import config, paths
from ctxmode.cli.common import echo_json


def resolve_project(project: str) -> str:
    """The folder whose config the hooks read: the session's project folder as named
    (``ctxmode.paths.project_dir``), not the repository key of its store."""
    return paths.project_dir(os.path.abspath(project), {})


def _options_help() -> str:
    lines = ["\b", "Options (name, default: what it does):"]
    for name, (default, text) in config.OPTIONS.items():
        lines.append(f"  {name} = {config.format_value(default)}")
        lines.append(f"      {text}")
    return "\n".join(lines)


def _project_option(help_text: str) -> Callable[[FC], FC]:
    return click.option(
        "--project",
        "project",
        metavar="DIR",
        type=click.Path(file_okay=False, exists=True),
        default=None,
        help=help_text,
    )


_FILE_HELP = "Edit DIR/.claude/ctxmode.json (this project only) instead of the global file."
_VIEW_HELP = "Include DIR/.claude/ctxmode.json, as the hooks do for that project."


def _target(project: str | None) -> tuple[str, str | None]:
    """(file to edit, project dir or None)."""
    if project is None:
        return config.global_path(os.environ), None
    project_dir = resolve_project(project)
    return config.project_path(project_dir), project_dir


def _complete_name(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    return [name for name in config.OPTIONS if name.startswith(incomplete)]


_name_argument = click.argument("name", shell_complete=_complete_name)


def _fail(exc: config.ConfigError) -> click.ClickException:
    """A file that cannot be read or written: a runtime error (exit 1)."""
    return click.ClickException(str(exc))


def _misused(exc: config.ConfigError) -> click.UsageError:
    """An unknown option name or a value it cannot take: a usage error (exit 2)."""
    return click.UsageError(str(exc))


@click.group(name="config", epilog=_options_help())
def config_group() -> None:
    """Show and change ctxmode's settings.

    Values come from the defaults, then the global file, then the project's
    .claude/ctxmode.json. Booleans take true/false (yes/no, on/off, 1/0); lists
    take comma-separated items or a JSON array.
    """


@config_group.command(name="list")
@_project_option(_VIEW_HELP)
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def list_cmd(project: str | None, as_json: bool) -> None:
    """Every option: effective value, default, and where the value came from."""
    project_dir = resolve_project(project) if project is not None else None
    rows = config.explain(os.environ, project_dir)
    if as_json:
        echo_json(
            {
                "global_file": config.global_path(os.environ),
                "project_file": config.project_path(project_dir) if project_dir else None,
                "options": rows,
            }
        )
        return
    click.echo(f"global file:  {_shown(config.global_path(os.environ))}")
    if project_dir:
        click.echo(f"project file: {_shown(config.project_path(project_dir))}")
    values = [config.format_value(row["value"]) for row in rows]
    defaults = [config.format_value(row["default"]) for row in rows]
    name_w = max(len("NAME"), *(len(row["name"]) for row in rows))
    value_w = max(len("VALUE"), *(len(v) for v in values))
    default_w = max(len("DEFAULT"), *(len(d) for d in defaults))
    click.echo(f"{'NAME':<{name_w}}  {'VALUE':<{value_w}}  {'DEFAULT':<{default_w}}  FROM")
    for row, value, default in zip(rows, values, defaults, strict=True):
        click.echo(
            f"{row['name']:<{name_w}}  {value:<{value_w}}  {default:<{default_w}}  {row['source']}"
        )
    for row in rows:
        for problem in row["problems"]:
            click.echo(f"warning: {row['name']}: {problem}", err=True)


def _shown(path: str) -> str:
    return path + ("" if os.path.exists(path) else " (not created yet)")


@config_group.command(name="get")
@_name_argument
@_project_option(_VIEW_HELP)
def get_cmd(name: str, project: str | None) -> None:
    """Print the effective value of NAME."""
    try:
        config.check_name(name)
    except config.ConfigError as exc:
        raise _misused(exc) from None
    project_dir = resolve_project(project) if project is not None else None
    row = next(row for row in config.explain(os.environ, project_dir) if row["name"] == name)
    click.echo(config.format_value(row["value"]))


# ignore_unknown_options: a VALUE such as -5 is a value to check, not an unknown option.
@config_group.command(name="set", context_settings={"ignore_unknown_options": True})
@_name_argument
@click.argument("value")
@_project_option(_FILE_HELP)
def set_cmd(name: str, value: str, project: str | None) -> None:
    """Set NAME to VALUE in the global (or the project's) file."""
    path, _ = _target(project)
    try:
        parsed = config.parse_value(name, value)
    except config.ConfigError as exc:
        raise _misused(exc) from None
    try:
        config.set_value(path, name, parsed)
    except config.ConfigError as exc:
        raise _fail(exc) from None
    click.echo(f"{name} = {config.format_value(parsed)}  ({path})")


@config_group.command(name="unset")
@_name_argument
@_project_option(_FILE_HELP)
def unset_cmd(name: str, project: str | None) -> None:
    """Remove NAME from the global (or the project's) file."""
    path, project_dir = _target(project)
    try:
        config.check_name(name)
    except config.ConfigError as exc:
        raise _misused(exc) from None
    try:
        removed = config.unset_value(path, name)
    except config.ConfigError as exc:
        raise _fail(exc) from None
    row = next(row for row in config.explain(os.environ, project_dir) if row["name"] == name)
    now = f"now {config.format_value(row['value'])} from {row['source']}"
    if removed:
        click.echo(f"{name} removed from {path} ({now})")
    else:
        click.echo(f"{name} is not set in {path} ({now})")
