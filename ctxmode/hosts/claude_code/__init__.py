"""Claude Code as a host: its stdin JSON, tool names, output shape and settings files.

Every Claude Code detail the core would otherwise carry lives here (see ``ctxmode.hosts``
for the contract). Facts from the hooks reference and the captured payloads of 2.1.197
(``tests/fixtures/claude-code-2.1.197/``) and 2.1.332 (``claude-code-2.1.332/tools/``: the
worktree, cron, wake-up, monitor, workflow and background-agent tools).

On the hook path: stdlib-light, nothing but ``ctxmode.payload`` and ``ctxmode.fastjson``.
"""

from __future__ import annotations

from ctxmode import hosts, payload

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.payload import HookInput

NAME = "claude_code"
OPTION = "claude"  # its name on the command line (--host, --client)
LABEL = "Claude Code"  # its name for people

# -- input ----------------------------------------------------------------------------------

# Claude Code's payload fields are ctxmode's neutral names (payload.HookInput reads them
# as they come): parsing is payload.parse plus the tool's kind.


def parse(data: bytes, event: str | None = None) -> HookInput:
    """Claude Code's stdin bytes → the neutral HookInput (``payload.PayloadError`` if unusable)."""
    inp = payload.parse(data, event)
    inp.tool_kind = tool_kind(inp.tool_name)
    return inp


def turn_notes(inp: HookInput) -> list[str]:
    """Stop: what the agent wrote in the turn before its reply, from the transcript
    (history.turn_notes); the payload has the reply only."""
    path = str(inp.raw.get("transcript_path") or "")
    if not path or not inp.last_assistant_message:
        return []
    from ctxmode.hosts.claude_code.history import turn_notes as read_notes

    return read_notes(path, inp.last_assistant_message)


def salvage(head: bytes, event: str | None = None) -> HookInput:
    """The neutral HookInput from the head of an oversized payload (see payload.salvage)."""
    inp = payload.salvage(head, event)
    inp.tool_kind = tool_kind(inp.tool_name)
    return inp


# Tool name → the kind the extractors dispatch on (ctxmode.hosts.KINDS). Every tool a
# supported client offers is here or in NOT_RECORDED (tests/test_tool_tables.py checks the
# lists recorded from the real CLIs, tests/fixtures/claude-code-*/tools.*.json).
TOOL_KINDS = {
    "Read": "file.read",
    "Write": "file.write",
    "Edit": "file.edit",
    "MultiEdit": "file.edit",
    "NotebookEdit": "notebook.edit",
    "Glob": "file.glob",
    "Grep": "file.grep",
    # Not Claude Code's own tools, but names other clients' patch tools reach hooks by.
    "apply_patch": "file.patch",
    "ApplyPatch": "file.patch",
    "Bash": "shell",
    # Windows hosts' shell (2.1.x): a command line and its output as Bash's; its own
    # syntax is read as a POSIX line is (the git, npm and cd of it alike).
    "PowerShell": "shell",
    "TaskCreate": "task.create",
    "TaskUpdate": "task.update",
    "TaskList": "task.list",
    "TodoWrite": "todo.write",  # older clients
    "EnterPlanMode": "plan.enter",
    "ExitPlanMode": "plan.exit",
    "Agent": "agent.run",  # a background one (2.1.3xx's default) is open work too
    "Task": "agent.run",  # the subagent tool's name before Claude Code 2.x
    "SendMessage": "agent.message",
    "EnterWorktree": "worktree.enter",
    "ExitWorktree": "worktree.exit",
    "CronCreate": "job.cron",
    "CronDelete": "job.cron_delete",
    "ScheduleWakeup": "job.wakeup",
    "Monitor": "job.monitor",
    "Workflow": "job.workflow",
    "TaskStop": "job.stop",
    "ReportFindings": "review.findings",
    # A background command's output, read once it ended (the Bash call itself returned
    # at once, without it): kept as the command's output (extract.bash.background).
    "TaskOutput": "shell.output",
    "BashOutput": "shell.output",  # its name before 2.1
    "WebFetch": "web.fetch",
    "WebSearch": "web.search",
    "AskUserQuestion": "ask.user",
}

# The tools ctxmode records nothing of, each with the reason.
NOT_RECORDED = {
    "TaskGet": "a read of one task: TaskCreate/TaskUpdate recorded it",
    "CronList": "a read: CronCreate/CronDelete record the jobs",
    "ListAgents": "a read of the agents one can message: Agent/SendMessage are recorded",
    "Skill": "loads instructions into the turn; the work they lead to is recorded",
    "ToolSearch": "loads deferred tools' schemas; changes nothing",
    "DeferredToolPlaceholder": "a placeholder the client offers and says never to call",
}
MCP_PREFIX = "mcp__"  # MCP tools are named mcp__<server>__<tool>


def tool_kind(tool_name: str) -> str:
    """The neutral kind of a Claude Code tool ("" when ctxmode records nothing of it)."""
    kind = TOOL_KINDS.get(tool_name)
    if kind is not None:
        return kind
    return "mcp" if tool_name.startswith(MCP_PREFIX) else ""


