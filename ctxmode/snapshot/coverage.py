"""What the client's compaction summary kept of the snapshot's key items (pure).

After a compaction the model has two accounts of the earlier work: the summary the client
had the model write, and ctxmode's snapshot. The honest figure of what ctxmode adds is
what the snapshot restored that the summary did not carry. This module reads the key
items out of a stored snapshot and tells, for each, whether the summary carries it.

Key items (by class, as the snapshot holds them; an item the budget left out of the
snapshot was not restored, so it does not count):

- ``file``: each ``<files_changed>/<file path>``;
- ``task``: each open ``<tasks>/<task>`` (the snapshot lists no completed one);
- ``commit``: the last commit, the first ``<git>/<commit>`` (newest first);
- ``error``: each unresolved ``<errors>/<error>`` (the first, the newest, is always
  there: the snapshot keeps it at any budget);
- ``request``: the last request, the last ``<requests>/<prompt>``;
- ``instruction``: each standing instruction, ``<decisions>/<role>`` and ``<decision>``,
  unless it is the last request itself (a prompt of one sentence that decides is stored
  as a decision too; snapshots of earlier versions show it twice): counted once, as the
  request.

Matching is by structure first, then by normalised text. Normalised text is the text
case-folded and cut into words of letters, digits and ``_`` (so ``src/app.py`` reads as
``src app py`` in the snapshot and in the summary alike); *a phrase is carried* when its
words occur in the summary in a row. *Content words* are the words of three letters or
more that are not common function words, with a plural ``s``, ``es`` or an ``ed``/``ing``
ending taken off (``fixed`` and ``fixes`` are ``fix``); *the words are carried* when at
least :data:`OVERLAP` of an item's content words (two at least) occur anywhere in the
summary, which is how a paraphrase ("fixed the redirect loop on login" for the commit
"Fix login redirect loop") still counts.

- a file is carried by its path as a phrase, or by its file name as a phrase;
- a commit by a word of the summary of 7+ hex digits that begins its sha (or that its
  sha begins), or by its message (phrase, or the words);
- a task by its subject (phrase, or the words);
- an error by its key (the command or path it failed on) as a phrase, by the file name
  of a path in its key, or by the words of its first line;
- the last request by the phrase of its first :data:`REQUEST_PREFIX_WORDS` words (the
  normalised prefix), or by the words of its first 30 content words;
- an instruction by its text (phrase, or the words).

A pointer snapshot (``snapshot.repeat``) restores nothing itself: it has no key items.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

OVERLAP = 0.6
REQUEST_PREFIX_WORDS = 8
_SHA_MIN = 7
_STOP_WORDS = (
    "the and for with that this from into onto then than but not are was were has have had "
    "its our your you they them their there here what when where which who how why all any "
    "can could should would will shall may might must also just only very more most some "
    "such each other been being does did done doing use using used out about over under "
    "after before again now new file files"
)
_STOP = frozenset(_STOP_WORDS.split(" "))


class KeyItem:
    """One key item of a snapshot: its class, its text as shown, and what matches it
    (``key``: an error's command or path; ``sha``: a commit's)."""

    __slots__ = ("key", "kind", "sha", "text")

    def __init__(self, kind: str, text: str, key: str = "", sha: str = "") -> None:
        self.kind = kind
        self.text = text
        self.key = key
        self.sha = sha

    def __repr__(self) -> str:
        return f"KeyItem({self.kind!r}, {self.text!r})"

    def shown(self) -> str:
        """The item as a report names it: ``file src/a.py``, ``error pytest -q``."""
        what = self.key if self.kind == "error" and self.key else self.text
        if self.sha:
            what = f"{self.sha[:_SHA_MIN]} {what}"
        return f"{self.kind} {_short(what)}"


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- the snapshot's key items --------------------------------------------------------------


def _text(node: Element) -> str:
    return " ".join((node.text or "").split()).rstrip("…").strip()


def _is_request(note: Element, request: list[str]) -> bool:
    """Whether an instruction is the last request itself (its words; a note cut at its cap,
    240 characters, where the request was not, 700: the request's first words)."""
    said = words(_text(note))
    if not said:
        return False
    if (note.text or "").endswith("…"):
        return request[: len(said)] == said
    return said == request


def key_items(snapshot: str) -> list[KeyItem]:
    """The key items of a stored ``<session_resume>`` (none when it does not parse)."""
    from xml.etree.ElementTree import ParseError, fromstring

    try:
        root = fromstring(snapshot)  # ctxmode's own output: no DTD, no entities of its own
    except (ParseError, ValueError):
        return []
    items: list[KeyItem] = []
    prompts = root.findall("requests/prompt")
    request = ""
    if prompts and _text(prompts[-1]):
        request = _text(prompts[-1])
        items.append(KeyItem("request", request))
    said = words(request)
    for task in root.findall("tasks/task"):
        if _text(task):
            items.append(KeyItem("task", _text(task)))
    for file in root.findall("files_changed/file"):
        path = (file.get("path") or "").lstrip("…")
        if path:
            items.append(KeyItem("file", path))
    commit = root.find("git/commit")
    if commit is not None:
        items.append(KeyItem("commit", _text(commit), sha=commit.get("sha", "")))
    for error in root.findall("errors/error"):
        items.append(KeyItem("error", _text(error), key=(error.get("key") or "").rstrip("…")))
    for note in root.findall("decisions/*"):
        if note.tag in ("role", "decision") and _text(note):
            if _is_request(note, said):
                continue  # the request itself: counted once, as the request
            items.append(KeyItem("instruction", _text(note)))
    return items


# -- matching ------------------------------------------------------------------------------


def words(text: str) -> list[str]:
    """The text case-folded, as words of letters, digits and ``_``."""
    out: list[str] = []
    current: list[str] = []
    for ch in text.casefold():
        if ch.isalnum() or ch == "_":
            current.append(ch)
        elif current:
            out.append("".join(current))
            current = []
    if current:
        out.append("".join(current))
    return out


def _stem(word: str) -> str:
    for ending in ("ing", "ed", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def content(tokens: list[str]) -> list[str]:
    """The content words of ``tokens``, stemmed (see the module's docstring)."""
    return [_stem(w) for w in tokens if len(w) >= 3 and w not in _STOP and not w.isdecimal()]


class Summary:
    """A summary, normalised once for every item matched against it."""

    __slots__ = ("joined", "stems", "tokens")

    def __init__(self, text: str) -> None:
        self.tokens = words(text)
        self.joined = " " + " ".join(self.tokens) + " "
        self.stems = frozenset(content(self.tokens))

    def has_phrase(self, text: str) -> bool:
        phrase = words(text)
        return bool(phrase) and (" " + " ".join(phrase) + " ") in self.joined

    def has_words(self, text: str, limit: int = 30) -> bool:
        wanted = list(dict.fromkeys(content(words(text))))[:limit]
        if len(wanted) < 2:
            return False
        found = sum(1 for w in wanted if w in self.stems)
        return found >= OVERLAP * len(wanted)

    def has_sha(self, sha: str) -> bool:
        sha = sha.casefold()
        return len(sha) >= _SHA_MIN and any(
            len(w) >= _SHA_MIN
            and all(c in "0123456789abcdef" for c in w)
            and (sha.startswith(w) or w.startswith(sha))
            for w in self.tokens
        )


def _basename(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rpartition("/")[2]


def carried(item: KeyItem, summary: Summary) -> bool:
    """Whether ``summary`` carries ``item`` (the rules of the module's docstring)."""
    if item.kind == "file":
        return summary.has_phrase(item.text) or summary.has_phrase(_basename(item.text))
    if item.kind == "commit":
        return (
            summary.has_sha(item.sha)
            or summary.has_phrase(item.text)
            or summary.has_words(item.text)
        )
    if item.kind == "error":
        key = item.key
        if key and summary.has_phrase(key):
            return True
        # A path in the key (the file, or a command's argument) by its file name.
        paths = [w for w in key.split() if ("/" in w or "." in w.strip(".")) and w[:1] != "-"]
        if any(summary.has_phrase(_basename(path)) for path in paths):
            return True
        return summary.has_words(item.text.partition(" | ")[0])
    if item.kind == "request":
        prefix = " ".join(words(item.text)[:REQUEST_PREFIX_WORDS])
        return summary.has_phrase(prefix) or summary.has_words(item.text)
    return summary.has_phrase(item.text) or summary.has_words(item.text)


def coverage(snapshot: str, summary: str | None) -> dict[str, object]:
    """What the summary kept of the snapshot's key items.

    ``{"total": N, "kept": K or None, "items": [{"kind", "text", "shown", "kept"}],
    "restored": [shown, …]}``: ``restored`` lists the items in the snapshot and not in the
    summary (all of them when there is no summary; then ``kept`` is None).
    """
    items = key_items(snapshot)
    matcher = Summary(summary) if summary is not None else None
    rows = []
    for item in items:
        kept = carried(item, matcher) if matcher is not None else None
        rows.append({"kind": item.kind, "text": item.text, "shown": item.shown(), "kept": kept})
    return {
        "total": len(items),
        "kept": None if matcher is None else sum(1 for row in rows if row["kept"]),
        "items": rows,
        "restored": [row["shown"] for row in rows if not row["kept"]],
    }
