"""UserPromptSubmit → ``prompt``, ``intent``, ``decision`` and ``role`` events.

The rules are data: :data:`LANGUAGES` maps a language code to phrase patterns per kind;
a new language is one more entry. Patterns are matched word by word against one *clause*
at a time (a sentence split at ``,`` ``;`` ``:`` and dashes, lower-cased), with a small
pattern language instead of regular expressions: importing ``re`` and compiling a
hundred expressions cost ~40 ms per hook process, this costs well under one.

Pattern language (tokens separated by spaces):

- ``^`` first: the match starts at the clause start, after optional filler words (the
  language's ``lead``: "ok", "please", "also" ...; for intents also its ``ask``:
  "can you", "I want you to" ...). Without ``^`` a pattern may start at any word.
- ``a|b|c``: one of the alternatives; ``go_with`` inside an alternative is the two words
  "go with". A trailing ``?`` makes the whole item optional.
- ``word`` exact, ``word*`` prefix, ``*word`` suffix, ``*word*`` substring, ``%`` any word.
- ``..N``: up to N words skipped; ``...``: any number. ``@name``: the language's
  ``words[name]`` alternatives.

Each kind has an ``*_not`` list checked first: a clause matching it is skipped for that
kind, which keeps "don't worry" out of decisions and "you're right" out of roles.

Long on purpose (~660 lines): most of it is data, the phrase tables of each language;
the matcher itself is about 150 lines.
"""

from __future__ import annotations

from ctxmode import redact
from ctxmode.extract.common import NOTIFICATION_TAGS, clip, masked_excerpt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ctxmode.extract.common import Draft
    from ctxmode.payload import HookInput

# A prompt is kept whole up to about 1,300 characters; of a longer one (a pasted log,
# a spec, an error with the question after it) its head, its tail (where the ask after a
# paste usually is) and, from between, the lines that look like an error or a warning.
PROMPT_HEAD = 1000
PROMPT_TAIL = 300
PROMPT_MIDDLE = 400
SENTENCE_CHARS = 300
MAX_DECISIONS = 3
MAX_ROLES = 2
# Only the head of a long prompt is analysed: pasted logs are not instructions.
ANALYSE_CHARS = 3000
MAX_SENTENCES = 30
SENTENCE_TOKENS = 80
INTENT_SENTENCES = 3

INTENTS = ("investigate", "implement", "fix", "review", "test", "refactor", "document", "other")
# When a clause matches several intents the most specific wins: "write a test" is a
# test, not an implementation; "review and fix" is a review first.
INTENT_ORDER = ("test", "document", "review", "refactor", "fix", "implement", "investigate")

