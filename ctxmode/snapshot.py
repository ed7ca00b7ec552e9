"""The resume snapshot: a session's events → a small, well-formed ``<session_resume>`` XML.

Pure and hot-path safe: it runs inside the PreCompact and SessionStart hooks, so it does
no I/O, reads no clock and imports nothing heavy (no ``json``, ``re``, ``typing`` or
``xml``). The XML is written by hand with our own escaping, which is all a document of
fixed shape needs.

The document is filled by importance (see ``_RANK``): when it exceeds the byte budget,
the least important section is shortened, then loses items (least important first), then
goes entirely (counted in ``<omitted_sections>``), and so on up to the last request, which
is only ever shortened. Every item is rendered whole, so the output always parses.

Shape (each section only when it has content; ``omitted`` only when items were left out)::

    <session_resume session=".." compaction="2" events="312" from="<first created_at>" to="..">
    <preface>Facts recorded by ctxmode …</preface>
    <requests omitted="9"><lookup>ctxmode search '…'</lookup><goal>…</goal><prompt intent="fix">…
    <tasks completed="3"> <task id="2" status="in_progress">subject</task> …
    <files_changed> <file path="src/a.py" change="create,edit" count="3"/> …   (newest first)
    <files_read> <file path="README.md" count="2"/> …
    <errors resolved="2"> <error tool="Bash" key="pytest -q" count="2">first lines</error>
    <decisions> <role>…</role> <decision>…</decision>
    <plan> <text path="…">the approved plan</text>
    <rules> <rule path="CLAUDE.md" change="read"/>
    <git branch="feature/x" changed_since_commit="2"> <commit sha="abc1234">msg</commit> <op>push …
    <environment cwd="/abs/dir"> <setup kind="venv" tool="python">detail</setup>
    <subagents> <subagent type="reviewer" count="2">description</subagent>
    <mcp> <tool server="billing" name="lookup" count="3"/>
    <references> <url>…</url> <web_search>…</web_search>
    <omitted_sections git="15" references="5"/>   (sections removed whole to fit the budget)
    </session_resume>

Every ``<lookup>`` holds ``{search_command} '{query}'``: the query is taken from the
section's top item and never contains ``&``, ``<`` or ``>``, so the element's raw text is
the command exactly as the Bash tool must run it.

Two kinds, numbered separately per session (``session_resume.compact_seq``): a
compaction snapshot (``kind="compact"``, root ``compaction="N"``: the session's N-th
compaction, handed back to that same session) and an end-of-session snapshot
(``kind="end"``, root ``end="N"``: the N-th time the session ended, kept for a later
session). When a snapshot is handed to a *different* session (``inject_on_startup``,
``inject_on_clear``, a resume under a new id), :func:`provenance` rewrites its root and
preface to say so: where it comes from, when that session ended, why it is given::

    <session_resume source="previous-session" from_session=".." end="1"
        ended_at="2026-12-02T14:51:20.123Z" reason="inject_on_startup" events=".." ...>
"""

from __future__ import annotations

from ctxmode import fastjson, redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from ctxmode.events import SessionEvent

DEFAULT_BUDGET = 4096
MIN_BUDGET = 1024
# Claude Code replaces additionalContext over 10,000 characters by a file: stay well below.
MAX_CHARS = 9000

PREFACE = (
    "Facts recorded by ctxmode from the earlier part of this session, before the context "
    "was compacted. Each lookup is a shell command that prints the details a section leaves out."
)
_LOOKUP_SENTENCE = "Each lookup is a shell command that prints the details a section leaves out."
# An end-of-session snapshot as stored; handed to another session, provenance() says more.
END_PREFACE = "Facts recorded by ctxmode in session {session} until it ended. " + _LOOKUP_SENTENCE
# Handed to another session: where it comes from, when, and why (REASONS).
PROVENANCE_PREFACE = (
    "Facts recorded by ctxmode in an earlier session (id {session}, {when}), not in this "
    "one; given {why}. " + _LOOKUP_SENTENCE
)
REASONS = {
    "inject_on_startup": "at this fresh start because the inject_on_startup setting is on",
    "inject_on_clear": "after /clear because the inject_on_clear setting is on",
    "resume": "because this session was resumed under a new id, with no history of its own",
    "fork": "because this session was forked under a new id, with no history of its own",
}
# Room an end snapshot leaves for provenance(): the longer root and preface it gets
# when handed to another session, so that it still fits its budget then.
PROVENANCE_RESERVE = 320

# How many items of each kind are candidates at all (the rest only count as omitted).
_MAX_TASKS = 12
_MAX_CHANGED = 10
_MAX_READ = 5
_MAX_ERRORS = 4
_MAX_NOTES = 6
_MAX_RULES = 6
_MAX_COMMITS = 5
_MAX_OPS = 4
_MAX_SETUPS = 5
_MAX_AGENTS = 4
_MAX_MCP = 5
_MAX_REFS = 5

# Drop rank: higher is dropped first. Display order is the order of ``_SECTIONS``;
# files only read are displayed next to files changed but matter less than the plan.
_RANK = {
    "requests": 1,
    "tasks": 2,
    "files_changed": 3,
    "errors": 4,
    "decisions": 5,
    "plan": 6,
    "files_read": 7,
    "rules": 8,
    "git": 9,
    "environment": 10,
    "subagents": 11,
    "mcp": 12,
    "references": 13,
}

_MIN_CAP = 20  # shortening never goes below this many characters per value
_MAX_LEVEL = 4  # detail levels 0 (full) … 4 (caps divided by 16)
_QUERY_CHARS = 60
_SESSION_CHARS = 64
_TIME_CHARS = 32
_ELLIPSIS = "…"

