"""Reading events: one pass over a session's events (oldest first) folds them into a
:class:`State`: the prompts, tasks, files, errors, notes, git work, ... that the sections
are made of. Pure; a malformed event is skipped, never fatal."""

from __future__ import annotations

from ctxmode import fastjson
from ctxmode.snapshot.text import clean, pre

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any

    from ctxmode.events import SessionEvent


def _fields(data: object) -> dict[Any, Any]:
    """The event's data as a dict; non-JSON text is kept under the key ``0``."""
    if isinstance(data, str):
        if data[:1] == "{":
            try:
                value = fastjson.loads_data(data)
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


class State:
    """Everything the snapshot needs, folded from the events in one pass."""

    __slots__ = (
        "agents",
        "branch",
        "changed",
        "commits",
        "cwd",
        "errors",
        "jobs",
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
        "tasks",
        "todos",
        "worktree",
    )

    def __init__(self) -> None:
        self.prompts: list[list[str]] = []  # [text, intent]
        # task key → [shown id, subject, status] (a description is never shown: not kept)
        self.tasks: dict[str, list[str]] = {}
        self.todos: list[tuple[str, str]] = []  # (content, status) of the last TodoWrite
        # job key → [kind, id, what, schedule, status]: work going on without the model
        # (cron jobs, wake-ups, monitors, workflows, background agents, goals), still open
        self.jobs: dict[str, list[str]] = {}
        # path → [kinds in order of last use, count, last dedup key, last type, last index]
        self.changed: dict[str, list[Any]] = {}
        self.read: dict[str, int] = {}
        # key → [tool, key, error, count]: the unresolved errors in the calls' order of
        # their last failure (the newest last; a failure again moves its error there)
        self.errors: dict[str, list[Any]] = {}
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
        # (path, branch) of the work tree the session moved to (worktree_change), if any
        self.worktree: tuple[str, str] | None = None
        self.setups: dict[tuple[str, str, str], int] = {}
        self.agents: dict[tuple[str, str], int] = {}
        self.mcp: dict[tuple[str, str], int] = {}
        self.refs: dict[tuple[str, str], int] = {}


