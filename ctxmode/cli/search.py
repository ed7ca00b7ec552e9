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
import re
import textwrap
from typing import Any

import click
import orjson

from ctxmode.cli.common import (
    CLIENTS,
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
from ctxmode.store import SearchHit, SearchHits, Store, StoreError, analyze, parse_query
from ctxmode.store.search import Term, match_spans

DEFAULT_LIMIT = 8  # the compact output of 8 hits: a median under 3 KB
# Identical events (a file read ten times) fold into one item: ask the store for more
# hits than are shown, so that ``limit`` distinct items remain.
FETCH_PER_BLOCK = 4
MIN_FETCH = 50
WRAP_WIDTH = 100
INDENT = "    "
PRIORITY_NAMES = {1: "critical", 2: "high", 3: "normal", 4: "low", 5: "minor"}
NARROW_HINT = "--session ID, --type T or --since 24h"
# The compact output: a value up to this long is shown whole; a longer one shows its
# matching lines (at most MATCH_LINES, each a window this wide around the match).
SHORT_VALUE = 300
LINE_WINDOW = 240
MATCH_LINES = 3
DETAILED_HITS = 3
UNMATCHED_CHARS = 100
LISTED_CHARS = 400  # a listing (no query) shows each value up to this long whole
# No search prints more than this (an agent's --limit 1000000 must not fill its
# context): the output stops after the hit that reaches it and says how to go on.
MAX_OUTPUT_BYTES = 32 * 1024
MAX_SHOWN = 500  # more compact hits than 32 KB can hold
MAX_JSON_BYTES = 1024 * 1024
MAX_JSON_HITS = 5000
# A line of the compact output that matched the query starts with this (in its indent).
MATCHED = "  » "
COLOR_MARK = ("\x1b[33m\x1b[1m", "\x1b[0m")

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
    ``client`` is the stored name (cli.common.CLIENTS); Claude Code's sessions may have
    none recorded (schema 3: NULL means Claude Code).
    """
    return store.search(
        query,
        session_id=session_id,
        category=category,
        type=type_,
        since=since,
        limit=limit,
        worktree=worktree,
        client=None if client is None else (client, None) if client == "claude_code" else (client,),
    )


class Block:
    """One item of the human output: a hit and the events folded into it."""

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


def subject(hit: SearchHit) -> str:
    """What a listing folds by: the file a file event names, the command an error names,
    else the whole data."""
    try:
        value = orjson.loads(hit.data)
    except orjson.JSONDecodeError:
        return hit.data
    if isinstance(value, dict):
        for key in ("path", "key"):
            if isinstance(value.get(key), str):
                return f"{key}:{value[key]}"
    return hit.data


def fold(hits: list[SearchHit], *, by_subject: bool = False) -> list[Block]:
    """Group hits with the same type and data (a listing: the same category and subject),
    in rank order of each group's best hit."""
    blocks: dict[tuple[str, str], Block] = {}
    for hit in hits:
        key = (hit.category, subject(hit)) if by_subject else (hit.type, hit.data)
        if key in blocks:
            blocks[key].add(hit)
        else:
            blocks[key] = Block(hit)
    return list(blocks.values())


# ---------------------------------------------------------------- the fields of a hit


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


def _stamp(iso: str | None, seconds: bool = True) -> str:
    if not iso:
        return "-"
    return f"{iso[:10]} {iso[11:19] if seconds else iso[11:16]} UTC"


def _marked(line: str, spans: list[tuple[int, int]], mark: tuple[str, str] | None) -> str:
    if mark is None:
        return line
    out: list[str] = []
    cursor = 0
    for start, end in spans:
        out += [line[cursor:start], mark[0], line[start:end], mark[1]]
        cursor = end
    out.append(line[cursor:])
    return "".join(out)


def _window(
    line: str, terms: list[Term], width: int, mark: tuple[str, str] | None
) -> tuple[str, bool]:
    """``line`` cut to ``width`` characters around its first match (the matches marked,
    on a terminal), and whether it matched."""
    spans = match_spans(line, terms) if terms else []
    start = 0
    if len(line) > width:
        first = spans[0][0] if spans else 0
        start = max(0, min(first - width // 3, len(line) - width))
    end = min(len(line), start + width)
    inside = [
        (max(a, start) - start, min(b, end) - start) for a, b in spans if b > start and a < end
    ]
    text = _marked(line[start:end], inside, mark)
    return ("…" if start > 0 else "") + text + ("…" if end < len(line) else ""), bool(inside)


def _flag(line: str, matched: bool) -> str:
    """A line that matched starts with :data:`MATCHED` in its indent: its text stays as
    stored, so a command, a path or a version can be copied from it as it is."""
    return MATCHED + line[len(MATCHED) :] if matched and line.startswith(INDENT) else line


def compact_field(
    key: str,
    text: str,
    terms: list[Term],
    mark: tuple[str, str] | None = None,
    match_lines: int = MATCH_LINES,
) -> list[str]:
    """One field in the compact output: whole when short, else the lines that match
    (each flagged, see :func:`_flag`)."""
    head = f"{INDENT}{key}: " if key else INDENT
    hang = " " * len(head)
    lines = text.split("\n")
    if len(lines) == 1 and len(text) <= SHORT_VALUE:
        shown, matched = _window(text, terms, SHORT_VALUE, mark)
        return [_flag(head + shown, matched)]
    if not terms:
        # A listing (no query): the item itself, whole when it is not long.
        kept: list[str] = []
        size = 0
        for line in lines:
            if size + len(line) > LISTED_CHARS:
                break
            kept.append(line)
            size += len(line) + 1
        if not kept:
            kept = [lines[0][:LISTED_CHARS] + "…"]
        out = [(head if n == 0 else hang) + line for n, line in enumerate(kept)]
        if len(kept) < len(lines):
            out.append(f"{hang}… ({len(lines)} lines; --full)")
        return out
    matching = [n for n, line in enumerate(lines) if match_spans(line, terms)]
    if not matching:
        first = lines[0] if lines[0].strip() else next((x for x in lines if x.strip()), "")
        more = f" … ({len(lines)} lines)" if len(lines) > 1 else ""
        return [head + _window(first, [], UNMATCHED_CHARS, mark)[0] + more]
    out = []
    picked = matching[:match_lines]
    for place, n in enumerate(picked):
        prefix = head if place == 0 else hang
        gap = "… " if (n > 0 and (place == 0 or picked[place - 1] != n - 1)) else ""
        shown, _ = _window(lines[n], terms, LINE_WINDOW, mark)
        out.append(_flag(prefix + gap + shown, True))
    rest = len(matching) - len(picked)
    if rest > 0:
        out.append(f"{hang}(+{rest} more matching line{'s' if rest > 1 else ''}; --full)")
    elif len(lines) > 1 and picked[-1] < len(lines) - 1 and not out[-1].endswith("…"):
        out[-1] += " …"
    return out


def _header(number: int, hit: SearchHit, now: float | None, full: bool) -> str:
    if full:
        priority = int(hit.priority)
        parts = [
            f"[{number}] {_stamp(hit.created_at)} ({relative_time(hit.created_at, now)})",
            f"session {str(hit.session_id or '')[:8]}",
            f"{hit.category}/{hit.type}",
            f"priority {priority} ({PRIORITY_NAMES.get(priority, '?')})",
        ]
    else:
        parts = [
            f"[{number}] {_stamp(hit.created_at, False)} ({relative_time(hit.created_at, now)})",
            f"session {str(hit.session_id or '')[:8]}",
            hit.type,
        ]
    if hit.agent_type or hit.agent_id:
        parts.append(f"subagent {hit.agent_type or hit.agent_id}")
    return " · ".join(parts)


def block_lines(
    number: int,
    block: Block,
    now: float | None = None,
    *,
    terms: list[Term] | None = None,
    full: bool = True,
    mark: tuple[str, str] | None = None,
    match_lines: int = MATCH_LINES,
) -> tuple[str, list[str]]:
    """The header line and the data lines of one block (``full``: every field whole)."""
    hit = block.hit
    lines: list[str] = []
    # Stored text is shown as it is: invisible and direction-changing characters as
    # escapes (before the marks go in: those are ours, and may be colour codes).
    for key, text in data_fields(str(hit.data)):
        # Compact: trailing blanks and carriage returns (Windows output) say nothing.
        if full:
            lines.extend(visible(line) for line in wrap_field(key, text))
        else:
            text = "\n".join(line.rstrip(" \t\r") for line in text.split("\n"))
            lines.extend(compact_field(visible(key), visible(text), terms or [], mark, match_lines))
    if block.count > 1:
        where = f" in {len(block.sessions)} sessions" if len(block.sessions) > 1 else ""
        lines.append(
            f"{INDENT}({block.count} identical events{where}, first {_stamp(block.first_at)})"
            if full
            else f"{INDENT}({block.count} events{where}, first {_stamp(block.first_at, False)})"
        )
    return visible(_header(number, hit, now, full)), lines


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
    full: bool = True,
    offset: int = 0,
    listing: bool = False,
) -> str:
    """The human output of a search: one block per match, then a footer line.

    ``blocks`` are the ones to show (from ``offset`` on), of ``total`` distinct matches
    found; ``capped`` when not every match was fetched: ``total`` is then the number of
    matching events, estimated. The output stops once it passes :data:`MAX_OUTPUT_BYTES`.
    """
    terms = [] if listing else analyze(query)
    pattern = highlighter([t.text for t in terms]) if color and full else None
    mark = COLOR_MARK if color else None
    out: list[str] = []
    size = 0
    shown = 0
    for number, block in enumerate(blocks, start=offset + 1):
        if size > MAX_OUTPUT_BYTES:
            break
        # The best hits show up to MATCH_LINES matching lines of a value, the others one.
        detail = MATCH_LINES if number - offset <= DETAILED_HITS else 1
        header, lines = block_lines(
            number, block, now, terms=terms, full=full, mark=mark, match_lines=detail
        )
        part = [click.style(header, bold=True) if color else header]
        for line in lines:
            if pattern is not None:
                line = pattern.sub(lambda m: click.style(m.group(0), fg="yellow", bold=True), line)
            part.append(line)
        part.append("")
        out.extend(part)
        size += sum(len(line.encode("utf-8", "backslashreplace")) + 1 for line in part)
        shown += 1
    out.append(
        footer(
            query,
            shown=shown,
            total=total,
            capped=capped,
            limit=limit,
            filters=filters,
            offset=offset,
            folded=sum(b.count for b in blocks[:shown]),
            stopped=shown < len(blocks),
            full=full,
            listing=listing,
        )
    )
    return "\n".join(out) + "\n"


def footer(
    query: str,
    *,
    shown: int,
    total: int,
    capped: bool,
    limit: int,
    filters: str,
    offset: int = 0,
    folded: int = 0,
    stopped: bool = False,
    full: bool = True,
    listing: bool = False,
) -> str:
    """The last line: how many matched, which were shown, how to get more."""
    subject = f"{_subject(query)}{filters}"
    events = f" ({folded} events, identical ones folded)" if folded > shown else ""
    order = "newest first" if listing else "best first"
    more = f"about {total}" if capped else str(total)
    end = offset + shown
    if shown == 0:
        return f"No matches shown {subject}: --offset {offset} is past the {more} matches."
    if end < total or capped or stopped:
        why = f"output stopped at {MAX_OUTPUT_BYTES // 1024} KB; " if stopped else ""
        return (
            f"{offset + 1}-{end} of {more} matches {subject}{events}, {order}; {why}"
            f"more: --offset {end}; narrow with {NARROW_HINT}"
            + ("" if full else "; every field: --full")
            + "."
        )
    noun = "match" if total == 1 else "matches"
    tail = "" if full else " Every field: --full."
    if offset:
        return f"{offset + 1}-{end} of {total} {noun} {subject}{events}, {order}.{tail}"
    return f"{total} {noun} {subject}{events}, {order}.{tail}"


def _subject(query: str) -> str:
    query = visible(query)
    if not query:
        return "among the newest events"
    # Quoted for reading, not repr(): a backslash in the query shows as itself.
    return f"for '{query}'" if "'" not in query else f'for "{query}"'


def describe_filters(**filters: str | list[str] | None) -> str:
    """`` (session x, category y)`` for the footer, or ``""``."""
    parts = [
        f"{name} {','.join(value) if isinstance(value, list) else value}"
        for name, value in filters.items()
        if value is not None
    ]
    return f" ({', '.join(parts)})" if parts else ""


def no_match(query: str, filters: str) -> str:
    """What an empty result says: nothing shares a word, and what to try."""
    text = f"No event shares a word with {_subject(query)[4:]}{filters}."
    advice = "Try other or fewer words: a file or function name, a command, an error."
    if filters:
        advice += " Or drop a filter."
    return f"{text} {advice}\n"


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


def json_output(hits: list[SearchHit]) -> tuple[bytes, int]:
    """The ``--json`` document of ``hits`` within :data:`MAX_JSON_BYTES`, and how many
    hits it holds."""
    items: list[bytes] = []
    size = 2
    for hit in hits:
        item = orjson.dumps(hit_json(hit), option=orjson.OPT_INDENT_2)
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


def _names(values: tuple[str, ...], known: set[str], option: str) -> list[str] | None:
    """``--type a,b --type c`` → ``[a, b, c]``, each checked; None when not given."""
    names = [v.strip() for value in values for v in value.split(",") if v.strip()]
    if not values:
        return None
    wrong = [n for n in names if n not in known]
    if wrong or not names:
        shown = ", ".join(sorted(known)) if len(known) < 20 else "see --help"
        raise click.BadParameter(
            f"{wrong[0] if wrong else ''!r} is not one of {shown}", param_hint=option
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
    categories = _names(category, set(CATEGORIES), "'--category'")
    types = _names(type_, set(TYPES), "'--type'")
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
                "client": CLIENTS[client] if client else None,
            }
            listing = not parse_query(text)
            if as_json:
                wanted = offset + min(limit, MAX_JSON_HITS)
                hits = find(store, text, limit=wanted, **options)[offset:]
                output, kept = json_output(hits)
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
            # Every match fetched: the items are counted; else the events matching are
            # (an estimate, when the store ranked the newest matches of a common word).
            complete = not fetched.more and len(fetched) >= fetched.total
            output_text = render(
                text,
                blocks[offset : offset + limit],
                total=len(blocks) if complete else max(fetched.total, len(blocks)),
                capped=not complete,
                limit=limit,
                filters=filters,
                color=color_enabled(),
                full=full,
                offset=offset,
                listing=listing,
            )
        data = byte_safe(output_text)
        click.echo(data, nl=False)
        record_output(store, len(click.unstyle(output_text).encode("utf-8", "backslashreplace")))
