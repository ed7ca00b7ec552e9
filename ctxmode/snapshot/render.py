"""Rendering, pure: XML escaping, the elements and their attributes (:class:`Item` and
:class:`Section`, each rendered at a detail level), the lookup hints, the root element
and the preface. What is rendered (which items are still alive, at which level) is
decided by :mod:`ctxmode.snapshot.selection`; which items are candidates at all by
:mod:`ctxmode.snapshot.sections`."""

from __future__ import annotations

from ctxmode import redact
from ctxmode.snapshot.text import clean, cut, cut_tail, nbytes, pre

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ctxmode.events import SessionEvent

# How to look things up, said once: the command is written once, in <search> after the
# preface (the absolute path of the program and the project, as the hook's environment
# resolves them), and each section's <lookup> holds only the options that list what the
# section leaves out, so the path is not repeated in every section (it was ~15% of a
# 4 KB snapshot).
LOOKUP_SENTENCE = (
    "Run the search command below with a few words for any other detail, or with a "
    "section's lookup for what it leaves out."
)
PREFACE = (
    "Facts recorded by ctxmode from the earlier part of this session, before the context "
    "was compacted. " + LOOKUP_SENTENCE
)
# An end-of-session snapshot as stored; handed to another session, provenance() says more.
END_PREFACE = "Facts recorded by ctxmode in session {session} until it ended. " + LOOKUP_SENTENCE

_MIN_CAP = 20  # shortening never goes below this many characters per value
_QUERY_CHARS = 60
SESSION_CHARS = 64
TIME_CHARS = 32


def esc(s: str) -> str:
    """Escape element text."""
    if "&" in s:
        s = s.replace("&", "&amp;")
    if "<" in s:
        s = s.replace("<", "&lt;")
    if ">" in s:
        s = s.replace(">", "&gt;")
    return s


def esc_attr(s: str) -> str:
    """Escape an attribute value (always written between double quotes)."""
    s = esc(s)
    if '"' in s:
        s = s.replace('"', "&quot;")
    if "'" in s:
        s = s.replace("'", "&apos;")
    return s


def shell_quote(s: str) -> str:
    """Quote ``s`` as one POSIX shell word (single quotes; ``'`` becomes ``'\\''``)."""
    return "'" + s.replace("'", "'\\''") + "'"


# The default number of matches a search shows: a lookup asks for more when its section
# stands for more (up to LOOKUP_MAX: the rest, the search's last line says how to get).
SEARCH_DEFAULT_LIMIT = 8  # ctxmode.cli.search.DEFAULT_LIMIT
LOOKUP_MAX = 50
SESSION_PREFIX = 8


def session_option(session_id: object) -> str:
    """``--session ID`` for a lookup: the id's first characters (as ``ctxmode search``
    shows them, and takes them), quoted for the shell when it must be."""
    sid = session_id if isinstance(session_id, str) else ""
    sid = clean(redact.visible(pre(sid, SESSION_CHARS), ""))
    if len(sid) > SESSION_PREFIX + 4:
        sid = sid[:SESSION_PREFIX]
    if not sid:
        return ""
    plain = all(ch.isalnum() or ch in "-_." for ch in sid)
    return "--session " + (sid if plain else shell_quote(sid))


def lookup_options(scope: str, kinds: str, total: int = 0, full: bool = False) -> str:
    """The options that make ``ctxmode search`` list a section's events: this session's
    events of these ``kinds`` (``--category C`` or ``--type T1,T2``), newest first,
    enough of them for the section's ``total``."""
    parts = [scope] if scope else []
    parts.append(kinds)
    if total > SEARCH_DEFAULT_LIMIT:
        parts.append(f"--limit {min(total, LOOKUP_MAX)}")
    if full:
        parts.append("--full")
    return " ".join(parts)


class Item:
    """One element of a section, renderable at decreasing detail levels."""

    __slots__ = ("attrs", "cache", "tag", "text", "text_cap")

    def __init__(
        self,
        tag: str,
        attrs: list[tuple[str, str, int]],
        text: str = "",
        text_cap: int = 0,
    ) -> None:
        # attrs: (name, cleaned value, cap); cap 0 = never cut, cap < 0 = cut keeping the tail.
        self.tag = tag
        self.attrs = attrs
        self.text = text
        self.text_cap = text_cap
        self.cache: dict[int, tuple[str, int]] = {}

    def render(self, level: int) -> tuple[str, int]:
        hit = self.cache.get(level)
        if hit is not None:
            return hit
        parts = ["<", self.tag]
        for name, value, cap in self.attrs:
            if cap > 0:
                value = cut(value, max(_MIN_CAP, cap >> level))
            elif cap < 0:
                value = cut_tail(value, max(_MIN_CAP, (-cap) >> level))
            parts += (" ", name, '="', esc_attr(value), '"')
        if self.text:
            text = cut(self.text, max(_MIN_CAP, self.text_cap >> level))
            parts += (">", esc(text), "</", self.tag, ">\n")
        else:
            parts.append("/>\n")
        out = "".join(parts)
        hit = (out, nbytes(out))
        self.cache[level] = hit
        return hit


