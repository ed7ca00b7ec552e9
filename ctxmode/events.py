"""The SessionEvent record: what every extractor returns and the store keeps.

Stdlib only and import-free on purpose: it sits on every hook's hot path, so it is
a plain ``__slots__`` class rather than a dataclass (``dataclasses`` alone costs
more start-up time than the whole SQLite insert).
"""

from __future__ import annotations

# Priority 1 is critical (kept longest, shown first), 5 is low (evicted first).
CRITICAL = 1
HIGH = 2
NORMAL = 3
LOW = 4
MINOR = 5

# The categories are a contract: they appear as ``category`` in ``ctxmode dump --json``.
CATEGORIES = (
    "file",
    "rule",
    "cwd",
    "env",
    "git",
    "task",
    "plan",
    "prompt",
    "decision",
    "role",
    "intent",
    "error",
    "subagent",
    "mcp",
    "external-ref",
    "shell",
)

# Hard ceiling on one event's ``data`` (characters). Extractors trim well below it;
# the store enforces it again so no caller can bloat the store.
MAX_DATA_CHARS = 4000


class SessionEvent:
    """One structured fact about a session.

    ``type``/``category``/``priority``/``data`` come from the extractors. The remaining
    fields are filled in by the hook handler (``source_hook``, agent fields) and by the
    store when the event is read back (``id``, ``session_id``, ``created_at``).
    """

    __slots__ = (
        "agent_id",
        "agent_type",
        "bytes_avoided",
        "category",
        "created_at",
        "data",
        "id",
        "priority",
        "session_id",
        "source_hook",
        "tool_use_id",
        "type",
    )

    def __init__(
        self,
        type: str,
        category: str,
        priority: int,
        data: str,
        *,
        agent_id: str | None = None,
        agent_type: str | None = None,
        tool_use_id: str | None = None,
        bytes_avoided: int = 0,
        source_hook: str | None = None,
        session_id: str | None = None,
        created_at: str | None = None,
        id: int | None = None,
    ) -> None:
        self.type = type
        self.category = category
        self.priority = priority
        self.data = data
        self.agent_id = agent_id
        self.agent_type = agent_type
        self.tool_use_id = tool_use_id
        self.bytes_avoided = bytes_avoided
        self.source_hook = source_hook
        self.session_id = session_id
        self.created_at = created_at
        self.id = id

    def __repr__(self) -> str:
        return f"SessionEvent({self.type!r}, {self.category!r}, {self.priority!r}, {self.data!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionEvent):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in SessionEvent.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable record

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in SessionEvent.__slots__}