LANGUAGES: dict[str, dict[str, Any]] = {
    "en": {
        # A clause that is only one of these is merged into the next: in "no, use X"
        # the "no" is what makes it a correction.
        "interjections": "no|nope|nah|ok|okay|yes|yeah|actually|wait|hmm|well|so|and|also|but"
        "|right|oh|please|thanks|alright",
        "lead": (
            "ok|okay|also|and|but|so|please|pls|actually|hmm|hmmm|well|oh|wait|yes|yeah|right"
            "|now|then|alright|great|thanks|cool|hey|hi|first|next|finally|one_more_thing",
        ),
        "ask": (
            "can|could|would|will you please?",
            "i|we want|need you? to",
            "i'd|i_would like you? to",
            "we need|have|want to",
            "we should",
            "let's|lets",
            "help me",
            "go ahead and",
            "try to",
            "please|pls|kindly|just|quickly|now|then",
        ),
        "words": {
            "role": "engineer*|developer*|dev|devs|programmer*|architect*|reviewer*|expert*"
            "|assistant*|specialist*|consultant*|analyst*|tester*|designer*|scientist*"
            "|admin|admins|administrator*|devops|sre|sres|maintainer*|mentor*|teacher*"
            "|tutor*|auditor*|lead|leads|coder*|researcher*|editor*|writer*|pentester*"
            "|hacker*|copywriter*|translator*|pair-programmer*|coach|advisor*|cto|dba|qa",
        },
        "decision": (
            "^ no|nope|nah ,|.|!|;|: %",
            "^ don't|dont|do_not|never|always %",
            "^ i|we don't|dont|do_not|never want|need|use|like",
            "^ i|we always|never use|want|prefer|write|run|do|keep|put",
            "must|should|shall always|never",
            "^ stop using|doing|adding|writing|calling|creating|making|running|putting|changing",
            "^ let's|lets not|go_with|use|stick_with|stick_to|keep|switch_to|pick|choose|avoid"
            "|drop|skip|do_it",
            "^ we'll|i'll|we_will|i_will|we_should|we're_going_to|we_are_going_to|i'm_going_to"
            " go_with|use|stick_with|stick_to|keep|switch_to|not",
            "^ go|going with",
            "we|i|we've|i've|have ..1 decided",
            "the decision is",
            "^ decision",
            "i|i'd|i_would prefer|rather",
            "^ prefer",
            "^ instead",
            "^ just? use|go_with|switch_to|try|do|make|put|keep|call|pick|choose|rely_on|write"
            "|return|store|add|stick_with|move ... instead|rather_than",
            "^ we|you should ... instead",
            "^ just? use ... , not",
            "^ no need to",
            "^ that's|that_is|this_is|it's|it_is wrong|incorrect|not_right|not_what_i",
            "^ actually ,? use|let's|we_should|make|do|go_with|it_should|keep|the",
        ),
        "decision_not": (
            "^ no|nope|nah ,|.|!? problem|worries|thanks|thank|idea|way|rush|doubt|wonder"
            "|matter|luck|kidding|offense|offence",
            "^ don't|dont|do_not worry|know|understand|get|see|think|care|remember|recall|mind",
            "^ never_mind|nevermind",
            "^ never seen|heard|saw|knew|had",
            "^ always happy|glad|fun",
        ),
        "role": (
            "^ you're|youre|you_are now? a|an|my|the|our|acting_as ..12 @role",
            "^ act as",
            "you to|should|will|can|could|must|shall|would please? act as",
            "^ can|could|would|will you please? act as",
            "^ pretend|imagine that? you're|you_are|to_be",
            "take_on|assume|play|adopt the role|persona|part of",
            "^ behave|respond|answer|reply|write|talk|think like|as a|an ..3 @role",
            "^ your role|persona is|will_be",
            "from now|here on",
            "for the rest of this|the|our session|conversation|chat|project|task|work",
            "^ going_forward|in_the_future|in_future|henceforth|hereafter|until_further_notice",
            "until i|we say otherwise",
            "^ whenever|every_time you",
            "^ as a|an ..3 @role",
        ),
        "role_not": (
            "^ you're|youre|you_are so|such|really|truly|clearly|definitely|absolutely|totally"
            "|quite|best|the_best|right|correct|wrong|welcome|amazing|awesome|great|not|a_real",
        ),
        "intent": {
            "test": (
                "^ write|add|create|extend|generate|implement ..3 test|tests|spec|specs",
                "^ run|rerun|re-run|execute ..3 test|tests|suite|specs|pytest|jest",
                "^ test|unit-test",
                "increase|improve the? test? coverage",
            ),
            "document": (
                "^ write|add|update|create|improve|generate ..3 doc|docs|documentation|docstring"
                "|docstrings|readme|changelog|comment|comments|release_notes",
                "^ document|comment",
            ),
            "review": (
                "^ review|audit|critique|proofread|look_over|double-check|sanity-check",
                "code review",
                "give_me|do a? review",
            ),
            "refactor": (
                "^ refactor|restructure|reorganize|reorganise|clean_up|cleanup|simplify|rename"
                "|extract|deduplicate|dedupe|tidy|modularize|modularise|decouple|inline|split_up",
            ),
            "fix": (
                "^ fix|repair|resolve|debug|patch|correct|solve|troubleshoot|unbreak",
                "^ make the? tests|test|build|ci pass|green|work",
            ),
            "implement": (
                "^ implement|add|create|build|make|write|generate|set_up|setup|wire|support"
                "|introduce|update|change|modify|edit|replace|remove|delete|drop|bump|upgrade"
                "|install|configure|enable|disable|commit|deploy|port|convert|migrate|integrate"
                "|append|insert|scaffold|bootstrap|initialize|initialise|init|release|publish"
                "|push|merge|rewrite|optimize|optimise|speed_up",
            ),
            "investigate": (
                "^ explain|investigate|find|search|grep|look_into|look_at|look_for|look_through"
                "|check|show|list|tell_me|describe|analyze|analyse|understand|trace|figure_out"
                "|find_out|why|how|what|what's|where|which|when|who|summarize|summarise|compare"
                "|profile|measure|diagnose|inspect|read|walk_me_through|is_there|are_there",
            ),
        },
        # Checked only when no clause matched an intent above (after "a question is an
        # investigation"), in INTENT_ORDER.
        "intent_fallback": {
            "fix": (
                "bug|bugs|broken|crash|crashes|crashed|crashing|traceback|exception|exceptions"
                "|fail|fails|failing|failed|error|errors|regression|doesn't_work|does_not_work"
                "|not_working",
            ),
        },
    },
    "de": {
        "interjections": "nein|doch|ja|also|aber|bitte|moment|danke",
        "lead": ("ok|okay|also|und|aber|bitte|ja|jetzt|dann|gut|danke|moment|übrigens|zuerst",),
        "ask": (
            "kannst|könntest|würdest du bitte?",
            "lass|lasst uns",
            "ich möchte ,? dass du",
            "bitte|jetzt|dann",
        ),
        "words": {
            "rolle": "*entwickler*|*ingenieur*|*experte|*expertin|*architekt*|*reviewer*"
            "|*berater*|*programmierer*|*tester*|*assistent*|*spezialist*",
        },
        "decision": (
            "^ nein|doch ,|.|!|;|: %",
            "^ nicht|kein|keine|keinen|niemals|nie|immer %",
            "statt|anstatt|stattdessen|anstelle",
            "^ lass|lasst uns ..3 nehmen|verwenden|benutzen|nutzen|bleiben|lassen",
            "haben|habe uns? ..2 entschieden|beschlossen",
            "ich bevorzuge|möchte_lieber|hätte_lieber|will_lieber|nehme_lieber",
            "^ verwende|benutze|nimm|nutze ... lieber",
            "muss|müssen|soll|sollen|sollte|sollten immer|nie|niemals",
        ),
        "decision_not": (
            "^ nicht schlecht|übel|schlimm|so_wichtig",
            "^ kein|keine sorge|sorgen|ahnung|eile|problem|ursache",
            "^ immer noch",
            "^ nein|doch ,|.|!? danke",
        ),
        "role": (
            "^ du bist jetzt|nun|ab_jetzt? ein|eine|der|die|mein|meine|unser|unsere ..12 @rolle",
            "^ verhalte_dich|agiere|handle|antworte wie|als ein|eine",
            "ab jetzt|sofort|nun",
            "für den rest der|dieser sitzung|unterhaltung|konversation",
            "schlüpfe|versetze_dich in die rolle",
            "^ deine rolle ist",
            "^ jedes mal ,? wenn du",
        ),
        "role_not": (
            "^ du hast recht",
            "^ du bist super|toll|genial|der_beste|die_beste",
        ),
        "intent": {
            "test": (
                "tests|test schreiben|hinzufügen|ergänzen|ausführen|laufen_lassen",
                "^ schreib|schreibe|ergänze|füge ..3 test|tests",
                "^ teste",
            ),
            "document": ("dokumentier*|dokumentation|docstring|docstrings|kommentar|kommentare",),
            "review": ("überprüf*|prüf*|begutacht*|code-review|codereview",),
            "refactor": ("refaktorier*|umbenenn*|aufräum*|vereinfach*", "räum|räume ... auf"),
            "fix": ("beheb*|reparier*|fixe|korrigier*",),
            "implement": (
                "^ implementier*|füge|füg|erstell*|bau|baue|schreib|schreibe|änder*"
                "|aktualisier*|entfern*|lösch*|ergänz*|committe",
                "implementieren|hinzufügen|erstellen|einbauen",
            ),
            "investigate": (
                "^ erklär*|warum|wieso|weshalb|wie|was|wo|welche*|finde|such|suche|untersuch*"
                "|zeig|zeige|analysier*",
                "erklären|untersuchen|herausfinden|analysieren",
            ),
        },
        "intent_fallback": {
            "fix": ("fehler*|kaputt|absturz|stürzt|funktioniert_nicht", "schlägt ... fehl"),
        },
    },
}

