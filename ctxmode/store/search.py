"""Search (``Store.search``): what a query asks for, the candidates, their ranking, snippets.

Not imported by hook processes: ``Store.search`` imports this module on its first call.

What is searched is the text a person reads: the values of each event's JSON data, one
per line, unescaped (the view ``events_text``, see ``migrations.values_sql``): no key
names, no escape sequences.

**The query** (:func:`analyze`). An agent asks after a compaction in its own words: a few
keywords or a sentence ("which port did the dev server take?"). The query becomes terms:

- *words*: each word, lower-cased; question and function words (``data/stopwords.txt``)
  carry no weight, so a sentence ranks like its keywords. A word matches a word of the
  same stem (porter: "migrations" finds "migrated"); one that no event holds as a word
  is looked for as part of words ("snap" finds "snapshot", "assertion" finds
  "AssertionError"); one that at most :data:`SYNONYM_MAX_EVENTS` events hold also by
  its synonyms (``data/synonyms.txt``: "virtualenv" finds "venv");
- *exact* terms, matched as case-insensitive substrings: an identifier, path, flag,
  version or error code (a token with inner punctuation or digits among letters:
  ``src/app.py``, ``--force``, ``E0425``, ``localhost:3000``), a "quoted phrase", and
  the whole query as typed. An identifier's words count too, at a lower weight.

**The candidates.** Every event that shares a term with the query (OR, never AND). Per
term, the newest :data:`TERM_CANDIDATES` matches (word terms from the word index
``events_words``, exact ones from the trigram index ``events_fts``), and as many again
of the events holding *all* the words (and all but one, for three to six words), so
that an old event holding several of them is not crowded out by newer events holding
one. How many events hold each term (exactly, or estimated from how far back its
newest matches reach) gives the term its weight: BM25's IDF.

**The ranking.** The candidates are scored by the weights of the terms they hold; the
best :data:`REFINE` are read and scored again on their text (BM25: each term's count
in the event, against the event's length; plus the weight of the terms its best line
holds, :data:`LINE_WEIGHT`), times a recency factor (:func:`blend`). Every type is
weighed alike: a reply says in words what its calls showed ("All 8 endpoint tests pass",
"17 files touch it"), which is what a question is often after (a reply ranked below the
calls at equal relevance, ×0.7, lost 18 hits over seven question sets and 7 on an eighth
that was never read).
Events holding more of the query's exact phrases and rare identifiers (held by at most
:data:`TIER_MAX_EVENTS` events) come first; recency breaks ties.

Long on purpose (~650 lines): finding the candidates and scoring them is one pass over
one structure (``_Search``), read best top to bottom; the query itself is ``query.py``.

Events older than an index (a large store upgraded from an older schema indexes only
its newest events) are found through the older index, and below both by ``LIKE`` over
the same values (a store without FTS5: ``LIKE`` alone), scored the same way on their
text. An empty query lists the newest events that pass the filters.
"""

from __future__ import annotations

import math

