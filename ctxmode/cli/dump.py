"""``ctxmode dump``: everything the store holds for a project, for people and machines."""

from __future__ import annotations

from typing import Any

import click
import orjson

from ctxmode import hosts
from ctxmode.cli.common import (
    claim_state,
    client_matches,
    client_of,
    client_option,
    echo_json,
    limit_option,
    open_store,
    project_option,
    relative_time,
    resolve_session,
    resolve_worktree,
    sessions_of,
    since_option,
    worktree_option,
)
from ctxmode.events import CATEGORIES
from ctxmode.redact import cut_at, visible
from ctxmode.wording import plural, snapshot_state

EVENT_FIELDS = (
    "id",
    "type",
    "category",
    "priority",
    "data",
    "created_at",
    "source_hook",
    "agent_id",
    "agent_type",
    "tool_use_id",
)
RESUME_FIELDS = (
    "compact_seq",
    "kind",
    "consumed",
    "consumed_at",
    "consumed_by",
    "event_count",
    "created_at",
    "snapshot",
)
COMPACTION_FIELDS = ("compact_seq", "trigger", "origin", "summary", "summary_at", "created_at")
# The form of the --json document and of each --jsonl line. 2: an event's ``data`` is its
# JSON object (it was that object's text, a string to decode a second time).
FORMAT = 2


def event_data(text: str) -> Any:
    """An event's stored ``data`` as the dump shows it: the JSON object it holds, or the
    text itself where it holds none (plain text, or a value cut short)."""
    if text.startswith("{"):
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
        if isinstance(value, dict):
            return value
    return text


def collect(
    store: Any,
    *,
    session: str | None,
    since: str | None = None,
    category: str | None = None,
    limit: int | None = None,
    worktree: str | None = None,
    client: str | None = None,
    decode_data: bool = True,
) -> dict[str, Any]:
    """The dump document (design.md contract): ``{"format": 2, "sessions": [...]}``.

    ``session`` is a full id (see :func:`resolve_session`), ``since`` a store timestamp
    (see :func:`parse_since`), ``limit`` the newest N events per session, ``worktree``
    the work tree the sessions ran in (see :func:`resolve_worktree`). ``decode_data``:
    each event's ``data`` as its JSON object (:func:`event_data`); False keeps the
    stored text (the text listing shows it as stored).
    """
    sessions = []
    for meta in store.sessions():
        session_id = meta["session_id"]
        if session is not None and session_id != session:
            continue
        if worktree is not None and meta.get("worktree") != worktree:
            continue
        if not client_matches(meta, client):
            continue
        events = []
        for event in store.session_events(session_id):
            if since and (event.created_at or "") < since:
                continue
            if category and event.category != category:
                continue
            row = {name: getattr(event, name) for name in EVENT_FIELDS}
            if decode_data:
                row["data"] = event_data(row["data"])
            events.append(row)
        if limit is not None:
            events = events[-limit:]
        resumes = [
            {name: row.get(name) for name in RESUME_FIELDS} for row in store.resumes(session_id)
        ]
        for resume in resumes:
            resume["state"] = snapshot_state(resume)  # unclaimed, claimed or retired
            resume["consumed"] = bool(resume["consumed"])
        # Each compaction, with the client's own summary of it once one was recorded.
        compactions = [
            {name: row.get(name) for name in COMPACTION_FIELDS}
            for row in store.compactions(session_id)
        ]
        sessions.append(
            {
                "session_id": session_id,
                "project_dir": meta.get("project_dir"),
                "worktree": meta.get("worktree"),
                "branch": meta.get("branch"),
                "cwd": meta.get("cwd"),
                "client": client_of(meta),
                "started_at": meta.get("started_at"),
                "last_event_at": meta.get("last_event_at"),
                "event_count": meta.get("event_count"),
                "compact_count": meta.get("compact_count") or 0,
                "events": events,
                "resumes": resumes,
                "compactions": compactions,
            }
        )
    return {"format": FORMAT, "sessions": sessions}


def _render_text(document: dict[str, Any], store_path: str, client: str | None) -> None:
    if not document["sessions"]:
        click.echo(f"No {sessions_of(client)} recorded in {store_path}.")
        return
    for session in document["sessions"]:
        click.secho(visible(f"session {session['session_id']}"), bold=True)
        click.echo(
            f"  started {relative_time(session['started_at'])}, last activity "
            f"{relative_time(session['last_event_at'])}, "
            f"{plural(session['event_count'] or 0, 'event')}, "
            f"{plural(session['compact_count'], 'compaction')}"
            + ("" if session["client"] == hosts.DEFAULT else f", client {session['client']}")
        )
        if session.get("worktree"):
            branch = f" (branch {session['branch']})" if session.get("branch") else ""
            click.echo(visible(f"  worktree {session['worktree']}{branch}"))
        width = max((len(event["type"]) for event in session["events"]), default=4)
        for event in session["events"]:
            data = event["data"]
            if len(data) > 160:
                data = data[: cut_at(data, 157)] + "..."  # never inside a [REDACTED:…] mask
            click.echo(
                visible(
                    f"  {event['created_at'][11:19]}  p{event['priority']}  "
                    f"{event['category']:<12} {event['type']:<{width}}  {data}"
                )
            )
        for resume in session["resumes"]:
            size = len((resume["snapshot"] or "").encode("utf-8"))
            click.echo(
                f"  snapshot #{resume['compact_seq']} ({resume['kind']}, "
                f"{plural(size, 'byte', grouped=True)}, "
                f"{plural(resume['event_count'] or 0, 'event')}): "
                f"{claim_state(resume, explain=False)}"
            )
        click.echo()


@click.command()
@project_option
@worktree_option
@client_option
@click.option("--session", help="Only this session (a full id, or the start of one).")
@since_option
@click.option(
    "--category",
    type=click.Choice(CATEGORIES),
    metavar="CATEGORY",
    help=f"Only events of this category ({', '.join(CATEGORIES)}).",
)
@limit_option("At most this many (newest) events per session (default: all).")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="One JSON document (sessions, events, resumes); each event's data is an object.",
)
@click.option(
    "--jsonl", "as_jsonl", is_flag=True, help="One JSON object per event, its data an object."
)
def dump(
    project: str | None,
    worktree: str | None,
    client: str | None,
    session: str | None,
    since: str | None,
    category: str | None,
    limit: int | None,
    as_json: bool,
    as_jsonl: bool,
) -> None:
    """Show the sessions, events and snapshots stored for a project."""
    if as_json and as_jsonl:
        raise click.UsageError("choose one of --json and --jsonl")
    tree = resolve_worktree(worktree, project)
    with open_store(project) as store:
        if session is not None:
            session = resolve_session(store, session)
        document = collect(
            store,
            session=session,
            since=since,
            category=category,
            limit=limit,
            worktree=tree,
            client=client,
            decode_data=as_json or as_jsonl,
        )
        if as_json:
            echo_json(document)
        elif as_jsonl:
            for entry in document["sessions"]:
                for event in entry["events"]:
                    line = {"format": FORMAT, "session_id": entry["session_id"], **event}
                    click.echo(visible(orjson.dumps(line).decode()))
        else:
            _render_text(document, store.path, client)
