"""Search (``Store.search``): the query language, FTS5 and LIKE matching, ranking, snippets.

Not imported by hook processes: ``Store.search`` imports this module on its first call.

What is searched is the text a person reads: the values of each event's JSON data, one
per line, unescaped (the view ``events_text``, see ``migrations.values_sql``): no key
names, no escape sequences. A query is split into terms by :func:`parse_query`; an
event matches when its text holds every term (substring, case-insensitive).

Terms of three or more characters go to the FTS5 trigram index, shorter ones to LIKE on
its hits. SQLite walks the matches newest first (the session and ``since`` filters
become a rowid range, :func:`_id_bounds`) and stops after :data:`SEARCH_CANDIDATES`
that pass the filters; those are ranked by :func:`blend` of BM25 relevance and age,
ties to the newer event. (BM25's IDF still counts every match of each term once:
~0.1-0.4 s for terms found in a fifth of a million events.) Without FTS5 (or on any
FTS error), and for the events older than the index (a large store upgraded from
schema 1 indexes only its newest events), the same terms run through LIKE over the
same values, ranked by :func:`like_relevance`. An empty query lists the newest events
that pass the filters. Each hit's ``snippet`` is a window of those values
(:func:`make_snippet`).
"""

from __future__ import annotations

from ctxmode.events import SessionEvent
from ctxmode.migrations import _sqlite3
from ctxmode.redact import cut_at, cut_from, merge_spans
from ctxmode.store.values import (
    EVENT_COLUMNS,
    EVENT_FIELDS,
    as_text,
    event_from_row,
    parse_iso,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ctxmode.store.connection import Connection

# Rank the newest SEARCH_CANDIDATES matches (see the module docstring).
SEARCH_CANDIDATES = 1000
RECENCY_WEIGHT = 0.25
RECENCY_HALF_LIFE_DAYS = 7.0
SNIPPET_CHARS = 160
SNIPPET_MARK = ("**", "**")

_E_COLUMNS = ", ".join("e." + name.strip() for name in EVENT_COLUMNS.split(","))


class SearchHit(SessionEvent):
    """A stored event plus its blended ``rank`` (higher is better) and a ``snippet``."""

    __slots__ = ("rank", "snippet")

    def __init__(self, event: SessionEvent, rank: float, snippet: str) -> None:
        for name in EVENT_FIELDS:
            setattr(self, name, getattr(event, name))
        self.rank = rank
        self.snippet = snippet

    def __repr__(self) -> str:
        return f"SearchHit({self.id!r}, {self.type!r}, rank={self.rank:.4f}, {self.snippet!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SearchHit):
            return NotImplemented
        return self.as_dict() == other.as_dict()

    __hash__ = None

    def as_dict(self) -> dict[str, object]:
        result = {name: getattr(self, name) for name in EVENT_FIELDS}
        result["rank"] = self.rank
        result["snippet"] = self.snippet
        return result


# ---------------------------------------------------------------- the query


def parse_query(query: str) -> list[str]:
    """Split a user query into terms: whitespace separates, ``"…"`` keeps a phrase together.

    Every other character (``* ( ) - : ^ +`` …) is literal: terms are quoted before they
    reach FTS5, so nothing in a query can be FTS syntax.
    """
    terms: list[str] = []
    buf: list[str] = []
    quoted = False

    def flush() -> None:
        term = "".join(buf).replace("\x00", "").strip()
        buf.clear()
        if term and term not in terms:
            terms.append(term)

    for char in query:
        if char == '"':
            flush()
            quoted = not quoted
        elif char.isspace() and not quoted:
            flush()
        else:
            buf.append(char)
    flush()
    return terms


def _fts_string(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


# ---------------------------------------------------------------- snippets and ranking


def _fold(text: str) -> str:
    # lower() keeps the length for almost all text; when it does not, offsets into the
    # folded string would be wrong, so match case-sensitively instead.
    folded = text.lower()
    return folded if len(folded) == len(text) else text


def _spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    folded = _fold(text)
    spans: list[tuple[int, int]] = []
    for term in terms:
        needle = _fold(term) if len(_fold(term)) == len(term) else term
        start = folded.find(needle)
        while start >= 0 and needle:
            spans.append((start, start + len(needle)))
            start = folded.find(needle, start + len(needle))
    return merge_spans(spans)


def make_snippet(
    text: str,
    terms: Sequence[str],
    *,
    width: int = SNIPPET_CHARS,
    mark: tuple[str, str] = SNIPPET_MARK,
) -> str:
    """A window of ``text`` around the first match, each match wrapped in ``mark``."""
    spans = _spans(text, terms)
    first = spans[0][0] if spans else 0
    start = max(0, min(first - width // 3, len(text) - width))
    end = min(len(text), start + width)
    # A window never splits a [REDACTED:…] mask: it widens to hold the whole of one.
    start, end = cut_at(text, start), cut_from(text, end)
    out: list[str] = ["…"] if start > 0 else []
    cursor = start
    for span_start, span_end in spans:
        if span_end <= start or span_start >= end:
            continue
        span_start, span_end = max(span_start, start), min(span_end, end)
        out.append(text[cursor:span_start])
        out.append(mark[0] + text[span_start:span_end] + mark[1])
        cursor = span_end
    out.append(text[cursor:end])
    if end < len(text):
        out.append("…")
    return "".join(out)


def like_relevance(text: str, terms: Sequence[str], average_length: float) -> float:
    """BM25's term-frequency part (k1=1.2, b=0.75) over substring counts, for the LIKE path."""
    if not terms:
        return 0.0
    folded = _fold(text)
    norm = 1.2 * (0.25 + 0.75 * len(text) / max(average_length, 1.0))
    score = 0.0
    for term in terms:
        needle = _fold(term)
        frequency = folded.count(needle) if needle else 0
        score += frequency * 2.2 / (frequency + norm)
    return score


def blend(relevance: float, age_seconds: float) -> float:
    """The search rank: ``relevance × (1 + 0.25 × 0.5^(age_days / 7))``.

    Relevance dominates (the recency factor is at most 1.25); at equal relevance a
    newer event ranks higher (the factor falls strictly with age: 1.25 for the newest
    candidate, 1.125 a week older, 1.0625 two weeks older). ``age`` is measured from
    the newest candidate, not the clock, so a ranking is reproducible.
    """
    fresh: float = 0.5 ** (max(age_seconds, 0.0) / 86400.0 / RECENCY_HALF_LIFE_DAYS)
    return relevance * (1.0 + RECENCY_WEIGHT * fresh)


def _rank(rows: Sequence[Any], terms: Sequence[str], limit: int) -> list[SearchHit]:
    if not rows:
        return []
    times = [parse_iso(row[11]) for row in rows]
    newest = max(times)
    scored = sorted(
        (
            (blend(float(row[12]), newest - stamp), row[0], row)
            for row, stamp in zip(rows, times, strict=True)
        ),
        key=lambda item: (-item[0], -item[1]),
    )
    return [
        SearchHit(event_from_row(row), rank, make_snippet(str(row[13] or ""), terms))
        for rank, _, row in scored[: max(limit, 0)]
    ]


# ---------------------------------------------------------------- the search


def find(
    store: Connection,
    query: str,
    session_id: str | None,
    category: str | None,
    type_: str | None,
    since: str | None,
    limit: int,
    worktree: str | None = None,
    client: Sequence[str | None] | None = None,
) -> list[SearchHit]:
    """``Store.search``: the ranked hits (see the module docstring)."""
    conn = store.conn
    terms = parse_query(as_text(query))
    long_terms = [t for t in terms if len(t) >= 3]
    candidates = max(SEARCH_CANDIDATES, limit)
    where: list[str] = []
    params: list[object] = []
    bounds = _id_bounds(conn, session_id, since)
    if bounds is None:
        return []
    low, high = bounds
    text = "t.text"  # events_text: the values of the event's data (migrations.m002)
    for column, value in (("session_id", session_id), ("category", category), ("type", type_)):
        if value is not None:
            where.append(f"e.{column} = ?")
            params.append(as_text(value))
    if since is not None:
        where.append("e.created_at >= ?")
        params.append(since)
    if worktree is not None:
        # The worktrees of a repository share its store: the sessions of one of them.
        where.append("e.session_id IN (SELECT session_id FROM session_meta WHERE worktree = ?)")
        params.append(as_text(worktree))
    if client is not None:
        # The sessions of one client: session_meta.client among these values (None: a
        # row that names no client, which the caller knows the meaning of).
        names = [as_text(value) for value in client if value is not None]
        test = [f"client IN ({', '.join('?' * len(names))})"] if names else []
        if None in client:
            test.append("client IS NULL")
        where.append(
            "e.session_id IN (SELECT session_id FROM session_meta WHERE "
            + (" OR ".join(test) or "0")
            + ")"
        )
        params.extend(names)
    rows: list[Any] = []
    like_high = high  # LIKE covers [low, like_high]: what the index does not
    if long_terms and store.fts_enabled():
        # Short terms cannot use the trigram index: LIKE checks them on the FTS hits.
        fts_where = list(where)
        fts_params = list(params)
        for term in terms:
            if len(term) < 3:
                fts_where.append(f"{text} LIKE ? ESCAPE '\\'")
                fts_params.append(_like_pattern(term))
        try:
            fts_from = _fts_from_id(conn, high)
            start = max(low, fts_from)
            if start <= high:
                rows = conn.execute(
                    f"SELECT {_E_COLUMNS}, -bm25(events_fts), {text} FROM events_fts "
                    "JOIN session_events e ON e.id = events_fts.rowid "
                    "JOIN events_text t ON t.id = e.id "
                    "WHERE events_fts MATCH ? AND events_fts.rowid BETWEEN ? AND ? "
                    + "".join(f" AND {w}" for w in fts_where)
                    + " ORDER BY events_fts.rowid DESC LIMIT ?",
                    [
                        " ".join(_fts_string(t) for t in long_terms),
                        start,
                        high,
                        *fts_params,
                        candidates,
                    ],
                ).fetchall()
            like_high = min(high, fts_from - 1)
        except _sqlite3.OperationalError:
            rows = []  # e.g. this SQLite lacks fts5: LIKE gives the same hits
    if low <= like_high:
        like_where = list(where)
        like_params = list(params)
        for term in terms:
            like_where.append(f"{text} LIKE ? ESCAPE '\\'")
            like_params.append(_like_pattern(term))
        found = conn.execute(
            f"SELECT {_E_COLUMNS}, 0.0, {text} "
            "FROM session_events e JOIN events_text t ON t.id = e.id "
            "WHERE e.id BETWEEN ? AND ?"
            + "".join(f" AND {w}" for w in like_where)
            + " ORDER BY e.id DESC LIMIT ?",
            [low, like_high, *like_params, candidates],
        ).fetchall()
        if found:
            average = sum(len(row[13] or "") for row in found) / len(found)
            rows += [
                (*row[:12], like_relevance(row[13] or "", terms, average), row[13]) for row in found
            ]
    return _rank(rows, terms, limit)


def _fts_from_id(conn: _sqlite3.Connection, high: int) -> int:
    """The smallest event id in the FTS index: every event from there on is in it,
    none before it (a large store upgraded from schema 1 indexed only its newest
    events; see migrations.install_fts). ``high + 1`` for an empty index."""
    row = conn.execute("SELECT rowid FROM events_fts ORDER BY rowid LIMIT 1").fetchone()
    return int(row[0]) if row else high + 1


def _id_bounds(
    conn: _sqlite3.Connection, session_id: str | None, since: str | None
) -> tuple[int, int] | None:
    """The id range that can hold matches; None when it is empty.

    FTS5 can restrict a rowid range for free, which turns the session and time
    filters into index seeks instead of a walk over every match.
    """
    if session_id is not None:
        sid = as_text(session_id)
        # Two subqueries, not MIN(id), MAX(id) side by side: SQLite answers a lone
        # MIN or MAX from the index edge but scans for the pair.
        row = conn.execute(
            "SELECT (SELECT MIN(id) FROM session_events WHERE session_id = ?), "
            "(SELECT MAX(id) FROM session_events WHERE session_id = ?)",
            (sid, sid),
        ).fetchone()
    else:
        row = conn.execute(
            "SELECT (SELECT MIN(id) FROM session_events), (SELECT MAX(id) FROM session_events)"
        ).fetchone()
    if row is None or row[0] is None:
        return None
    low, high = int(row[0]), int(row[1])
    if since is not None:
        low = _first_id_since(conn, since, low, high)
        if low > high:
            return None
    return low, high


def _first_id_since(conn: _sqlite3.Connection, since: str, low: int, high: int) -> int:
    # Ids grow with created_at (one clock, one writer at a time), so a binary
    # search over ids finds the first event at or after ``since`` in ~20 lookups.
    # The exact created_at filter still applies on top.
    lo, hi = low, high + 1
    while lo < hi:
        mid = (lo + hi) // 2
        row = conn.execute(
            "SELECT id, created_at FROM session_events WHERE id >= ? ORDER BY id LIMIT 1",
            (mid,),
        ).fetchone()
        if row is None or row[1] >= since:
            hi = mid
        else:
            lo = int(row[0]) + 1
    return lo
