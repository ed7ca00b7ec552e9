"""OpenCode as a host: the payloads of ctxmode's plugin, OpenCode's tool names, the output.

OpenCode (``opencode-ai`` 1.18.33, run offline: ``tests/fixtures/opencode-1.18.33/``, made by
``scripts/record_opencode_fixtures.py``) runs no hook commands: it loads JS plugins in its
own process. ctxmode installs one small plugin (``plugin.js`` here, written by
``ctxmode install --host opencode`` into ``~/.config/opencode/plugin/`` or
``DIR/.opencode/plugin/``) that hands each event to ctxmode's hook shims as stdin JSON, as
the other hosts' commands do, and injects what they print. Its payload is this host's:

    {"hook": <OpenCode's hook or event name>, "directory": <the plugin's directory>,
     "source": <SessionStart's source>, "input": <the hook's input>, "output": <its output>}

- ``tool.execute.after`` (every tool that returned; ``input.args``, ``output.output`` and
  ``output.metadata``: a shell command's ``exit``) → PostToolUse, or PostToolUseFailure
  when the command exited non-zero. A tool that *threw* fires no after hook: the plugin
  forwards its ``message.part.updated`` event (``state.status`` "error") as ``tool.error``
  → PostToolUseFailure.
- ``chat.message`` (the user's message and its text parts) → UserPromptSubmit.
- ``experimental.session.compacting`` (before the summary request) → PreCompact.
- ``session.compacted`` (the summary is in) → SessionStart ``compact``; ``session.created``
  → SessionStart ``startup``; a session the plugin's process meets first in a model request
  (``opencode run -s``) → SessionStart ``resume``; ``session.idle`` → SessionEnd.
- Output: SessionStart's snapshot, as Claude Code's ``additionalContext`` JSON. The plugin
  keeps it for the session and adds it to the system prompt of each later model request
  (``experimental.chat.system.transform``), once per request, until the next compaction.
  OpenCode rebuilds the system prompt on every request, so this is how the snapshot stays
  in the model's context as the summary does; it is claimed once in the store.

On the hook path: stdlib-light, nothing but ``ctxmode.payload``.
"""

from __future__ import annotations

from ctxmode import hosts, payload

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctxmode.payload import HookInput

NAME = "opencode"
OPTION = "opencode"  # its name on the command line (--host, --client)
LABEL = "OpenCode"  # its name for people

# -- input ----------------------------------------------------------------------------------

# The tools 1.18.33 offers its build agent (recorded from the real CLI: tests/fixtures/
# opencode-1.18.33/tools.run.json), and a few it offers elsewhere, → the neutral kinds.
TOOL_KINDS = {
    "bash": "shell",
    "read": "file.read",
    "write": "file.write",
    "edit": "file.edit",
    "glob": "file.glob",
    "grep": "file.grep",
    "list": "file.glob",  # a listing of one folder (offered by older releases)
    "todowrite": "todo.write",
    "task": "agent.run",
    "webfetch": "web.fetch",
    "websearch": "web.search",  # offered with OpenCode's own provider or OPENCODE_ENABLE_EXA
}
# The tools it offers that ctxmode records nothing of, and why.
NOT_RECORDED = {
    "skill": "loads instructions into the turn; the work they lead to is recorded",
    "todoread": "a read of the todo list: todowrite records it",
    "question": "asks the user; the answer comes as the next prompt (denied in `run`)",
    "plan_enter": "switches the agent; changes nothing (denied in `run`)",
    "plan_exit": "switches the agent back; changes nothing (denied in `run`)",
    "codesearch": "a search of public code; changes nothing in the project",
}
# MCP tools reach the plugin as <server>_<tool>; they are recorded only where the name is
# in neither table and holds an underscore (OpenCode's own tools have none).
TOOL_STATUS_ERROR = "error"