def _on_prompt(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    text = _main(d, "text")
    if not text.strip():
        return
    if st.prompts and st.prompts[-1][0] == text:
        return  # the same prompt submitted twice in a row says nothing new
    st.prompts.append([text, ""])


def _on_intent(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    if st.prompts:  # the intent of the prompt it follows
        st.prompts[-1][1] = _main(d, "intent")


def _new_task(st: State, d: dict[Any, Any], i: int) -> tuple[str, list[str]]:
    shown = _s(d, "id")
    key = shown or f"\0{i}"  # no id: the task cannot be updated, but it is still a task
    task = st.tasks.get(key)
    if task is None:
        task = st.tasks[key] = [shown, "", "pending"]
    return key, task


def _on_task_create(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    _key, task = _new_task(st, d, i)
    task[1] = _main(d, "subject")
    task[2] = _status(_s(d, "status")) or "pending"


def _on_task_update(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
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


def _on_task_list(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
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
        tasks[shown] = [shown, _s(entry, "subject"), status]
    st.tasks = tasks


def _on_todo_write(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    todos = d.get("todos")
    if not isinstance(todos, list):
        return
    st.todos = [
        (_s(t, "content"), _status(_s(t, "status")) or "pending")
        for t in todos
        if isinstance(t, dict)
    ]


def _job_key(kind: str, job: str) -> str:
    return f"{kind}\0{job}"


def _on_job_start(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    kind, job = _s(d, "kind"), _s(d, "id")
    key = _job_key(kind, job) if job else f"\0{i}"
    entry = st.jobs.pop(key, None) or [kind, job, "", "", ""]
    # A later start of the same job (a goal's new status, a loop's next wake-up) updates
    # what it says and leaves the rest.
    for n, field in ((2, "what"), (3, "schedule"), (4, "status")):
        value = _s(d, field)
        if value:
            entry[n] = value
    if entry[2] or entry[1]:
        st.jobs[key] = entry


def _on_job_end(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    kind, job = _s(d, "kind"), _s(d, "id")
    if not job:
        return
    if kind:
        st.jobs.pop(_job_key(kind, job), None)
        return
    # TaskStop names the task only: a monitor, a workflow or a background agent.
    for key in [k for k, entry in st.jobs.items() if entry[1] == job]:
        del st.jobs[key]


def _on_worktree(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    path = _main(d, "path")
    if not path:
        return
    branch = _s(d, "branch")
    st.worktree = (path, branch)
    st.cwd = path
    # The branch of the tree it left is not this one's (ExitWorktree names none: unknown).
    st.branch = (branch, d.get("created") is True) if branch else None


_CHANGE_WORD = {"file_edit": "edit", "file_delete": "delete", "rule_edit": "edit"}


def _on_change(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
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


def _on_read(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    path = _main(d, "path")
    if path:
        _bump(st.read, path)


def _on_rule_read(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    path = _main(d, "path")
    if path:
        edited = st.rules.pop(path, False)
        st.rules[path] = edited


def first_lines(text: str) -> str:
    """The first informative lines of an error, joined on one line."""
    lines = [line for line in map(clean, pre(text, 400).splitlines()) if line]
    return " | ".join(lines[:3])


def _on_error(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    error = _s(d, "error") or _s(d, 0)
    key = _s(d, "key")
    # Without a key no later success can match it; its first line keeps it apart.
    ident = key if key else "\0" + first_lines(error)
    entry = st.errors.pop(ident, None)
    count = entry[3] + 1 if entry else 1
    st.errors[ident] = [_s(d, "tool"), key, error, count]


def _on_resolved(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    key = _s(d, "key")
    if key:
        entry = st.errors.pop(key, None)
        if entry is not None:
            st.resolved += entry[3]


def _on_note(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    text = _main(d, "text")
    if not text.strip():
        return
    priority = ev.priority if isinstance(ev.priority, int) else 3
    key = (ev.type, text)
    st.notes.pop(key, None)  # the newest occurrence counts
    # A standing instruction outranks a decision of the same priority: it frames all work.
    st.notes[key] = (priority, 0 if ev.type == "role" else 1, -i)


def _on_plan(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    plan = _main(d, "plan")
    if plan.strip():
        st.plan = (plan, _s(d, "path"))


def _on_branch(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    branch = _main(d, "branch")
    if branch:
        st.branch = (branch, d.get("created") is True)


def _on_commit(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    st.commits.append((_main(d, "message"), _s(d, "sha"), _s(d, "dir")))
    st.last_commit = i


def _on_git_op(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    op = _s(d, "op")
    args = d.get("args")
    if isinstance(args, list):  # tolerate a list of arguments as well as a string
        args = " ".join(a for a in args if isinstance(a, str))
    text = " ".join(p for p in (op, args if isinstance(args, str) else "") if p) or _s(d, 0)
    if not text:
        return
    entry = st.ops.pop(text, None)
    st.ops[text] = [op, (entry[1] if entry else 0) + 1, i]


def _on_cwd(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    path = _main(d, "path")
    if path:
        st.cwd = path


def _on_env(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    key = (_s(d, "kind"), _s(d, "tool"), _s(d, "detail") or _s(d, 0))
    if any(key):
        _bump(st.setups, key)


def _on_subagent(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    key = (_s(d, "agent_type"), _main(d, "description"))
    if any(key):
        _bump(st.agents, key)


def _on_mcp(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    key = (_s(d, "server"), _s(d, "tool") or _s(d, 0))
    if any(key):
        _bump(st.mcp, key)


def _on_url(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    url = _main(d, "url")
    if url:
        _bump(st.refs, ("url", url))


def _on_web_search(st: State, d: dict[Any, Any], i: int, ev: SessionEvent) -> None:
    query = _main(d, "query")
    if query:
        _bump(st.refs, ("web_search", query))


_HANDLERS: dict[str, Callable[[State, dict[Any, Any], int, SessionEvent], None]] = {
    "file_read": _on_read,
    "file_write": _on_change,
    "file_edit": _on_change,
    "file_delete": _on_change,
    "rule_edit": _on_change,
    "rule_read": _on_rule_read,
    "cwd_change": _on_cwd,
    "worktree_change": _on_worktree,
    "job_start": _on_job_start,
    "job_end": _on_job_end,
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
    "finding": _on_note,
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


def _failed_commit(ev: SessionEvent, failed: dict[str, int]) -> bool:
    return ev.tool_use_id in failed and not _s(_fields(ev.data), "sha")


def _failures(events: Sequence[SessionEvent]) -> dict[str, int]:
    """The calls that failed: tool_use_id → the index of its first tool_error."""
    failed: dict[str, int] = {}
    for i, ev in enumerate(events):
        if ev.type == "tool_error" and ev.tool_use_id and ev.tool_use_id not in failed:
            failed[ev.tool_use_id] = i
    return failed


def _fold(
    st: State, events: Sequence[SessionEvent], start: int, end: int, failed: dict[str, int]
) -> None:
    handlers = _HANDLERS
    for i in range(start, end):
        ev = events[i]
        try:
            etype = ev.type
            if failed and etype == "git_commit" and _failed_commit(ev, failed):
                continue
            handler = handlers.get(etype) if isinstance(etype, str) else None
            if handler is not None:
                handler(st, _fields(ev.data), i, ev)
        except Exception:  # one malformed event must not cost the whole snapshot
            continue


def fold_events(events: Sequence[SessionEvent]) -> State:
    st = State()
    # A call that failed committed nothing it could prove: a client that reports failures
    # late (Codex) has recorded its git_commit before the error came; a sha in the output
    # still proves the commit (see _failed_commit).
    _fold(st, events, 0, len(events), _failures(events))
    return st


def fold_prefixes(events: Sequence[SessionEvent], ends: Sequence[int]) -> Iterator[State]:
    """``fold_events(events[:end])`` for each of ``ends`` (ascending), in one pass: the
    same State, folded on between yields (read it before asking for the next).

    A commit whose call's failure is reported only later (see ``fold_events``) counts in
    the prefixes that end before that failure: such a prefix is folded on its own.
    """
    failed = _failures(events)
    # Where a late failure (after its commit) makes a prefix differ from the whole's fold.
    late = [
        (i, failed[ev.tool_use_id])
        for i, ev in enumerate(events)
        if ev.type == "git_commit" and ev.tool_use_id in failed and failed[ev.tool_use_id] > i
    ]
    st = State()
    done = 0
    for end in ends:
        end = max(done, min(end, len(events)))
        if any(c < end <= e for c, e in late):
            yield fold_events(events[:end])
            continue
        _fold(st, events, done, end, failed)
        done = end
        yield st
