"""The OpenAI Codex CLI as a host: its stdin JSON, tool names, output shape and hook files.

Facts from Codex CLI 0.169.0 as run offline (``tests/fixtures/codex-0.169.0/``, made by
``scripts/record_codex_fixtures.py``; the contract in ``/work/shared/codex-hooks.md``):

- The payload's envelope is Claude Code's (``session_id``, ``cwd``, ``transcript_path``,
  ``hook_event_name``, ``tool_name``, ``tool_input``, ``tool_response``, ``prompt``,
  ``source``, ``trigger``, ``reason``), so ``payload.parse`` reads it; Codex gives no
  project or session variable in the environment: both come from stdin, like Claude Code's.
- The shell reaches hooks as ``Bash`` with ``{"command": str}`` and a *string* response
  (the output, no exit code); ``apply_patch`` as ``{"command": "<*** Begin Patch ...>"}``.
  Both are converted to the shapes the extractors read (``{"stdout": ...}``; the patch plus
  the first file's ``file_path``, so a failed patch and the later good one share a key).
- There is no failure event and PostToolUse fires for failed commands too: a PostToolUse
  proves no success (``outcome_known`` is False). Failures and successes come late, from
  the session's rollout file (``hosts/codex/rollout``), read incrementally by ``late``.
- Output: SessionStart and UserPromptSubmit take ``hookSpecificOutput.additionalContext``
  (the same JSON as Claude Code's; Codex's output schemas refuse unknown keys).
- Stop carries the turn's reply as ``last_assistant_message``, as Claude Code's does: it is
  kept as ``assistant_reply`` (``extract.replies``) with nothing converted.

On the hook path: stdlib-light, nothing but ``ctxmode.payload`` and ``ctxmode.fastjson``
(``rollout`` is imported by ``late`` only).
"""

from __future__ import annotations

import os

from ctxmode import fastjson, hosts, payload

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ctxmode.payload import HookInput

NAME = "codex"
OPTION = "codex"  # its name on the command line (--host, --client)
LABEL = "Codex CLI"  # its name for people

# -- input ----------------------------------------------------------------------------------

TOOL_KINDS = {
    "Bash": "shell",
    "exec_command": "shell",  # the name on the wire (the rollout), should a hook ever see it
    "shell": "shell",
    "local_shell": "shell",
    "apply_patch": "file.patch",
    # Reported as matcher aliases for apply_patch (unverified in 0.169.0): their input is
    # still a patch, which is all the files extractor reads.
    "Edit": "file.patch",
    "Write": "file.patch",
    "update_plan": "todo.write",  # offered to some models; not to gpt-5.5 in 0.169.0
    "web_search": "web.search",
    # A thread's goal: open work until update_goal says it is complete.
    "create_goal": "goal.create",
    "update_goal": "goal.update",
}

# The tools Codex offers that ctxmode records nothing of, each with the reason. Every tool
# a supported Codex offers is here or in TOOL_KINDS (tests/test_tool_tables.py checks the
# lists recorded from the real CLI, tests/fixtures/codex-*/tools.*.json).
NOT_RECORDED = {
    "write_stdin": "input to a running command (exec_command, recorded) and its output so far",
    "view_image": "shows the model an image; changes nothing",
    "request_user_input": "questions in plan mode; the answer comes as the next prompt",
    "get_goal": "a read: create_goal/update_goal record the goal",
    "tool_search": "loads deferred tools' schemas; changes nothing",
    "list_mcp_resources": "a read of MCP servers' resources",
    "list_mcp_resource_templates": "a read of MCP servers' resource templates",
    "read_mcp_resource": "a read of one MCP resource",
}
MCP_PREFIX = "mcp__"
# Codex's plan statuses are Claude Code's todo statuses already (pending, in_progress,
# completed); the plan's steps become todos.


