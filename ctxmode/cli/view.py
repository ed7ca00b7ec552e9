"""``ctxmode view``: write the project's store as one HTML page, and open it if asked."""

from __future__ import annotations

import os
from typing import Any

import click

from ctxmode import paths, view
from ctxmode.cli.common import (
    client_matches,
    client_option,
    open_store,
    project_option,
    resolve_session,
    resolve_worktree,
    worktree_option,
)
from ctxmode.store import iso_utc


@click.command("view")
@project_option
@worktree_option
@client_option
@click.option("--session", "session", metavar="ID", help="Only this session (id or prefix).")
@click.option(
    "--output",
    "output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the page here (default: <data root>/views/<store>.html, private).",
)
@click.option(
    "--open/--no-open",
    "open_browser",
    default=False,
    help="Open the page in the default browser (default: print its path).",
)
def view_cmd(
    project: str | None,
    worktree: str | None,
    client: str | None,
    session: str | None,
    output: str | None,
    open_browser: bool,
) -> None:
    """Write a self-contained HTML page of what ctxmode recorded: a timeline per session
    (events by category over time, compactions marked, the snapshot each produced and
    when it was claimed), the compaction summary beside the snapshot, and the events
    with their stored data, filterable by category and text.

    The page makes no network request and needs no server: open it from disk. Secrets
    appear as stored, masked.
    """
    tree = resolve_worktree(worktree, project)

    def keep(meta: dict[str, Any]) -> bool:
        return (tree is None or meta.get("worktree") == tree) and client_matches(meta, client)

    with open_store(project) as store:
        session_id = resolve_session(store, session) if session else None
        project_dir = paths.project_dir(os.path.abspath(project), {}) if project else None
        html = store.reading(
            lambda conn: view.build_page(
                conn,
                project=project_dir or paths.project_dir(os.getcwd(), os.environ),
                store_path=store.path,
                generated_at=iso_utc(),
                session_id=session_id,
                keep=keep,
            )
        )
        target = output or view.default_output(paths.data_root(os.environ), store.path)
    try:
        view.write_page(target, html)
    except OSError as exc:
        raise click.ClickException(f"cannot write {target}: {exc.strerror}") from None
    size = len(html.encode("utf-8"))
    click.echo(f"{os.path.abspath(target)} ({size:,} bytes)")
    if open_browser:
        import pathlib
        import webbrowser

        if not webbrowser.open(pathlib.Path(os.path.abspath(target)).as_uri()):
            click.echo("no browser could be started: open the file above by hand", err=True)