# -- the phrase matcher --------------------------------------------------------------------

_EXACT, _PREFIX, _SUFFIX, _CONTAINS, _ANY = range(5)
_ALT, _GAP = 0, 1
_PUNCT = frozenset(",.!?;:")
_CLAUSE_BREAKS = frozenset(";:—")
# ", not"/", but" ... continue a thought: "use tabs, not spaces" is one clause.
_JOINERS = frozenset({"not", "but", "rather", "instead", "nicht", "sondern", "statt"})
_TRANS = str.maketrans(
    {
        **{c: f" {c} " for c in _PUNCT},
        **dict.fromkeys('"()[]{}<>*`~=+|\\/#@$^&“”„«»', " "),
        "’": "'",
        "‘": "'",
        "ʼ": "'",
    }
)

if TYPE_CHECKING:
    Word = tuple[int, str]
    Spec = tuple[int, Any, Any]  # (_ALT, optional, alternatives) | (_GAP, max or -1, None)


class Pattern:
    """One compiled phrase pattern."""

    __slots__ = ("anchored", "needles", "source", "specs")

    def __init__(self, source: str, words: dict[str, str]) -> None:
        self.source = source
        items = source.split()
        self.anchored = bool(items) and items[0] == "^"
        if self.anchored:
            items = items[1:]
        self.specs: tuple[Spec, ...] = tuple(_spec(item, words) for item in items)
        # Substrings one of which the clause must contain: a C-speed pre-check that lets
        # almost every pattern be skipped without running the matcher.
        self.needles: tuple[str, ...] = ()
        for kind, optional, alts in self.specs:
            if kind == _ALT and not optional:
                if all(seq[0][0] != _ANY for seq in alts):
                    self.needles = tuple(seq[0][1] for seq in alts)
                break

    def __repr__(self) -> str:
        return f"Pattern({self.source!r})"

    def ends(self, toks: list[str], start: int) -> Iterator[int]:
        """Every token index where a match starting at ``start`` can end."""
        return _ends(self.specs, 0, toks, start)

    def search(self, clause: Clause, starts: list[int]) -> bool:
        if self.needles and not any(n in clause.text for n in self.needles):
            return False
        toks = clause.toks
        positions = starts if self.anchored else range(len(toks))
        return any(next(self.ends(toks, p), None) is not None for p in positions)


