"""``ctxmode dump``: everything the store holds for a project, for people and machines."""

from __future__ import annotations

from typing import Any

import click

from ctxmode.cli.common import echo_json, open_store, project_option, relative_time

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


def collect(
    store: Any,
    *,
    session: str | None,
    since: str | None = None,
    category: str | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """The dump document (design.md contract): ``{"sessions": [...]}``."""
    sessions = []
    for meta in store.sessions():
        session_id = meta["session_id"]
        if session and session_id != session:
            continue
        events = []
        for event in store.session_events(session_id):
            if since and (event.created_at or "") < since:
                continue
            if category and event.category != category:
                continue
            events.append({name: getattr(event, name) for name in EVENT_FIELDS})
        if limit is not None:
            events = events[-limit:]
        resumes = [
            {name: row.get(name) for name in RESUME_FIELDS} for row in store.resumes(session_id)
        ]
        for resume in resumes:
            resume["consumed"] = bool(resume["consumed"])
        sessions.append(
            {
                "session_id": session_id,
                "project_dir": meta.get("project_dir"),
                "started_at": meta.get("started_at"),
                "last_event_at": meta.get("last_event_at"),
                "event_count": meta.get("event_count"),
                "compact_count": meta.get("compact_count") or 0,
                "events": events,
                "resumes": resumes,
            }
        )
    return {"sessions": sessions}


def _render_text(document: dict[str, Any], store_path: str) -> None:
    if not document["sessions"]:
        click.echo(f"No sessions recorded in {store_path}.")
        return
    for session in document["sessions"]:
        click.secho(f"session {session['session_id']}", bold=True)
        click.echo(
            f"  started {relative_time(session['started_at'])}, last activity "
            f"{relative_time(session['last_event_at'])}, {session['event_count']} events, "
            f"{session['compact_count']} compactions"
        )
        width = max((len(event["type"]) for event in session["events"]), default=4)
        for event in session["events"]:
            data = event["data"]
            if len(data) > 160:
                data = data[:157] + "..."
            click.echo(
                f"  {event['created_at'][11:19]}  p{event['priority']}  "
                f"{event['category']:<12} {event['type']:<{width}}  {data}"
            )
        for resume in session["resumes"]:
            state = (
                f"claimed by {resume['consumed_by']} {relative_time(resume['consumed_at'])}"
                if resume["consumed"]
                else "unclaimed"
            )
            click.echo(
                f"  snapshot #{resume['compact_seq']} ({resume['kind']}, "
                f"{len(resume['snapshot'] or '')} bytes, {resume['event_count']} events): {state}"
            )
        click.echo()


@click.command()
@project_option
@click.option("--session", help="Only this session id.")
@click.option("--since", help="Only events at or after this ISO time (e.g. 2026-12-01).")
@click.option("--category", help="Only events of this category (file, git, task, ...).")
@click.option("--limit", type=int, help="At most this many (newest) events per session.")
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON document (sessions, events, resumes)."
)
@click.option("--jsonl", "as_jsonl", is_flag=True, help="One JSON object per event.")
def dump(
    project: str | None,
    session: str | None,
    since: str | None,
    category: str | None,
    limit: int | None,
    as_json: bool,
    as_jsonl: bool,
) -> None:
    """Show the sessions, events and snapshots stored for a project."""
    with open_store(project) as store:
        document = collect(store, session=session, since=since, category=category, limit=limit)
        if as_json:
            echo_json(document)
        elif as_jsonl:
            import orjson

            for entry in document["sessions"]:
                for event in entry["events"]:
                    line = {"session_id": entry["session_id"], **event}
                    click.echo(orjson.dumps(line).decode())
        else:
            _render_text(document, store.path)
