"""``ctxmode sessions``, ``ctxmode show-snapshot`` and ``ctxmode purge``."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from collections.abc import Sequence
from typing import Any

import click
import orjson

from ctxmode import hosts, paths
from ctxmode.cli.common import (
    claim_state,
    client_matches,
    client_of,
    client_option,
    color_enabled,
    days_callback,
    echo_json,
    open_store,
    project_option,
    relative_time,
    resolve_session,
    resolve_worktree,
    sessions_of,
    store_path_for,
    worktree_option,
)
from ctxmode.redact import visible
from ctxmode.sizes import human_size
from ctxmode.store import Store, StoreError, parse_iso
from ctxmode.store.merge import BACKUP_MARK
from ctxmode.wording import noun_for, plural

TITLE_MIN = 20


# --------------------------------------------------------------------------- helpers


def first_prompt(store: Store, session_id: str) -> str | None:
    """The text of the session's first recorded user prompt."""
    row = store.reading(
        lambda conn: conn.execute(
            "SELECT data FROM session_events WHERE session_id = ? AND type = 'user_prompt' "
            "ORDER BY id LIMIT 1",
            (session_id,),
        ).fetchone()
    )
    if row is None:
        return None
    try:
        value = orjson.loads(row[0])
    except orjson.JSONDecodeError:
        return str(row[0])
    text = value.get("text") if isinstance(value, dict) else None
    return text if isinstance(text, str) else None


def title(text: str | None, width: int) -> str:
    """One line of at most ``width`` characters (whitespace collapsed, ``…`` when cut)."""
    if not text:
        return "(no prompt recorded)"
    line = " ".join(text.split())
    return line if len(line) <= width else line[: max(1, width - 1)].rstrip() + "…"


def local_time(iso: str | None) -> str:
    """``2026-12-02 15:04`` in local time, from a store timestamp."""
    if not iso:
        return "-"
    epoch = parse_iso(iso)
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch)) if epoch else iso


def session_rows(
    store: Store, worktree: str | None = None, client: str | None = None
) -> list[dict[str, Any]]:
    """One dict per session, most recently active first (only those of ``worktree`` and
    ``client``: its command-line name, see ``hosts.by_option``)."""
    rows = []
    resumes = store.resumes()
    for meta in store.sessions():
        if worktree is not None and meta.get("worktree") != worktree:
            continue
        if not client_matches(meta, client):
            continue
        session_id = meta["session_id"]
        own = [r for r in resumes if r["session_id"] == session_id]
        rows.append(
            {
                "session_id": session_id,
                "project_dir": meta.get("project_dir"),
                "worktree": meta.get("worktree"),
                "branch": meta.get("branch"),
                "client": client_of(meta),
                "started_at": meta.get("started_at"),
                "last_event_at": meta.get("last_event_at"),
                "event_count": int(meta.get("event_count") or 0),
                "compact_count": int(meta.get("compact_count") or 0),
                "snapshots": len(own),
                "unclaimed_snapshots": sum(1 for r in own if not r["consumed"]),
                "title": first_prompt(store, session_id),
            }
        )
    return rows


def pretty_xml(text: str) -> str:
    """The snapshot indented by nesting; the text itself unchanged. Raw if it does not parse."""
    import xml.etree.ElementTree as ElementTree

    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError:
        return text
    ElementTree.indent(root, space="  ")
    return ElementTree.tostring(root, encoding="unicode")


_TAG = re.compile(r"<[^>]*>")


# --------------------------------------------------------------------------- sessions


