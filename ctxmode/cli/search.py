"""``ctxmode search``: find stored events by text.

This is what the snapshot's ``<lookup>`` hints run, through the model's Bash tool, so
the query is literal text (``:``, ``?``, ``'``, ``-``, ``AND``/``OR`` mean themselves)
and the output must show the whole stored item, not a preview. Ranking and matching
are the store's (:meth:`ctxmode.store.Store.search`): every word of the query must
occur in the values of the event's data (not its JSON keys or escapes), as a
case-insensitive substring.
"""

from __future__ import annotations

import os
import re
import textwrap
from typing import Any

import click
import orjson

from ctxmode import hosts
from ctxmode.cli.common import (
    client_option,
    color_enabled,
    limit_option,
    open_store,
    project_option,
    relative_time,
    resolve_session,
    resolve_worktree,
    since_option,
    worktree_option,
)
from ctxmode.cli.common import parse_since as parse_since  # re-exported: shared by all commands
from ctxmode.events import CATEGORIES, TYPES
from ctxmode.redact import visible
from ctxmode.store import SEARCH_CANDIDATES, SearchHit, Store, StoreError, parse_query

DEFAULT_LIMIT = 10
# The human output folds identical events (same type and data, e.g. a file read ten
# times) into one block, so it ranks every candidate the store considers (its cost
# hardly depends on the limit) and shows the best ``--limit`` distinct items.
FETCH_PER_BLOCK = 4
WRAP_WIDTH = 100
INDENT = "    "
PRIORITY_NAMES = {1: "critical", 2: "high", 3: "normal", 4: "low", 5: "minor"}
NARROW_HINT = "--session ID, --category C, --type T or --since 24h"

# ---------------------------------------------------------------- searching


def find(
    store: Store,
    query: str,
    *,
    session_id: str | None = None,
    category: str | None = None,
    type_: str | None = None,
    since: str | None = None,
    limit: int = DEFAULT_LIMIT,
    worktree: str | None = None,
    client: str | None = None,
) -> list[SearchHit]:
    """The best ``limit`` hits for ``query``, best first.

    The store matches the values of the event data as a person reads them (a backslash
    is one backslash, a line break a line break), never its JSON keys or escapes.
    ``client`` is the stored name (``hosts.by_option``); the default host's sessions may
    have none recorded (schema 3: NULL means the default host, ``hosts.DEFAULT``).
    """
    return store.search(
        query,
        session_id=session_id,
        category=category,
        type=type_,
        since=since,
        limit=limit,
        worktree=worktree,
        client=None if client is None else (client, None) if client == hosts.DEFAULT else (client,),
    )


class Block:
    """One item of the human output: a hit and the identical events folded into it."""

    __slots__ = ("count", "first_at", "hit", "sessions")

    def __init__(self, hit: SearchHit) -> None:
        self.hit = hit
        self.count = 1
        self.first_at = hit.created_at or ""
        self.sessions = {hit.session_id}

    def add(self, hit: SearchHit) -> None:
        self.count += 1
        self.first_at = min(self.first_at, hit.created_at or "")
        self.sessions.add(hit.session_id)


def fold(hits: list[SearchHit]) -> list[Block]:
    """Group hits with the same type and data, in rank order of each group's best hit."""
    blocks: dict[tuple[str, str], Block] = {}
    for hit in hits:
        key = (hit.type, hit.data)
        if key in blocks:
            blocks[key].add(hit)
        else:
            blocks[key] = Block(hit)
    return list(blocks.values())


# ---------------------------------------------------------------- rendering


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return orjson.dumps(value).decode()


def _inline(value: Any) -> str:
    """A list item on one line: ``key: value, key: value`` for objects."""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items())
    return _scalar(value)


