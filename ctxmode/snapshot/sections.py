"""The sections, in display order (:data:`SECTIONS`): each builder turns the folded
:class:`State` into a :class:`Section` of candidate items (at most ``_MAX_*`` of a kind;
the rest only count as omitted), with each value's cap, the order the items go in when
space runs out, and the section's lookup: the options (after ``scope``, the session's
``--session ID``) that make the search command list the events the section stands for,
enough of them to hold what it leaves out. Pure."""

from __future__ import annotations

from ctxmode.snapshot.fold import first_lines
from ctxmode.snapshot.render import Item, Section, lookup_hint
from ctxmode.snapshot.text import clean, clean_lines, cut, cut_tail, pre

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.snapshot.fold import State

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


def _task_order(task: list[str]) -> tuple[int, int, int, str]:
    shown = task[0]
    numeric = len(shown) < 19 and shown.isdecimal()
    return (
        0 if task[2] == "in_progress" else 1,
        0 if numeric else 1,
        int(shown) if numeric else 0,
        shown,
    )


def _shown_requests(st: State) -> list[tuple[str, str, str, int]]:
    """The requests the snapshot shows, in display order: (tag, text, intent, cap) of the
    goal (the first request, once it left the last three) and the last three prompts."""
    prompts = st.prompts
    last = prompts[-3:]
    shown: list[tuple[str, str, str, int]] = []
    goal = prompts[0][0] if prompts else ""
    if len(prompts) > 3 and all(goal != p[0] for p in last):
        shown.append(("goal", goal, "", 300))
    for n, (text, intent) in enumerate(last):
        shown.append(("prompt", text, intent, 700 if n == len(last) - 1 else 240))
    return shown


def _sec_requests(st: State, scope: str) -> Section | None:
    prompts = st.prompts
    if not prompts:
        return None
    items: list[Item] = []
    for tag, text, intent, cap in _shown_requests(st):
        attrs = [("intent", clean(pre(intent, 40)), 40)] if intent.strip() else []
        items.append(Item(tag, attrs, clean(pre(text, cap)), cap))
    has_goal = items[0].tag == "goal"
    # Goes first: the older recent prompts, then the goal; the last request stays.
    start = 1 if has_goal else 0
    drop = list(range(start, len(items) - 1)) + ([0] if has_goal else [])
    lookup = lookup_hint(scope, "--category prompt", len(prompts))
    key = (len(items) - 1,)
    return Section("requests", items, lookup, total=len(prompts), drop=drop, key=key)


# What an open job is doing when its events say nothing else. A monitor, a workflow or a
# background agent is "started": its end comes as a notification no hook reports.
_JOB_STATUS = {"cron": "scheduled", "wakeup": "scheduled", "goal": "active"}


def _sec_tasks(st: State, scope: str) -> Section | None:
    tasks = list(st.tasks.values())
    todos = st.todos
    jobs = list(st.jobs.values())
    if not tasks and not todos and not jobs:
        return None
    done = sum(1 for t in tasks if t[2] == "completed") + sum(
        1 for t in todos if t[1] == "completed"
    )
    open_tasks = sorted((t for t in tasks if t[2] != "completed"), key=_task_order)
    open_todos = [t for t in todos if t[1] == "in_progress"] + [
        t for t in todos if t[1] not in ("in_progress", "completed")
    ]
    items: list[Item] = []
    for shown, subject, status in open_tasks:
        if len(items) == _MAX_TASKS:
            break
        attrs = [("id", clean(pre(shown, 24)), 24)] if shown else []
        attrs.append(("status", clean(pre(status, 24)), 24))
        items.append(Item("task", attrs, clean(pre(subject, 120)), 120))
    for content, status in open_todos:
        if len(items) == _MAX_TASKS:
            break
        items.append(
            Item("task", [("status", clean(pre(status, 24)), 24)], clean(pre(content, 120)), 120)
        )
    # Work going on without the model (newest first): its results come as notifications.
    for kind, job, what, schedule, status in reversed(jobs):
        if len(items) == _MAX_TASKS:
            break
        attrs = [("kind", clean(pre(kind, 24)), 24)] if kind else []
        if job:
            attrs.append(("id", clean(pre(job, 40)), 40))
        if schedule:
            attrs.append(("schedule", clean(pre(schedule, 60)), 60))
        attrs.append(("status", clean(pre(status or _JOB_STATUS.get(kind, "started"), 24)), 24))
        items.append(Item("job", attrs, clean(pre(what, 120)), 120))
    head = [("completed", str(done))] if done else []
    total = len(open_tasks) + len(open_todos) + len(jobs)
    lookup = lookup_hint(scope, "--category task", total)
    return Section("tasks", items, lookup, total=total, attrs=head)