@click.command(name="sessions")
@project_option
@worktree_option
@client_option
@click.option("--json", "as_json", is_flag=True, help="One JSON document (full session ids).")
def sessions_cmd(
    project: str | None, worktree: str | None, client: str | None, as_json: bool
) -> None:
    """List the project's sessions, most recently active first.

    One line each: start, last activity, events, compactions, session id (its first
    8 characters are enough wherever an id is asked for), the worktree and branch it
    ran in (every worktree of the repository shares one store), the client when the
    store holds sessions of more than one (Claude Code, Codex, Gemini), and the first prompt
    as title.
    """
    tree = resolve_worktree(worktree, project)
    project_dir, path = store_path_for(project)
    if not os.path.exists(path):
        if as_json:
            echo_json({"project_dir": project_dir, "store": path, "sessions": []})
        else:
            click.echo(f"No {sessions_of(client)} recorded for {project_dir} yet.")
        return
    with open_store(project) as store:
        rows = session_rows(store, tree, client)
    if as_json:
        echo_json({"project_dir": project_dir, "store": path, "sessions": rows})
        return
    if not rows:
        where = f" in the worktree {tree}" if tree else ""
        click.echo(f"No {sessions_of(client)} recorded for {project_dir}{where}.")
        return
    places = [worktree_label(row, project_dir) for row in rows]
    # No column when no session knows its worktree (outside git, or all from before 0.3).
    shown = any(place != "-" for place in places)
    place_width = min(max(len("WORKTREE"), *(len(p) for p in places)), 32) if shown else 0
    # A client column once the store holds sessions of another client than the default.
    clients = any(row["client"] != hosts.DEFAULT for row in rows)
    header = (
        f"{'STARTED':<16}  {'LAST ACTIVE':<11}  {'EVENTS':>6}  {'COMPACT':>7}  {'SESSION':<8}  "
        + (f"{'CLIENT':<11}  " if clients else "")
        + (f"{'WORKTREE':<{place_width}}  " if shown else "")
    )
    width = max(TITLE_MIN, shutil.get_terminal_size((100, 24)).columns - len(header) - 1)
    click.echo(header + "TITLE")
    for row, place in zip(rows, places, strict=True):
        click.echo(
            visible(
                f"{local_time(row['started_at']):<16}  {relative_time(row['last_event_at']):<11}  "
                f"{row['event_count']:>6}  {row['compact_count']:>7}  {row['session_id'][:8]:<8}  "
                + (f"{row['client']:<11}  " if clients else "")
                + (f"{title(place, place_width):<{place_width}}  " if shown else "")
                + title(row["title"], width)
            )
        )


def worktree_label(row: dict[str, Any], project_dir: str) -> str:
    """``.`` for the repository's main worktree, else the worktree's folder name; with
    ``@branch``; ``-`` when unknown (outside git, or recorded before 0.3)."""
    tree = row.get("worktree")
    if not tree:
        name = "-"
    elif tree == project_dir:
        name = "."
    else:
        name = os.path.basename(tree) or tree
    branch = row.get("branch")
    return f"{name}@{branch}" if branch else name


# --------------------------------------------------------------------------- show-snapshot


def choose_resume(
    store: Store, session: str | None, seq: int | None, kind: str | None
) -> dict[str, Any]:
    """The snapshot to show: the newest (of ``kind``, with ``seq``) of the chosen session.

    An imported compaction the hooks never saw counts as a ``compact`` snapshot with its
    replayed one (``replayed`` set: what the hooks would have built, never injected)."""
    resumes = store.resumes() + replayed_resumes(store)
    if session is not None:
        session_id = resolve_session(store, session, param_hint="SESSION")
        resumes = [r for r in resumes if r["session_id"] == session_id]
    elif resumes:
        # The newest session (by activity) that has a snapshot.
        order = [meta["session_id"] for meta in store.sessions()]
        with_snapshots = {r["session_id"] for r in resumes}
        session_id = next(
            (sid for sid in order if sid in with_snapshots), resumes[-1]["session_id"]
        )
        resumes = [r for r in resumes if r["session_id"] == session_id]
    if kind is None and seq is not None:
        kind = "compact"  # --seq N is the N-th compaction unless --kind end says otherwise
    if kind is not None:
        resumes = [r for r in resumes if r["kind"] == kind]
    if seq is not None:
        resumes = [r for r in resumes if r["compact_seq"] == seq]
    if not resumes:
        what = []
        if kind:
            what.append(f"kind {kind}")
        if seq is not None:
            what.append(f"#{seq}")
        detail = f" ({', '.join(what)})" if what else ""
        raise click.ClickException(f"no snapshot{detail} found in {store.path}")
    return max(resumes, key=lambda r: (str(r["created_at"]), int(r["id"])))


def replayed_resumes(store: Store) -> list[dict[str, Any]]:
    """The replayed snapshots of imported compactions (``compaction.replayed``) that have
    no snapshot of the hooks', shaped like ``session_resume`` rows (``replayed``: True)."""
    live = {(r["session_id"], r["compact_seq"]) for r in store.resumes() if r["kind"] == "compact"}
    return [
        {
            "id": 0,
            "session_id": row["session_id"],
            "compact_seq": row["compact_seq"],
            "kind": "compact",
            "snapshot": row["replayed"],
            "event_count": row.get("replayed_events") or 0,
            "created_at": row["created_at"],
            "consumed": 0,
            "replayed": True,
        }
        for row in store.compactions(None)
        if row.get("replayed") and (row["session_id"], row["compact_seq"]) not in live
    ]