def tool_kind(tool_name: str) -> str:
    """The neutral kind of a Codex tool ("" when ctxmode records nothing of it)."""
    kind = TOOL_KINDS.get(tool_name)
    if kind is not None:
        return kind
    return "mcp" if tool_name.startswith(MCP_PREFIX) else ""


def convert(raw: dict[str, Any]) -> dict[str, Any]:
    """Codex's tool input and response → the shapes the extractors read (a new dict)."""
    name = raw.get("tool_name")
    kind = tool_kind(name) if isinstance(name, str) else ""
    tool_input = raw.get("tool_input")
    if not isinstance(tool_input, dict):
        return raw
    raw = dict(raw)
    if kind == "shell":
        command = tool_input.get("command") or tool_input.get("cmd")
        if isinstance(command, list):  # the older `shell` tool: an argv
            command = " ".join(str(part) for part in command)
        if isinstance(command, str):
            raw["tool_input"] = {"command": command}
        response = raw.get("tool_response")
        if isinstance(response, str):
            raw["tool_response"] = {"stdout": response, "stderr": ""}
    elif kind == "file.patch":
        text = tool_input.get("command") or tool_input.get("input") or tool_input.get("patch")
        if isinstance(text, str):
            from ctxmode.hosts.codex.rollout import first_patch_file

            first = first_patch_file(text)
            # "patch", not "command": the error key of a patch is its first file.
            raw["tool_input"] = {"patch": text, "file_path": first} if first else tool_input
    elif kind == "todo.write":
        plan = tool_input.get("plan")
        if isinstance(plan, list):
            todos = [
                {"content": step.get("step"), "status": step.get("status")}
                for step in plan
                if isinstance(step, dict)
            ]
            raw["tool_input"] = {"todos": todos}
    return raw


def _finish(inp: HookInput) -> HookInput:
    inp.tool_kind = tool_kind(inp.tool_name)
    # PostToolUse fires for a command that exited non-zero too: it proves no success.
    inp.outcome_known = False
    # A shell call runs in a shell of its own: a `cd` in it moves neither the session nor
    # the next call (the payload's cwd is where it started).
    inp.shell_keeps_cwd = False
    return inp


def parse(data: bytes, event: str | None = None) -> HookInput:
    """Codex's stdin bytes → the neutral HookInput (``payload.PayloadError`` if unusable)."""
    inp = payload.parse(data, event)
    if inp.tool_name:
        inp = payload.from_dict(convert(inp.raw), inp.event)
    return _finish(inp)


def salvage(head: bytes, event: str | None = None) -> HookInput:
    """The neutral HookInput from the head of an oversized payload (see payload.salvage).

    A huge patch still names its files: they head the patch, whose complete lines in the
    head are recovered (payload.salvage keeps only complete strings).
    """
    inp = payload.salvage(head, event)
    if inp.tool_kind is None and tool_kind(inp.tool_name) == "file.patch":
        tool_input = inp.raw.get("tool_input")
        if isinstance(tool_input, dict) and not tool_input.get("command"):
            text = head.decode("utf-8", "ignore")
            partial = _string_head(text[max(text.find('"tool_input"'), 0) :], "command")
            if partial:
                tool_input["command"] = partial
    if inp.tool_name:
        inp = payload.from_dict(convert(inp.raw), inp.event)
    return _finish(inp)


def _string_head(text: str, key: str) -> str:
    """The complete lines at the start of the string value of ``"key"`` in a cut JSON text."""
    at = text.find(f'"{key}"')
    if at == -1:
        return ""
    i = at + len(key) + 2
    while i < len(text) and text[i] in " \t\r\n:":
        i += 1
    if i >= len(text) or text[i] != '"':
        return ""
    body = text[i + 1 :]
    cut = body.rfind("\\n")  # the last escaped newline: no escape is split there
    if cut == -1:
        return ""
    try:
        value = fastjson.loads('"' + body[: cut + 2] + '"')
    except ValueError:
        return ""
    return value if isinstance(value, str) else ""