def _sec_changed(st: State, scope: str) -> Section | None:
    if not st.changed:
        return None
    items: list[Item] = []
    for path, entry in reversed(st.changed.items()):
        if len(items) == _MAX_CHANGED:
            break
        attrs = [
            ("path", clean(pre(path, 160)), -160),
            ("change", ",".join(entry[0]), 0),
            ("count", str(entry[1]), 0),
        ]
        items.append(Item("file", attrs))
    lookup = lookup_hint(scope, "--type file_edit,file_write,file_delete", len(st.changed))
    return Section("files_changed", items, lookup, total=len(st.changed))


def _sec_read(st: State, scope: str) -> Section | None:
    paths = [(p, n) for p, n in st.read.items() if p not in st.changed]
    if not paths:
        return None
    items = []
    for path, count in reversed(paths[-_MAX_READ:]):
        attrs = [("path", clean(pre(path, 160)), -160)]
        if count > 1:
            attrs.append(("count", str(count), 0))
        items.append(Item("file", attrs))
    lookup = lookup_hint(scope, "--type file_read", len(paths))
    return Section("files_read", items, lookup, total=len(paths))


def _sec_errors(st: State, scope: str) -> Section | None:
    if not st.errors:
        return None
    items = []
    # In the calls' order of each error's last failure (``fold``): the newest unresolved
    # error is the one the agent was fighting when the context was compacted.
    errors = list(st.errors.values())
    for tool, key, error, count in reversed(errors[-_MAX_ERRORS:]):
        attrs = []
        if tool:
            attrs.append(("tool", clean(pre(tool, 40)), 40))
        if key:
            attrs.append(("key", clean(pre(key, 120)), 120))
        if count > 1:
            attrs.append(("count", str(count), 0))
        items.append(Item("error", attrs, first_lines(error) or "(no message)", 300))
    lookup = lookup_hint(scope, "--type tool_error,output_error", len(errors))
    extra = [("resolved", str(st.resolved))] if st.resolved else []
    # Newest first; the older errors go first (the oldest of them first), the newest is
    # key: it stays, only shortened, and the section with it.
    return Section("errors", items, lookup, total=len(errors), attrs=extra, key=(0,))


def _sec_decisions(st: State, scope: str) -> Section | None:
    if not st.notes:
        return None
    # A prompt of one sentence that decides is stored as a decision too (the sentence is
    # all of it): while the snapshot shows that prompt among the requests, it is said
    # once, there. The decisions go before the requests when space runs out, so it is
    # never lost; once the prompt has left the last requests, it is shown here.
    said = {clean(text) for _tag, text, _intent, _cap in _shown_requests(st)}
    notes = [(note, rank) for note, rank in st.notes.items() if clean(note[1]) not in said]
    if not notes:
        return None
    # Most important first (priority 1 is critical), roles before decisions, then newest.
    ranked = sorted(notes, key=lambda kv: kv[1])
    items = [
        Item(tag, [], clean(pre(text, 240)), 240) for (tag, text), _rank in ranked[:_MAX_NOTES]
    ]
    lookup = lookup_hint(scope, "--category decision,role", len(ranked))
    return Section("decisions", items, lookup, total=len(ranked))


def _sec_plan(st: State, scope: str) -> Section | None:
    if st.plan is None:
        return None
    plan, path = st.plan
    text = clean_lines(pre(plan, 900))
    if not text:
        return None
    attrs = [("path", clean(pre(path, 160)), -160)] if path else []
    # The plan is cut to fit: the lookup prints the approved plan whole.
    lookup = lookup_hint(scope, "--type plan_exit", 1, full=True)
    return Section("plan", [Item("text", attrs, text, 900)], lookup, total=1)


def _sec_rules(st: State, scope: str) -> Section | None:
    if not st.rules:
        return None
    rules = list(st.rules.items())
    items = [
        Item("rule", [("path", clean(pre(p, 160)), -160), ("change", "edit" if e else "read", 0)])
        for p, e in reversed(rules[-_MAX_RULES:])
    ]
    lookup = lookup_hint(scope, "--category rule", len(rules))
    return Section("rules", items, lookup, total=len(rules))


# git ops a later commit has taken in: showing them would suggest uncommitted work.
_ABSORBED_OPS = ("add", "rm", "mv")