def data_fields(data: str) -> list[tuple[str, str]]:
    """``(key, text)`` pairs of an event's data: its JSON object decoded, or the raw text."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return [("", data)]
    if not isinstance(value, dict):
        return [("", data)]
    fields: list[tuple[str, str]] = []
    for key, item in value.items():
        if isinstance(item, list) and item and any(isinstance(x, dict) for x in item):
            fields.append((str(key), "\n".join("- " + _inline(x) for x in item)))
        elif isinstance(item, list) and all(not isinstance(x, (dict, list)) for x in item):
            fields.append((str(key), ", ".join(_scalar(x) for x in item)))
        else:
            fields.append((str(key), _scalar(item)))
    return fields


def wrap_field(key: str, text: str, width: int = WRAP_WIDTH) -> list[str]:
    """``key: text`` wrapped at spaces (never inside a word) with a hanging indent."""
    head = f"{INDENT}{key}: " if key else INDENT
    hang = " " * len(head)
    out: list[str] = []
    for number, line in enumerate(text.split("\n")):
        prefix = head if number == 0 else hang
        pieces = textwrap.wrap(
            line,
            width=max(width - len(prefix), 20),
            break_long_words=False,
            break_on_hyphens=False,
        )
        if not pieces:
            out.append(prefix.rstrip())
            continue
        out.append(prefix + pieces[0])
        out.extend(hang + piece for piece in pieces[1:])
    return out


def _stamp(iso: str | None) -> str:
    if not iso:
        return "-"
    return f"{iso[:10]} {iso[11:19]} UTC"


def block_lines(number: int, block: Block, now: float | None = None) -> tuple[str, list[str]]:
    """The header line and the data lines of one block."""
    hit = block.hit
    priority = int(hit.priority)
    parts = [
        f"[{number}] {_stamp(hit.created_at)} ({relative_time(hit.created_at, now)})",
        f"session {str(hit.session_id or '')[:8]}",
        f"{hit.category}/{hit.type}",
        f"priority {priority} ({PRIORITY_NAMES.get(priority, '?')})",
    ]
    if hit.agent_type or hit.agent_id:
        parts.append(f"subagent {hit.agent_type or hit.agent_id}")
    lines: list[str] = []
    for key, text in data_fields(str(hit.data)):
        lines.extend(wrap_field(key, text))
    if block.count > 1:
        where = f" in {len(block.sessions)} sessions" if len(block.sessions) > 1 else ""
        lines.append(
            f"{INDENT}({block.count} identical events{where}, first {_stamp(block.first_at)})"
        )
    # Stored text is shown as it is: invisible and direction-changing characters as escapes.
    return visible(" · ".join(parts)), [visible(line) for line in lines]


def highlighter(terms: list[str]) -> re.Pattern[str] | None:
    """A pattern matching any query term, case-insensitively (longest first)."""
    wanted = sorted({t for t in terms if t}, key=len, reverse=True)
    if not wanted:
        return None
    return re.compile("|".join(re.escape(t) for t in wanted), re.IGNORECASE)


def render(
    query: str,
    blocks: list[Block],
    *,
    total: int,
    capped: bool,
    limit: int,
    filters: str,
    color: bool,
    now: float | None = None,
) -> str:
    """The human output of a search: one block per match, then a footer line.

    ``blocks`` are the ones shown, of ``total`` distinct matches found; ``capped`` when
    the store stopped at its candidate limit, so that more may exist.
    """
    pattern = highlighter(parse_query(query)) if color else None
    out: list[str] = []
    for number, block in enumerate(blocks, start=1):
        header, lines = block_lines(number, block, now)
        out.append(click.style(header, bold=True) if color else header)
        for line in lines:
            if pattern is not None:
                line = pattern.sub(lambda m: click.style(m.group(0), fg="yellow", bold=True), line)
            out.append(line)
        out.append("")
    shown = len(blocks)
    events = sum(block.count for block in blocks)
    noun = "match" if shown == 1 else "matches"
    subject = f"{_subject(query)}{filters}"
    folded = f" ({events} events, identical ones folded)" if events > shown else ""
    if total > shown:
        out.append(
            f"{shown} of {total}{'+' if capped else ''} matches {subject}{folded}; "
            f"raise --limit (now {limit}) or narrow with {NARROW_HINT}."
        )
    elif capped:
        out.append(
            f"{shown} {noun} {subject}{folded}, among the newest matching events only: "
            f"narrow with {NARROW_HINT} to reach older ones."
        )
    else:
        out.append(f"{shown} {noun} {subject}{folded}. Narrow with {NARROW_HINT}.")
    return "\n".join(out) + "\n"


def _subject(query: str) -> str:
    query = visible(query)
    if not query:
        return "among the newest events"
    # Quoted for reading, not repr(): a backslash in the query shows as itself.
    return f"for '{query}'" if "'" not in query else f'for "{query}"'


def describe_filters(**filters: str | None) -> str:
    """`` (session x, category y)`` for the footer, or ``""``."""
    parts = [f"{name} {value}" for name, value in filters.items() if value is not None]
    return f" ({', '.join(parts)})" if parts else ""


def hit_json(hit: SearchHit) -> dict[str, Any]:
    """The ``--json`` form of a hit: every event field, then rank and snippet."""
    return {
        "id": hit.id,
        "session_id": hit.session_id,
        "created_at": hit.created_at,
        "category": hit.category,
        "type": hit.type,
        "priority": hit.priority,
        "data": hit.data,
        "source_hook": hit.source_hook,
        "agent_id": hit.agent_id,
        "agent_type": hit.agent_type,
        "tool_use_id": hit.tool_use_id,
        "bytes_avoided": hit.bytes_avoided,
        "rank": hit.rank,
        "snippet": hit.snippet,
    }


def record_output(store: Store, output_bytes: int, env: dict[str, str] | None = None) -> bool:
    """Count a search's output into ``bytes_returned`` when a Claude Code session ran it.

    Only then did the bytes reach a model's context (a person at a terminal reads them
    instead). The session is ``CLAUDE_CODE_SESSION_ID``; a search run by Claude Code
    without it counts for no session (in the overall figures only). A store that cannot
    take the write (locked, read-only) loses the count, never the search.
    """
    environ = os.environ if env is None else env
    session = environ.get("CLAUDE_CODE_SESSION_ID", "")
    if not session and not environ.get("CLAUDECODE"):
        return False
    try:
        if store.readonly:  # the search read without writing: count through a writer
            with Store.open(store.path, busy_timeout_ms=store.busy_timeout_ms) as writer:
                writer.record_search(session, output_bytes)
        else:
            store.record_search(session, output_bytes)
    except StoreError:
        return False
    return True


# ---------------------------------------------------------------- the command


@click.command()
@click.argument("query", nargs=-1)
@project_option
@worktree_option
@client_option
@click.option("--session", help="Only this session (a full id, or the start of one).")
@click.option(
    "--category",
    type=click.Choice(CATEGORIES),
    metavar="CATEGORY",
    help=f"Only events of this category ({', '.join(CATEGORIES)}).",
)
@click.option(
    "--type",
    "type_",
    type=click.Choice(sorted(TYPES)),
    metavar="TYPE",
    help="Only events of this type (file_edit, git_commit, tool_error, ...).",
)
@since_option
@limit_option("Show at most this many matches.", default=DEFAULT_LIMIT)
@click.option("--json", "as_json", is_flag=True, help="A JSON list of hits (all event fields).")
def search(
    query: tuple[str, ...],
    project: str | None,
    worktree: str | None,
    client: str | None,
    session: str | None,
    category: str | None,
    type_: str | None,
    since: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Find stored events whose data contains every word of QUERY.

    QUERY is literal text (several words are joined with spaces); "double quotes"
    keep a phrase together. Matching is by substring, case-insensitive; the best
    matches (relevance, then recency) are shown with their full stored data.
    """
    text = " ".join(query).strip()
    if not text and not (session or category or type_ or since):
        raise click.UsageError("give a QUERY (or a filter, to list the newest events)")
    tree = resolve_worktree(worktree, project)
    with open_store(project) as store:
        try:
            if session is not None:
                session = resolve_session(store, session)
            options: dict[str, Any] = {
                "session_id": session,
                "category": category,
                "type_": type_,
                "since": since,
                "worktree": tree,
                "client": hosts.by_option(client) if client else None,
            }
            if as_json:
                hits = find(store, text, limit=limit, **options)
                output = orjson.dumps([hit_json(h) for h in hits], option=orjson.OPT_INDENT_2)
                click.echo(visible(output.decode()))
                record_output(store, len(output) + 1)
                return
            fetch = max(SEARCH_CANDIDATES, limit * FETCH_PER_BLOCK)
            fetched = find(store, text, limit=fetch, **options)
        except StoreError as exc:
            raise click.ClickException(f"search failed: {exc}") from exc
        filters = describe_filters(
            session=session,
            category=category,
            type=type_,
            since=since,
            worktree=tree,
            client=client,
        )
        if not fetched:
            output_text = visible(f"no matches {_subject(text)}{filters}.\n")
            if len(parse_query(text)) > 1:
                output_text += "Every word must occur in an event: try fewer or shorter words.\n"
        else:
            blocks = fold(fetched)
            output_text = render(
                text,
                blocks[:limit],
                total=len(blocks),
                capped=len(fetched) >= fetch,
                limit=limit,
                filters=filters,
                color=color_enabled(),
            )
        click.echo(output_text, nl=False)
        record_output(store, len(click.unstyle(output_text).encode("utf-8")))