def _word(text: str) -> Word:
    if "*" not in text and text != "%":
        return (_EXACT, text)  # by far the most common: checked first
    if text == "%":
        return (_ANY, "")
    if len(text) > 2 and text[0] == "*" and text[-1] == "*":
        return (_CONTAINS, text[1:-1])
    if len(text) > 1 and text[0] == "*":
        return (_SUFFIX, text[1:])
    if len(text) > 1 and text[-1] == "*":
        return (_PREFIX, text[:-1])
    return (_EXACT, text)


def _spec(item: str, words: dict[str, str]) -> Spec:
    if item == "...":
        return (_GAP, -1, None)
    if item.startswith("..") and item[2:].isdigit():
        return (_GAP, int(item[2:]), None)
    optional = len(item) > 1 and item.endswith("?")
    if optional:
        item = item[:-1]
    if item.startswith("@"):
        item = words[item[1:]]
    alts = tuple([tuple([_word(w) for w in alt.split("_")]) for alt in item.split("|")])
    return (_ALT, optional, alts)


def _word_ok(word: Word, tok: str) -> bool:
    kind, text = word
    if kind == _EXACT:
        return tok == text
    if kind == _PREFIX:
        return tok.startswith(text)
    if kind == _SUFFIX:
        return tok.endswith(text)
    if kind == _CONTAINS:
        return text in tok
    return tok not in _PUNCT


