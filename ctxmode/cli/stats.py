"""``ctxmode stats``: what the store holds, and the context bytes against the raw traffic."""

from __future__ import annotations

from typing import Any

import click
import orjson

from ctxmode import stats as stats_mod
from ctxmode.cli.common import open_store, project_option, relative_time, resolve_session
from ctxmode.store import StoreError
from ctxmode.wording import plural


def _n(value: int) -> str:
    return f"{value:,}"


def _size(nbytes: int) -> str:
    """Exact bytes, with a binary-unit reading when large."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes:,} B ({nbytes / scale:.1f} {unit})"
    return f"{nbytes:,} B"


def _ratio(entry: dict[str, Any]) -> str:
    if entry["ratio"] is None:
        return "- (nothing put into the context yet)"
    if not entry["bytes_avoided"]:
        return "- (no raw tool traffic recorded)"
    return f"{entry['ratio']:,.1f} : 1 (avoided : returned)"


RESTORED_SHOWN = 8  # key items named per compaction; the rest are counted


def coverage_line(found: dict[str, Any]) -> str:
    """One compaction: what its summary kept, and what the snapshot restored beyond it."""
    trigger = f" ({found['trigger']})" if found["trigger"] else ""
    head = f"compaction {found['compact_seq']}{trigger}: "
    if found["snapshot"] == "pointer":
        return (
            head
            + f"a one-line pointer, nothing new since compaction {found['unchanged_since']}"
            + ("" if found["summary_recorded"] else "; no summary recorded")
        )
    if found["snapshot"] == "none":
        return head + "no snapshot" + ("; summary recorded" if found["summary_recorded"] else "")
    restored = found["restored"]
    named = ", ".join(restored[:RESTORED_SHOWN])
    if len(restored) > RESTORED_SHOWN:
        named += f" and {len(restored) - RESTORED_SHOWN} more"
    if found["snapshot"] == "replayed":
        # An imported compaction: the hooks did not run, the snapshot is what they would
        # have given (replayed from the events before it, never injected).
        head = head.rstrip(": ") + ", imported: "
        items = plural(found["key_items"], "key item")
        if not found["summary_recorded"]:
            text = f"no summary recorded; a ctxmode snapshot would have restored {items}"
            return head + text + (f": {named}" if named else "")
        text = f"the summary kept {found['summary_kept']} of the {items} of a ctxmode snapshot"
        if not restored:
            return head + text + "; the snapshot would have added nothing"
        return head + text + f"; the snapshot would have added: {named}"
    if not found["summary_recorded"]:
        text = "no summary recorded; the snapshot restored " + plural(
            found["key_items"], "key item"
        )
        return head + text + (f": {named}" if named else "")
    text = f"the summary kept {found['summary_kept']} of {plural(found['key_items'], 'key item')}"
    if not restored:
        return head + text + "; the snapshot restored nothing it lacked"
    return head + text + f"; the snapshot restored: {named}"


def summaries_line(entry: dict[str, Any]) -> str | None:
    """The summaries of a session or overall, or None when nothing compacted."""
    if not entry["compactions"] and not entry["summaries"]:
        return None
    if not entry["summaries"]:
        return (
            "  summaries    none recorded (PostCompact not registered, or Claude Code "
            "before 2.1.76)"
        )
    kept, total = entry["key_items_kept"], entry["key_items"]
    line = f"  summaries    {_n(entry['summaries'])} recorded"
    if total or not entry.get("replayed"):
        line += (
            f"; they kept {_n(kept)} of {plural(total, 'key item', grouped=True)} of the "
            f"snapshots, which restored the other {_n(total - kept)}"
        )
    if entry.get("replayed"):
        r_kept, r_total = entry["replayed_key_items_kept"], entry["replayed_key_items"]
        line += (
            f"; at {plural(entry['replayed'], 'imported compaction', grouped=True)} they kept "
            f"{_n(r_kept)} of the {plural(r_total, 'key item', grouped=True)} a ctxmode "
            f"snapshot would have restored, which would have added the other {_n(r_total - r_kept)}"
        )
    return line


def entry_lines(entry: dict[str, Any]) -> list[str]:
    """The indented lines shared by a session and the overall block."""
    categories = ", ".join(f"{c} {_n(n)}" for c, n in entry["events_by_category"].items())
    lines = [
        f"  events       {_n(entry['events'])} stored"
        + (f", {_n(entry['evicted'])} evicted over the cap" if entry["evicted"] else "")
        + (f": {categories}" if categories else ""),
        f"  compactions  {_n(entry['compactions'])}; snapshots {_n(entry['snapshots_stored'])} "
        f"stored, {_n(entry['snapshots_claimed'])} claimed, "
        f"{_n(entry['snapshots_retired'])} retired unread",
        f"  searches     {_n(entry['searches'])} run by the model",
        f"  returned     {_size(entry['bytes_returned'])} into the context "
        f"(snapshots {_n(entry['snapshot_bytes'])}, searches {_n(entry['search_bytes'])})",
        f"  avoided      {_size(entry['bytes_avoided'])} of raw tool traffic stood for",
        f"  ratio        {_ratio(entry)}",
    ]
    summaries = summaries_line(entry)
    if summaries is not None:
        lines.append(summaries)
    lines.extend(f"    {coverage_line(found)}" for found in entry.get("compaction_coverage", ()))
    return lines


def render(document: dict[str, Any], now: float | None = None) -> str:
    """The human form of the stats document."""
    store = document["store"]
    per_event = store["bytes_per_event"]
    out = [
        f"store {store['path']}",
        f"  {_size(store['file_bytes'])} on disk, {plural(store['events'], 'event', grouped=True)}"
        f" in {plural(store['sessions'], 'session', grouped=True)}"
        + (f", {per_event:,.0f} B per event" if per_event is not None else "")
        + ("" if store["full_text_search"] else "; no FTS5: search uses LIKE"),
        "",
    ]
    for entry in document["sessions"]:
        out.append(
            f"session {entry['session_id']} (started {relative_time(entry['started_at'], now)}, "
            f"last event {relative_time(entry['last_event_at'], now)})"
        )
        out.extend(entry_lines(entry))
        out.append("")
    overall = document["overall"]
    out.append(f"overall ({plural(overall['sessions'], 'session', grouped=True)})")
    out.extend(entry_lines(overall))
    if overall["other_searches"]:
        out.append(
            f"  (the searches include {_n(overall['other_searches'])} run outside a stored "
            f"session: {_n(overall['other_search_bytes'])} B)"
        )
    return "\n".join(out) + "\n"


@click.command()
@project_option
@click.option("--session", help="Only this session (a full id, or the start of one).")
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON document: store, overall, sessions."
)
def stats(project: str | None, session: str | None, as_json: bool) -> None:
    """Events, compactions, snapshots and searches, per session and overall.

    bytes_returned: what ctxmode put into the model's context (claimed snapshots and
    the output of searches the model ran). bytes_avoided: the raw tool traffic
    (tool input and response) that the stored events stand for, not a saving.

    Per compaction: what the client's summary kept of the snapshot's key items (files
    changed, open tasks, last commit, unresolved errors, last request, standing
    instructions), and the ones only the snapshot restored.
    """
    with open_store(project) as store:
        try:
            if session is not None:
                session = resolve_session(store, session)
            document = stats_mod.collect(store, session)
        except StoreError as exc:
            raise click.ClickException(f"stats failed: {exc}") from exc
    if session is not None and not document["sessions"]:
        raise click.ClickException(f"no session {session!r} in {document['store']['path']}")
    if as_json:
        click.echo(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(render(document), nl=False)
