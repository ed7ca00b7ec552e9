"""``ctxmode install --host codex`` / ``uninstall --host codex``: the edge over ctxmode.hosts.codex.install."""

from __future__ import annotations

import click

from ctxmode import __version__
from ctxmode.hosts.codex import install as codex_config


def _scope(user: bool, project: str | None, local: str | None) -> tuple[str, str | None]:
    if local:
        raise click.UsageError(
            "Codex has no local scope: use --user (~/.codex) or --project DIR (DIR/.codex)"
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
        result = codex_config.install(scope, directory, dry_run=dry_run)
    except codex_config.CodexConfigError as exc:
        raise click.ClickException(str(exc)) from None
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if dry_run:
        click.echo(result.diff or "nothing to change\n", nl=False)
        return
    verb = {"installed": "installed", "updated": "updated", "unchanged": "already installed"}
    line = (
        f"ctxmode {__version__} {verb[result.action]} for Codex: {result.hooks} hooks in "
        f"{_where(result.hooks_path)}, trusted in {_where(result.trust_path)} "
        f"({result.trusted} entries)"
    )
    if result.action == "updated":
        line += " (old entries and their trust replaced)"
    if verify:
        from ctxmode import proof
        from ctxmode.hosts.codex import proof as codex_proof

        outcome = codex_proof.verify(result.hooks_path)
        if not outcome.ok:
            raise click.ClickException(
                proof.failed(line, outcome, "Codex", "ctxmode uninstall --host codex")
            )
        line += proof.verified(outcome, "a sample Codex session")
    click.echo(line)


def uninstall(user: bool, project: str | None, local: str | None, dry_run: bool) -> None:
    scope, directory = _scope(user, project, local)
    try:
        result = codex_config.uninstall(scope, directory, dry_run=dry_run)
    except codex_config.CodexConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if dry_run:
        click.echo(
            result.diff or "nothing to change: ctxmode is not installed for Codex\n", nl=False
        )
        return
    if result.action == "not installed":
        click.echo(f"ctxmode is not installed in {_where(result.hooks_path)}: nothing changed")
    else:
        click.echo(
            f"ctxmode hooks removed from {_where(result.hooks_path)} and their trust from "
            f"{_where(result.trust_path)}"
        )