def _ends(specs: tuple[Spec, ...], k: int, toks: list[str], i: int) -> Iterator[int]:
    if k == len(specs):
        yield i
        return
    kind, a, alts = specs[k]
    n = len(toks)
    if kind == _GAP:
        hi = n if a < 0 else min(n, i + a)
        for j in range(i, hi + 1):
            yield from _ends(specs, k + 1, toks, j)
        return
    if a:  # optional
        yield from _ends(specs, k + 1, toks, i)
    for seq in alts:
        j = i
        for word in seq:
            if j >= n or not _word_ok(word, toks[j]):
                break
            j += 1
        else:
            yield from _ends(specs, k + 1, toks, j)


class Clause:
    """A clause's tokens and their joined text (for the needle pre-check)."""

    __slots__ = ("_starts", "text", "toks")

    def __init__(self, toks: list[str]) -> None:
        self.toks = toks
        self.text = " ".join(toks)
        self._starts: dict[tuple[str, bool], list[int]] = {}

    def starts(self, lang: Language, with_ask: bool) -> list[int]:
        """Where a ``^`` pattern may start: 0, or after filler words (and request openers)."""
        key = (lang.code, with_ask)
        found = self._starts.get(key)
        if found is None:
            phrases = lang.lead + lang.ask if with_ask else lang.lead
            toks = self.toks
            seen = {0}
            todo = [0]
            while todo:
                p = todo.pop()
                for phrase in phrases:
                    for q in phrase.ends(toks, p):
                        while q < len(toks) and toks[q] in _PUNCT:
                            q += 1
                        if q > p and q not in seen:
                            seen.add(q)
                            todo.append(q)
            found = self._starts[key] = sorted(seen)
        return found


class Language:
    """One entry of :data:`LANGUAGES`, compiled."""

    def __init__(self, code: str, spec: dict[str, Any]) -> None:
        words: dict[str, str] = spec.get("words", {})
        self.code = code
        self.interjections = frozenset(spec.get("interjections", "").split("|"))

        def compile_all(sources: tuple[str, ...]) -> list[Pattern]:
            return [Pattern(s, words) for s in sources]

        self.lead = compile_all(spec.get("lead", ()))
        self.ask = compile_all(spec.get("ask", ()))
        self.kinds = {
            kind: compile_all(spec.get(kind, ()))
            for kind in ("decision", "decision_not", "role", "role_not")
        }
        self.intents = {k: compile_all(v) for k, v in spec.get("intent", {}).items()}
        self.fallbacks = {k: compile_all(v) for k, v in spec.get("intent_fallback", {}).items()}

    def match(self, kind: str, clause: Clause) -> bool:
        return any(p.search(clause, clause.starts(self, False)) for p in self.kinds[kind])

    def match_intent(self, intent: str, clause: Clause, fallback: bool = False) -> bool:
        table = self.fallbacks if fallback else self.intents
        return any(p.search(clause, clause.starts(self, True)) for p in table.get(intent, ()))


_languages: list[Language] | None = None


def languages() -> list[Language]:
    """:data:`LANGUAGES`, compiled once per process."""
    global _languages
    if _languages is None:
        _languages = [Language(code, spec) for code, spec in LANGUAGES.items()]
    return _languages


