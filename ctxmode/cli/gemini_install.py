"""``ctxmode install --host gemini`` / ``uninstall --host gemini``: the edge over ctxmode.hosts.gemini.install."""

from __future__ import annotations

import click

from ctxmode import __version__
from ctxmode.hosts.gemini import install as gemini_config


def _scope(user: bool, project: str | None, local: str | None) -> tuple[str, str | None]:
    if local:
        raise click.UsageError(
            "Gemini has no local scope: use --user (~/.gemini) or --project DIR (DIR/.gemini)"
        )
    if user and project:
        raise click.UsageError("choose one scope, not --user and --project")
    return ("project", project) if project else ("user", None)


def _where(path: str) -> str:
    from ctxmode.hosts.claude_code.install import display_path

    return display_path(path)


def install(
    user: bool, project: str | None, local: str | None, dry_run: bool, verify: bool = False
) -> None:
    scope, directory = _scope(user, project, local)
    try:
        result = gemini_config.install(scope, directory, dry_run=dry_run)
    except gemini_config.GeminiConfigError as exc:
        raise click.ClickException(str(exc)) from None
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if dry_run:
        click.echo(result.diff or "nothing to change\n", nl=False)
        return
    verb = {"installed": "installed", "updated": "updated", "unchanged": "already installed"}
    line = (
        f"ctxmode {__version__} {verb[result.action]} for Gemini CLI: {result.hooks} hooks in "
        f"{_where(result.path)}"
    )
    if result.action == "updated":
        line += " (old entries replaced)"
    if verify:
        from ctxmode import proof
        from ctxmode.hosts.gemini import proof as gemini_proof

        outcome = gemini_proof.verify(result.path)
        if not outcome.ok:
            raise click.ClickException(
                proof.failed(line, outcome, "Gemini CLI", "ctxmode uninstall --host gemini")
            )
        line += proof.verified(outcome, "a sample Gemini session")
    click.echo(line)


def uninstall(user: bool, project: str | None, local: str | None, dry_run: bool) -> None:
    scope, directory = _scope(user, project, local)
    try:
        result = gemini_config.uninstall(scope, directory, dry_run=dry_run)
    except gemini_config.GeminiConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if dry_run:
        click.echo(
            result.diff or "nothing to change: ctxmode is not installed for Gemini CLI\n",
            nl=False,
        )
        return
    if result.action == "not installed":
        click.echo(f"ctxmode is not installed in {_where(result.path)}: nothing changed")
    elif result.action == "deleted":
        click.echo(f"ctxmode hooks removed: {_where(result.path)} deleted (ctxmode had created it)")
    else:
        click.echo(f"ctxmode hooks removed from {_where(result.path)}")