# -- output ---------------------------------------------------------------------------------

# Events whose stdout reaches the model (as additionalContext). Never print
# hookSpecificOutput from PreCompact or PostCompact: the client rejects it.
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")


def output(event: str, text: str) -> bytes:
    """The stdout that hands ``text`` to the model, or b"" when ``event`` cannot."""
    if not text or event not in CONTEXT_EVENTS:
        return b""
    return hosts.additional_context(event, text)


# -- registration ---------------------------------------------------------------------------

# (event, timeout in seconds, matcher). Timeouts are explicit because Claude Code's
# default is 600 s; each is well above the hook's own deadline (ctxmode.hookrun), and
# SessionEnd's work stays inside the ~1.5 s Claude Code grants all SessionEnd hooks.
# A matcher of "" matches every tool; None writes no matcher (the event has none, or
# every value is wanted: PreCompact fires for both "manual" and "auto").
HOOKS: tuple[tuple[str, int, str | None], ...] = (
    ("PostToolUse", 10, ""),
    ("PostToolUseFailure", 10, ""),
    ("UserPromptSubmit", 10, None),
    ("PreCompact", 30, None),
    # Every source, listed: "fork" is reported since Claude Code 2.1.214 (before, a fork
    # came as "resume"); an unknown name in the alternation is harmless for older clients.
    ("SessionStart", 30, "startup|resume|clear|compact|fork"),
    ("SessionEnd", 5, None),
    # The client's summary of each compaction (ctxmode stats compares it with the snapshot).
    ("PostCompact", 10, None),
    # The text each turn ended with (``last_assistant_message``): what the agent found and
    # told, which no tool call holds. Prints nothing (a Stop hook's output could block).
    ("Stop", 10, None),
)

# Events only newer clients know, with the first version that has them. A client older
# than 2.1.101 rejects a settings file naming an event it does not know as a whole (every
# setting in it is skipped, not only the hook), so these are registered only where the
# installed client has them (``ctxmode install`` asks ``claude --version``).
MIN_VERSIONS: dict[str, tuple[int, ...]] = {"PostCompact": (2, 1, 76)}
VERSION_COMMAND = ("claude", "--version")  # prints e.g. "2.1.197 (Claude Code)"


def parse_version(text: str) -> tuple[int, ...] | None:
    """The version in ``claude --version``'s output (its first dotted number), or None."""
    for word in text.split():
        parts = word.split(".")
        if len(parts) >= 2 and all(p.isdecimal() for p in parts):
            return tuple(int(p) for p in parts)
    return None


# Hooks that print nothing the client reads (the captures): where the client can, they
# are registered with "async": true, so the agent goes on without waiting for them, and
# their shim gets --background (ctxmode.inflight keeps their events in the calls' order).
# SessionStart, UserPromptSubmit and PreCompact print or must finish before the client
# goes on, and SessionEnd builds the last snapshot while `claude -p` ends: foreground.
# Stop too: the last turn's reply comes as `claude -p` ends, when the client would kill a
# background hook still at work (once per turn, while the user reads the reply).
BACKGROUND_EVENTS = ("PostToolUse", "PostToolUseFailure")
# "async" on a command hook came with Claude Code 2.1.19 (2026-01-24; its changelog does
# not name it, 2.1.23's fixes "pending async hooks"). Verified on 2.1.197: the client
# starts the hook and goes on; at the end of `claude -p` it sends SIGTERM to hooks still
# running and kills them ~1.5 s later. An older client may reject the unknown key.
BACKGROUND_MIN_VERSION = (2, 1, 19)


def background_mode(version: tuple[int, ...] | None) -> tuple[bool, str]:
    """Whether to register the captures in the background for a client of ``version``,
    and why (one clause)."""
    needs = ".".join(map(str, BACKGROUND_MIN_VERSION))
    if version is None:
        return False, f"Claude Code's version is unknown; background hooks need {needs}"
    shown = ".".join(map(str, version))
    if version < BACKGROUND_MIN_VERSION:
        return False, f"Claude Code {shown} has no background hooks ({needs} has)"
    return True, f'Claude Code {shown} has "async" hooks'


def events_for(version: tuple[int, ...] | None) -> tuple[str, ...]:
    """The events to register for a client of ``version`` (None: unknown, so none of the
    version-gated ones)."""
    return tuple(
        event
        for event, _timeout, _matcher in HOOKS
        if event not in MIN_VERSIONS or (version is not None and version >= MIN_VERSIONS[event])
    )


# Settings: JSON, {"hooks": {event: [{"matcher": ..., "hooks": [{"type": "command",
# "command": ..., "timeout": ...}]}]}}, in the user's directory and the project's.
SETTINGS_FORMAT = "json"
USER_DIR_ENV = "CLAUDE_CONFIG_DIR"
USER_DIR_DEFAULT = "~/.claude"
PROJECT_DIR_NAME = ".claude"
# scope → (base: "user" dir or "project" dir, the file's path under it)
SETTINGS_FILES = {
    "user": ("user", "settings.json"),
    "project": ("project", ".claude/settings.json"),
    "local": ("project", ".claude/settings.local.json"),
}