from ctxmode.events import SessionEvent
from ctxmode.migrations import _sqlite3
from ctxmode.store.query import (
    KIND_BOOST,
    MIN_EXACT,
    SHAPE_BOOST,
    TIER_MAX_EVENTS,
    Term,
    analyze,
    asked_kinds,
    asked_shapes,
    fold,
    make_snippet,
    words_of,
)
from ctxmode.store.values import (
    EVENT_COLUMNS,
    EVENT_FIELDS,
    as_text,
    event_from_row,
    events_from_rows,
    parse_iso,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from ctxmode.store.connection import Connection

# The newest matches taken per term (and per all-words query) from an index.
TERM_CANDIDATES = 1000
# The best this-many candidates of the first scoring are read and scored on their text.
REFINE = 200
# The newest events a LIKE scan (no index) reads.
LIKE_CANDIDATES = 2000
# Kept for callers that size a request on it (the CLI): the candidates a search ranks.
SEARCH_CANDIDATES = TERM_CANDIDATES
# Words in more events than this are not searched together (see _Search.together).
GROUP_MAX_MATCHES = 50_000
# BM25's term-frequency saturation and length normalisation.
K1 = 1.2
B = 0.75
# A query word held by at most this many events also looks for its synonyms
# (``data/synonyms.txt``): a word the session used more is its own word for the thing.
SYNONYM_MAX_EVENTS = 3
RECENCY_WEIGHT = 0.25
# The best line's share of the relevance: the weights of the query's terms found on one
# line of the event (a value: a command, its description, one line of output) added at
# this factor, so that the terms together, as a question puts them, count for more
# than the same terms scattered over a long event.
LINE_WEIGHT = 0.5
RECENCY_HALF_LIFE_DAYS = 7.0

_E_COLUMNS = ", ".join("e." + name.strip() for name in EVENT_COLUMNS.split(","))
_TEXT = 12  # the text's place in a row of _E_COLUMNS + text (after created_at, 11)


class SearchHit(SessionEvent):
    """A stored event plus its ``rank`` (higher is better) and a ``snippet``."""

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


class SearchHits(list[SearchHit]):
    """The hits of a search, best first, with how many events matched: ``total``, a lower
    bound when ``more`` (an index gave its newest matches only; ``total`` then counts
    the events estimated to hold the most common term)."""

    total: int = 0
    more: bool = False
    # The query's terms, each with the IDF this search measured (how the output picks
    # the lines of a hit that hold the most of the query).
    terms: list[Term] = []  # noqa: RUF012 (replaced, never mutated, per instance)


def blend(relevance: float, age_seconds: float) -> float:
    """The search rank: ``relevance × (1 + 0.25 × 0.5^(age_days / 7))``.

    Relevance dominates (the recency factor is at most 1.25); at equal relevance a
    newer event ranks higher (the factor falls strictly with age: 1.25 for the newest
    candidate, 1.125 a week older, 1.0625 two weeks older). ``age`` is measured from
    the newest candidate, not the clock, so a ranking is reproducible.
    """
    fresh: float = 0.5 ** (max(age_seconds, 0.0) / 86400.0 / RECENCY_HALF_LIFE_DAYS)
    return relevance * (1.0 + RECENCY_WEIGHT * fresh)


def idf(matching: float, total: float) -> float:
    """BM25's inverse document frequency: rare terms weigh more, none weighs nothing."""
    total = max(total, matching, 1.0)
    return math.log(1.0 + (total - matching + 0.5) / (matching + 0.5))


# ---------------------------------------------------------------- the search


class _Filters:
    """The SQL that narrows a search to the caller's sessions, kinds and times."""

    __slots__ = ("params", "where")

    def __init__(self) -> None:
        self.where: list[str] = []
        self.params: list[object] = []

    def add(self, sql: str, *params: object) -> None:
        self.where.append(sql)
        self.params.extend(params)

    def sql(self) -> str:
        return "".join(f" AND {w}" for w in self.where)


def _values(value: str | Sequence[str] | None) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [as_text(value)]
    return [as_text(v) for v in value]


def _filters(
    session_id: str | None,
    category: str | Sequence[str] | None,
    type_: str | Sequence[str] | None,
    since: str | None,
    worktree: str | None,
    client: Sequence[str | None] | None,
) -> _Filters:
    f = _Filters()
    if session_id is not None:
        f.add("e.session_id = ?", as_text(session_id))
    for column, value in (("category", category), ("type", type_)):
        values = _values(value)
        if values is not None:
            f.add(f"e.{column} IN ({', '.join('?' * len(values))})", *values)
    if since is not None:
        f.add("e.created_at >= ?", since)
    if worktree is not None:
        # The worktrees of a repository share its store: the sessions of one of them.
        f.add(
            "e.session_id IN (SELECT session_id FROM session_meta WHERE worktree = ?)",
            as_text(worktree),
        )
    if client is not None:
        # The sessions of one client: session_meta.client among these values (None: a
        # row that names no client, which the caller knows the meaning of).
        names = [as_text(value) for value in client if value is not None]
        test = [f"client IN ({', '.join('?' * len(names))})"] if names else []
        if None in client:
            test.append("client IS NULL")
        f.add(
            "e.session_id IN (SELECT session_id FROM session_meta WHERE "
            + (" OR ".join(test) or "0")
            + ")",
            *names,
        )
    return f


def _fts_phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _json_plain(text: str) -> bool:
    """Whether JSON writes ``text`` unchanged inside a string (no escapes): printable
    ASCII without quote or backslash."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def _like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class _Matches:
    """One index query's matches: the ids, newest first, and whether it stopped at its
    cap (then more exist: the count is an estimate)."""

    __slots__ = ("capped", "estimate", "ids")

    def __init__(self, ids: list[int], cap: int, low: int, high: int) -> None:
        self.ids = ids
        self.capped = len(ids) >= cap
        if self.capped and ids:
            # The newest ``cap`` matches reach back to ids[-1]: as dense below it.
            reach = max(high - ids[-1] + 1, 1)
            self.estimate = len(ids) * (high - low + 1) / reach
        else:
            self.estimate = float(len(ids))


class _Search:
    """One search: the terms, the id ranges of the indexes, the candidates found."""

    def __init__(
        self, store: Connection, terms: list[Term], filters: _Filters, query: str = ""
    ) -> None:
        self.conn = store.conn
        self.terms = terms
        self.shapes = asked_shapes(query)
        self.filters = filters
        self.joined = bool(filters.where)
        # id → indices of the terms an index showed it to hold
        self.found: dict[int, set[int]] = {}
        self.rows: dict[int, Any] = {}  # id → event row + text (LIKE reads them whole)
        self.estimates = [0.0] * len(terms)
        self.capped = [False] * len(terms)
        self.more = False
        self.span = 0

    def index_query(self, index: str, match: str, low: int, high: int) -> _Matches | None:
        """The newest matches of ``match`` in ``index`` between ids ``low`` and ``high``
        that pass the filters; None when FTS5 refuses the query."""
        if low > high:
            return _Matches([], 1, low, high)
        if self.joined:
            sql = (
                f"SELECT f.rowid FROM {index} f JOIN session_events e ON e.id = f.rowid "
                f"WHERE {index} MATCH ? AND f.rowid BETWEEN ? AND ?{self.filters.sql()} "
                "ORDER BY f.rowid DESC LIMIT ?"
            )
            params: list[object] = [match, low, high, *self.filters.params, TERM_CANDIDATES]
        else:
            sql = (
                f"SELECT rowid FROM {index} WHERE {index} MATCH ? AND rowid BETWEEN ? AND ? "
                "ORDER BY rowid DESC LIMIT ?"
            )
            params = [match, low, high, TERM_CANDIDATES]
        try:
            ids = [int(row[0]) for row in self.conn.execute(sql, params).fetchall()]
        except _sqlite3.OperationalError:
            return None
        return _Matches(ids, TERM_CANDIDATES, low, high)

    def note(self, matches: _Matches, held: Iterable[int], count_for: int | None) -> None:
        """Record that each match holds the terms ``held``; count it for one term."""
        held = tuple(held)
        for rowid in matches.ids:
            slot = self.found.get(rowid)
            if slot is None:
                self.found[rowid] = set(held)
            else:
                slot.update(held)
        if count_for is not None:
            self.estimates[count_for] += matches.estimate
            self.capped[count_for] = self.capped[count_for] or matches.capped
        self.more = self.more or matches.capped

    def words_range(self, low: int, high: int) -> None:
        """Candidates from the word index (words) and the trigram index (exact terms)."""
        word_ids = [i for i, t in enumerate(self.terms) if t.kind == "word"]
        with_hits: list[int] = []
        held_by = [0] * len(self.terms)  # how many events each word's index query found
        for i in word_ids:
            term = self.terms[i]
            if not self.stand_in_needed(i, held_by):
                continue
            found = self.index_query("events_words", _fts_phrase(term.text), low, high)
            if found is not None and found.ids:
                held_by[i] = len(found.ids)
                self.note(found, (i,), i)
                if term.synonym_of < 0:
                    with_hits.append(i)  # (a stand-in is no word an event must hold too)
            elif term.synonym_of >= 0:
                term.weight = 0.0  # a stand-in is a word, never part of one ("ts", "rm")
            else:
                # No event holds it as a word: look inside words ("snap", "assertion").
                term.substring = True
                if len(term.text) >= MIN_EXACT:
                    self.trigram(i, term.text, low, high)
        for i, term in enumerate(self.terms):
            if term.kind == "exact":
                self.exact(i, term, low, high)
        self.together([i for i in with_hits if self.terms[i].weight >= 1.0], low, high)

    def stand_in_needed(self, i: int, held_by: list[int]) -> bool:
        """Whether term ``i`` is looked for: any of the query's own terms, and a synonym
        of a word that at most :data:`SYNONYM_MAX_EVENTS` events hold (``held_by``: how
        many each term's lookup found). One not needed weighs nothing from here on."""
        term = self.terms[i]
        if term.synonym_of < 0 or held_by[term.synonym_of] <= SYNONYM_MAX_EVENTS:
            return True
        term.weight = 0.0  # the session's own word for it: the stand-in would add noise
        return False

    def exact(self, i: int, term: Term, low: int, high: int) -> None:
        """An identifier or phrase: the events holding its words in a row (the word
        index), else, for part of a word ("gamma_4", "src/gam"), the trigram index.
        Which of them hold it exactly is decided on their text."""
        parts = words_of(term.text)
        if parts:
            found = self.index_query("events_words", _fts_phrase(" ".join(parts)), low, high)
            if found is not None and found.ids:
                self.note(found, (i,), i)
                return
        if term.weight > 0.0 and len(term.text) >= MIN_EXACT:
            # (Not for the whole query: its words found their events already, and a
            # trigram phrase that matches nothing reads every event of its trigrams.)
            self.trigram(i, term.text, low, high)

    def together(self, word_ids: list[int], low: int, high: int) -> None:
        """The events holding all the words (and all but one, for three to six), so that
        an older event holding several is among the candidates.

        Only words whose newest matches were cut at the cap need it (every event of the
        others is a candidate already), and only words of at most
        :data:`GROUP_MAX_MATCHES` events: FTS5 reads the whole list of each word of an
        AND, and words that common weigh little.
        """
        word_ids = [
            j for j in word_ids if self.capped[j] and self.estimates[j] <= GROUP_MAX_MATCHES
        ]
        if len(word_ids) < 2:
            return
        groups = [word_ids]
        if 3 <= len(word_ids) <= 6:
            groups += [[j for j in word_ids if j != skip] for skip in word_ids]
        for group in groups:
            match = " AND ".join(_fts_phrase(self.terms[j].text) for j in group)
            found = self.index_query("events_words", match, low, high)
            if found is not None:
                self.note(found, group, None)

    def trigram(self, i: int, text: str, low: int, high: int) -> None:
        found = self.index_query("events_fts", _fts_phrase(text), low, high)
        if found is not None:
            self.note(found, (i,), i)

    def trigram_range(self, low: int, high: int) -> None:
        """Below the word index: every term as a substring, through the trigram index."""
        for i, term in enumerate(self.terms):
            needle = term.root if term.kind == "word" else term.text
            if len(needle) >= MIN_EXACT and term.weight > 0.0:  # the whole query: its words
                self.trigram(i, needle, low, high)

    def like_range(self, low: int, high: int) -> None:
        """Below every index (or without FTS5): LIKE over the values, the newest
        :data:`LIKE_CANDIDATES` rows holding any term, read whole."""
        if low > high:
            return
        needles = [t.root if t.kind == "word" else t.text for t in self.terms]
        needles = [n for n in needles if n]
        if not needles:
            return
        test = " OR ".join("t.text LIKE ? ESCAPE '\\'" for _ in needles)
        patterns = [_like_pattern(n) for n in needles]
        prefilter = ""
        if all(_json_plain(n) for n in needles):
            # The stored JSON holds a plain needle as it is: LIKE on it first, and compute
            # the values (json_tree, ten times the cost) only for the rows it lets pass.
            prefilter = " AND (" + " OR ".join("e.data LIKE ? ESCAPE '\\'" for _ in needles) + ")"
        rows = self.conn.execute(
            f"SELECT {_E_COLUMNS}, t.text FROM session_events e "
            "JOIN events_text t ON t.id = e.id "
            f"WHERE e.id BETWEEN ? AND ?{self.filters.sql()}{prefilter} AND ({test}) "
            "ORDER BY e.id DESC LIMIT ?",
            [
                low,
                high,
                *self.filters.params,
                *(patterns if prefilter else []),
                *patterns,
                LIKE_CANDIDATES,
            ],
        ).fetchall()
        capped = len(rows) >= LIKE_CANDIDATES
        reach = high - int(rows[-1][0]) + 1 if capped and rows else high - low + 1
        scale = (high - low + 1) / max(reach, 1)
        self.more = self.more or capped
        folded = [fold(str(row[_TEXT] or "")) for row in rows]
        for term in self.terms:
            if term.kind == "word" and not any(term.spans(text, 1) for text in folded):
                # As the index path does: inside words, then (a stand-in: not at all).
                term.substring = term.synonym_of < 0
        helds = [{i for i, t in enumerate(self.terms) if t.spans(text, 1)} for text in folded]
        held_by = [sum(i in held for held in helds) for i in range(len(self.terms))]
        unneeded = {i for i in range(len(self.terms)) if not self.stand_in_needed(i, held_by)}
        for row, held in zip(rows, helds, strict=True):
            held -= unneeded
            if not held:
                continue  # LIKE matched inside a word, not the word itself
            self.rows[int(row[0])] = row
            self.found.setdefault(int(row[0]), set()).update(held)
            for i in held:
                self.estimates[i] += scale

    def first_pass(self, keep: int) -> list[int]:
        """The ids of the ``keep`` best candidates by the weights of the terms they hold."""
        weights = [t.weight * t.idf for t in self.terms]
        scored = sorted(
            ((sum(weights[i] for i in held), rowid) for rowid, held in self.found.items()),
            reverse=True,
        )
        return [rowid for _, rowid in scored[:keep]]

    def read(self, ids: list[int]) -> list[Any]:
        missing = [i for i in ids if i not in self.rows]
        for start in range(0, len(missing), 500):
            chunk = missing[start : start + 500]
            for row in self.conn.execute(
                f"SELECT {_E_COLUMNS}, t.text FROM session_events e "
                "JOIN events_text t ON t.id = e.id "
                f"WHERE e.id IN ({', '.join('?' * len(chunk))})",
                chunk,
            ).fetchall():
                self.rows[int(row[0])] = row
        return [self.rows[i] for i in ids if i in self.rows]

    def rank(self, rows: list[Any], limit: int) -> tuple[list[SearchHit], int]:
        """The best ``limit`` of ``rows`` (BM25 on their texts, the recency factor, exact
        terms first), and how many of them hold a term at all."""
        if not rows:
            return [], 0
        texts = [str(row[_TEXT] or "") for row in rows]
        average = sum(len(t) for t in texts) / len(texts)
        times = [parse_iso(row[11]) for row in rows]
        newest = max(times)
        kinds = asked_kinds(self.terms)
        scored = []
        for row, text, stamp in zip(rows, texts, times, strict=True):
            folded = fold(text)
            held = self.found.get(int(row[0]), set())
            norm = K1 * (1.0 - B + B * len(text) / max(average, 1.0))
            relevance = 0.0
            tier = 0
            lines: dict[int, float] = {}  # line start → the weight of the terms on it
            for i, term in enumerate(self.terms):
                spans = term.spans(folded, 0, text)
                frequency = len(spans)
                if frequency == 0 and i in held and term.kind == "word" and term.synonym_of < 0:
                    frequency = 1  # porter joined what the Python stem does not
                if frequency == 0:
                    continue
                if term.tiered:
                    tier += 1
                weight = term.weight * term.idf
                relevance += weight * frequency * (K1 + 1) / (frequency + norm)
                for start in {folded.rfind("\n", 0, at) + 1 for at, _ in spans}:
                    lines[start] = lines.get(start, 0.0) + weight
            if relevance <= 0.0 and tier == 0:
                continue
            if lines:
                relevance += LINE_WEIGHT * max(lines.values())
            if row[2] in kinds:
                relevance *= KIND_BOOST
            if self.shapes and any(p.search(text) for p in self.shapes):
                relevance *= SHAPE_BOOST
            rank = blend(relevance, newest - stamp)
            scored.append((tier, rank, int(row[0]), row, text))
        scored.sort(key=lambda item: (-item[0], -item[1], -item[2]))
        scored = _spread(scored)
        hits = [
            SearchHit(event_from_row(row), rank, make_snippet(text, self.terms))
            for _, rank, _, row, text in scored[: max(limit, 0)]
        ]
        return hits, len(scored)


# An event whose words are nearly all those of a better hit of its kind (a to-do list
# written again with one status changed, a command rerun with the same output) says
# little more: it ranks below every other hit, at this factor.
NEAR_DUPLICATE = 0.8
NEAR_DUPLICATE_FACTOR = 0.2
_SIGNATURE_CHARS = 600
# Words that change when the same list is written again (a to-do's status).
_STATUS_WORDS = frozenset({"pending", "in", "progress", "completed", "done", "cancelled"})


# Types whose data is the text of another's (a decision or a role is a sentence of a
# prompt): near-duplicates of each other's hits too.
_SAME_TEXT = {"decision": "user_prompt", "role": "user_prompt"}


def _spread(scored: list[Any]) -> list[Any]:
    """``scored`` (best first) with the near-duplicates of better hits of the same type,
    and the other events of a call a better hit comes from (a failed command's
    ``shell_call`` beside its ``tool_error``), moved down (their rank times
    :data:`NEAR_DUPLICATE_FACTOR`)."""
    kept: dict[str, list[frozenset[str]]] = {}
    calls: set[str] = set()
    out = []
    for tier, rank, rowid, row, text in scored:
        words = frozenset(words_of(text[:_SIGNATURE_CHARS].lower())) - _STATUS_WORDS
        seen = kept.setdefault(_SAME_TEXT.get(str(row[2]), str(row[2])), [])
        call = str(row[9] or "")  # tool_use_id
        if (call and call in calls) or (
            words
            and any(len(words & other) >= NEAR_DUPLICATE * len(words | other) for other in seen)
        ):
            rank *= NEAR_DUPLICATE_FACTOR
            tier = 0
        else:
            seen.append(words)
            if call:
                calls.add(call)
        out.append((tier, rank, rowid, row, text))
    out.sort(key=lambda item: (-item[0], -item[1], -item[2]))
    return out


def find(
    store: Connection,
    query: str,
    session_id: str | None,
    category: str | Sequence[str] | None,
    type_: str | Sequence[str] | None,
    since: str | None,
    limit: int,
    worktree: str | None = None,
    client: Sequence[str | None] | None = None,
) -> SearchHits:
    """``Store.search``: the ranked hits (see the module docstring)."""
    conn = store.conn
    out = SearchHits()
    bounds = _id_bounds(conn, session_id, since)
    if bounds is None:
        return out
    low, high = bounds
    filters = _filters(session_id, category, type_, since, worktree, client)
    terms = analyze(as_text(query))
    if not terms:
        return _newest(conn, filters, low, high, limit)
    search = _Search(store, terms, filters, as_text(query))
    fts_from = _index_from(conn, "events_fts", high) if store.fts_enabled() else high + 1
    words_from = _index_from(conn, "events_words", high) if store.words_enabled() else high + 1
    words_from = max(words_from, fts_from)
    if words_from <= high:
        search.words_range(max(low, words_from), high)
    if fts_from < words_from:
        search.trigram_range(max(low, fts_from), min(high, words_from - 1))
    search.like_range(low, min(high, fts_from - 1))
    if not search.found and fts_from <= high and all(_unindexed(t) for t in terms):
        # Only terms too short for the trigram index ("%", "-x", "ix"): LIKE over the
        # indexed events too, as a store without FTS5 would.
        search.like_range(max(low, fts_from), high)
    span = high - low + 1
    for term, estimate in zip(terms, search.estimates, strict=True):
        term.idf = idf(estimate, span)
        if term.tiered and term.weight > 0.0 and not term.quoted and estimate > TIER_MAX_EVENTS:
            term.tiered = False  # a common identifier: the topic, not the event
    keep = max(REFINE, limit)
    hits, scored = search.rank(search.read(search.first_pass(keep)), limit)
    out.extend(hits)
    out.terms = terms
    if search.more:
        best = max(search.estimates, default=0.0)
        out.total, out.more = max(len(search.found), round(best)), True
    elif len(search.found) > keep:
        out.total = len(search.found)  # each holds a term, by an index's word
    else:
        out.total = scored  # every candidate was read and scored on its text
    return out


def _unindexed(term: Term) -> bool:
    """Whether the indexes cannot look for ``term``: an exact term, or a word no event
    holds as a word, too short for the trigram index."""
    return (term.kind == "exact" or term.substring) and len(term.text) < MIN_EXACT


def _newest(
    conn: _sqlite3.Connection, filters: _Filters, low: int, high: int, limit: int
) -> SearchHits:
    """An empty query: the newest events that pass the filters."""
    rows = conn.execute(
        f"SELECT {_E_COLUMNS}, t.text FROM session_events e JOIN events_text t ON t.id = e.id "
        f"WHERE e.id BETWEEN ? AND ?{filters.sql()} ORDER BY e.id DESC LIMIT ?",
        [low, high, *filters.params, max(limit, 0) + 1],
    ).fetchall()
    out = SearchHits(
        SearchHit(event_from_row(row), 0.0, make_snippet(str(row[_TEXT] or ""), []))
        for row in rows[: max(limit, 0)]
    )
    out.more = len(rows) > limit
    out.total = len(out)
    if out.more:
        counted = conn.execute(
            f"SELECT COUNT(*) FROM session_events e WHERE e.id BETWEEN ? AND ?{filters.sql()}",
            [low, high, *filters.params],
        ).fetchone()
        out.total = int(counted[0])
        out.more = False
    return out


def _index_from(conn: _sqlite3.Connection, index: str, high: int) -> int:
    """The smallest event id in ``index``: every event from there on is in it, none
    before it (a large store upgraded from an older schema indexed only its newest
    events; see migrations.install_fts). ``high + 1`` for an empty index."""
    row = conn.execute(f"SELECT rowid FROM {index} ORDER BY rowid LIMIT 1").fetchone()
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


# ------------------------------------------------------------------ a hit's neighbours

# What a hit's neighbours are read by: the session's events just before and after it in
# the calls' order (events.ORDER; rows stored before schema 3 have no call_at and come
# first). A NULL call_at compares as this, below every stamp. The hit's own place is
# read by the statement itself (a constant subquery, evaluated once).
_NO_CALL = -1
_AT = f"(SELECT coalesce(call_at, {_NO_CALL}) FROM session_events WHERE id = :id)"
_NEIGHBOURS = f"""
SELECT {EVENT_COLUMNS} FROM session_events
WHERE session_id = :session AND id != :id AND (
    coalesce(call_at, {_NO_CALL}) {{op}} {_AT}
    OR (coalesce(call_at, {_NO_CALL}) = {_AT} AND id {{op}} :id))
ORDER BY call_at {{way}}, id {{way}} LIMIT :span
"""
_BEFORE = _NEIGHBOURS.format(op="<", way="DESC")
_AFTER = _NEIGHBOURS.format(op=">", way="ASC")


def neighbours(
    store: Connection, hits: Sequence[SessionEvent], span: int
) -> dict[int, list[tuple[int, SessionEvent]]]:
    """``Store.neighbours``: for each hit (by id), the ``span`` events of its session
    just before it and just after it in the calls' order, as ``(offset, event)`` with
    offsets -span … -1 and 1 … span, in that order.

    Why: what a question names and what answers it are often two events apart: "which
    port did the restarted server take?" matches the restart, and the port is in the
    next call's output; a commit's message matches, its hash is in the call before. The
    events beside a hit are its context, as ``grep -C`` shows lines around a match."""
    out: dict[int, list[tuple[int, SessionEvent]]] = {}
    if span <= 0:
        return out
    conn = store.conn
    for hit in hits:
        if hit.id is None:
            continue
        where = {"session": hit.session_id, "id": hit.id, "span": span}
        before = events_from_rows(conn.execute(_BEFORE, where).fetchall())
        after = events_from_rows(conn.execute(_AFTER, where).fetchall())
        out[int(hit.id)] = [(-n, e) for n, e in reversed(list(enumerate(before, 1)))] + [
            (n, e) for n, e in enumerate(after, 1)
        ]
    return out
