"""The host seam: the registry of clients ("hosts"), each one folder holding all its details.

ctxmode's core speaks a neutral vocabulary: the hook input is :class:`ctxmode.payload.HookInput`
(event names ``PostToolUse``, ``PostToolUseFailure``, ``UserPromptSubmit``, ``PreCompact``,
``SessionStart``, ``SessionEnd``; fields ``session_id``, ``cwd``, ``tool_name``, ``tool_input``,
...), and a tool call is dispatched on its *kind* (``file.edit``, ``shell``, ``task.update``,
``mcp``, ...; see :data:`KINDS`), never on a client's tool name. A host turns its client's
world into that vocabulary and back, and knows everything else about its client: where its
settings live and how ``ctxmode install`` edits them, the proof run, doctor's checks, the
client's own history. Each host is one package, ``ctxmode/hosts/<name>/``:

- ``__init__``: what a hook needs, and nothing else (the hook path imports it: no json,
  re or typing at module level): ``NAME``, ``OPTION``, ``LABEL``, ``parse``, ``salvage``,
  ``tool_kind``, ``TOOL_KINDS``, ``NOT_RECORDED``, ``output``, ``HOOKS``, where its
  settings files are; optionally ``late``, ``output_for``, ``INPUT_LIMITS``,
  ``PROJECT_FROM_ENV``;
- ``install``, ``proof``, ``doctor``, ``bench``, and optionally ``history``: loaded on first
  use by the commands that need them (:func:`part`), never by a hook.

The interface, with types, is :mod:`ctxmode.hosts.contract` (tests/test_host_contract.py
holds every registered host to it). Adding a client: its folder, its name in :data:`NAMES`.
The extractors, the store, the snapshot, the handlers and the harness never change for it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

# The registered hosts, in the order the CLI shows them (doctor's groups, the bench's cases).
NAMES = ("claude_code", "codex", "gemini", "copilot", "qwen", "opencode")
# The host of a hook whose command names none, and of a stored session that names none.
DEFAULT = "claude_code"
# The parts of a host package loaded on first use (``history`` is optional).
PARTS = ("install", "proof", "doctor", "bench", "history")

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
    """The host package called ``name`` (the default host when None): what a hook needs."""
    name = name or DEFAULT
    if name not in NAMES:
        raise ValueError(f"unknown host {name!r} (known: {', '.join(NAMES)})")
    return __import__(f"ctxmode.hosts.{name}", fromlist=["NAME"])


def part(name: str, role: str) -> ModuleType:
    """A host's part (``install``, ``proof``, ``doctor``, ``bench``, ``history``), imported now.

    Raises ValueError for an unknown host or part, ModuleNotFoundError when the host has
    no such part (see :func:`having`)."""
    get(name)
    if role not in PARTS:
        raise ValueError(f"unknown part {role!r} of a host (known: {', '.join(PARTS)})")
    return __import__(f"ctxmode.hosts.{name}.{role}", fromlist=["__name__"])


def having(role: str) -> tuple[str, ...]:
    """The hosts that have the part ``role`` (every host has all but ``history``),
    imported now."""
    found = []
    for name in NAMES:
        try:
            part(name, role)
        except ModuleNotFoundError as exc:
            if exc.name != f"ctxmode.hosts.{name}.{role}":
                raise  # the part is there, something it imports is not
            continue
        found.append(name)
    return tuple(found)


def options() -> dict[str, str]:
    """Each host's name on the command line (``--host``, ``--client``) → its name here."""
    return {str(get(name).OPTION): name for name in NAMES}


def by_option(option: str) -> str:
    """The host a command-line name stands for (``claude`` → ``claude_code``)."""
    found = options().get(option)
    if found is None:
        known = ", ".join(options())
        raise ValueError(f"unknown host {option!r} (known: {known})")
    return found


def labels() -> str:
    """The hosts' names for people, in words: "Claude Code, Codex CLI or Gemini CLI"."""
    names = [str(get(name).LABEL) for name in NAMES]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
