"""``ctxmode search``: find stored events by what they say.

This is what an agent runs after a compaction, in its own words, and what the snapshot's
``<lookup>`` hints run, through the model's Bash tool. The query is literal text (``:``,
``?``, ``'``, ``-``, ``AND``/``OR`` mean themselves); ranking is the store's
(:meth:`ctxmode.store.Store.search`): every event sharing a word, identifier or phrase
with the query is a match, the best first.

The output is made for a model: each hit says when, in which session, what kind of
event, and shows the lines that matched (flagged ``»``, their text as stored; the words
in colour on a terminal), long values cut around them; the last line says how many
matched and how to get more. ``--full`` shows every field whole, ``--json`` everything
as data. Whatever is asked, the output stays bounded (:data:`MAX_OUTPUT_BYTES`), and it
is written as UTF-8 bytes whatever the query or the terminal holds.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
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
    resolve_session,
    resolve_worktree,
    since_option,
    worktree_option,
)
from ctxmode.cli.common import parse_since as parse_since  # re-exported: shared by all commands
from ctxmode.cli.search_output import (
    CONTEXT_HITS,
    CONTEXT_SPAN,
    describe_filters,
    fold,
    no_match,
    render,
)
from ctxmode.cli.search_output import MAX_OUTPUT_BYTES as MAX_OUTPUT_BYTES  # re-exported
from ctxmode.cli.search_output import Block as Block
from ctxmode.cli.search_output import data_fields as data_fields
from ctxmode.cli.search_output import wrap_field as wrap_field
from ctxmode.events import CATEGORIES, TYPES, SessionEvent
from ctxmode.redact import visible
from ctxmode.store import SearchHit, SearchHits, Store, StoreError, parse_query

DEFAULT_LIMIT = 8  # the compact output of 8 hits: a median under 3 KB
# Identical events (a file read ten times) fold into one item: ask the store for more
# hits than are shown, so that ``limit`` distinct items remain.
FETCH_PER_BLOCK = 4
MIN_FETCH = 50
MAX_SHOWN = 500  # more compact hits than 32 KB can hold
MAX_JSON_BYTES = 1024 * 1024
MAX_JSON_HITS = 5000
# --json gives the neighbours of this many hits, whole (a few indexed reads each).
JSON_CONTEXT_HITS = 50

# ---------------------------------------------------------------- searching


def find(
    store: Store,
    query: str,
    *,
    session_id: str | None = None,
    category: str | list[str] | None = None,
    type_: str | list[str] | None = None,
    since: str | None = None,
    limit: int = DEFAULT_LIMIT,
    worktree: str | None = None,
    client: str | None = None,
) -> SearchHits:
    """The best ``limit`` hits for ``query``, best first (with the total matched).

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