# ---------------------------------------------------------------------------------------
# Text: cleaning, escaping, cutting


def _legal(c: str) -> bool:
    """XML 1.0 Char, minus C1 controls and DEL (legal but never meaningful here)."""
    o = ord(c)
    return (
        0x20 <= o < 0x7F
        or 0xA0 <= o <= 0xD7FF
        or 0xE000 <= o <= 0xFFFD
        or o >= 0x10000
        or c == "\n"
        or c == "\t"
    )


def _clean(s: str) -> str:
    """One line: whitespace runs become one space; characters XML 1.0 forbids are removed;
    invisible and direction-changing characters (bidi overrides, zero-width) are shown as
    ``\\uXXXX`` escapes, so the text reads as what it is."""
    s = " ".join(s.split())
    # ``isprintable`` runs at C speed and is False for every control character, surrogate
    # and non-character (U+FFFE/U+FFFF), so the per-character loop runs only when needed.
    if s.isprintable():
        return s
    return redact.visible("".join([c for c in s if _legal(c)]).strip())


def _clean_lines(s: str) -> str:
    """Like :func:`_clean`, but keeps line breaks (plans are Markdown); blank lines go."""
    return "\n".join([line for line in map(_clean, s.splitlines()) if line])


def _pre(s: str, cap: int) -> str:
    """Cut a raw value to a safe working length before cleaning (hostile values are huge)."""
    return s if len(s) <= cap * 4 + 256 else s[: cap * 4 + 256] + _ELLIPSIS


def _esc(s: str) -> str:
    """Escape element text."""
    if "&" in s:
        s = s.replace("&", "&amp;")
    if "<" in s:
        s = s.replace("<", "&lt;")
    if ">" in s:
        s = s.replace(">", "&gt;")
    return s


def _esc_attr(s: str) -> str:
    """Escape an attribute value (always written between double quotes)."""
    s = _esc(s)
    if '"' in s:
        s = s.replace('"', "&quot;")
    if "'" in s:
        s = s.replace("'", "&apos;")
    return s


