"""Shared pieces of the CLI: project resolution, opening the store, output helpers."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
import orjson

from ctxmode import paths
from ctxmode.store import Store, StoreError

project_option = click.option(
    "--project",
    "project",
    type=click.Path(file_okay=False),
    default=None,
    help="Project directory (default: $CLAUDE_PROJECT_DIR, else the git root of the cwd).",
)


def resolve_project(project: str | None) -> str:
    """The same project identity the hooks use, with ``--project`` taking precedence."""
    if project:
        return paths.project_dir(os.path.abspath(project), {})
    return paths.project_dir(os.getcwd(), os.environ)


def store_path_for(project: str | None) -> tuple[str, str]:
    project_dir = resolve_project(project)
    return project_dir, paths.store_path(project_dir, os.environ)


@contextmanager
def open_store(project: str | None, *, must_exist: bool = True) -> Iterator[Store]:
    """Open the project's store for the CLI; domain errors become ClickExceptions."""
    project_dir, path = store_path_for(project)
    if must_exist and not os.path.exists(path):
        raise click.ClickException(
            f"no ctxmode store for {project_dir} (expected {path}); "
            "nothing has been recorded for this project yet"
        )
    try:
        store = Store.open(path)
    except StoreError as exc:
        raise click.ClickException(f"cannot open {path}: {exc}") from exc
    try:
        yield store
    finally:
        store.close()


def echo_json(value: Any) -> None:
    click.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())


def relative_time(iso: str | None, now: float | None = None) -> str:
    """'3m ago' style age of an ISO-8601 UTC timestamp from the store."""
    if not iso:
        return "-"
    try:
        parsed = time.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return iso
    import calendar

    age = (now if now is not None else time.time()) - calendar.timegm(parsed)
    if age < 0:
        return "just now"
    for unit, seconds in (("d", 86400), ("h", 3600), ("m", 60)):
        if age >= seconds:
            return f"{int(age // seconds)}{unit} ago"
    return f"{int(age)}s ago"


def color_enabled() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")