def hit_json(
    hit: SearchHit, context: list[tuple[int, SessionEvent]] | None = None
) -> dict[str, Any]:
    """The ``--json`` form of a hit: every event field, then rank and snippet, and
    ``context``: the events just before and after it in its session (``offset`` -1 is
    the one before; :meth:`ctxmode.store.Store.neighbours`), for the best hits."""
    item: dict[str, Any] = {
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
    if context is not None:
        item["context"] = [
            {
                "offset": offset,
                "id": event.id,
                "created_at": event.created_at,
                "type": event.type,
                "data": event.data,
            }
            for offset, event in context
        ]
    return item


def json_output(
    hits: list[SearchHit], context: dict[int, list[tuple[int, SessionEvent]]] | None = None
) -> tuple[bytes, int]:
    """The ``--json`` document of ``hits`` within :data:`MAX_JSON_BYTES`, and how many
    hits it holds (``context``: the neighbours of the hits that have them)."""
    items: list[bytes] = []
    size = 2
    context = context or {}
    for hit in hits:
        beside = context.get(int(hit.id)) if hit.id is not None else None
        item = orjson.dumps(hit_json(hit, beside), option=orjson.OPT_INDENT_2)
        if items and size + len(item) > MAX_JSON_BYTES:
            break
        items.append(item)
        size += len(item) + 2
    if not items:
        return b"[]", 0
    body = b",\n".join(b"\n".join(b"  " + line for line in item.split(b"\n")) for item in items)
    return b"[\n" + body + b"\n]", len(items)


def byte_safe(text: str) -> bytes:
    """``text`` as UTF-8, whatever it holds: a lone surrogate (a query's invalid UTF-8
    bytes, as the shell passed them) is written as its escape, never an error."""
    return text.encode("utf-8", "backslashreplace")


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


def _names(values: tuple[str, ...], known: Sequence[str], option: str) -> list[str] | None:
    """``--type a,b --type c`` → ``[a, b, c]``, each checked (as click's Choice says a
    wrong one); None when not given."""
    names = [v.strip() for value in values for v in value.split(",") if v.strip()]
    if not values:
        return None
    wrong = [n for n in names if n not in known]
    if wrong or not names:
        choices = ", ".join(repr(k) for k in known)
        raise click.BadParameter(
            f"{wrong[0] if wrong else ''!r} is not one of {choices}.", param_hint=option
        )
    return names


@click.command()
@click.argument("query", nargs=-1)
@project_option
@worktree_option
@client_option
@click.option("--session", help="Only this session (a full id, or the start of one).")
@click.option(
    "--category",
    multiple=True,
    metavar="CATEGORY",
    help=f"Only events of these categories (repeat, or a,b): {', '.join(CATEGORIES)}.",
)
@click.option(
    "--type",
    "type_",
    multiple=True,
    metavar="TYPE",
    help="Only events of these types (repeat, or a,b): file_edit, git_commit, shell_call, ...",
)
@since_option
@limit_option("Show at most this many matches.", default=DEFAULT_LIMIT)
@click.option(
    "--offset",
    type=click.IntRange(min=0),
    default=0,
    metavar="N",
    help="Skip the first N matches (the next page).",
)
@click.option("--full", is_flag=True, help="Every field of each match, whole.")
@click.option("--json", "as_json", is_flag=True, help="A JSON list of hits (all event fields).")
def search(
    query: tuple[str, ...],
    project: str | None,
    worktree: str | None,
    client: str | None,
    session: str | None,
    category: tuple[str, ...],
    type_: tuple[str, ...],
    since: str | None,
    limit: int,
    offset: int,
    full: bool,
    as_json: bool,
) -> None:
    """Find what was recorded, in your own words, best first.

    QUERY is literal text: keywords or a sentence (question and filler words carry no
    weight; an event sharing any word with it is a match). A word matches its other
    forms (fail, failed, failing); a file name, flag, version or error code matches
    as written, and "double quotes" keep a phrase together; events holding those come
    first. Each match shows when, where and what, and the lines that matched (»);
    without QUERY, the newest events that pass the filters.
    """
    text = " ".join(query).strip()
    categories = _names(category, CATEGORIES, "'--category'")
    types = _names(type_, sorted(TYPES), "'--type'")
    if not text and not (session or categories or types or since):
        raise click.UsageError("give a QUERY (or a filter, to list the newest events)")
    tree = resolve_worktree(worktree, project)
    with open_store(project) as store:
        try:
            if session is not None:
                session = resolve_session(store, session)
            options: dict[str, Any] = {
                "session_id": session,
                "category": categories,
                "type_": types,
                "since": since,
                "worktree": tree,
                "client": hosts.by_option(client) if client else None,
            }
            listing = not parse_query(text)
            if as_json:
                wanted = offset + min(limit, MAX_JSON_HITS)
                hits = find(store, text, limit=wanted, **options)[offset:]
                context = store.neighbours(hits[:JSON_CONTEXT_HITS], CONTEXT_SPAN) if text else {}
                output, kept = json_output(hits, context)
                click.echo(byte_safe(visible(output.decode())))
                if kept < len(hits):
                    click.echo(
                        f"ctxmode search: --json stopped at {MAX_JSON_BYTES // 1024} KB after "
                        f"{kept} of {len(hits)} hits; more: --offset {offset + kept}.",
                        err=True,
                    )
                record_output(store, len(output) + 1)
                return
            # Enough to fill the page after folding, never more than the output can show.
            fetch = max(MIN_FETCH, (offset + min(limit, MAX_SHOWN)) * FETCH_PER_BLOCK)
            fetched = find(store, text, limit=fetch, **options)
        except StoreError as exc:
            raise click.ClickException(f"search failed: {exc}") from exc
        filters = describe_filters(
            session=session,
            category=categories,
            type=types,
            since=since,
            worktree=tree,
            client=client,
        )
        if not fetched:
            output_text = visible(no_match(text, filters))
        else:
            blocks = fold(fetched, by_subject=listing)
            page = blocks[offset : offset + limit]
            beside = (
                store.neighbours([b.hit for b in page[:CONTEXT_HITS]], CONTEXT_SPAN)
                if not full and not listing
                else None
            )
            # Every match fetched: the items are counted; else the events matching are
            # (an estimate, when the store ranked the newest matches of a common word).
            complete = not fetched.more and len(fetched) >= fetched.total
            output_text = render(
                text,
                page,
                total=len(blocks) if complete else max(fetched.total, len(blocks)),
                capped=not complete,
                limit=limit,
                filters=filters,
                color=color_enabled(),
                full=full,
                offset=offset,
                listing=listing,
                context=beside,
                terms=fetched.terms,
            )
        data = byte_safe(output_text)
        click.echo(data, nl=False)
        record_output(store, len(click.unstyle(output_text).encode("utf-8", "backslashreplace")))