def _cut(s: str, n: int) -> str:
    """At most ``n`` characters, preferring a word boundary; a cut ends in an ellipsis."""
    if len(s) <= n:
        return s
    head = s[: redact.cut_at(s, n - 1)]  # never inside a [REDACTED:…] mask
    space = head.rfind(" ", (n * 3) // 4)
    if space > 0:
        head = head[:space]
    return head.rstrip() + _ELLIPSIS


def _cut_tail(s: str, n: int) -> str:
    """At most ``n`` characters keeping the end: a path's file name says the most."""
    if len(s) <= n:
        return s
    return _ELLIPSIS + s[redact.cut_from(s, len(s) - n + 1) :]


def _nbytes(s: str) -> int:
    # ``isascii`` is O(1) on CPython: the common case costs no encoding.
    return len(s) if s.isascii() else len(s.encode("utf-8"))


def shell_quote(s: str) -> str:
    """Quote ``s`` as one POSIX shell word (single quotes; ``'`` becomes ``'\\''``)."""
    return "'" + s.replace("'", "'\\''") + "'"


def _query(raw: str, fallback: str) -> str:
    """A search query from an item's text: one line, no XML-special characters, short."""
    # Invisible characters split the text like & < > do: an escape would not match.
    q = _clean(redact.visible(_pre(raw, _QUERY_CHARS), "<"))
    if "&" in q or "<" in q or ">" in q:
        # Never escaped, so that the lookup reads exactly as the command to run: take the
        # first stretch of text between such characters that is long enough to be precise
        # (a substring of the item still matches a phrase or LIKE search).
        parts = [p.strip() for p in q.replace("&", "<").replace(">", "<").split("<")]
        q = next((p for p in parts if len(p) >= 12), max(parts, key=len))
    q = q.replace(_ELLIPSIS, "").lstrip("- ")  # a leading "-" would parse as an option
    if len(q) > _QUERY_CHARS:
        space = q.rfind(" ", 0, _QUERY_CHARS + 1)
        q = q[:space] if space >= _QUERY_CHARS // 2 else q[:_QUERY_CHARS]
    q = q.strip()
    return q or fallback


def _path_query(path: str) -> str:
    """A path as a query: whole when short, else its file name."""
    if len(path) <= _QUERY_CHARS:
        return path
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or path


# ---------------------------------------------------------------------------------------
# Rendering units


class _Item:
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
                value = _cut(value, max(_MIN_CAP, cap >> level))
            elif cap < 0:
                value = _cut_tail(value, max(_MIN_CAP, (-cap) >> level))
            parts += (" ", name, '="', _esc_attr(value), '"')
        if self.text:
            text = _cut(self.text, max(_MIN_CAP, self.text_cap >> level))
            parts += (">", _esc(text), "</", self.tag, ">\n")
        else:
            parts.append("/>\n")
        out = "".join(parts)
        hit = (out, _nbytes(out))
        self.cache[level] = hit
        return hit


class _Section:
    """A section: attributes, a lookup command and items, with its budget state."""

    __slots__ = ("alive", "attrs", "drop", "items", "keep", "level", "lookup", "tag", "total")

    def __init__(
        self,
        tag: str,
        items: list[_Item],
        lookup: str,
        *,
        total: int,
        attrs: list[tuple[str, str]] | None = None,
        drop: list[int] | None = None,
        keep: int = 0,
    ) -> None:
        self.tag = tag
        self.items = items
        self.lookup = lookup  # already escaped, a whole line
        self.total = total  # how many items the section stands for (shown + omitted)
        self.attrs = attrs or []
        # Indices of ``items`` in the order they go when space runs out (display order
        # reversed unless the section says otherwise).
        self.drop = drop if drop is not None else list(range(len(items) - 1, -1, -1))
        self.keep = keep  # items never dropped while other sections can still give way
        self.alive = [True] * len(items)
        self.level = 0

    def shown(self) -> int:
        return sum(self.alive)

    def drop_one(self) -> bool:
        """Drop the least important remaining item; False when none may go."""
        if self.shown() <= self.keep:
            return False
        for index in self.drop:
            if self.alive[index]:
                self.alive[index] = False
                return True
        return False

    def render(self) -> tuple[str, int]:
        parts = ["<", self.tag]
        for name, value in self.attrs:
            parts += (" ", name, '="', _esc_attr(value), '"')
        omitted = self.total - self.shown()
        if omitted > 0:
            parts += (' omitted="', str(omitted), '"')
        parts += (">\n", self.lookup)
        for item, alive in zip(self.items, self.alive, strict=True):
            if alive:
                parts.append(item.render(self.level)[0])
        parts += ("</", self.tag, ">\n")
        head = "".join(parts)
        return head, _nbytes(head)


# ---------------------------------------------------------------------------------------
# Reading events


def _fields(data: object) -> dict[Any, Any]:
    """The event's data as a dict; non-JSON text is kept under the key ``0``."""
    if isinstance(data, str):
        if data[:1] == "{":
            try:
                value = fastjson.loads(data)
            except ValueError:
                return {0: data}
            if isinstance(value, dict):
                return value
        return {0: data} if data else {}
    if isinstance(data, (bytes, bytearray)):
        return _fields(bytes(data).decode("utf-8", "replace"))
    return {}


def _s(d: dict[Any, Any], key: object) -> str:
    """A field as text: strings as they are, numbers (task ids) as digits, else empty."""
    value = d.get(key)
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def _main(d: dict[Any, Any], key: str) -> str:
    """The event's main field, falling back to plain-text data."""
    return _s(d, key) or _s(d, 0)


def _status(raw: str) -> str:
    return raw.strip().lower().replace("-", "_").replace(" ", "_")


def _bump(table: dict[Any, int], key: object) -> None:
    """Count ``key`` and move it to the end (dicts keep order: the end is the newest)."""
    count = table.pop(key, 0)
    table[key] = count + 1


class _State:
    """Everything the snapshot needs, folded from the events in one pass."""

    __slots__ = (
        "agents",
        "branch",
        "changed",
        "commits",
        "cwd",
        "errors",
        "last_commit",
        "mcp",
        "notes",
        "ops",
        "plan",
        "prompts",
        "read",
        "refs",
        "resolved",
        "rules",
        "setups",
        "task_hint",
        "tasks",
        "todos",
    )

    def __init__(self) -> None:
        self.prompts: list[list[str]] = []  # [text, intent]
        # task key → [shown id, subject, status, description]
        self.tasks: dict[str, list[str]] = {}
        self.todos: list[tuple[str, str]] = []  # (content, status) of the last TodoWrite
        self.task_hint = ""
        # path → [kinds in order of last use, count, last dedup key, last type, last index]
        self.changed: dict[str, list[Any]] = {}
        self.read: dict[str, int] = {}
        self.errors: dict[str, list[Any]] = {}  # key → [tool, key, error, count]
        self.resolved = 0
        # (tag, text) → (priority, role first, -index): sorted, the most important come first
        self.notes: dict[tuple[str, str], tuple[int, int, int]] = {}
        self.plan: tuple[str, str] | None = None
        self.rules: dict[str, bool] = {}  # path → edited
        self.branch: tuple[str, bool] | None = None
        self.commits: list[tuple[str, str, str]] = []  # (message, sha, dir)
        self.last_commit = -1
        self.ops: dict[str, list[Any]] = {}  # "op args" → [op, count, last index]
        self.cwd = ""
        self.setups: dict[tuple[str, str, str], int] = {}
        self.agents: dict[tuple[str, str], int] = {}
        self.mcp: dict[tuple[str, str], int] = {}
        self.refs: dict[tuple[str, str], int] = {}


def _on_prompt(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    text = _main(d, "text")
    if not text.strip():
        return
    if st.prompts and st.prompts[-1][0] == text:
        return  # the same prompt submitted twice in a row says nothing new
    st.prompts.append([text, ""])


def _on_intent(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    if st.prompts:  # the intent of the prompt it follows
        st.prompts[-1][1] = _main(d, "intent")


def _new_task(st: _State, d: dict[Any, Any], i: int) -> tuple[str, list[str]]:
    shown = _s(d, "id")
    key = shown or f"\0{i}"  # no id: the task cannot be updated, but it is still a task
    task = st.tasks.get(key)
    if task is None:
        task = st.tasks[key] = [shown, "", "pending", ""]
    return key, task


def _on_task_create(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    _key, task = _new_task(st, d, i)
    task[1] = _main(d, "subject")
    task[2] = _status(_s(d, "status")) or "pending"
    task[3] = _s(d, "description")
    st.task_hint = task[1]


def _on_task_update(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    if not _s(d, "id"):
        return  # an update of no task in particular changes nothing
    key, task = _new_task(st, d, i)
    status = _status(_s(d, "status"))
    if status == "deleted":
        del st.tasks[key]
        return
    if status:
        task[2] = status
    if "subject" in d:
        task[1] = _s(d, "subject")
    if "description" in d:
        task[3] = _s(d, "description")
    st.task_hint = task[1] or st.task_hint


def _on_task_list(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    listed = d.get("tasks")
    if not isinstance(listed, list):
        return
    # A full listing is the truth at that moment: it replaces what creates/updates built.
    tasks: dict[str, list[str]] = {}
    for entry in listed:
        if not isinstance(entry, dict):
            continue
        shown = _s(entry, "id")
        status = _status(_s(entry, "status")) or "pending"
        if not shown or status == "deleted":
            continue
        old = st.tasks.get(shown)
        tasks[shown] = [shown, _s(entry, "subject"), status, old[3] if old else ""]
    st.tasks = tasks


def _on_todo_write(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    todos = d.get("todos")
    if not isinstance(todos, list):
        return
    st.todos = [
        (_s(t, "content"), _status(_s(t, "status")) or "pending")
        for t in todos
        if isinstance(t, dict)
    ]


_CHANGE_WORD = {"file_edit": "edit", "file_delete": "delete", "rule_edit": "edit"}


def _on_change(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    path = _main(d, "path")
    if not path:
        return
    etype = ev.type
    if etype == "file_write":
        word = "create" if _s(d, "kind") == "create" else "write"
    else:
        word = _CHANGE_WORD[etype]
    dedup = ev.tool_use_id or ev.created_at
    entry = st.changed.pop(path, None)
    if entry is None:
        entry = [[word], 1, dedup, etype, i]
    else:
        kinds = entry[0]
        # A rule file's edit is reported twice (a file event and a rule event) by the same
        # tool call: count it once.
        same_call = (
            dedup is not None
            and dedup == entry[2]
            and etype != entry[3]
            and "rule_edit" in (etype, entry[3])
        )
        if not same_call:
            entry[1] += 1
        if word in kinds:
            kinds.remove(word)
        kinds.append(word)
        entry[2], entry[3], entry[4] = dedup, etype, i
    st.changed[path] = entry
    if etype != "file_delete":
        # A successful write of the file fixes an earlier failure on it.
        err = st.errors.pop(path, None)
        if err is not None:
            st.resolved += err[3]
    if etype == "rule_edit":
        st.rules.pop(path, None)
        st.rules[path] = True


def _on_read(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    path = _main(d, "path")
    if path:
        _bump(st.read, path)


def _on_rule_read(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    path = _main(d, "path")
    if path:
        edited = st.rules.pop(path, False)
        st.rules[path] = edited


def _first_lines(text: str) -> str:
    """The first informative lines of an error, joined on one line."""
    lines = [line for line in map(_clean, _pre(text, 400).splitlines()) if line]
    return " | ".join(lines[:3])


def _on_error(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    error = _s(d, "error") or _s(d, 0)
    key = _s(d, "key")
    # Without a key no later success can match it; its first line keeps it apart.
    ident = key if key else "\0" + _first_lines(error)
    entry = st.errors.pop(ident, None)
    count = entry[3] + 1 if entry else 1
    st.errors[ident] = [_s(d, "tool"), key, error, count]


def _on_resolved(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    key = _s(d, "key")
    if key:
        entry = st.errors.pop(key, None)
        if entry is not None:
            st.resolved += entry[3]


def _on_note(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    text = _main(d, "text")
    if not text.strip():
        return
    priority = ev.priority if isinstance(ev.priority, int) else 3
    key = (ev.type, text)
    st.notes.pop(key, None)  # the newest occurrence counts
    # A standing instruction outranks a decision of the same priority: it frames all work.
    st.notes[key] = (priority, 0 if ev.type == "role" else 1, -i)


def _on_plan(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    plan = _main(d, "plan")
    if plan.strip():
        st.plan = (plan, _s(d, "path"))


def _on_branch(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    branch = _main(d, "branch")
    if branch:
        st.branch = (branch, d.get("created") is True)


def _on_commit(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    st.commits.append((_main(d, "message"), _s(d, "sha"), _s(d, "dir")))
    st.last_commit = i


def _on_git_op(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    op = _s(d, "op")
    args = d.get("args")
    if isinstance(args, list):  # tolerate a list of arguments as well as a string
        args = " ".join(a for a in args if isinstance(a, str))
    text = " ".join(p for p in (op, args if isinstance(args, str) else "") if p) or _s(d, 0)
    if not text:
        return
    entry = st.ops.pop(text, None)
    st.ops[text] = [op, (entry[1] if entry else 0) + 1, i]


def _on_cwd(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    path = _main(d, "path")
    if path:
        st.cwd = path


def _on_env(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    key = (_s(d, "kind"), _s(d, "tool"), _s(d, "detail") or _s(d, 0))
    if any(key):
        _bump(st.setups, key)


def _on_subagent(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    key = (_s(d, "agent_type"), _main(d, "description"))
    if any(key):
        _bump(st.agents, key)


def _on_mcp(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    key = (_s(d, "server"), _s(d, "tool") or _s(d, 0))
    if any(key):
        _bump(st.mcp, key)


def _on_url(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    url = _main(d, "url")
    if url:
        _bump(st.refs, ("url", url))


def _on_web_search(st: _State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    query = _main(d, "query")
    if query:
        _bump(st.refs, ("web_search", query))


_HANDLERS: dict[str, Callable[[_State, dict[Any, Any], int, SessionEvent], None]] = {
    "file_read": _on_read,
    "file_write": _on_change,
    "file_edit": _on_change,
    "file_delete": _on_change,
    "rule_edit": _on_change,
    "rule_read": _on_rule_read,
    "cwd_change": _on_cwd,
    "env_setup": _on_env,
    "git_commit": _on_commit,
    "git_branch": _on_branch,
    "git_op": _on_git_op,
    "task_create": _on_task_create,
    "task_update": _on_task_update,
    "task_list": _on_task_list,
    "todo_write": _on_todo_write,
    "plan_exit": _on_plan,
    "user_prompt": _on_prompt,
    "decision": _on_note,
    "role": _on_note,
    "intent": _on_intent,
    "tool_error": _on_error,
    "output_error": _on_error,
    "error_resolved": _on_resolved,
    "subagent": _on_subagent,
    "mcp_call": _on_mcp,
    "web_fetch": _on_url,
    "url_ref": _on_url,
    "web_search": _on_web_search,
}


def _fold(events: Sequence[SessionEvent]) -> _State:
    st = _State()
    handlers = _HANDLERS
    for i, ev in enumerate(events):
        try:
            etype = ev.type
            handler = handlers.get(etype) if isinstance(etype, str) else None
            if handler is not None:
                handler(st, _fields(ev.data), i, ev)
        except Exception:  # one malformed event must not cost the whole snapshot
            continue
    return st


# ---------------------------------------------------------------------------------------
# Sections (display order)


def _task_order(task: list[str]) -> tuple[int, int, int, str]:
    shown = task[0]
    numeric = len(shown) < 19 and shown.isdecimal()
    return (
        0 if task[2] == "in_progress" else 1,
        0 if numeric else 1,
        int(shown) if numeric else 0,
        shown,
    )


def _sec_requests(st: _State, cmd: str) -> _Section | None:
    prompts = st.prompts
    if not prompts:
        return None
    last = prompts[-3:]
    items: list[_Item] = []
    goal = prompts[0][0]
    has_goal = len(prompts) > 3 and all(goal != p[0] for p in last)
    if has_goal:
        items.append(_Item("goal", [], _clean(_pre(goal, 300)), 300))
    for n, (text, intent) in enumerate(last):
        cap = 700 if n == len(last) - 1 else 240
        attrs = [("intent", _clean(_pre(intent, 40)), 40)] if intent.strip() else []
        items.append(_Item("prompt", attrs, _clean(_pre(text, cap)), cap))
    # Goes first: the older recent prompts, then the goal; the last request stays.
    start = 1 if has_goal else 0
    drop = list(range(start, len(items) - 1)) + ([0] if has_goal else []) + [len(items) - 1]
    lookup = _lookup(cmd, _query(prompts[-1][0], "prompt"))
    return _Section("requests", items, lookup, total=len(prompts), drop=drop, keep=1)


def _sec_tasks(st: _State, cmd: str) -> _Section | None:
    tasks = list(st.tasks.values())
    todos = st.todos
    if not tasks and not todos:
        return None
    done = sum(1 for t in tasks if t[2] == "completed") + sum(
        1 for t in todos if t[1] == "completed"
    )
    open_tasks = sorted((t for t in tasks if t[2] != "completed"), key=_task_order)
    open_todos = [t for t in todos if t[1] == "in_progress"] + [
        t for t in todos if t[1] not in ("in_progress", "completed")
    ]
    items: list[_Item] = []
    hint = ""
    for shown, subject, status, _description in open_tasks:
        if len(items) == _MAX_TASKS:
            break
        attrs = [("id", _clean(_pre(shown, 24)), 24)] if shown else []
        attrs.append(("status", _clean(_pre(status, 24)), 24))
        items.append(_Item("task", attrs, _clean(_pre(subject, 120)), 120))
        hint = hint or subject
    for content, status in open_todos:
        if len(items) == _MAX_TASKS:
            break
        items.append(
            _Item(
                "task", [("status", _clean(_pre(status, 24)), 24)], _clean(_pre(content, 120)), 120
            )
        )
        hint = hint or content
    hint = hint or st.task_hint or (todos[-1][0] if todos else "")
    head = [("completed", str(done))] if done else []
    lookup = _lookup(cmd, _query(hint, "task"))
    total = len(open_tasks) + len(open_todos)
    return _Section("tasks", items, lookup, total=total, attrs=head)


def _sec_changed(st: _State, cmd: str) -> _Section | None:
    if not st.changed:
        return None
    items: list[_Item] = []
    newest = ""
    for path, entry in reversed(st.changed.items()):
        if len(items) == _MAX_CHANGED:
            break
        newest = newest or path
        attrs = [
            ("path", _clean(_pre(path, 160)), -160),
            ("change", ",".join(entry[0]), 0),
            ("count", str(entry[1]), 0),
        ]
        items.append(_Item("file", attrs))
    lookup = _lookup(cmd, _query(_path_query(newest), "file"))
    return _Section("files_changed", items, lookup, total=len(st.changed))


def _sec_read(st: _State, cmd: str) -> _Section | None:
    paths = [(p, n) for p, n in st.read.items() if p not in st.changed]
    if not paths:
        return None
    items = []
    for path, count in reversed(paths[-_MAX_READ:]):
        attrs = [("path", _clean(_pre(path, 160)), -160)]
        if count > 1:
            attrs.append(("count", str(count), 0))
        items.append(_Item("file", attrs))
    lookup = _lookup(cmd, _query(_path_query(paths[-1][0]), "file"))
    return _Section("files_read", items, lookup, total=len(paths))


def _sec_errors(st: _State, cmd: str) -> _Section | None:
    if not st.errors:
        return None
    items = []
    errors = list(st.errors.values())
    for tool, key, error, count in reversed(errors[-_MAX_ERRORS:]):
        attrs = []
        if tool:
            attrs.append(("tool", _clean(_pre(tool, 40)), 40))
        if key:
            attrs.append(("key", _clean(_pre(key, 120)), 120))
        if count > 1:
            attrs.append(("count", str(count), 0))
        items.append(_Item("error", attrs, _first_lines(error) or "(no message)", 300))
    tool, key, error, _count = errors[-1]
    lookup = _lookup(cmd, _query(key or _first_lines(error), "error"))
    extra = [("resolved", str(st.resolved))] if st.resolved else []
    return _Section("errors", items, lookup, total=len(errors), attrs=extra)


def _sec_decisions(st: _State, cmd: str) -> _Section | None:
    if not st.notes:
        return None
    # Most important first (priority 1 is critical), roles before decisions, then newest.
    ranked = sorted(st.notes.items(), key=lambda kv: kv[1])
    items = [
        _Item(tag, [], _clean(_pre(text, 240)), 240) for (tag, text), _rank in ranked[:_MAX_NOTES]
    ]
    lookup = _lookup(cmd, _query(ranked[0][0][1], "decision"))
    return _Section("decisions", items, lookup, total=len(ranked))


def _sec_plan(st: _State, cmd: str) -> _Section | None:
    if st.plan is None:
        return None
    plan, path = st.plan
    text = _clean_lines(_pre(plan, 900))
    if not text:
        return None
    attrs = [("path", _clean(_pre(path, 160)), -160)] if path else []
    first = text.split("\n", 1)[0].lstrip("#>*- ")
    lookup = _lookup(cmd, _query(first, "plan"))
    return _Section("plan", [_Item("text", attrs, text, 900)], lookup, total=1)


def _sec_rules(st: _State, cmd: str) -> _Section | None:
    if not st.rules:
        return None
    rules = list(st.rules.items())
    items = [
        _Item(
            "rule", [("path", _clean(_pre(p, 160)), -160), ("change", "edit" if e else "read", 0)]
        )
        for p, e in reversed(rules[-_MAX_RULES:])
    ]
    lookup = _lookup(cmd, _query(_path_query(rules[-1][0]), "rule"))
    return _Section("rules", items, lookup, total=len(rules))


# git ops a later commit has taken in: showing them would suggest uncommitted work.
_ABSORBED_OPS = ("add", "rm", "mv")


def _sec_git(st: _State, cmd: str) -> _Section | None:
    ops = [
        (text, entry)
        for text, entry in st.ops.items()
        if not (entry[0] in _ABSORBED_OPS and entry[2] < st.last_commit)
    ]
    if st.branch is None and not st.commits and not ops:
        return None
    attrs = []
    if st.branch is not None:
        attrs.append(("branch", _cut(_clean(_pre(st.branch[0], 100)), 100)))
    if st.commits:
        after = sum(1 for entry in st.changed.values() if entry[4] > st.last_commit)
        if after:
            attrs.append(("changed_since_commit", str(after)))
    items = []
    for message, sha, where in reversed(st.commits[-_MAX_COMMITS:]):
        item_attrs = [("sha", _clean(_pre(sha, 40)), 40)] if sha else []
        if where:
            item_attrs.append(("dir", _clean(_pre(where, 120)), -120))
        first = _clean_lines(_pre(message, 120)).split("\n", 1)[0]
        items.append(_Item("commit", item_attrs, first or "(no message)", 120))
    n_commits = len(items)
    for text, entry in reversed(ops[-_MAX_OPS:]):
        item_attrs = [("count", str(entry[1]), 0)] if entry[1] > 1 else []
        items.append(_Item("op", item_attrs, _clean(_pre(text, 100)), 100))
    # Other operations go before commits, the oldest of each first.
    drop = list(range(len(items) - 1, n_commits - 1, -1)) + list(range(n_commits - 1, -1, -1))
    if st.commits:
        hint = _clean_lines(_pre(st.commits[-1][0], 120)).split("\n", 1)[0]
    elif st.branch is not None:
        hint = st.branch[0]
    else:
        hint = ops[-1][0]
    lookup = _lookup(cmd, _query(hint, "git"))
    return _Section("git", items, lookup, total=len(st.commits) + len(ops), attrs=attrs, drop=drop)


def _sec_env(st: _State, cmd: str) -> _Section | None:
    if not st.cwd and not st.setups:
        return None
    attrs = [("cwd", _cut_tail(_clean(_pre(st.cwd, 200)), 200))] if st.cwd else []
    setups = list(st.setups.items())
    items = []
    for (kind, tool, detail), count in reversed(setups[-_MAX_SETUPS:]):
        item_attrs = []
        if kind:
            item_attrs.append(("kind", _clean(_pre(kind, 24)), 24))
        if tool:
            item_attrs.append(("tool", _clean(_pre(tool, 40)), 40))
        if count > 1:
            item_attrs.append(("count", str(count), 0))
        items.append(_Item("setup", item_attrs, _clean(_pre(detail, 120)), 120))
    if setups:
        kind, tool, detail = setups[-1][0]
        hint = detail or tool or kind
    else:
        hint = st.cwd
    lookup = _lookup(cmd, _query(hint, "env"))
    return _Section("environment", items, lookup, total=len(setups), attrs=attrs)


def _sec_agents(st: _State, cmd: str) -> _Section | None:
    if not st.agents:
        return None
    agents = list(st.agents.items())
    items = []
    for (agent_type, description), count in reversed(agents[-_MAX_AGENTS:]):
        attrs = [("type", _clean(_pre(agent_type, 60)), 60)] if agent_type else []
        if count > 1:
            attrs.append(("count", str(count), 0))
        items.append(_Item("subagent", attrs, _clean(_pre(description, 120)), 120))
    agent_type, description = agents[-1][0]
    lookup = _lookup(cmd, _query(description or agent_type, "subagent"))
    return _Section("subagents", items, lookup, total=len(agents))


def _sec_mcp(st: _State, cmd: str) -> _Section | None:
    if not st.mcp:
        return None
    tools = list(st.mcp.items())
    items = []
    for (server, tool), count in reversed(tools[-_MAX_MCP:]):
        attrs = []
        if server:
            attrs.append(("server", _clean(_pre(server, 60)), 60))
        if tool:
            attrs.append(("name", _clean(_pre(tool, 60)), 60))
        attrs.append(("count", str(count), 0))
        items.append(_Item("tool", attrs))
    server, tool = tools[-1][0]
    lookup = _lookup(cmd, _query(f"{server} {tool}", "mcp"))
    return _Section("mcp", items, lookup, total=len(tools))


def _sec_refs(st: _State, cmd: str) -> _Section | None:
    if not st.refs:
        return None
    refs = list(st.refs.items())
    items = []
    for (tag, value), count in reversed(refs[-_MAX_REFS:]):
        attrs = [("count", str(count), 0)] if count > 1 else []
        items.append(_Item(tag, attrs, _clean(_pre(value, 160)), 160))
    lookup = _lookup(cmd, _query(refs[-1][0][1], "url"))
    return _Section("references", items, lookup, total=len(refs))


_SECTIONS = (
    _sec_requests,
    _sec_tasks,
    _sec_changed,
    _sec_read,
    _sec_errors,
    _sec_decisions,
    _sec_plan,
    _sec_rules,
    _sec_git,
    _sec_env,
    _sec_agents,
    _sec_mcp,
    _sec_refs,
)


def _lookup(cmd: str, query: str) -> str:
    return f"<lookup>{_esc(cmd)} {_esc(shell_quote(query))}</lookup>\n"


# ---------------------------------------------------------------------------------------
# The document


def _root_open(
    events: Sequence[SessionEvent], session_id: object, compact_seq: object, kind: str = "compact"
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
        ("session", _cut(_clean(_pre(sid, _SESSION_CHARS)), _SESSION_CHARS)),
        ("end" if kind == "end" else "compaction", str(seq)),
        ("events", str(len(events))),
    ]
    if first:
        attrs.append(("from", _cut(_clean(_pre(first, _TIME_CHARS)), _TIME_CHARS)))
        attrs.append(("to", _cut(_clean(_pre(last, _TIME_CHARS)), _TIME_CHARS)))
    body = "".join(f' {name}="{_esc_attr(value)}"' for name, value in attrs)
    return f"<session_resume{body}>\n"


_CLOSE = "</session_resume>\n"


def _preface(session_id: object, kind: str) -> str:
    if kind != "end":
        return PREFACE
    sid = session_id if isinstance(session_id, str) else ""
    return END_PREFACE.format(session=_cut(_clean(_pre(sid, _SESSION_CHARS)), _SESSION_CHARS))


def _clamp(budget: object) -> int:
    if not isinstance(budget, int) or isinstance(budget, bool):
        return DEFAULT_BUDGET
    return min(max(budget, MIN_BUDGET), MAX_CHARS)


def _omitted_sections(gone: list[_Section]) -> str:
    """One element that counts the items of each section removed whole, in display order."""
    if not gone:
        return ""
    body = "".join(f' {s.tag}="{max(s.total, 1)}"' for s in gone)
    return f"<omitted_sections{body}/>\n"


def _fit(sections: list[_Section], room: int) -> tuple[list[_Section], list[_Section]] | None:
    """Shrink ``sections`` (display order) to at most ``room`` bytes; None when impossible.

    From the least important section up: shorten its items, drop them one by one (least
    important first), then remove the section itself, before the next section up is
    touched. Returns the sections kept and those removed (counted in
    ``<omitted_sections>``, whose size is part of ``room``). The last request is never
    dropped, only shortened further.
    """
    sizes = [s.render()[1] for s in sections]
    total = sum(sizes)
    if total <= room:
        return sections, []
    by_rank = sorted(range(len(sections)), key=lambda k: -_RANK[sections[k].tag])
    gone: list[int] = []

    def removed() -> list[_Section]:
        return [sections[g] for g in sorted(gone)]

    def fits(k: int) -> bool:
        nonlocal total
        size = 0 if k in gone else sections[k].render()[1]
        total += size - sizes[k]
        sizes[k] = size
        return total + _nbytes(_omitted_sections(removed())) <= room

    def result() -> tuple[list[_Section], list[_Section]]:
        return [s for k, s in enumerate(sections) if k not in gone], removed()

    for k in by_rank:
        sec = sections[k]
        sec.level = 1
        if fits(k):
            return result()
        while sec.drop_one():
            if fits(k):
                return result()
        if sec.keep:
            continue  # the last request stays: it is shortened below instead
        gone.append(k)
        if fits(k):
            return result()
    # Only the sections that must stay are left: shorten them further, level by level.
    for level in range(2, _MAX_LEVEL + 1):
        for k in by_rank:
            if k not in gone:
                sections[k].level = level
                if fits(k):
                    return result()
    return None


def _build(
    events: Sequence[SessionEvent],
    session_id: object,
    compact_seq: object,
    limit: int,
    search_command: object,
    kind: str = "compact",
) -> str:
    st = _fold(events)
    cmd = _clean(search_command) if isinstance(search_command, str) else ""
    cmd = cmd or "ctxmode search"
    sections = [s for s in (make(st, cmd) for make in _SECTIONS) if s is not None]
    head = (
        _root_open(events, session_id, compact_seq, kind)
        + f"<preface>{_esc(_preface(session_id, kind))}</preface>\n"
    )
    fitted = _fit(sections, limit - _nbytes(head) - _nbytes(_CLOSE))
    if fitted is None:
        return _minimal(events, session_id, compact_seq, limit, kind)
    kept, gone = fitted
    body = "".join([s.render()[0] for s in kept])
    return head + body + _omitted_sections(gone) + _CLOSE


def _minimal(
    events: Sequence[SessionEvent],
    session_id: object,
    compact_seq: object,
    limit: int,
    kind: str = "compact",
) -> str:
    """The smallest honest document: root attributes (and the preface if it fits)."""
    try:
        head = _root_open(events, session_id, compact_seq, kind)
    except Exception:
        head = "<session_resume>\n"
    doc = head + f"<preface>{_esc(_preface(session_id, kind))}</preface>\n" + _CLOSE
    if _nbytes(doc) <= limit:
        return doc
    doc = head + _CLOSE
    return doc if _nbytes(doc) <= limit else "<session_resume/>\n"


def build_snapshot(
    events: Sequence[SessionEvent],
    *,
    session_id: str,
    compact_seq: int,
    budget: int = DEFAULT_BUDGET,
    search_command: str = "ctxmode search",
    kind: str = "compact",
) -> str:
    """The ``<session_resume>`` XML for ``events`` (oldest first), at most ``budget`` bytes.

    ``budget`` is clamped to [MIN_BUDGET, MAX_CHARS]. Deterministic and never raises:
    malformed events are skipped, hostile text is escaped or removed. ``kind`` is
    ``"compact"`` (``compact_seq`` is the compaction's number) or ``"end"`` (the
    session's N-th end; such a snapshot keeps :data:`PROVENANCE_RESERVE` bytes free for
    :func:`provenance`, so it fits its budget in the form another session receives).
    """
    kind = "end" if kind == "end" else "compact"
    limit = _clamp(budget)
    if kind == "end":
        limit -= PROVENANCE_RESERVE
    try:
        if not isinstance(events, (list, tuple)):
            events = list(events)
        return _build(events, session_id, compact_seq, limit, search_command, kind)
    except Exception:  # a hook must never fail over its snapshot
        try:
            return _minimal(
                events if isinstance(events, (list, tuple)) else (),
                session_id,
                compact_seq,
                limit,
                kind,
            )
        except Exception:
            return "<session_resume/>\n"


def _attributes(tag: str) -> list[tuple[str, str]]:
    """``(name, escaped value)`` pairs of an open tag written by :func:`_root_open`."""
    pairs = []
    rest = tag
    while True:
        eq = rest.find('="')
        if eq < 0:
            break
        close = rest.find('"', eq + 2)
        if close < 0:
            break
        name = rest[:eq].rsplit(" ", 1)[-1].strip()
        pairs.append((name, rest[eq + 2 : close]))
        rest = rest[close + 1 :]
    return pairs


def provenance(
    xml: str,
    *,
    from_session: str,
    kind: str,
    seq: int,
    taken_at: str,
    reason: str,
) -> str:
    """``xml`` as handed to a session other than the one it was built from.

    The root says where it comes from (``source="previous-session"``, ``from_session``,
    ``end="N"`` with ``ended_at``, or ``compaction="N"`` with ``compacted_at``) and why
    it is given (``reason``: a key of :data:`REASONS`, e.g. ``inject_on_startup``); the
    preface says the same in words, instead of "the earlier part of this session". The
    sections are unchanged. ``taken_at`` is when the snapshot was stored (the session's
    end, for an end snapshot). Never raises: on a document it cannot read it returns
    ``xml`` unchanged.
    """
    try:
        if not xml.startswith("<session_resume"):
            return xml
        close = xml.find(">")
        if close < 0:
            return xml
        tag, rest = xml[: close + 1], xml[close + 1 :]
        if tag.endswith("/>"):
            tag, rest = tag[:-2] + ">", "\n" + _CLOSE
        if rest.startswith("\n<preface>"):
            end = rest.find("</preface>")
            if end >= 0:
                rest = rest[end + len("</preface>") :]
        kept = [(n, v) for n, v in _attributes(tag) if n in ("events", "from", "to")]
        sid = _cut(_clean(_pre(from_session, _SESSION_CHARS)), _SESSION_CHARS)
        stamp = _cut(_clean(_pre(taken_at, _TIME_CHARS)), _TIME_CHARS)
        is_end = kind == "end"
        attrs = [
            ("source", "previous-session"),
            ("from_session", _esc_attr(sid)),
            ("end" if is_end else "compaction", str(int(seq))),
            ("ended_at" if is_end else "compacted_at", _esc_attr(stamp)),
            ("reason", _esc_attr(_clean(reason)[:_SESSION_CHARS])),
            *kept,
        ]
        head = "<session_resume" + "".join(f' {n}="{v}"' for n, v in attrs) + ">"
        if is_end:
            when = f"ended {stamp}" if stamp else "ended"
        else:
            when = (f"compacted {stamp}" if stamp else "compacted") + (
                ", never taken up by that session"
            )
        why = REASONS.get(reason, f"because of {_clean(reason)[:_SESSION_CHARS]}")
        preface = PROVENANCE_PREFACE.format(session=sid, when=when, why=why)
        return f"{head}\n<preface>{_esc(preface)}</preface>{rest}"
    except Exception:  # a hook must never fail over its snapshot
        return xml
