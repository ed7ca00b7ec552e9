"""Shared pieces of the CLI: project resolution, opening the store, output helpers."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click
import orjson
from click.decorators import FC

from ctxmode import hosts, paths
from ctxmode import store as store_mod
from ctxmode.migrations import _sqlite3
from ctxmode.redact import visible
from ctxmode.store import Store, StoreError, StoreOutdated

project_option = click.option(
    "--project",
    "project",
    type=click.Path(file_okay=False),
    default=None,
    help="Any folder of the project: its repository's one store, all worktrees "
    "(default: $CLAUDE_PROJECT_DIR, else the cwd).",
)


def resolve_identity(project: str | None, *, above: bool = True) -> paths.Identity:
    """The identity the hooks use (:func:`ctxmode.paths.identify`): of ``--project``
    when given, else of ``$CLAUDE_PROJECT_DIR``, else of the working directory.

    Outside git, a folder without a store of its own belongs to the nearest folder above
    it that has one (:func:`ctxmode.paths.recorded_above`): the hooks recorded the
    session under the folder its client started in. A note on stderr says so.
    ``above=False``: the folder itself (deleting a whole store names it exactly).
    """
    if project and paths.foreign_path(project) is not None:
        # A Windows cwd of an imported transcript, read here: its store is keyed by that
        # path (ctxmode.importer.locate), never by a folder of the same name under the cwd.
        return paths.Identity(paths.foreign_key(project))
    identity = paths.identify_dir(project) if project else paths.identify(os.getcwd(), os.environ)
    if identity.worktree is not None or not above:
        return identity
    root = paths.data_root(os.environ)
    if os.path.exists(paths.store_file(root, identity.project)):
        return identity
    found = paths.recorded_above(identity.project, root)
    if found is None:
        return identity
    # Said once per command, however often it resolves the project.
    context = click.get_current_context(silent=True)
    noted = context.find_root().meta.setdefault(_NOTED, set()) if context else set()
    if (identity.project, found) not in noted:
        noted.add((identity.project, found))
        click.echo(
            f"ctxmode: {identity.project} is not in a git repository and has no store of "
            f"its own: reading the one of {found}, the nearest folder above it where "
            "sessions were recorded",
            err=True,
        )
    return paths.Identity(found)


_NOTED = "ctxmode.noted_stores"


def resolve_project(project: str | None) -> str:
    """The repository key the hooks use for this folder, ``--project`` taking precedence."""
    return resolve_identity(project).project


def store_path_for(project: str | None, *, above: bool = True) -> tuple[str, str]:
    """(repository key, its store's path). A repository whose stores still carry the
    names of an older version gets them merged first (ctxmode.store.merge), so the CLI
    reads what the hooks wrote however it was keyed. ``above``: see :func:`resolve_identity`."""
    identity = resolve_identity(project, above=above)
    root = paths.data_root(os.environ)
    path = paths.store_file(root, identity.project)
    if not os.path.exists(path) and os.path.isdir(os.path.join(root, "sessions")):
        from ctxmode.store.merge import ensure_store

        try:
            ensure_store(path, identity, root, create=False)
        except (OSError, StoreError, _sqlite3.Error) as exc:
            raise click.ClickException(f"merging the older stores into {path}: {exc}") from exc
    return identity.project, path


def resolve_worktree(value: str | None, project: str | None) -> str | None:
    """The work tree ``--worktree`` names: ``here`` (the working directory's), or a
    folder of one; a usage error when it is not a worktree of the project's repository."""
    if value is None:
        return None
    folder = os.getcwd() if value == "here" else value
    if not os.path.isdir(folder):
        raise click.BadParameter(f"{value!r} is not a folder", param_hint="'--worktree'")
    found = paths.identify_dir(folder)
    repository = resolve_project(project)
    if found.worktree is None:
        raise click.BadParameter(
            f"{found.tree} is not in a git work tree", param_hint="'--worktree'"
        )
    if found.project != repository:
        raise click.BadParameter(
            f"{found.worktree} is not a worktree of {repository}", param_hint="'--worktree'"
        )
    return found.worktree


# Resolved in the command (resolve_worktree), once --project is known whatever the order.
worktree_option = click.option(
    "--worktree",
    metavar="DIR|here",
    help="Only sessions that ran in this worktree of the repository ('here': the cwd's).",
)


class HostChoice(click.Choice):  # type: ignore[type-arg]  # generic from click 8.2 on
    """The hosts' names on the command line (``ctxmode.hosts``), read from the registry only
    when an option is given or the help shown: ``ctxmode search`` starts without loading
    any host."""

    def __init__(self) -> None:
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(sorted(hosts.options()))

    @choices.setter
    def choices(self, value: object) -> None:
        """Always the registry's."""


# The clients whose sessions a store holds (session_meta.client; NULL: the default host),
# by their names on the command line: ``hosts.by_option`` gives the stored name.
client_option = click.option(
    "--client",
    type=HostChoice(),
    help="Only sessions of this client (as --host names it: claude is Claude Code).",
)


CLIENT_NAMES = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI"}


def sessions_of(client: str | None) -> str:
    """``sessions``, or ``Codex sessions`` where ``--client`` narrows the list: an empty
    answer then says which sessions there are none of."""
    return "sessions" if client is None else f"{CLIENT_NAMES[client]} sessions"


def client_of(meta: dict[str, Any]) -> str:
    """The host a session ran in (its name in ``ctxmode.hosts``)."""
    return str(meta.get("client") or hosts.DEFAULT)


def client_matches(meta: dict[str, Any], client: str | None) -> bool:
    return client is None or client_of(meta) == hosts.by_option(client)


@contextmanager
def open_store(
    project: str | None, *, must_exist: bool = True, readonly: bool = True
) -> Iterator[Store]:
    """Open the project's store for the CLI; domain errors become ClickExceptions.

    ``readonly`` (the reading commands): the store is read as committed without writing
    to it or its folder, so a lookup works where the data root is readable only (a
    sandboxed Bash tool; see ``connection._read_connection``). An older schema is
    opened read-write once, which migrates it (where that cannot write, the error says
    so).
    """
    project_dir, path = store_path_for(project)
    if must_exist and not os.path.exists(path):
        raise click.ClickException(
            f"no ctxmode store for {project_dir} (expected {path}); "
            f"nothing has been recorded {_where(project_dir)}"
        )
    try:
        try:
            store = Store.open(path, readonly=readonly and must_exist, tidy=True)
        except StoreOutdated:
            store = Store.open(path)
    except StoreError as exc:
        raise click.ClickException(f"cannot open {path}: {exc}") from exc
    try:
        yield store
    except StoreError as exc:
        # Locked, corrupt, or gone while reading: one line, exit 1, never a traceback.
        raise click.ClickException(f"{path}: {exc}") from exc
    except _sqlite3.Error as exc:  # a query of the CLI's own on store.conn
        raise click.ClickException(f"{path}: {exc}") from exc
    finally:
        store.close()


def _where(project_dir: str) -> str:
    """Where nothing was recorded: a repository (all its worktrees), or outside git the
    folder and every folder above it (:func:`resolve_identity` looked there)."""
    if paths.identify_dir(project_dir).worktree is not None:
        return "for this repository yet"
    return (
        "yet in this folder or any folder above it (outside git, a session is recorded "
        "under the folder its client started in)"
    )


# ---------------------------------------------------------------- shared options
#
# Every command answers a bad value the same way: click's usage error (exit 2) with one
# ``Error:`` line saying what is wrong and what would do, never a traceback. Runtime
# failures (no store, a locked or corrupt one) are ClickExceptions: one line, exit 1.

# --limit N: 1 .. MAX_LIMIT. Zero and negative numbers are refused rather than given a
# meaning (`head -n 0` prints nothing, `git log -n -1` everything): leave --limit out to
# get everything (dump) or the default (search).
MAX_LIMIT = 1_000_000


def limit_option(help_text: str, default: int | None = None) -> Callable[[FC], FC]:
    return click.option(
        "--limit",
        type=click.IntRange(min=1, max=MAX_LIMIT),
        default=default,
        show_default=default is not None,
        metavar="N",
        help=help_text,
    )


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
# The stored times are ISO-8601 UTC strings compared as text: keep every bound inside
# the four-digit years, 1970-01-01 .. 9999-12-31.
_LATEST = 253402300799.0


def parse_since(text: str, now: float | None = None) -> str:
    """``7d``/``24h``/``30m``/``2w`` ago, or an ISO date/time (UTC unless it has an offset),
    as the store's timestamp format. A duration longer than the clock reaches back means
    "since the beginning" (1970). Raises ValueError for anything else."""
    import math
    import re

    raw = text.strip()
    relative = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhdw])", raw.lower())
    if relative:
        current = time.time() if now is None else now
        seconds = float(relative.group(1)) * _UNITS[relative.group(2)]
        moment = current - seconds if math.isfinite(seconds) else 0.0
        return store_mod.iso_utc(min(max(moment, 0.0), _LATEST))
    import datetime

    if raw[-1:] in ("Z", "z"):
        raw = raw[:-1] + "+00:00"  # Python 3.10's fromisoformat does not read "Z"
    try:
        parsed = datetime.datetime.fromisoformat(raw)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=datetime.timezone.utc)  # stored times are UTC
        epoch = parsed.timestamp()
    except (ValueError, OverflowError, OSError):
        raise ValueError(
            f"{text!r} is neither a duration (30m, 24h, 7d, 2w) nor an ISO date/time "
            "(2026-12-01, 2026-12-01T14:30, 2026-12-01T14:30+02:00)"
        ) from None
    return store_mod.iso_utc(min(max(epoch, 0.0), _LATEST))