# Events that read what the rollout file gained since the last call (tool outcomes): the
# tool and prompt hooks, and the two that take a snapshot, so it is complete.
LATE_EVENTS = ("PostToolUse", "UserPromptSubmit", "PreCompact", "SessionEnd")


def late(inp: HookInput, root: str) -> tuple[list[HookInput], Callable[..., None] | None]:
    """Tool outcomes the rollout file recorded since the last call (see ``rollout``).

    Returns the calls as inputs (failures as ``PostToolUseFailure``, successes as
    ``PostToolUse`` with ``outcome_known``) and a function that records how far the file
    was read, to run once they are stored.
    """
    if inp.event not in LATE_EVENTS or not inp.transcript_path or not root:
        return [], None
    from ctxmode.hosts.codex import rollout as codex_rollout

    return codex_rollout.read_outcomes(inp, root)


def session_files(root: str, session_ids: list[str]) -> list[str]:
    """How far each session's rollout was read (with its temporary files), for purge."""
    from ctxmode.hosts.codex import rollout as codex_rollout

    folder = os.path.join(root, codex_rollout.STATE_DIR)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found: list[str] = []
    for sid in session_ids:
        state = os.path.basename(codex_rollout.state_path(root, sid))
        found.extend(
            os.path.join(folder, n) for n in names if n == state or n.startswith(state + ".")
        )
    return found


# -- output ---------------------------------------------------------------------------------

# Events whose hookSpecificOutput.additionalContext reaches the model (as a developer
# message). PreCompact and PostCompact accept only the common keys.
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")


def output(event: str, text: str) -> bytes:
    """The stdout that hands ``text`` to the model, or b"" when ``event`` cannot."""
    if not text or event not in CONTEXT_EVENTS:
        return b""
    return hosts.additional_context(event, text)


# -- registration ---------------------------------------------------------------------------

# (event, timeout in seconds, matcher). Codex's default timeout is 600 s; SessionEnd is
# clamped to 3 s (a larger value runs, with a warning). No PostToolUseFailure: Codex has
# none. A matcher of None matches everything (Codex ignores it on UserPromptSubmit).
HOOKS: tuple[tuple[str, int, str | None], ...] = (
    ("PostToolUse", 10, None),
    ("UserPromptSubmit", 10, None),
    ("PreCompact", 30, None),
    ("SessionStart", 30, None),
    ("SessionEnd", 3, None),
    # The text each turn ended with (``last_assistant_message``, as Claude Code's Stop):
    # what the agent found and told, which no tool call holds. Prints nothing: a Stop
    # hook's ``decision: block`` would make Codex go on with the turn.
    ("Stop", 10, None),
)

# Codex's name of each event in the trust keys of config.toml ([hooks.state."<file>:<label>:
# <group>:<handler>"]).
EVENT_LABELS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "PreModelRequest": "pre_model_request",
    "PreToolUse": "pre_tool_use",
    "PermissionRequest": "permission_request",
    "PostToolUse": "post_tool_use",
    "PreCompact": "pre_compact",
    "PostCompact": "post_compact",
    "Stop": "stop",
    "SessionEnd": "session_end",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "Interrupt": "interrupt",
}

# Hooks: JSON, {"hooks": {event: [{"matcher": ..., "hooks": [{"type": "command", "command":
# ..., "timeout": ...}]}]}} in hooks.json beside the layer's config.toml; the trust entries
# in the *user* config.toml.
SETTINGS_FORMAT = "json"
USER_DIR_ENV = "CODEX_HOME"
USER_DIR_DEFAULT = "~/.codex"
PROJECT_DIR_NAME = ".codex"
SETTINGS_FILES = {
    "user": ("user", "hooks.json"),
    "project": ("project", ".codex/hooks.json"),
}
TRUST_FILE = "config.toml"  # in the user dir, whatever the scope of the hooks
