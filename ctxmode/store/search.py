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
  "AssertionError");
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
in the event, against the event's length), times a recency factor (:func:`blend`).
Events holding more of the query's exact phrases and identifiers come first; recency
breaks ties.

Events older than an index (a large store upgraded from an older schema indexes only
its newest events) are found through the older index, and below both by ``LIKE`` over
the same values (a store without FTS5: ``LIKE`` alone), scored the same way on their
text. An empty query lists the newest events that pass the filters.
"""

from __future__ import annotations

import math
import os

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
# Term weights: an identifier is worth more than a word, its parts less.
EXACT_WEIGHT = 1.5
PART_WEIGHT = 0.5
# BM25's term-frequency saturation and length normalisation.
K1 = 1.2
B = 0.75
RECENCY_WEIGHT = 0.25
RECENCY_HALF_LIFE_DAYS = 7.0
SNIPPET_CHARS = 160
SNIPPET_MARK = ("**", "**")
# An exact term this short cannot use the trigram index and says little: it is looked
# for on the candidates only, and does not put its events first.
MIN_EXACT = 3
MIN_TIERED = 4
# The words of a query taken at all (a pasted paragraph is not a query).
MAX_TERMS = 16

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


# ---------------------------------------------------------------- the query


def split_query(query: str) -> list[tuple[str, bool]]:
    """``(term, quoted)`` pairs: whitespace separates, ``"…"`` keeps a phrase together.

    Every other character (``* ( ) - : ^ +`` …) is literal: terms are quoted before they
    reach FTS5, so nothing in a query can be FTS syntax.
    """
    terms: list[tuple[str, bool]] = []
    buf: list[str] = []
    quoted = False

    def flush(was_quoted: bool) -> None:
        term = "".join(buf).replace("\x00", "").strip()
        buf.clear()
        if term and all(term != t for t, _ in terms):
            terms.append((term, was_quoted))

    for char in query:
        if char == '"':
            flush(quoted)
            quoted = not quoted
        elif char.isspace() and not quoted:
            flush(False)
        else:
            buf.append(char)
    flush(quoted)
    return terms


def parse_query(query: str) -> list[str]:
    """The terms of :func:`split_query`, without the quoting."""
    return [term for term, _ in split_query(query)]


_STOP_WORDS: frozenset[str] | None = None


def stop_words() -> frozenset[str]:
    """The words that carry no weight (``ctxmode/data/stopwords.txt``), read once."""
    global _STOP_WORDS
    if _STOP_WORDS is None:
        path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "stopwords.txt")
        words: set[str] = set()
        try:
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    words.update(line.split("#", 1)[0].lower().split())
        except OSError:
            pass  # a damaged install searches every word: worse ranking, same hits
        _STOP_WORDS = frozenset(words)
    return _STOP_WORDS


class Term:
    """One thing a query looks for.

    ``kind``: ``"word"`` (a word, matched by stem; ``root`` is its Python-side stem),
    or ``"exact"`` (a case-insensitive substring). ``weight`` multiplies its IDF;
    ``tiered`` exact terms put the events holding them first. ``substring``: a word no
    event holds as a word, looked for inside words instead.
    """

    __slots__ = ("idf", "kind", "root", "substring", "text", "tiered", "weight")

    def __init__(self, text: str, kind: str, weight: float = 1.0, tiered: bool = False) -> None:
        self.text = text
        self.kind = kind
        self.weight = weight
        self.tiered = tiered
        self.root = word_root(text) if kind == "word" else fold(text)
        self.substring = False
        self.idf = 0.0

    def __repr__(self) -> str:
        extra = " tiered" if self.tiered else ""
        return f"Term({self.text!r}, {self.kind}, w={self.weight}{extra})"

    def count(self, folded: str, text: str = "") -> int:
        """How often the term occurs in ``folded`` (``text`` passed through :func:`fold`)."""
        return len(self.spans(folded, 0, text))

    def spans(self, folded: str, limit: int = 0, text: str = "") -> list[tuple[int, int]]:
        """Where the term occurs in ``folded``: whole words from a word's stem on (a word
        starts after a letter too where ``text``, the original, turns from lower to upper
        case: "error" in "TypeError", "refused" in "ConnectionRefusedError"), or the
        substring; at most ``limit`` (0: all)."""
        needle = self.root
        out: list[tuple[int, int]] = []
        if not needle:
            return out
        word = self.kind == "word" and not self.substring
        camel = len(text) == len(folded) and text != folded
        start = folded.find(needle)
        while start >= 0:
            end = start + len(needle)
            if not word:
                out.append((start, end))
            elif start == 0 or not folded[start - 1].isalnum():
                while end < len(folded) and folded[end].isalnum():
                    end += 1
                if _same_word(needle, folded[start + len(needle) : end]):
                    out.append((start, end))
            elif camel and text[start].isupper() and text[start - 1].islower():
                while end < len(text) and text[end].isalnum() and not text[end].isupper():
                    end += 1
                if _same_word(needle, folded[start + len(needle) : end]):
                    out.append((start, end))
            if limit and len(out) >= limit:
                break
            start = folded.find(needle, end if word else start + 1)
        return out


def _words_of(text: str) -> list[str]:
    """The words of ``text`` as unicode61 splits them: runs of letters and digits."""
    out: list[str] = []
    buf: list[str] = []
    for char in text:
        if char.isalnum():
            buf.append(char)
        elif buf:
            out.append("".join(buf))
            buf.clear()
    if buf:
        out.append("".join(buf))
    return out


_OPENERS = "([{<\"'`“‘«"
_CLOSERS = ")]}>\"'`”’»?!,;:."
_APOSTROPHES = "'’"


def _is_identifier(token: str) -> bool:
    """A path, flag, version, error code, dotted or snake_case name: a token with inner
    punctuation, or with digits among letters."""
    inner = any(not c.isalnum() and c not in _APOSTROPHES for c in token)
    if inner:
        return True
    has_digit = any(c.isdigit() for c in token)
    return has_digit and any(c.isalpha() for c in token)


def analyze(query: str) -> list[Term]:
    """The terms of a query (see the module docstring), strongest kind first."""
    stops = stop_words()
    exact: list[Term] = []
    words: list[tuple[str, float]] = []
    raw_tokens: list[str] = []
    any_quoted = False
    for raw, quoted in split_query(query):
        if quoted:
            any_quoted = True
            exact.append(Term(raw, "exact", EXACT_WEIGHT, len(raw) >= MIN_TIERED))
            words += [(w, PART_WEIGHT) for w in _words_of(raw)]
            continue
        raw_tokens.append(raw)
        token = raw.lstrip(_OPENERS).rstrip(_CLOSERS) or raw  # "(" alone is looked for
        if _is_identifier(token) and token.lower() not in stops:
            parts = _words_of(token)
            if len(parts) == 1 and parts[0] == token.strip("-"):
                words.append((parts[0], 1.0))  # "-v" or "--" around a plain word
                if token != parts[0]:
                    exact.append(Term(token, "exact", EXACT_WEIGHT, False))
                continue
            exact.append(Term(token, "exact", EXACT_WEIGHT, len(token) >= MIN_TIERED))
            words += [(w, PART_WEIGHT) for w in parts if len(w) > 1]  # not the n of \n
        elif _words_of(token):
            words += [(w, 1.0) for w in _words_of(token)]
        else:
            exact.append(Term(token, "exact", EXACT_WEIGHT, False))  # "'" alone
    # The whole query as typed (several words, none quoted): the exact event first.
    if not any_quoted and len(raw_tokens) > 1:
        whole = " ".join(query.split()).rstrip("?!,;:. ")
        if len(whole) >= MIN_TIERED and all(whole.lower() != t.text.lower() for t in exact):
            exact.append(Term(whole, "exact", 0.0, True))
    terms: list[Term] = list(exact)
    seen: dict[str, Term] = {}
    meaningful = [(w, weight) for w, weight in words if w.lower() not in stops]
    for word, weight in meaningful or words:
        low = word.lower()
        if low in seen:
            seen[low].weight = max(seen[low].weight, weight)
            continue
        term = Term(low, "word", weight)
        seen[low] = term
        terms.append(term)
    return terms[:MAX_TERMS]


# ---------------------------------------------------------------- the kind asked for

# Words by which a question names the kind of event it wants ("the commit about
# rounding", "the command that started the server", "the error when migrating"): an
# event of that kind that matches the query's other words ranks higher, by
# KIND_BOOST. Keys are word roots (word_root); the text of an event rarely names its
# own kind (a commit's message does not say "commit").
KIND_WORDS: dict[str, tuple[str, ...]] = {
    "commit commits committed hash sha": ("git_commit",),
    "branch branches": ("git_branch",),
    "push pushed merge merged": ("git_op",),
    "error errors": ("tool_error", "output_error"),
    "fail fails failed failing failure": ("tool_error", "output_error", "shell_call"),
    "edit edits edited": ("file_edit", "file_write"),
    "change changes changed modify modified switch switched": (
        "file_edit",
        "file_write",
        "file_delete",
    ),
    "create created write wrote written save saved": ("file_write", "task_create"),
    "delete deleted remove removed": ("file_delete",),
    "read": ("file_read",),
    "command commands ran run runs running output printed print prints": ("shell_call",),
    "install installed installing": ("env_setup", "shell_call"),
    "ask asked request requested prompt user told mentioned": ("user_prompt",),
    "said say": ("user_prompt", "decision"),
    "decide decided decision decisions rule rules": ("decision", "rule_read", "rule_edit"),
    "task tasks todo todos": ("task_create", "task_update", "todo_write"),
    "plan plans": ("plan_exit",),
    "agent agents subagent subagents": ("subagent",),
    "url urls link links page fetch fetched": ("url_ref", "web_fetch"),
    "search searched": ("web_search",),
    "comment comments commented post posted sent message messages": ("message_sent",),
}
KIND_BOOST = 1.5
_KIND_ROOTS: dict[str, frozenset[str]] = {}


def asked_kinds(terms: Sequence[Term]) -> frozenset[str]:
    """The event types the query's words name (:data:`KIND_WORDS`)."""
    if not _KIND_ROOTS:
        for forms, types in KIND_WORDS.items():
            for form in forms.split():
                root = word_root(form)
                _KIND_ROOTS[root] = _KIND_ROOTS.get(root, frozenset()) | frozenset(types)
    kinds: set[str] = set()
    for term in terms:
        if term.kind == "word":
            kinds.update(_KIND_ROOTS.get(term.root, ()))
    return frozenset(kinds)


