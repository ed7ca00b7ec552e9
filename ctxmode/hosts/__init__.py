"""The host seam: one module per client (Claude Code first) holding all that client's details.

ctxmode's core speaks a neutral vocabulary: the hook input is :class:`ctxmode.payload.HookInput`
(event names ``PostToolUse``, ``PostToolUseFailure``, ``UserPromptSubmit``, ``PreCompact``,
``SessionStart``, ``SessionEnd``; fields ``session_id``, ``cwd``, ``tool_name``, ``tool_input``,
...), and a tool call is dispatched on its *kind* (``file.edit``, ``shell``, ``task.update``,
``mcp``, ...; see :data:`KINDS`), never on a client's tool name. A host module turns its
client's world into that vocabulary and back. It is a plain module (the hook path imports
it: no json, re or typing at module level) with these names:

- ``NAME``: the host's name, as ``hookrun.main(event, host=NAME)`` and the registry know it.
- ``parse(data: bytes, event: str) -> HookInput`` and ``salvage(head: bytes, event: str)
  -> HookInput`` (the head of an oversized payload): stdin → the neutral input, its
  ``tool_kind`` set; raise ``payload.PayloadError`` for input that is no hook payload.
- ``tool_kind(tool_name: str) -> str``: the client's tool name → a kind ("" for a tool
  ctxmode does not record).
- ``output(event: str, text: str) -> bytes``: what the hook prints to hand ``text`` to the
  model (``b""`` for an event whose output cannot reach it).
- ``HOOKS``: the registration, ``(event, timeout in seconds, matcher or None)`` per hook;
  ``SETTINGS_FORMAT``, ``USER_DIR_ENV``/``USER_DIR_DEFAULT``, ``SETTINGS_FILES`` (scope →
  where its settings file lives): what ``ctxmode install`` writes and where.

Adding a client: a module here with those names, its name in :data:`NAMES`, shims (or a
``--host`` argument) that call ``hookrun.main(event, host=NAME)``, and the installer taught
its settings format. The extractors, the store and the snapshot never change for it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

DEFAULT = "claude_code"
NAMES = ("claude_code", "codex", "gemini")

# The neutral tool kinds the extractors dispatch on (a host maps its tool names to these).
KINDS = (
    "file.read",
    "file.write",
    "file.edit",
    "file.patch",
    "file.glob",
    "file.grep",
    "notebook.edit",
    "shell",
    "shell.output",
    "task.create",
    "task.update",
    "task.list",
    "todo.write",
    "plan.enter",
    "plan.exit",
    "agent.run",
    "agent.message",
    "worktree.enter",
    "worktree.exit",
    "job.cron",
    "job.cron_delete",
    "job.wakeup",
    "job.monitor",
    "job.workflow",
    "job.stop",
    "goal.create",
    "goal.update",
    "review.findings",
    "web.fetch",
    "web.search",
    "ask.user",
    "mcp",
)


def additional_context(event: str, text: str) -> bytes:
    """A hook's stdout that hands ``text`` to the model as ``additionalContext``: the
    ``hookSpecificOutput`` shape Claude Code and Codex both read (each host says for
    which events, in its ``output``)."""
    from ctxmode import fastjson

    document = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
    return (fastjson.dumps(document) + "\n").encode("utf-8", "replace")


def get(name: str | None = None) -> ModuleType:
    """The host module called ``name`` (the default host when None)."""
    name = name or DEFAULT
    if name not in NAMES:
        raise ValueError(f"unknown host {name!r} (known: {', '.join(NAMES)})")
    return __import__(f"ctxmode.hosts.{name}", fromlist=["NAME"])