def _since_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return parse_since(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


since_option = click.option(
    "--since",
    callback=_since_callback,
    metavar="WHEN",
    help="Only events at or after WHEN: 30m, 24h, 7d, 2w ago, or an ISO date/time (UTC).",
)


def days_callback(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A number of days: finite and >= 0 (a huge one simply reaches back to 1970)."""
    import math

    if value is not None and not (math.isfinite(value) and value >= 0):
        raise click.BadParameter(f"{value:g} is not a number of days >= 0", ctx=ctx, param=param)
    return value


def resolve_session(store: Store, given: str, param_hint: str = "--session") -> str:
    """The full id of ``given``: an id, or the unique start of one (the short ids shown).

    An unknown id or an ambiguous prefix is a usage error (exit 2) that says which
    sessions there are, or which ones the prefix fits.
    """
    ids = [str(meta["session_id"]) for meta in store.sessions()]
    known = set(ids)
    ids += [str(r["session_id"]) for r in store.resumes() if r["session_id"] not in known]
    if given in ids:
        return given
    matches = [sid for sid in ids if given and sid.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(matches[:5]) + (", …" if len(matches) > 5 else "")
        raise click.BadParameter(
            f"{given!r} is the start of {len(matches)} session ids ({shown}): give more of it",
            param_hint=f"'{param_hint}'",
        )
    hint = "see `ctxmode sessions`" if ids else "no session is recorded in this store"
    raise click.BadParameter(
        f"no session {given!r} in {store.path} ({hint})", param_hint=f"'{param_hint}'"
    )


def claim_state(resume: dict[str, Any], *, explain: bool = True) -> str:
    """A snapshot's state in the words of :mod:`ctxmode.wording`: ``claimed by session X
    3m ago``, ``retired (clear) 3m ago`` or ``unclaimed`` (with what happens next when
    ``explain``). Shared by dump and show-snapshot."""
    from ctxmode.wording import CLAIMED, UNCLAIMED, snapshot_state

    state = snapshot_state(resume)
    if state == UNCLAIMED:
        if not explain:
            return UNCLAIMED
        if resume.get("kind") == "compact":
            return "unclaimed: this session's next SessionStart (compact) or prompt injects it"
        return "unclaimed: a later session may pick it up (resume, or startup when configured)"
    by = resume.get("consumed_by") or "?"
    when = relative_time(resume.get("consumed_at"))
    if state == CLAIMED:
        return f"claimed by session {by} {when}"
    return f"retired ({by}) {when}"


def echo_json(value: Any) -> None:
    """``value`` as indented JSON; invisible and direction-changing characters in it are
    written as ``\\uXXXX`` escapes (the same JSON, shown as it is)."""
    click.echo(visible(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()))


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