# Every event type: (category, default priority, what ``data`` holds).
# ``data`` is always compact JSON of an object with the keys named here ([key] = optional).
# This table is the contract between extractors, snapshot, search and the README.
TYPES: dict[str, tuple[str, int, str]] = {
    # file
    "file_read": ("file", LOW, "{path, [given], [offset], [limit], [excerpt]}"),
    # [via]: a change no file tool reported: "shell" (the command line states it,
    # extract.shell_writes) or "git status" (found when a snapshot is taken, worktree).
    # [excerpt]: the head and tail of the new text (a write's content, an edit's
    # replacement, a patch's added lines), a few hundred characters, masked.
    "file_write": ("file", HIGH, "{path, [given], [kind: create|overwrite], [via], [excerpt]}"),
    "file_edit": (
        "file",
        HIGH,
        "{path, [given], [summary], [edits], [replace_all], [via], [excerpt]}",
    ),
    "file_delete": ("file", HIGH, "{path, [via]}"),
    "file_search": ("file", MINOR, "{tool: Glob|Grep, pattern, [path], [matches], [excerpt]}"),
    # rule
    "rule_read": ("rule", HIGH, "{path}"),
    "rule_edit": ("rule", CRITICAL, "{path}"),
    # cwd / env
    "cwd_change": ("cwd", NORMAL, "{path}  (absolute, after resolving against the cwd)"),
    # The session moved to another work tree of the repository (EnterWorktree/ExitWorktree,
    # or a cd into another worktree): where it works from now on.
    "worktree_change": (
        "cwd",
        HIGH,
        "{path, [branch], via: enter|exit|cd, [created], [left], [left_branch], [removed]}",
    ),
    "env_setup": ("env", NORMAL, "{kind: venv|export|source|install|toolchain, tool, detail}"),
    # git
    "git_commit": ("git", CRITICAL, "{message, [sha], [printed], [dir]}"),
    "git_branch": ("git", HIGH, "{op: checkout|switch|branch, branch, [created], [dir]}"),
    "git_op": (
        "git",
        NORMAL,
        "{op, args, [dir]}  (state-changing: merge, push, reset, stash, add, ...)",
    ),
    "git_query": ("git", MINOR, "{op, args, [dir]}  (read-only: status, log, diff, show, ...)"),
    # task / plan
    "task_create": ("task", CRITICAL, "{id, subject, [description], [status]}"),
    "task_update": ("task", CRITICAL, "{id, [status], [subject], [description]}"),
    "task_list": ("task", NORMAL, "{tasks: [{id, subject, status}]}"),
    "todo_write": ("task", CRITICAL, "{todos: [{content, status}]}"),
    # Work that goes on without the model (scheduled, in the background): open until ended.
    "job_start": (
        "task",
        CRITICAL,
        "{kind: cron|wakeup|monitor|workflow|agent|goal, id, [what], [schedule], [command], "
        "[status], ...}",
    ),
    # [what], [result]: the client's notification that background work ended (the
    # summary line; an agent's report).
    "job_end": (
        "task",
        HIGH,
        "{[kind], id, status: deleted|stopped|complete|completed|failed|killed, [what], [result]}",
    ),
    "plan_enter": ("plan", NORMAL, "{}"),
    "plan_exit": ("plan", CRITICAL, "{plan, [path]}  (the approved plan, trimmed)"),
    # prompt / decision / role / intent
    "user_prompt": ("prompt", CRITICAL, "{text}"),
    # The text the agent ended a turn with (Stop), its head and tail. Looked up, never
    # shown in a snapshot; among the first to go when a session is over its cap.
    "assistant_reply": ("prompt", MINOR, "{text, [notes]}"),
    # What the agent wrote between its calls in a long turn, beyond what its reply's notes
    # hold (the middle of the turn). Looked up, never shown in a snapshot.
    "assistant_notes": ("prompt", MINOR, "{text}"),
    "decision": ("decision", CRITICAL, "{text}"),
    "role": ("role", CRITICAL, "{text}"),
    # A review's finding still to act on (ReportFindings): shown among the decisions.
    "finding": ("decision", HIGH, "{text, [path], [line]}"),
    "intent": (
        "intent",
        HIGH,
        "{intent: investigate|implement|fix|review|test|refactor|document|other}",
    ),
    # error
    "tool_error": ("error", CRITICAL, "{tool, key, error}  (PostToolUseFailure)"),
    "output_error": (
        "error",
        CRITICAL,
        "{tool, key, error}  (a successful call whose output shows a failure)",
    ),
    # As important as the errors it resolves: evicted first (a lower priority), it would
    # leave its error open again; among equals the error, older, goes before it.
    "error_resolved": (
        "error",
        CRITICAL,
        "{tool, key}  (a later success of the same command or file)",
    ),
    # subagent / mcp / external-ref
    "subagent": (
        "subagent",
        HIGH,
        "{agent_type, description, [prompt], [summary] | [report], [to]}",
    ),
    "mcp_call": ("mcp", NORMAL, "{server, tool, args: [names], [output]}"),
    # [via]: an MCP tool's ("server tool"), not the client's own web tool.
    "web_fetch": ("external-ref", LOW, "{url, [prompt], [via], [excerpt]}"),
    "web_search": ("external-ref", LOW, "{query, [via]}"),
    "url_ref": ("external-ref", LOW, "{url}"),
    # What the agent sent outside: a pull request or issue, a comment, a message.
    "message_sent": ("external-ref", NORMAL, "{via, [to], [title], [text]}"),
    # shell: every command the agent ran, with the head and tail of what it printed.
    # Looked up, never shown in a snapshot: the first to go when a session is over its cap.
    # [task]: a background command's output, read when it ended (its command: the
    # task's description).
    "shell_call": (
        "shell",
        MINOR,
        "{command, [description], [exit], [output], [saved], [bytes], [task]}",
    ),
    # What one of the client's own commands printed for the person (/cost, a plugin's
    # install): from its history (ctxmode import), no hook sees it.
    "command_output": ("shell", MINOR, "{[command], output}"),
}


def make(type: str, data: dict[str, object], **fields: object) -> SessionEvent:
    """A SessionEvent of a known ``type``, with its category and default priority."""
    from ctxmode.fastjson import dumps

    category, priority, _ = TYPES[type]
    return SessionEvent(type, category, priority, dumps(data), **fields)  # type: ignore[arg-type]