@click.command(name="show-snapshot")
@click.argument("session", required=False)
@click.option(
    "--seq",
    type=click.IntRange(min=1, max=1_000_000),
    metavar="N",
    help="The snapshot of the N-th compaction (or end, with --kind).",
)
@click.option(
    "--kind",
    type=click.Choice(["compact", "end"]),
    help="Only snapshots taken at compaction, or at the end of a session.",
)
@click.option("--raw", is_flag=True, help="Print the snapshot exactly as stored (not indented).")
@project_option
def show_snapshot_cmd(
    session: str | None, seq: int | None, kind: str | None, raw: bool, project: str | None
) -> None:
    """Show a stored <session_resume> snapshot, pretty-printed.

    The newest snapshot of SESSION (an id or a unique prefix), or of the most recently
    active session that has one; a header line says whether it was injected yet, and for
    a compaction what the client's summary kept of the snapshot's key items.
    """
    from ctxmode.cli.stats import coverage_line
    from ctxmode.stats import compaction_coverage

    with open_store(project) as store:
        resume = choose_resume(store, session, seq, kind)
        found = None
        if resume["kind"] == "compact":
            rows = [
                row
                for row in store.compactions(resume["session_id"])
                if row["compact_seq"] == resume["compact_seq"]
            ]
            found = compaction_coverage([] if resume.get("replayed") else [resume], rows)[0]
    snapshot = str(resume["snapshot"])
    size = len(snapshot.encode("utf-8"))
    if resume.get("replayed"):
        head = (
            f"replayed snapshot #{resume['compact_seq']} of session {resume['session_id']}: "
            f"{plural(size, 'byte', grouped=True)}, built by ctxmode import from the "
            f"{plural(resume['event_count'], 'event')} before the compaction (the hooks did "
            "not run then); what ctxmode would have restored, never injected"
        )
    else:
        head = (
            f"snapshot #{resume['compact_seq']} ({resume['kind']}) of session "
            f"{resume['session_id']}: {plural(size, 'byte', grouped=True)}, "
            f"{plural(resume['event_count'], 'event')}, taken "
            f"{relative_time(resume['created_at'])}; {claim_state(resume)}"
        )
    click.echo(visible(head))
    if found is not None and not raw:
        click.echo(visible(coverage_line(found)))
    # Invisible and direction-changing characters as escapes (snapshots stored by an older
    # ctxmode may hold them raw).
    body = visible((snapshot if raw else pretty_xml(snapshot)).rstrip("\n"))
    if color_enabled():
        body = _TAG.sub(lambda m: click.style(m.group(0), fg="cyan"), body)
    click.echo(body)


# --------------------------------------------------------------------------- purge

CURRENT = ""  # the value of a bare --project: the current project


def store_file_set(path: str) -> list[str]:
    """A store and everything that belongs to it: -wal, -shm, moved-aside copies."""
    folder, name = os.path.split(path)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    keep = (name, name + "-wal", name + "-shm")
    # The older stores merged into it, kept as backups (ctxmode.store.merge).
    backup = BACKUP_MARK + os.path.splitext(name)[0]
    return sorted(
        os.path.join(folder, n)
        for n in names
        if n in keep or n.startswith(name + ".corrupt-") or backup in n
    )


# The folders of the data root that hold recorded data, and what derives from it: stores,
# spool, logs, Gemini's cached snapshots, Codex's rollout state, the digests of masked
# secrets, the pages of `ctxmode view`, the in-flight markers of background captures.
DATA_FOLDERS = ("sessions", "spool", "logs", "resumes", "codex", "masked", "views", "inflight")


def data_files(root: str) -> list[str]:
    """Every file of recorded data under the data root (see DATA_FOLDERS)."""
    found: list[str] = []
    for sub in DATA_FOLDERS:
        folder = os.path.join(root, sub)
        for base, _, names in os.walk(folder):
            found.extend(os.path.join(base, n) for n in names)
    return sorted(found)


def _size(files: Sequence[str]) -> int:
    total = 0
    for path in files:
        with contextlib.suppress(OSError):
            total += os.path.getsize(path)
    return total


def _human(size: int) -> str:
    return human_size(size)


def _remove(files: Sequence[str]) -> int:
    removed = 0
    for path in files:
        try:
            os.unlink(path)
            removed += 1
        except FileNotFoundError:
            pass
    return removed


def _session_ids(store_path: str) -> list[str]:
    """The sessions a store holds (none when it cannot be read: its caches then stay)."""
    try:
        with Store.open(store_path, readonly=True, tidy=True) as store:
            return [str(row["session_id"]) for row in store.sessions()]
    except StoreError:
        return []


def _spool_files(root: str, store_path: str) -> list[str]:
    folder = os.path.join(root, "spool")
    stem = os.path.splitext(os.path.basename(store_path))[0] + ".jsonl"
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(os.path.join(folder, n) for n in names if n.startswith(stem))


