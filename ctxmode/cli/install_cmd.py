"""``ctxmode install`` / ``ctxmode uninstall``: thin click edges over ctxmode.installer."""

from __future__ import annotations

import click

from ctxmode import __version__, installer


def _scope(user: bool, project: str | None, local: str | None) -> tuple[str, str | None]:
    chosen = [
        name
        for name, value in (("--user", user), ("--project", project), ("--local", local))
        if value
    ]
    if len(chosen) > 1:
        raise click.UsageError(f"choose one scope, not {' and '.join(chosen)}")
    if project:
        return "project", project
    if local:
        return "local", local
    return "user", None


def _scope_options(func: click.decorators.FC) -> click.decorators.FC:
    for decorator in reversed(
        (
            click.option("--user", is_flag=True, help="~/.claude/settings.json (the default)."),
            click.option(
                "--project",
                metavar="DIR",
                type=click.Path(file_okay=False),
                help="DIR/.claude/settings.json, shared with the project.",
            ),
            click.option(
                "--local",
                metavar="DIR",
                type=click.Path(file_okay=False),
                help="DIR/.claude/settings.local.json, this machine only.",
            ),
            click.option(
                "--dry-run", is_flag=True, help="Print the change as a unified diff; write nothing."
            ),
            click.option(
                "--host",
                type=click.Choice(["claude", "codex", "gemini"]),
                default="claude",
                show_default=True,
                help="The client: Claude Code, the Codex CLI (~/.codex/hooks.json and "
                "the trust entries of ~/.codex/config.toml; --user or --project DIR), or "
                "the Gemini CLI (~/.gemini/settings.json; --project DIR needs a folder "
                "Gemini trusts).",
            ),
        )
    ):
        func = decorator(func)
    return func


def _warn(warnings: tuple[str, ...]) -> None:
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)


_STATUSLINE_WORDS = {
    "added": "; status line set",
    "composed": "; status line: yours, then ctxmode's",
    "updated": "; status line updated",
    "unchanged": "; status line in place",
    "removed": "; status line removed",
    "restored": "; your status line restored",
}


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
    """Register ctxmode's hooks in a Claude Code settings file (--host: Codex's, Gemini's).

    Adds one handler for each of PostToolUse, PostToolUseFailure, UserPromptSubmit,
    PreCompact, SessionStart and SessionEnd, and PostCompact where the Claude Code
    found (`claude --version`, or $CTXMODE_CLAUDE_VERSION) is 2.1.76 or newer (an older
    client would skip the whole file), running this interpreter on the installed
    hook scripts. Other entries are left exactly as they are; a backup of the previous
    file is kept as settings.json.ctxmode-backup. Running it again changes nothing;
    after an upgrade it replaces ctxmode's old entries.

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
    """
    if host == "codex":
        from ctxmode.cli import codex_install

        if statusline:
            raise click.UsageError("--statusline is for Claude Code only")
        codex_install.install(user, project, local, dry_run, verify)
        return
    if host == "gemini":
        from ctxmode.cli import gemini_install

        if statusline:
            raise click.UsageError("--statusline is for Claude Code only")
        gemini_install.install(user, project, local, dry_run, verify)
        return
    scope, directory = _scope(user, project, local)
    try:
        result = installer.install(scope, directory, dry_run=dry_run, statusline=statusline)
    except installer.InstallError as exc:
        raise click.ClickException(str(exc)) from None
    _warn(result.warnings)
    if result.skipped and result.client_version is not None:
        # An unknown version or a shared file is not news at each install: doctor says it.
        click.echo(
            f"note: {', '.join(result.skipped)} not registered: {result.skipped_why}", err=True
        )
    where = installer.display_path(result.path)
    if dry_run:
        click.echo(installer.preview(result), nl=False)
        return
    if result.launcher is not None:
        state = "written now" if result.launcher_changed else "in place"
        click.echo(
            f"{where} is shared with your team: its hooks run {installer.LAUNCHER} ({state}, "
            "it runs this installation); a teammate's hooks do nothing until they run "
            "`ctxmode install --project DIR` (or ./install.sh --project DIR) in their checkout"
        )
    verb = {"installed": "installed", "updated": "updated", "unchanged": "already installed"}
    line = f"ctxmode {__version__} {verb[result.action]}: {result.hooks} hooks in {where}"
    if result.kept:
        click.echo(
            f"note: Claude Code was not found (not on PATH, nor where its installers put it): "
            f"kept what the earlier install registered ({', '.join(result.kept)}); set "
            f"{installer.CLIENT_VERSION_ENV} to the version you run to change that",
            err=True,
        )
    if result.action == "updated":
        # Say what changed and why: an event or the capture mode follows the client found.
        details = (
            f": {', '.join(result.changes)}, for {installer.client_words(result)}"
            if result.changes
            else ""
        )
        line += f" (old entries replaced{details})"
    line += _STATUSLINE_WORDS.get(result.statusline, "")
    if result.permissions:
        # What the model may now run without asking, named exactly (settings_permissions).
        line += "; the snapshot's lookups run without asking: " + ", ".join(result.permissions)
    elif result.permissions_note:
        click.echo(f"note: no lookup permission rule: {result.permissions_note}", err=True)
    if verify:
        from ctxmode import proof

        outcome = installer.verify(result.path)
        if not outcome.ok:
            raise click.ClickException(
                proof.failed(line, outcome, "Claude Code", "ctxmode uninstall")
            )
        # The one line install.sh ends with: what the proof run proved.
        line += proof.verified(outcome)
    click.echo(line)


@click.command()
@_scope_options
def uninstall(user: bool, project: str | None, local: str | None, dry_run: bool, host: str) -> None:
    """Remove ctxmode's hooks from a Claude Code settings file.

    Recorded sessions are kept. Only ctxmode's own handlers go, with the groups and
    keys that held nothing else; when nothing else changed since the install, the
    file is restored byte for byte.
    """
    if host == "codex":
        from ctxmode.cli import codex_install

        codex_install.uninstall(user, project, local, dry_run)
        return
    if host == "gemini":
        from ctxmode.cli import gemini_install

        gemini_install.uninstall(user, project, local, dry_run)
        return
    scope, directory = _scope(user, project, local)
    try:
        result = installer.uninstall(scope, directory, dry_run=dry_run)
    except installer.InstallError as exc:
        raise click.ClickException(str(exc)) from None
    _warn(result.warnings)
    where = installer.display_path(result.path)
    if dry_run:
        if result.diff:
            click.echo(result.diff, nl=False)
        else:
            click.echo(f"nothing to change: ctxmode is not installed in {where}")
        return
    also = (
        "; also removed what ctxmode install had made: "
        + ", ".join(installer.display_path(path) for path in result.removed)
        if result.removed
        else ""
    )
    if result.action == "not installed":
        click.echo(f"ctxmode is not installed in {where}: nothing changed")
    elif result.action == "deleted":
        click.echo(f"ctxmode hooks removed: {where} deleted (ctxmode had created it){also}")
    else:
        kept = (
            f"; previous version in {installer.display_path(result.backup)}"
            if result.backup
            else ""
        )
        words = _STATUSLINE_WORDS.get(result.statusline, "")
        click.echo(f"ctxmode hooks removed from {where}{words}{kept}{also}")
