"""``ctxmode install`` / ``ctxmode uninstall``: thin click edges over each host's install.

The host (``--host``, from the registry ``ctxmode.hosts``) does the work and words the
result (``ctxmode/hosts/<name>/install.py``: ``cli_install``, ``cli_uninstall``); this
module picks the host and the scope, and prints what it said.
"""

from __future__ import annotations

from types import ModuleType

import click

from ctxmode import hosts
from ctxmode.config_files import InstallError, Report, UsageError

SCOPE_FLAGS = {"user": "--user", "project": "--project DIR", "local": "--local DIR"}


def _host_help() -> str:
    parts = [
        f"{option}: {hosts.part(name, 'install').HELP}" for option, name in hosts.options().items()
    ]
    return "The client: " + "; ".join(parts) + "."


def _scope(
    host: ModuleType, install: ModuleType, user: bool, project: str | None, local: str | None
) -> tuple[str, str | None]:
    chosen = [
        name
        for name, value in (("--user", user), ("--project", project), ("--local", local))
        if value
    ]
    if len(chosen) > 1:
        raise click.UsageError(f"choose one scope, not {' and '.join(chosen)}")
    scope, directory = (
        ("project", project) if project else ("local", local) if local else ("user", None)
    )
    if scope not in install.SCOPES:
        where = {
            "user": f" ({host.USER_DIR_DEFAULT})",
            "project": f" (DIR/{host.PROJECT_DIR_NAME})",
        }
        options = [SCOPE_FLAGS[s] + where.get(s, "") for s in install.SCOPES]
        raise click.UsageError(
            f"{host.LABEL} has no {scope} scope: use {', '.join(options[:-1])} or {options[-1]}"
            if len(options) > 1
            else f"{host.LABEL} has no {scope} scope: use {options[0]}"
        )
    return scope, directory


def _print(report: Report) -> None:
    for stream, text in report.messages:
        click.echo(text, nl=False, err=stream == "err")


def _run(action: str, option: str, flags: tuple[bool, str | None, str | None], **kw: bool) -> None:
    """Run the host's ``cli_install`` / ``cli_uninstall`` and print what it said."""
    name = hosts.by_option(option)
    install = hosts.part(name, "install")
    scope, directory = _scope(hosts.get(name), install, *flags)
    report = Report()
    try:
        getattr(install, f"cli_{action}")(report, scope, directory, **kw)
    except UsageError as exc:
        _print(report)
        raise click.UsageError(str(exc)) from None
    except InstallError as exc:
        _print(report)
        raise click.ClickException(str(exc)) from None
    _print(report)


def _scope_options(func: click.decorators.FC) -> click.decorators.FC:
    for decorator in reversed(
        (
            click.option("--user", is_flag=True, help="The user's settings (the default)."),
            click.option(
                "--project",
                metavar="DIR",
                type=click.Path(file_okay=False),
                help="DIR's settings, shared with the project (Claude Code: DIR/.claude/settings.json).",
            ),
            click.option(
                "--local",
                metavar="DIR",
                type=click.Path(file_okay=False),
                help="DIR's settings, this machine only (Claude Code: DIR/.claude/settings.local.json).",
            ),
            click.option(
                "--dry-run", is_flag=True, help="Print the change as a unified diff; write nothing."
            ),
            click.option(
                "--host",
                type=click.Choice(list(hosts.options())),
                default=hosts.get().OPTION,
                show_default=True,
                help=_host_help(),
            ),
        )
    ):
        func = decorator(func)
    return func


@click.command()
@_scope_options
@click.option(
    "--verify",
    is_flag=True,
    help="Then replay a sample session through the installed hooks, as the client runs "
    "them (throwaway store).",
)
@click.option(
    "--statusline",
    is_flag=True,
    help="Also show ctxmode's status line (after yours, if you have one).",
)
def install(
    user: bool,
    project: str | None,
    local: str | None,
    dry_run: bool,
    verify: bool,
    statusline: bool,
    host: str,
) -> None:
    """Register ctxmode's hooks with a client: Claude Code (the default) or --host.

    For Claude Code: adds one handler for each of PostToolUse, PostToolUseFailure,
    UserPromptSubmit, PreCompact, SessionStart and SessionEnd, and PostCompact where the
    Claude Code found (`claude --version`, or $CTXMODE_CLAUDE_VERSION) is 2.1.76 or
    newer (an older client would skip the whole file), running this interpreter on the
    installed hook scripts. Other entries are left exactly as they are; the file as it
    was is kept in ctxmode's data root (backups/, never beside it). Running it again
    changes nothing; after an upgrade it replaces ctxmode's old entries.

    It also adds one rule to permissions.allow, Bash(<this ctxmode> search:*), so
    that the lookups the snapshot hands the model run without asking in Claude Code's
    default permission mode; anything chained to them (&&, ;, |, $(...)) still asks.

    --project writes a file shared with the team, so its commands name no path of
    this machine: they run ~/.local/bin/ctxmode-hook, a launcher this command writes
    for you; each teammate runs `ctxmode install --project DIR` once to get theirs,
    and until then the hooks do nothing for them (no error).

    --statusline also sets Claude Code's status line to `ctxmode statusline` (events
    recorded, snapshot state, compactions, context used). A status line you already
    have stays and comes first: ctxmode's line is appended to it. `ctxmode uninstall`
    puts yours back as it was.

    Every other client's files, trust steps and proof run: docs/hosts.md.
    """
    _run(
        "install",
        host,
        (user, project, local),
        dry_run=dry_run,
        verify=verify,
        statusline=statusline,
    )


@click.command()
@_scope_options
def uninstall(user: bool, project: str | None, local: str | None, dry_run: bool, host: str) -> None:
    """Remove ctxmode's hooks from a client's settings (Claude Code's, or --host's).

    Recorded sessions are kept. Only ctxmode's own handlers go, with the groups and
    keys that held nothing else; when nothing else changed since the install, the
    file is restored byte for byte. A file or folder goes only if install created it.
    """
    _run("uninstall", host, (user, project, local), dry_run=dry_run)
