r"""A search query (``Store.search``, ``ctxmode search``): its terms, their forms, what it asks.

Not imported by hook processes (``store/search.py`` loads it). :func:`analyze` turns the
text an agent typed into :class:`Term`\ s (words, identifiers, phrases; stop words out,
``data/stopwords.txt``); :func:`word_root`, :meth:`Term.spans` and :func:`match_spans` find a
term in an event's text as the indexes would (a word by its stem, an identifier as written);
:func:`asked_kinds` and :func:`asked_shapes` read what kind of event and what shape of answer
the question names. How they rank: ``store/search.py``.
"""

from __future__ import annotations

import os

from ctxmode.redact import cut_at, cut_from, merge_spans

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# Term weights: an identifier is worth more than a word, its parts less.
EXACT_WEIGHT = 1.5
PART_WEIGHT = 0.5
SNIPPET_CHARS = 160
SNIPPET_MARK = ("**", "**")
# An exact term this short cannot use the trigram index and says little: it is looked
# for on the candidates only, and does not put its events first.
MIN_EXACT = 3
MIN_TIERED = 4
# An identifier typed in the query puts the events holding it first only when it is
# this rare: held by more events, it names what the session is about (the module every
# call touches), not the event asked for, and ranks by its weight like a word.
TIER_MAX_EVENTS = 20
# The words of a query taken at all (a pasted paragraph is not a query).
MAX_TERMS = 16


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


def _word_lines(name: str) -> list[list[str]]:
    """The words of each line of ``ctxmode/data/<name>``, lower-cased, ``#`` comments
    left out; [] when it cannot be read (a damaged install)."""
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", name)
    try:
        with open(path, encoding="utf-8") as handle:
            return [line.split("#", 1)[0].lower().split() for line in handle]
    except OSError:
        return []


_STOP_WORDS: frozenset[str] | None = None


def stop_words() -> frozenset[str]:
    """The words that carry no weight (``ctxmode/data/stopwords.txt``), read once; none
    when it cannot be read (every word searched: worse ranking, same hits)."""
    global _STOP_WORDS
    if _STOP_WORDS is None:
        _STOP_WORDS = frozenset(word for line in _word_lines("stopwords.txt") for word in line)
    return _STOP_WORDS


_SYNONYMS: dict[str, tuple[str, ...]] | None = None


def synonyms() -> dict[str, tuple[str, ...]]:
    """Each word of ``ctxmode/data/synonyms.txt`` → the other words of its groups, read
    once; none when it cannot be read (the query's own words only)."""
    global _SYNONYMS
    if _SYNONYMS is None:
        groups: dict[str, list[str]] = {}
        for forms in _word_lines("synonyms.txt"):
            for form in forms:
                known = groups.setdefault(form, [])
                known += [other for other in forms if other != form and other not in known]
        _SYNONYMS = {form: tuple(others) for form, others in groups.items()}
    return _SYNONYMS


class Term:
    """One thing a query looks for.

    ``kind``: ``"word"`` (a word, matched by stem; ``root`` is its Python-side stem),
    or ``"exact"`` (a case-insensitive substring). ``weight`` multiplies its IDF;
    ``tiered`` exact terms put the events holding them first (``quoted``: a phrase in
    double quotes, always). ``substring``: a word no event holds as a word, looked for
    inside words instead. ``synonym_of``: the index of the query word this word stands
    in for (:func:`synonyms`), looked for only when that word is rare; -1 for the
    query's own terms.
    """

    __slots__ = (
        "idf",
        "kind",
        "quoted",
        "root",
        "substring",
        "synonym_of",
        "text",
        "tiered",
        "weight",
    )

    def __init__(self, text: str, kind: str, weight: float = 1.0, tiered: bool = False) -> None:
        self.text = text
        self.kind = kind
        self.weight = weight
        self.tiered = tiered
        self.root = word_root(fold(text)) if kind == "word" else fold(text)
        self.substring = False
        self.quoted = False
        self.idf = 0.0
        self.synonym_of = -1

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
            elif start == 0 or not _word_char(folded[start - 1]):
                while end < len(folded) and _word_char(folded[end]):
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


def words_of(text: str) -> list[str]:
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