class Section:
    """A section: attributes, a lookup command and items, with its budget state
    (``alive``, ``level``: set by :mod:`ctxmode.snapshot.selection`, read by render)."""

    __slots__ = (
        "alive",
        "attrs",
        "drop",
        "items",
        "key",
        "level",
        "lookup",
        "pinned",
        "tag",
        "total",
    )

    def __init__(
        self,
        tag: str,
        items: list[Item],
        lookup: str,
        *,
        total: int,
        attrs: list[tuple[str, str]] | None = None,
        drop: list[int] | None = None,
        key: tuple[int, ...] = (),
        pinned: bool = False,
    ) -> None:
        self.tag = tag
        self.items = items
        self.lookup = lookup  # already escaped, a whole line
        self.total = total  # how many items the section stands for (shown + omitted)
        self.attrs = attrs or []
        # Indices of ``items`` in the order they go when space runs out (display order
        # reversed unless the section says otherwise).
        self.drop = drop if drop is not None else list(range(len(items) - 1, -1, -1))
        # Key items (indices of ``items``): never dropped, whatever the budget; they are
        # only shortened. A section with key items, or ``pinned`` (its attributes are key
        # facts: a branch, uncommitted work), is never removed whole.
        self.key = key
        self.pinned = pinned or bool(key)
        self.alive = [True] * len(items)
        self.level = 0

    def shown(self) -> int:
        return sum(self.alive)

    def render(self) -> tuple[str, int]:
        parts = ["<", self.tag]
        for name, value in self.attrs:
            parts += (" ", name, '="', esc_attr(value), '"')
        omitted = self.total - self.shown()
        if omitted > 0:
            parts += (' omitted="', str(omitted), '"')
        parts += (">\n", self.lookup)
        for item, alive in zip(self.items, self.alive, strict=True):
            if alive:
                parts.append(item.render(self.level)[0])
        parts += ("</", self.tag, ">\n")
        head = "".join(parts)
        return head, nbytes(head)


def lookup_hint(scope: str, kinds: str, total: int = 0, full: bool = False) -> str:
    """A section's ``<lookup>``: the options to add to the search command (see
    :func:`lookup_options`)."""
    return f"<lookup>{esc(lookup_options(scope, kinds, total, full))}</lookup>\n"


def search_element(command: str) -> str:
    """The search command, once, after the preface: what every lookup is added to."""
    return f"<search>{esc(command)}</search>\n"


def root_open(
    events: Sequence[SessionEvent], session_id: object, compact_seq: object, kind: str
) -> str:
    first = last = ""
    for ev in events:
        stamp = getattr(ev, "created_at", None)
        if isinstance(stamp, str) and stamp:
            first = stamp
            break
    for ev in reversed(events):
        stamp = getattr(ev, "created_at", None)
        if isinstance(stamp, str) and stamp:
            last = stamp
            break
    sid = session_id if isinstance(session_id, str) else ""
    seq = compact_seq if isinstance(compact_seq, int) and not isinstance(compact_seq, bool) else 0
    attrs = [
        ("session", cut(clean(pre(sid, SESSION_CHARS)), SESSION_CHARS)),
        ("end" if kind == "end" else "compaction", str(seq)),
        ("events", str(len(events))),
    ]
    if first:
        attrs.append(("from", cut(clean(pre(first, TIME_CHARS)), TIME_CHARS)))
        attrs.append(("to", cut(clean(pre(last, TIME_CHARS)), TIME_CHARS)))
    body = "".join(f' {name}="{esc_attr(value)}"' for name, value in attrs)
    return f"<session_resume{body}>\n"


CLOSE = "</session_resume>\n"


def preface_text(session_id: object, kind: str) -> str:
    if kind != "end":
        return PREFACE
    sid = session_id if isinstance(session_id, str) else ""
    return END_PREFACE.format(session=cut(clean(pre(sid, SESSION_CHARS)), SESSION_CHARS))


def omitted_sections(gone: list[Section]) -> str:
    """One element that counts the items of each section removed whole, in display order."""
    if not gone:
        return ""
    body = "".join(f' {s.tag}="{max(s.total, 1)}"' for s in gone)
    return f"<omitted_sections{body}/>\n"