def _sec_git(st: State, scope: str) -> Section | None:
    ops = [
        (text, entry)
        for text, entry in st.ops.items()
        if not (entry[0] in _ABSORBED_OPS and entry[2] < st.last_commit)
    ]
    if st.branch is None and not st.commits and not ops:
        return None
    attrs = []
    if st.branch is not None:
        attrs.append(("branch", cut(clean(pre(st.branch[0], 100)), 100)))
    if st.commits:
        after = sum(1 for entry in st.changed.values() if entry[4] > st.last_commit)
        if after:
            attrs.append(("changed_since_commit", str(after)))
    items = []
    for message, sha, where in reversed(st.commits[-_MAX_COMMITS:]):
        item_attrs = [("sha", clean(pre(sha, 40)), 40)] if sha else []
        if where:
            item_attrs.append(("dir", clean(pre(where, 120)), -120))
        first = clean_lines(pre(message, 120)).split("\n", 1)[0]
        items.append(Item("commit", item_attrs, first or "(no message)", 120))
    n_commits = len(items)
    for text, entry in reversed(ops[-_MAX_OPS:]):
        item_attrs = [("count", str(entry[1]), 0)] if entry[1] > 1 else []
        items.append(Item("op", item_attrs, clean(pre(text, 100)), 100))
    # Other operations go before commits, the oldest of each first; the last commit (the
    # first item), the branch and the uncommitted work (attributes) are key: they stay.
    drop = list(range(len(items) - 1, n_commits - 1, -1)) + list(range(n_commits - 1, 0, -1))
    key = (0,) if n_commits else ()
    total = len(st.commits) + len(ops)
    lookup = lookup_hint(scope, "--type git_commit,git_branch,git_op", total)
    pinned = bool(attrs)
    return Section(
        "git", items, lookup, total=total, attrs=attrs, drop=drop, key=key, pinned=pinned
    )


def _sec_env(st: State, scope: str) -> Section | None:
    if not st.cwd and not st.setups:
        return None
    attrs = [("cwd", cut_tail(clean(pre(st.cwd, 200)), 200))] if st.cwd else []
    if st.worktree is not None:
        # The session moved to another work tree: where it works now, and on which branch.
        path, branch = st.worktree
        attrs.append(("worktree", cut_tail(clean(pre(path, 200)), 200)))
        if branch:
            attrs.append(("worktree_branch", cut(clean(pre(branch, 100)), 100)))
    setups = list(st.setups.items())
    items = []
    for (kind, tool, detail), count in reversed(setups[-_MAX_SETUPS:]):
        item_attrs = []
        if kind:
            item_attrs.append(("kind", clean(pre(kind, 24)), 24))
        if tool:
            item_attrs.append(("tool", clean(pre(tool, 40)), 40))
        if count > 1:
            item_attrs.append(("count", str(count), 0))
        items.append(Item("setup", item_attrs, clean(pre(detail, 120)), 120))
    lookup = lookup_hint(scope, "--category env,cwd", len(setups))
    return Section("environment", items, lookup, total=len(setups), attrs=attrs)


def _sec_agents(st: State, scope: str) -> Section | None:
    if not st.agents:
        return None
    agents = list(st.agents.items())
    items = []
    for (agent_type, description), count in reversed(agents[-_MAX_AGENTS:]):
        attrs = [("type", clean(pre(agent_type, 60)), 60)] if agent_type else []
        if count > 1:
            attrs.append(("count", str(count), 0))
        items.append(Item("subagent", attrs, clean(pre(description, 120)), 120))
    lookup = lookup_hint(scope, "--category subagent", len(agents))
    return Section("subagents", items, lookup, total=len(agents))


def _sec_mcp(st: State, scope: str) -> Section | None:
    if not st.mcp:
        return None
    tools = list(st.mcp.items())
    items = []
    for (server, tool), count in reversed(tools[-_MAX_MCP:]):
        attrs = []
        if server:
            attrs.append(("server", clean(pre(server, 60)), 60))
        if tool:
            attrs.append(("name", clean(pre(tool, 60)), 60))
        attrs.append(("count", str(count), 0))
        items.append(Item("tool", attrs))
    lookup = lookup_hint(scope, "--category mcp", len(tools))
    return Section("mcp", items, lookup, total=len(tools))


def _sec_refs(st: State, scope: str) -> Section | None:
    if not st.refs:
        return None
    refs = list(st.refs.items())
    items = []
    for (tag, value), count in reversed(refs[-_MAX_REFS:]):
        attrs = [("count", str(count), 0)] if count > 1 else []
        items.append(Item(tag, attrs, clean(pre(value, 160)), 160))
    lookup = lookup_hint(scope, "--category external-ref", len(refs))
    return Section("references", items, lookup, total=len(refs))


SECTIONS = (
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