def _word_char(char: str) -> bool:
    """A character a word of a query is made of: a letter or digit of a script written
    with spaces. A Chinese, Japanese or Korean character next to a Latin word ends it, as
    a space would ("wandb" in "还用上次的wandb", "gemini" in "gemini에게")."""
    return char.isalnum() and not is_unspaced(char)


def is_unspaced(char: str) -> bool:
    """Whether ``char`` is of a script written without spaces between words (CJK
    ideographs, kana) or whose words take particles unspaced (Hangul)."""
    code = ord(char)
    return code >= 0x3040 and (
        code <= 0x30FF  # hiragana, katakana
        or 0x3400 <= code <= 0x9FFF  # CJK ideographs (with extension A)
        or 0xAC00 <= code <= 0xD7AF  # Hangul syllables
        or 0xF900 <= code <= 0xFAFF  # CJK compatibility ideographs
        or 0x20000 <= code <= 0x3FFFF  # CJK extensions B and on
    )


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
            phrase = Term(raw, "exact", EXACT_WEIGHT, len(raw) >= MIN_TIERED)
            phrase.quoted = True
            exact.append(phrase)
            words += [(w, PART_WEIGHT) for w in words_of(raw)]
            continue
        raw_tokens.append(raw)
        token = raw.lstrip(_OPENERS).rstrip(_CLOSERS) or raw  # "(" alone is looked for
        if _is_identifier(token) and token.lower() not in stops:
            parts = words_of(token)
            if len(parts) == 1 and parts[0] == token.strip("-"):
                words.append((parts[0], 1.0))  # "-v" or "--" around a plain word
                if token != parts[0]:
                    exact.append(Term(token, "exact", EXACT_WEIGHT, False))
                continue
            exact.append(Term(token, "exact", EXACT_WEIGHT, len(token) >= MIN_TIERED))
            words += [(w, PART_WEIGHT) for w in parts if len(w) > 1]  # not the n of \n
        elif words_of(token):
            words += [(w, 1.0) for w in words_of(token)]
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
    # Last, so that MAX_TERMS drops them first: the words that stand in for a query word.
    table = synonyms()
    roots = {t.root for t in terms if t.kind == "word"}
    for at, base in enumerate(list(terms)):
        forms = table.get(base.text, ()) if base.kind == "word" else ()
        group = {base.text, *forms}
        for other in forms:
            if other[:-1] in group or (other.endswith("es") and other[:-2] in group):
                # A form one ending past another of the group: that one finds it ("db"
                # finds "dbs", "compile" finds "compiled"); both would count it twice.
                continue
            stand_in = Term(other, "word", base.weight)
            # The table spells every form out: a stand-in is its own word (and plural),
            # not its stem ("settings" is no "set", "timing" no "time").
            stand_in.root = other
            if other in roots or word_root(other) in roots:
                continue  # a form of a word looked for already ("configs" of "config")
            stand_in.synonym_of = at
            roots.add(other)
            terms.append(stand_in)
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
    "why error errors fail failed failing refused denied broke broken crash crashed wrong "
    "missing complain complained blocked stopped": (
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
    said = {w.lower() for w in words_of(query)}
    return [pattern for words, pattern in _SHAPES if said & words]


# ---------------------------------------------------------------- text matching


def fold(text: str) -> str:
    """Lower case without accents, keeping the length (offsets into the result are offsets
    into ``text``): "Génération" is "generation", as the word index (``remove_diacritics``)
    has it. Text whose lower case changes length is matched case-sensitively."""
    folded = text.lower()
    if len(folded) != len(text):
        return text
    return folded if folded.isascii() else folded.translate(_unaccented())


_UNACCENTED: dict[int, str] = {}


def _unaccented() -> dict[int, str]:
    """A letter with accents → its letter (the Latin letters of Unicode's first 0x250),
    one character for one: the table ``str.translate`` folds with."""
    if not _UNACCENTED:
        import unicodedata

        for code in range(0xC0, 0x250):
            parts = unicodedata.normalize("NFD", chr(code))
            if len(parts) > 1 and parts[0].isascii() and parts[0].isalpha():
                _UNACCENTED[code] = parts[0]
    return _UNACCENTED


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