# ---------------------------------------------------------------- the answer asked for

# What a question asks for often has a shape: "which version" wants a version number,
# "which port" a port, "which URL" an address, "where" a path, "why ... fail" an error.
# An event holding text of that shape (and some of the query's words) ranks higher, by
# SHAPE_BOOST. Keys are the question's words (before stop words are dropped); values
# are patterns of the answer.
ANSWER_SHAPES: dict[str, str] = {
    "version versions release": r"\bv?\d+\.\d+(?:\.\d+)?",
    "port ports listening listen": r":\d{2,5}\b|\bport\W{0,3}\d{2,5}\b",
    "url urls link links page website site endpoint address": r"https?://|www\.",
    "where path file folder directory saved stored located lives live": (
        r"(?:^|[\s'\"(=])(?:~|\.{0,2})[/\\][^\s/\\]+[/\\]|\b[A-Za-z]:\\|\b[\w-]+\.[a-z]{1,5}\b"
    ),
    "why error errors fail failed failing refused denied broke crash crashed wrong": (
        r"(?i)error|fail|denied|refused|not found|exception|cannot|can't|unable|invalid|"
        r"no such|timed out|fatal|panic"
    ),
    "many count number total size big long": r"\b\d+\b",
    "ip ipv4 ipv6": r"\b\d{1,3}(?:\.\d{1,3}){3}\b|\b[0-9a-f]{1,4}(?::[0-9a-f]{0,4}){2,7}\b",
    "hash sha commit": r"\b[0-9a-f]{7,40}\b",
}
SHAPE_BOOST = 1.5
_SHAPES: list[tuple[frozenset[str], Any]] = []


def asked_shapes(query: str) -> list[Any]:
    """The compiled answer patterns the words of ``query`` ask for (:data:`ANSWER_SHAPES`)."""
    import re

    if not _SHAPES:
        for words, pattern in ANSWER_SHAPES.items():
            _SHAPES.append((frozenset(words.split()), re.compile(pattern)))
    said = {w.lower() for w in _words_of(query)}
    return [pattern for words, pattern in _SHAPES if said & words]


# ---------------------------------------------------------------- text matching


def fold(text: str) -> str:
    """Lower case, keeping the length (offsets into the result are offsets into ``text``);
    text whose lower case changes length is matched case-sensitively."""
    folded = text.lower()
    return folded if len(folded) == len(text) else text


# Suffixes a word's stem loses, longest first, leaving at least three characters: a
# stem here only has to find the words porter put under the same stem (a prefix of
# them), on the few hundred texts a search reads.
_SUFFIXES = (
    "izations", "ization", "ational", "fulness", "iveness", "ousness", "ations", "ation",
    "ements", "ement", "ments", "ment", "ities", "ity", "ings", "ing", "ness", "ions",
    "ion", "ers", "er", "ies", "ied", "ed", "es", "ly", "s",
)  # fmt: skip


def word_root(word: str) -> str:
    """A lower-case word without its inflection ("migrations" → "migrat", "running" →
    "run"): every word porter stems alike starts with it."""
    w = word.lower()
    if len(w) <= 4:
        return w[:-1] if len(w) == 4 and w.endswith("s") and not w.endswith("ss") else w
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz" and not w[-1].isdigit():
                w = w[:-1]  # running → runn → run
            break
    return w