def _purge_rows(store: Store, root: str, session: str | None, older_than: float | None) -> str:
    from ctxmode.purge import purge_sessions

    if session is not None:
        session_id = resolve_session(store, session)
        report = purge_sessions(store, root, session_id=session_id)
        what = f"session {session_id}: "
    else:
        assert older_than is not None
        report = purge_sessions(store, root, older_than_days=older_than)
        days = noun_for(1 if older_than == 1 else 2, "day")
        what = (
            f"{plural(len(report.session_ids), 'session')} idle for more than "
            f"{older_than:g} {days}: "
        )
    what += f"{plural(report.events, 'event')} and {plural(report.snapshots, 'snapshot')} removed"
    if report.spool_records:
        what += f", {plural(report.spool_records, 'spooled hook call')} dropped"
    if report.copies:
        what += f", {plural(len(report.copies), 'quarantined file')} deleted"
    if report.backups:
        what += f", removed from {plural(len(report.backups), 'merged backup')}"
    if report.cached:
        what += f", {plural(len(report.cached), 'cached file')} deleted"
    return (
        f"{what}; store {_human(report.store_before)} -> {_human(report.store_after)}; "
        f"{_human(report.bytes_freed)} freed"
    )


@click.command(name="purge")
@click.option("--session", metavar="ID", help="Remove one session (an id or a unique prefix).")
@click.option(
    "--project",
    "project",
    is_flag=False,
    flag_value=CURRENT,
    default=None,
    metavar="[DIR]",
    type=click.Path(file_okay=False),
    help="Alone: remove everything recorded for the project (default: the current one). "
    "With --session/--older-than: the project to purge in.",
)
@click.option(
    "--older-than",
    type=float,
    callback=days_callback,
    metavar="DAYS",
    help="Remove sessions idle for longer.",
)
@click.option(
    "--all",
    "purge_all",
    is_flag=True,
    help="Remove all recorded data: stores, spool, logs, caches.",
)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def purge_cmd(
    session: str | None,
    project: str | None,
    older_than: float | None,
    purge_all: bool,
    yes: bool,
) -> None:
    """Delete recorded data for real and give the disk space back.

    Exactly one of: --session ID, --older-than DAYS, --project [DIR] (the whole
    project's store), --all (every store under the data root). --project and --all
    ask for confirmation unless --yes.
    """
    modes = [
        name
        for name, on in (
            ("--session", session is not None),
            ("--older-than", older_than is not None),
            ("--all", purge_all),
        )
        if on
    ]
    if len(modes) > 1:
        raise click.UsageError(
            f"choose one of --session, --older-than, --all (not {' and '.join(modes)})"
        )
    if purge_all and project is not None:
        raise click.UsageError("--all removes every project's data: leave out --project")
    if not modes and project is None:
        raise click.UsageError(
            "say what to purge: --session ID, --older-than DAYS, --project [DIR] or --all"
        )
    root = paths.data_root(os.environ)
    if purge_all:
        files = data_files(root)
        if not files:
            click.echo(f"Nothing recorded under {root}.")
            return
        stores = sum(1 for f in files if f.endswith(".db"))
        if not yes:
            click.confirm(
                f"Delete {plural(stores, 'store')} and all recorded data under {root} "
                f"({plural(len(files), 'file')}, {_human(_size(files))})?",
                abort=True,
            )
        size = _size(files)
        removed = _remove(files)
        click.echo(f"Removed {plural(removed, 'file')} ({_human(size)}) under {root}.")
        return
    project_arg = None if project in (None, CURRENT) else project
    # The whole store is deleted only for the folder named, never one found above it.
    project_dir, path = store_path_for(project_arg, above=bool(modes))
    if not os.path.exists(path):
        if session is not None:
            raise click.BadParameter(
                f"no session {session!r}: nothing is recorded for {project_dir}",
                param_hint="'--session'",
            )
        click.echo(f"Nothing recorded for {project_dir}.")
        return
    if not modes:  # the whole project
        from ctxmode.purge import store_files

        extra = store_files(root, path, _session_ids(path))
        files = sorted(set(store_file_set(path) + _spool_files(root, path) + extra))
        if not yes:
            click.confirm(
                f"Delete everything recorded for {project_dir} ({_human(_size(files))})?",
                abort=True,
            )
        size = _size(files)
        with paths.FileLock(os.path.dirname(path)):
            removed = _remove(files)
        click.echo(
            f"Removed the store of {project_dir}: {plural(removed, 'file')}, {_human(size)}."
        )
        return
    try:
        with open_store(project_arg, readonly=False) as store:
            click.echo(_purge_rows(store, root, session, older_than))
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc
