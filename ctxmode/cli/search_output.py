r"""How ``ctxmode search`` shows its hits: the compact output made for a model (the lines
that matched, flagged), ``--full``, the last line, and the folding of identical events.

Pure formatting over :class:`ctxmode.store.SearchHit`\ s: no store, no click but its
``style`` for colour. The command: ``cli/search.py``.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

import click
import orjson

from ctxmode.cli.common import relative_time
from ctxmode.cli.search_lines import INDENT, MATCH_LINES, compact_field, cut_around
from ctxmode.events import SessionEvent
from ctxmode.redact import visible
from ctxmode.store import SearchHit, analyze
from ctxmode.store.query import Term, match_spans, words_of

WRAP_WIDTH = 100
PRIORITY_NAMES = {1: "critical", 2: "high", 3: "normal", 4: "low", 5: "minor"}
NARROW_HINT = "--session ID, --type T or --since 24h"
# The best line of a detailed hit's value is followed by its next this-many lines that
# hold a letter or a digit (within twice as many), as `grep -A` does: what a question's
# words find is often a heading, and its answer the line below ("Installed 4 packages",
# then "+ flake8==7.3.0"; a traceback's last frame, then its error).
AFTER_LINES = 2
# Of the best hit only (sized, like CONTEXT_*, to keep the median under 3 KB: with replies
# weighed as any event, the best two took the median of one set's output to 3.2 KB).
AFTER_HITS = 1
DETAILED_HITS = 3
# No search prints more than this (an agent's --limit 1000000 must not fill its
# context): the output stops after the hit that reaches it and says how to go on.
MAX_OUTPUT_BYTES = 32 * 1024
# The best this-many hits show the events just before and after them (Store.neighbours),
# one line each of at most CONTEXT_CHARS, marked ↑ (before) and ↓ (after): what a
# question names and what answers it are often neighbours (the restart and the port it
# took, a commit's message and its hash). Sized on the retrieval benchmark to keep the
# default output's median under 3 KB (--json gives every hit's neighbours whole).
CONTEXT_HITS = 1
CONTEXT_SPAN = 1
CONTEXT_CHARS = 90
CONTEXT_MARKS = ("↑", "↓")
# A short field of a neighbour (an exit code, a path) is shown whole up to this.
CONTEXT_SHORT = 48
# Left out of a search's compact output, for the room the values that answer questions
# need (``--full`` and a listing have them): a success's exit code, and a shell call's
# description (the agent's words for what its command line shows) unless it matched
# the query, a neighbour's in any case.
UNSAID_FIELDS = frozenset({("shell_call", "description")})
UNSAID_VALUES = frozenset({("exit", "0")})
# The fields whose verdict line (how the command ended) a hit shows: a failed command's
# in every hit, a successful one's in the detailed hits only.
VERDICT_FIELDS = frozenset({("shell_call", "output"), ("tool_error", "error")})
COLOR_MARK = ("\x1b[33m\x1b[1m", "\x1b[0m")


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


def as_written(fields: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A file event's fields for the compact output: the path as the session wrote it
    (``given``, when it differs from the stored one) in place of the stored path, under
    its name: one line, in the form the agent saw and quotes."""
    given = [text for key, text in fields if key == "given"]
    if not given:
        return fields
    return [
        ("path", given[0]) if key == "path" else (key, text)
        for key, text in fields
        if key != "given"
    ]


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
    """``2026-12-02 14:02:07 UTC``; without ``seconds`` (the compact output, where every
    time is UTC) ``2026-12-02 14:02``."""
    if not iso:
        return "-"
    return f"{iso[:10]} {iso[11:19]} UTC" if seconds else f"{iso[:10]} {iso[11:16]}"