# What may follow a stem in a word porter gives the same stem (near enough: this only
# re-reads the texts an index already chose, or LIKE's, and marks the matches).
_ENDINGS = frozenset(
    ("s", "es", "e", "ed", "d", "ing", "ings", "er", "ers", "or", "ors", "ion", "ions",
     "ation", "ations", "ative", "ly", "ment", "ments", "ness", "ity", "ities", "y", "ies",
     "ied", "al", "ally", "able", "ible", "ive", "ize", "izes", "ized", "izing", "ization",
     "ise", "ised", "ising", "isation", "ic", "ical", "ure", "ures", "ured", "uring", "ate",
     "ates", "ated", "ating", "ator", "ators", "ant", "ance", "ancy", "ence", "ency",
     "encies", "ent", "ful", "less", "ism", "ist", "ists")
)  # fmt: skip


def _same_word(root: str, rest: str) -> bool:
    """Whether a word made of ``root`` + ``rest`` is the word ``root`` stands for."""
    if not rest:
        return True
    if len(root) < 3:
        return rest == "s"  # "py" is not "pytest"
    return rest in _ENDINGS or (rest[0] == root[-1] and rest[1:] in _ENDINGS)  # run-ning


def match_spans(text: str, terms: Sequence[Term | str]) -> list[tuple[int, int]]:
    """Where any of ``terms`` occurs in ``text``, merged (strings are exact terms)."""
    folded = fold(text)
    spans: list[tuple[int, int]] = []
    for term in terms:
        if isinstance(term, str):
            term = Term(term, "exact")
        if term.weight == 0.0 and term.kind == "exact" and len(terms) > 1:
            continue  # the whole query: its words are marked one by one
        spans += term.spans(folded, 200, text)
    return merge_spans(spans)


def make_snippet(
    text: str,
    terms: Sequence[Term | str],
    *,
    width: int = SNIPPET_CHARS,
    mark: tuple[str, str] = SNIPPET_MARK,
) -> str:
    """A window of ``text`` around the first match, each match wrapped in ``mark``."""
    spans = match_spans(text, terms)
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
        for i in word_ids:
            term = self.terms[i]
            found = self.index_query("events_words", _fts_phrase(term.text), low, high)
            if found is not None and found.ids:
                self.note(found, (i,), i)
                with_hits.append(i)
            else:
                # No event holds it as a word: look inside words ("snap", "assertion").
                term.substring = True
                if len(term.text) >= MIN_EXACT:
                    self.trigram(i, term.text, low, high)
        for i, term in enumerate(self.terms):
            if term.kind == "exact":
                self.exact(i, term, low, high)
        self.together([i for i in with_hits if self.terms[i].weight >= 1.0], low, high)

    def exact(self, i: int, term: Term, low: int, high: int) -> None:
        """An identifier or phrase: the events holding its words in a row (the word
        index), else, for part of a word ("gamma_4", "src/gam"), the trigram index.
        Which of them hold it exactly is decided on their text."""
        parts = _words_of(term.text)
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
            if len(needle) >= MIN_EXACT:
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
                term.substring = True  # as the index path does: inside words, then
        for row, text in zip(rows, folded, strict=True):
            held = {i for i, t in enumerate(self.terms) if t.spans(text, 1)}
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
            for i, term in enumerate(self.terms):
                frequency = term.count(folded, text)
                if frequency == 0 and i in held and term.kind == "word":
                    frequency = 1  # porter joined what the Python stem does not
                if frequency == 0:
                    continue
                if term.tiered:
                    tier += 1
                relevance += term.weight * term.idf * frequency * (K1 + 1) / (frequency + norm)
            if relevance <= 0.0 and tier == 0:
                continue
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


def _spread(scored: list[Any]) -> list[Any]:
    """``scored`` (best first) with the near-duplicates of better hits of the same type,
    and the other events of a call a better hit comes from (a failed command's
    ``shell_call`` beside its ``tool_error``), moved down (their rank times
    :data:`NEAR_DUPLICATE_FACTOR`)."""
    kept: dict[str, list[frozenset[str]]] = {}
    calls: set[str] = set()
    out = []
    for tier, rank, rowid, row, text in scored:
        words = frozenset(_words_of(text[:_SIGNATURE_CHARS].lower())) - _STATUS_WORDS
        seen = kept.setdefault(str(row[2]), [])
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
    keep = max(REFINE, limit)
    hits, scored = search.rank(search.read(search.first_pass(keep)), limit)
    out.extend(hits)
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