def tool_kind(tool_name: str) -> str:
    """The neutral kind of an OpenCode tool ("" when ctxmode records nothing of it)."""
    kind = TOOL_KINDS.get(tool_name)
    if kind is not None:
        return kind
    if tool_name in NOT_RECORDED or "_" not in tool_name.strip("_"):
        return ""
    return "mcp"


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _copy(source: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """``source``'s keys renamed by ``names`` (OpenCode's → Claude Code's), those present."""
    return {new: source[old] for old, new in names.items() if old in source}


# OpenCode's argument names → the ones the extractors read (Claude Code's).
_ARGS = {
    "shell": {"command": "command", "description": "description", "workdir": "workdir"},
    "file.read": {"filePath": "file_path", "offset": "offset", "limit": "limit"},
    "file.write": {"filePath": "file_path", "content": "content"},
    "file.edit": {
        "filePath": "file_path",
        "oldString": "old_string",
        "newString": "new_string",
        "replaceAll": "replace_all",
    },
    "file.glob": {"pattern": "pattern", "path": "path"},
    "file.grep": {"pattern": "pattern", "path": "path", "include": "glob"},
    "agent.run": {
        "description": "description",
        "prompt": "prompt",
        "subagent_type": "subagent_type",
    },
    "web.fetch": {"url": "url", "format": "prompt"},
    "web.search": {"query": "query"},
}


def convert(
    tool: str, args: dict[str, Any], result: dict[str, Any]
) -> tuple[dict[str, Any], Any, str | None]:
    """One tool call → (its input, its response, the failure's error or None) in the shapes
    the extractors read. ``result``: tool.execute.after's output (``title``, ``output``,
    ``metadata``), empty for a call that threw."""
    kind = tool_kind(tool)
    meta = _dict(result.get("metadata"))
    text = _str(result.get("output"))
    error: str | None = None
    tool_input: dict[str, Any] = _copy(args, _ARGS[kind]) if kind in _ARGS else dict(args)
    response: Any = {}
    if kind == "shell":
        if tool_input.get("workdir"):
            # Where the command ran (its own cd: the session's cwd stays).
            tool_input["command"] = (
                f"cd {tool_input.pop('workdir')} && {tool_input.get('command', '')}"
            )
        else:
            tool_input.pop("workdir", None)
        output = _str(meta.get("output")) or text
        if output == "(no output)":
            output = ""
        response = {"stdout": output, "stderr": ""}
        code = meta.get("exit")
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            error = f"Exit code {code}\n{output}".rstrip("\n")
    elif kind == "file.write":
        exists = meta.get("exists")
        if isinstance(exists, bool):
            response = {"type": "update" if exists else "create"}
    elif kind == "todo.write":
        todos = args.get("todos")
        if isinstance(todos, list):
            tool_input = {
                "todos": [
                    {"content": _str(t.get("content")), "status": _str(t.get("status"))}
                    for t in todos
                    if isinstance(t, dict)
                ]
            }
    elif kind == "mcp":
        response = text
    return tool_input, response, error


def _session(value: dict[str, Any]) -> str:
    return _str(value.get("sessionID")) or _str(value.get("sessionId"))


def neutral(raw: dict[str, Any], event: str | None) -> dict[str, Any]:
    """The plugin's payload → Claude Code's field names (``payload.from_dict`` reads them),
    with ``hook_event_name`` the neutral event."""
    hook = _str(raw.get("hook"))
    given = _dict(raw.get("input"))
    result = _dict(raw.get("output"))
    out: dict[str, Any] = {"cwd": _str(raw.get("directory")), "opencode_hook": hook}
    name = event or ""
    if hook == "tool.execute.after":
        tool = _str(given.get("tool"))
        tool_input, response, error = convert(tool, _dict(given.get("args")), result)
        out.update(
            session_id=_session(given),
            tool_name=tool,
            tool_use_id=_str(given.get("callID")) or None,
            tool_input=tool_input,
            tool_response=response,
        )
        name = "PostToolUse"
        if error is not None:
            out["error"], name = error, "PostToolUseFailure"
    elif hook == "tool.error":
        # A tool that threw: its message.part.updated event (part.state: input, error).
        part = _dict(_dict(given.get("properties")).get("part"))
        state = _dict(part.get("state"))
        tool = _str(part.get("tool"))
        tool_input, _response, _error = convert(tool, _dict(state.get("input")), {})
        out.update(
            session_id=_str(part.get("sessionID")),
            tool_name=tool,
            tool_use_id=_str(part.get("callID")) or None,
            tool_input=tool_input,
            error=_str(state.get("error")) or "error",
        )
        name = "PostToolUseFailure"
    elif hook == "chat.message":
        parts = result.get("parts")
        texts = [
            _str(p.get("text"))
            for p in (parts if isinstance(parts, list) else [])
            if isinstance(p, dict) and p.get("type") == "text" and not p.get("synthetic")
        ]
        out.update(session_id=_session(given), prompt="\n".join(t for t in texts if t))
        name = "UserPromptSubmit"
    elif hook == "experimental.session.compacting":
        out.update(session_id=_session(given), trigger="auto")
        name = "PreCompact"
    elif hook in ("session.compacted", "session.created", "session.start"):
        props = _dict(given.get("properties"))
        out.update(
            session_id=_session(props) or _session(given),
            source={"session.compacted": "compact", "session.created": "startup"}.get(
                hook, _str(raw.get("source")) or "resume"
            ),
        )
        name = "SessionStart"
    elif hook == "session.idle":
        out.update(session_id=_session(_dict(given.get("properties"))), reason="other")
        name = "SessionEnd"
    out["hook_event_name"] = name
    return out


def _finish(inp: HookInput) -> HookInput:
    inp.tool_kind = tool_kind(inp.tool_name)
    # `bash` runs each command in a shell of its own, in the session's folder.
    inp.shell_keeps_cwd = False
    # The snapshot reaches the model through the system prompt (SessionStart compact, held
    # by the plugin), never with a prompt.
    inp.prompt_claims_compact = False
    return inp


def parse(data: bytes, event: str | None = None) -> HookInput:
    """The plugin's stdin bytes → the neutral HookInput (``payload.PayloadError`` if unusable)."""
    raw = payload.parse(data, event or "opencode").raw
    converted = neutral(raw, None)
    if not converted["hook_event_name"]:
        raise payload.PayloadError(f"not an OpenCode event ctxmode reads: {raw.get('hook')!r}")
    return _finish(payload.from_dict(converted))


def salvage(head: bytes, event: str | None = None) -> HookInput:
    """The neutral HookInput from the head of an oversized payload: the envelope and the
    call's short arguments (``input`` comes before ``output``, the big part)."""
    text = head.decode("utf-8", "ignore")
    raw: dict[str, Any] = {"hook": payload._string_after_key(text, "hook") or ""}
    raw["directory"] = payload._string_after_key(text, "directory") or ""
    given: dict[str, Any] = {}
    for key in ("sessionID", "tool", "callID"):
        value = payload._string_after_key(text, key)
        if value is not None:
            given[key] = value
    args: dict[str, Any] = {}
    for key in ("command", "filePath", "pattern", "url", "description"):
        value = payload._string_after_key(text, key)
        if value is not None:
            args[key] = value
    given["args"] = args
    raw["input"] = given
    converted = neutral(raw, None)
    converted["ctxmode_truncated"] = True
    if not converted.get("session_id") or not converted["hook_event_name"]:
        raise payload.PayloadError("oversized payload without a readable session")
    return _finish(payload.from_dict(converted))


# -- output ---------------------------------------------------------------------------------


def output(event: str, text: str) -> bytes:
    """What the plugin reads: SessionStart's snapshot (held for the system prompt)."""
    if not text or event != "SessionStart":
        return b""
    return hosts.additional_context(event, text)


# -- registration ---------------------------------------------------------------------------

# (OpenCode's hook or event, the plugin's timeout in **milliseconds**, None): what the
# plugin hands over, and how long it waits for each call before it goes on without it.
HOOKS: tuple[tuple[str, int, str | None], ...] = (
    ("tool.execute.after", 10000, None),
    ("chat.message", 10000, None),
    ("experimental.session.compacting", 30000, None),
    ("event:session.compacted", 30000, None),
    ("event:session.created", 15000, None),
    ("event:session.idle", 5000, None),
    ("experimental.chat.system.transform", 15000, None),
)
# The shim each call runs (ctxmode/hooks/<shim>.py, with --host opencode).
SHIMS = {
    "tool.execute.after": "post_tool_use",
    "tool.error": "post_tool_use",
    "chat.message": "user_prompt_submit",
    "experimental.session.compacting": "pre_compact",
    "session.compacted": "session_start",
    "session.created": "session_start",
    "session.start": "session_start",
    "session.idle": "session_end",
}

# The plugin's folder's cwd is the session's folder (the plugin's `directory`): the project
# is climbed to from it; OpenCode sets no CLAUDE_PROJECT_DIR.
PROJECT_FROM_ENV = False

SETTINGS_FORMAT = "js"
USER_DIR_ENV = "XDG_CONFIG_HOME"  # $XDG_CONFIG_HOME/opencode, else ~/.config/opencode
USER_DIR_DEFAULT = "~/.config/opencode"
PROJECT_DIR_NAME = ".opencode"
PLUGIN_NAME = "ctxmode.js"
SETTINGS_FILES = {
    "user": ("user", f"plugin/{PLUGIN_NAME}"),
    "project": ("project", f".opencode/plugin/{PLUGIN_NAME}"),
}