def restates(event: SessionEvent, hit: SearchHit) -> bool:
    """Whether ``event``, beside ``hit``, comes from the same call and says nothing the
    hit does not (a failed command's ``tool_error`` beside its ``shell_call``): nearly
    all its words are the hit's."""
    if not event.tool_use_id or event.tool_use_id != hit.tool_use_id:
        return False
    words = set(words_of(_values(event).lower()))
    return len(words - set(words_of(_values(hit).lower()))) <= max(2, len(words) // 5)


def _values(event: SessionEvent) -> str:
    return "\n".join(text for _, text in data_fields(str(event.data)))


def neighbour_line(
    offset: int, event: SessionEvent, terms: list[Term], mark: tuple[str, str] | None = None
) -> str:
    """One line for an event beside a hit: ``↑ type: key: value · key: value``, each
    value on one line (``⏎`` for its line breaks) and the whole within
    :data:`CONTEXT_CHARS`: short fields whole, the room left shared by the long ones,
    each cut around its first match of the query (its start when none)."""
    head = f"{INDENT}{CONTEXT_MARKS[offset > 0]} {event.type}: "
    fields = [
        (key, " ⏎ ".join(part.strip() for part in text.split("\n") if part.strip()))
        for key, text in as_written(data_fields(str(event.data)))
    ]
    fields = [
        (key, text)
        for key, text in fields
        if text and (event.type, key) not in UNSAID_FIELDS and (key, text) not in UNSAID_VALUES
    ]
    room = CONTEXT_CHARS - len(head) - sum(len(key) + 5 for key, _ in fields)
    whole = max(CONTEXT_SHORT, room // max(len(fields), 1))
    short = [len(text) <= whole for _, text in fields]
    rest = room - sum(len(text) for (_, text), fits in zip(fields, short, strict=True) if fits)
    share = max(rest, 0) // max(short.count(False), 1)
    pieces = []
    for (key, text), fits in zip(fields, short, strict=True):
        width = len(text) if fits or len(text) <= share else max(share, 24)
        text = cut_around(text, terms, width, mark)[0] if terms or width < len(text) else text
        pieces.append(f"{key}: {text}" if key else text)
    return visible(head + " · ".join(pieces))


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
        # Compact: no age. The model has the date; the room goes to what answers.
        parts = [
            f"[{number}] {_stamp(hit.created_at, False)}",
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
    after_lines: int = 0,
) -> tuple[str, list[str]]:
    """The header line and the data lines of one block (``full``: every field whole)."""
    hit = block.hit
    lines: list[str] = []
    # Stored text is shown as it is: invisible and direction-changing characters as
    # escapes (before the marks go in: those are ours, and may be colour codes).
    fields = data_fields(str(hit.data))
    if not full:
        fields = as_written(fields)
    # A command's description is shown only when nothing else of the call matched.
    other_match = (
        not full
        and terms is not None
        and any(
            (hit.type, key) not in UNSAID_FIELDS and match_spans(text, terms)
            for key, text in fields
        )
    )
    failing = hit.type == "tool_error" or any(
        key == "exit" and text not in ("0", "") for key, text in fields
    )
    for key, text in fields:
        # Compact: trailing blanks and carriage returns (Windows output) say nothing.
        if full:
            lines.extend(visible(line) for line in wrap_field(key, text))
        elif terms and (
            (key, text) in UNSAID_VALUES
            or ((hit.type, key) in UNSAID_FIELDS and (other_match or not match_spans(text, terms)))
        ):
            continue
        else:
            text = "\n".join(line.rstrip(" \t\r") for line in text.split("\n"))
            lines.extend(
                compact_field(
                    visible(key),
                    visible(text),
                    terms or [],
                    mark,
                    match_lines,
                    after_lines,
                    verdict=failing
                    if (hit.type, key) in VERDICT_FIELDS and (failing or match_lines > 1)
                    else None,
                )
            )
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
    context: dict[int, list[tuple[int, SessionEvent]]] | None = None,
    terms: list[Term] | None = None,
) -> str:
    """The human output of a search: one block per match, then a footer line.

    ``blocks`` are the ones to show (from ``offset`` on), of ``total`` distinct matches
    found; ``capped`` when not every match was fetched: ``total`` is then the number of
    matching events, estimated. ``terms``: the query's, as the search weighed them (else
    analysed here, each word weighing the same). The output stops once it passes
    :data:`MAX_OUTPUT_BYTES`.
    """
    terms = [] if listing else (terms or analyze(query))
    pattern = highlighter([t.text for t in terms]) if color and full else None
    mark = COLOR_MARK if color else None
    out: list[str] = []
    size = 0
    shown = 0
    # A neighbour that is itself a hit shown here, or already shown beside another, is
    # not repeated.
    seen = {block.hit.id for block in blocks}
    for number, block in enumerate(blocks, start=offset + 1):
        if size > MAX_OUTPUT_BYTES:
            break
        # The best hits show up to MATCH_LINES matching lines of a value (the best one,
        # the lines after the best of them too), the others one line.
        detail = MATCH_LINES if number - offset <= DETAILED_HITS else 1
        header, lines = block_lines(
            number,
            block,
            now,
            terms=terms,
            full=full,
            mark=mark,
            match_lines=detail,
            after_lines=AFTER_LINES if number - offset <= AFTER_HITS else 0,
        )
        part = [click.style(header, bold=True) if color else header]
        if context and not full and number - offset <= CONTEXT_HITS:
            beside = [
                (n, e)
                for n, e in context.get(int(block.hit.id or 0), [])
                if e.id not in seen and not restates(e, block.hit)
            ]
            seen.update(e.id for _, e in beside)
            before = [neighbour_line(n, e, terms, mark) for n, e in beside if n < 0]
            after = [neighbour_line(n, e, terms, mark) for n, e in beside if n > 0]
            lines = before + lines + after
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
    """The last line: how many matched, which were shown, how to get more (the compact
    output of a search does not repeat the query: its asker has it)."""
    echo = _subject(query) if full or listing else ""
    subject = (f" {echo}" if echo else "") + filters
    events = f" ({folded} events, identical ones folded)" if folded > shown else ""
    order = "newest first" if listing else "best first"
    more = f"about {total}" if capped else str(total)
    end = offset + shown
    if shown == 0:
        return f"No matches shown{subject}: --offset {offset} is past the {more} matches."
    if end < total or capped or stopped:
        why = f"output stopped at {MAX_OUTPUT_BYTES // 1024} KB; " if stopped else ""
        return (
            f"{offset + 1}-{end} of {more} matches{subject}{events}, {order}; {why}"
            f"more: --offset {end}; narrow with {NARROW_HINT}"
            + ("" if full else "; every field: --full")
            + "."
        )
    noun = "match" if total == 1 else "matches"
    tail = "" if full else " Every field: --full."
    if offset:
        return f"{offset + 1}-{end} of {total} {noun}{subject}{events}, {order}.{tail}"
    return f"{total} {noun}{subject}{events}, {order}.{tail}"


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