# -- analysis ------------------------------------------------------------------------------


class Sentence:
    """A sentence as written (for the event) and its normalised clauses (for matching)."""

    __slots__ = ("clauses", "question", "text")

    def __init__(self, text: str, clauses: list[Clause]) -> None:
        self.text = text
        self.clauses = clauses
        self.question = text.endswith("?")


# Prompts the client submits on the user's behalf, not words of the user: Claude Code
# 2.1.3xx fires UserPromptSubmit with a ``<task-notification>`` when background work
# ends (extract.ongoing keeps it as a job_end). Recording it as the user's request would
# put it at the top of the resume.
CLIENT_PROMPT_TAGS = (*NOTIFICATION_TAGS, "<system-reminder>", "<local-command-")


def is_client_prompt(text: str) -> bool:
    return text.lstrip().startswith(CLIENT_PROMPT_TAGS)


def clean(prompt: str | None) -> str:
    """The user's prompt with ``<private>`` spans replaced by their mark; ``""`` when
    nothing else is left (a prompt that is all private is no request to record).

    Prompts written by the client itself (see ``CLIENT_PROMPT_TAGS``) count as empty.
    """
    if not prompt or is_client_prompt(prompt):
        return ""
    text = redact.strip_private(prompt).strip()
    return text if text.replace(redact.PRIVATE_MARK, "").strip() else ""


def is_slash_command(text: str) -> bool:
    """``/greet Alice`` is a command; ``/home/dev/x is broken`` is a path."""
    if not text.startswith("/") or len(text) < 2:
        return False
    head = text[1:].split(None, 1)[0]
    return "/" not in head and (head[0].isalnum() or head[0] == "_")


def _without_fences(text: str) -> str:
    """``text`` without fenced code blocks: pasted code is not an instruction."""
    out: list[str] = []
    pos = 0
    while True:
        start = text.find("```", pos)
        if start < 0:
            out.append(text[pos:])
            break
        out.append(text[pos:start])
        end = text.find("```", start + 3)
        if end < 0:
            break
        pos = end + 3
        out.append("\n")
    return "".join(out)


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for tok in text.lower().translate(_TRANS).split():
        if not tok.strip("-–—"):
            out.append("—")  # a dash between words separates clauses
            continue
        tok = tok.strip("'-–—")
        if tok:
            out.append(tok)
    # A list marker ("1." / "2)") is not part of what was said.
    while out and (out[0].isdigit() or out[0] in _PUNCT or out[0] == "—"):
        out.pop(0)
    return out[:SENTENCE_TOKENS]


def _clauses(toks: list[str], interjections: frozenset[str]) -> list[Clause]:
    pieces: list[list[str]] = [[]]
    for i, tok in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if tok in _CLAUSE_BREAKS or (tok == "," and nxt not in _JOINERS):
            pieces.append([])
        else:
            pieces[-1].append(tok)
    clauses: list[Clause] = []
    pending: list[str] = []
    for piece in pieces:
        words = [t for t in piece if t not in _PUNCT]
        if not words:
            continue
        if pending:
            piece = [*pending, ",", *piece]
            pending = []
        if len(words) == 1 and words[0] in interjections:
            pending = piece
            continue
        clauses.append(Clause(piece))
    if pending:
        clauses.append(Clause(pending))
    return clauses


def sentences(text: str) -> list[Sentence]:
    """The analysed head of ``text`` as sentences of clauses."""
    head = text[:ANALYSE_CHARS]
    if "```" in head:
        head = _without_fences(head)
    interjections = frozenset().union(*(lang.interjections for lang in languages()))
    out: list[Sentence] = []
    for line in head.splitlines():
        # Sentence ends: ". " "! " "? " within a line (a line break always ends one).
        for raw in line.replace(". ", ".\n").replace("! ", "!\n").replace("? ", "?\n").split("\n"):
            sentence = raw.strip()
            if not sentence:
                continue
            clauses = _clauses(_tokens(sentence), interjections)
            if clauses:
                out.append(Sentence(sentence, clauses))
                if len(out) >= MAX_SENTENCES:
                    return out
    return out


def _hits(parsed: list[Sentence], kind: str, *, skip_questions: bool, limit: int) -> list[str]:
    """Sentences with a clause that matches ``kind`` and not ``kind_not``, in any language."""
    langs = languages()
    found: list[str] = []
    for sentence in parsed:
        if skip_questions and sentence.question:
            continue  # "why not use X instead?" asks; it does not decide
        for clause in sentence.clauses:
            if any(lang.match(kind + "_not", clause) for lang in langs):
                continue
            if any(lang.match(kind, clause) for lang in langs):
                found.append(sentence.text)
                break
        if len(found) >= limit:
            break
    return found


def decisions(parsed: list[Sentence]) -> list[str]:
    """Sentences that correct the model or decide something."""
    return _hits(parsed, "decision", skip_questions=True, limit=MAX_DECISIONS)


def roles(parsed: list[Sentence]) -> list[str]:
    """Sentences that set a persona or a standing instruction."""
    return _hits(parsed, "role", skip_questions=False, limit=MAX_ROLES)


def intent(parsed: list[Sentence]) -> str:
    """What the request asks for: one of :data:`INTENTS`."""
    langs = languages()
    head = parsed[:INTENT_SENTENCES]
    for sentence in head:
        for clause in sentence.clauses:
            for name in INTENT_ORDER:
                if any(lang.match_intent(name, clause) for lang in langs):
                    return name
    if any(s.question for s in head):
        return "investigate"  # in every language a question asks to find something out
    for name in INTENT_ORDER:
        for sentence in head:
            for clause in sentence.clauses:
                if any(lang.match_intent(name, clause, fallback=True) for lang in langs):
                    return name
    return "other"


# -- extractors ----------------------------------------------------------------------------


def user_prompt(inp: HookInput) -> list[Draft]:
    """The prompt itself → ``user_prompt {text}`` (private spans removed, trimmed)."""
    text = clean(inp.prompt)
    if not text:
        return []
    return [
        ("user_prompt", {"text": masked_excerpt(text, PROMPT_HEAD, PROMPT_TAIL, PROMPT_MIDDLE)})
    ]


def signals(inp: HookInput) -> list[Draft]:
    """``intent``, ``decision`` and ``role`` events read from the prompt's wording."""
    text = clean(inp.prompt)
    if not text or is_slash_command(text):
        return []  # a slash command's words are its arguments, not instructions
    parsed = sentences(text)
    if not parsed:
        return []
    drafts: list[Draft] = [("intent", {"intent": intent(parsed)})]
    drafts.extend(("decision", {"text": clip(t, SENTENCE_CHARS)}) for t in decisions(parsed))
    drafts.extend(("role", {"text": clip(t, SENTENCE_CHARS)}) for t in roles(parsed))
    return drafts


def urls(inp: HookInput) -> list[Draft]:
    """URLs the user cited → ``url_ref``."""
    from ctxmode.extract.agents import url_refs

    return url_refs(clean(inp.prompt))


def ask_user(inp: HookInput) -> list[Draft]:
    """AskUserQuestion: each answered question is a decision the user made."""
    answers = inp.tool_input.get("answers")
    if not isinstance(answers, dict):
        response = inp.tool_response
        answers = response.get("answers") if isinstance(response, dict) else None
    if not isinstance(answers, dict):
        return []
    drafts: list[Draft] = []
    for question, answer in list(answers.items())[:MAX_DECISIONS]:
        if isinstance(answer, list):
            answer = ", ".join(str(a) for a in answer)
        if isinstance(question, str) and isinstance(answer, str) and answer.strip():
            text = f"{question.strip()} → {answer.strip()}"
            drafts.append(("decision", {"text": clip(text, SENTENCE_CHARS)}))
    return drafts
