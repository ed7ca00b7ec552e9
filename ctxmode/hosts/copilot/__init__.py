"""GitHub Copilot CLI as a host: its stdin JSON, tool names, output shape and hook files.

Facts from Copilot CLI 1.0.102 as run offline (``tests/fixtures/copilot-cli-1.0.102/``, made
by ``scripts/record_copilot_fixtures.py``; ``/work/shared/next-hosts.md``):

- ctxmode registers Copilot's native camelCase events (``sessionStart``,
  ``userPromptSubmitted``, ``postToolUse``, ``preCompact``, ``sessionEnd``,
  ``permissionRequest``), not the Claude-style names Copilot also accepts: those come with
  snake_case payloads in a third shape (``tool_result.text_result_for_llm``), and only the
  native ones are documented for ``.github/hooks/*.json``. The payload names no event: the
  shim says which it is.
- Payloads are camelCase (``sessionId``, ``cwd``, ``toolName``, ``toolArgs``, ``toolResult
  {resultType, textResultForLlm}``, ``transcriptPath``, ``trigger``, ``source``,
  ``reason``); :func:`to_claude` turns them into the fields and tool shapes the extractors
  read.
- A shell command that exits non-zero is still a ``postToolUse`` with ``resultType``
  "success": only the last line of its text says ``<shellId: N completed with exit code
  C>``. A non-zero code (or a ``resultType`` of failure, rejected or denied) becomes
  ``PostToolUseFailure`` with an ``error`` like Claude Code's (``Exit code C\\n<output>``).
- Only a flat ``{"additionalContext": …}`` on stdout reaches the model (sessionStart: a
  user message of its own; userPromptSubmitted: inside the prompt's ``<system_reminder>``).
- Compaction: ``preCompact`` fires (manual ``/compact`` and auto) but nothing after it, and
  sessionStart's source is never "compact": the snapshot preCompact stores rides the next
  ``userPromptSubmitted``, claimed there exactly once (``handlers.on_prompt``).
- ``COPILOT_PROJECT_DIR``/``CLAUDE_PROJECT_DIR`` are the folder copilot started in: the
  project is climbed to from the payload's cwd, as for Gemini.

On the hook path: stdlib-light, nothing but ``ctxmode.payload`` and ``ctxmode.fastjson``.
"""

from __future__ import annotations

from ctxmode import fastjson, payload

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctxmode.payload import HookInput

NAME = "copilot"
OPTION = "copilot"  # its name on the command line (--host, --client)
LABEL = "Copilot CLI"  # its name for people

# Copilot's event → ctxmode's neutral event (the handlers' names).
EVENTS = {
    "sessionStart": "SessionStart",
    "userPromptSubmitted": "UserPromptSubmit",
    "postToolUse": "PostToolUse",
    "preCompact": "PreCompact",
    "sessionEnd": "SessionEnd",
    "permissionRequest": "PermissionRequest",
}
NATIVE = {neutral: native for native, neutral in EVENTS.items()}
# sessionStart's sources → ctxmode's (Copilot says "new" where Claude Code says "startup").
SOURCES = {"new": "startup", "startup": "startup", "resume": "resume"}

# -- input ----------------------------------------------------------------------------------

# Tool name → neutral kind: the tools 1.0.102 offers in prompt mode (``-p``), recorded from
# the real CLI (tests/fixtures/copilot-cli-1.0.102/tools.print.json).
TOOL_KINDS = {
    "bash": "shell",
    "view": "file.read",
    "create": "file.write",
    "edit": "file.edit",
    "grep": "file.grep",
    "glob": "file.glob",
    "task": "agent.run",
}
# The tools 1.0.102 offers that ctxmode records nothing of, and why (a tool in neither table
# is a decision to make: tests/test_host_copilot.py checks the recorded list).
NOT_RECORDED = {
    "read_bash": "a read of a running command's output; the command (bash) is recorded",
    "stop_bash": "stops a running command (bash, recorded)",
    "list_bash": "a read of the CLI's own shells",
    "read_agent": "a read of a background agent's output; the task is recorded",
    "list_agents": "a read of the CLI's own agents",
    "write_agent": "a message to a background agent (task, recorded)",
    "fetch_copilot_cli_documentation": "reads the CLI's own documentation; changes nothing",
    "skill": "loads instructions into the turn; the work they lead to is recorded",
    "sql": "the session's own scratch database (its todo tables), not the project's work",
    "session_store_sql": "a read of the CLI's store of past sessions",
}


def tool_kind(tool_name: str) -> str:
    """The neutral kind of a Copilot tool ("" when ctxmode records nothing of it)."""
    return TOOL_KINDS.get(tool_name, "")


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# The line the bash tool ends its text with: "<shellId: 0 completed with exit code 2>".
_SHELL_TRAILER = "<shellId: "
_EXIT_WORDS = " with exit code "


def shell_result(text: str) -> tuple[str, int | None]:
    """The bash tool's ``textResultForLlm`` → (its output, the exit code or None when the
    text has no trailer: a command still running, or one the tool reports otherwise)."""
    body = text.rstrip("\n")
    cut = body.rfind("\n" + _SHELL_TRAILER)
    if cut == -1 and body.startswith(_SHELL_TRAILER):
        cut = 0
        trailer, output = body, ""
    elif cut == -1:
        return text, None
    else:
        trailer, output = body[cut + 1 :], body[:cut]
    at = trailer.rfind(_EXIT_WORDS)
    if at == -1 or not trailer.endswith(">"):
        return output, None
    value = trailer[at + len(_EXIT_WORDS) : -1].strip()
    code = int(value) if value.lstrip("-").isdigit() else None
    return output, code


# A tool result that says the call did not succeed (besides a non-zero exit code).
_FAILED = ("failure", "rejected", "denied", "error")


def convert(raw: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A Copilot tool payload → (the fields and shapes the extractors read, the failure's
    error or None). A new dict; ``raw`` is left as it is."""
    name = _str(raw.get("toolName"))
    kind = tool_kind(name)
    args = _dict(raw.get("toolArgs"))
    result = _dict(raw.get("toolResult"))
    text = _str(result.get("textResultForLlm"))
    result_type = _str(result.get("resultType"))
    error: str | None = None
    if result_type in _FAILED:
        error = text or _str(result.get("error")) or result_type
    tool_input: dict[str, Any] = dict(args)
    response: Any = {}
    if kind == "shell":
        tool_input = {"command": _str(args.get("command"))}
        if _str(args.get("description")):
            tool_input["description"] = args["description"]
        output, code = shell_result(text)
        response = {"stdout": output, "stderr": ""}
        if error is None and code:
            error = f"Exit code {code}\n{output}".rstrip("\n")
    elif kind in ("file.write", "file.edit"):
        tool_input = {"file_path": _str(args.get("path"))}
        if kind == "file.write" and isinstance(args.get("file_text"), str):
            tool_input["content"] = args["file_text"]
        if kind == "file.edit":
            for src, dst in (("old_str", "old_string"), ("new_str", "new_string")):
                if isinstance(args.get(src), str):
                    tool_input[dst] = args[src]
        if kind == "file.write" and text.startswith("Created file"):
            response = {"type": "create", "filePath": tool_input["file_path"]}
    elif kind == "file.read":
        tool_input = {"file_path": _str(args.get("path"))}
        view_range = args.get("view_range")
        if isinstance(view_range, list) and len(view_range) == 2:
            first, last = view_range
            if isinstance(first, int) and isinstance(last, int) and first > 0:
                tool_input["offset"] = first
                if last >= first:
                    tool_input["limit"] = last - first + 1
    elif kind in ("file.grep", "file.glob"):
        tool_input = {"pattern": _str(args.get("pattern"))}
        if _str(args.get("path")):
            tool_input["path"] = args["path"]
        if kind == "file.grep":
            tool_input["output_mode"] = _str(args.get("output_mode")) or "files_with_matches"
            if _str(args.get("glob")):
                tool_input["glob"] = args["glob"]
    elif kind == "agent.run":
        tool_input = {
            "description": _str(args.get("description")),
            "prompt": _str(args.get("prompt")),
            "subagent_type": _str(args.get("agent_type")) or _str(args.get("subagent_type")),
        }
        response = text
    out: dict[str, Any] = {
        "session_id": raw.get("sessionId"),
        "cwd": raw.get("cwd"),
        "tool_name": name,
        "tool_input": tool_input,
        "tool_response": response,
    }
    if error is not None:
        out["error"] = error
    return out, error


# The envelope's camelCase fields → Claude Code's names (payload.HookInput reads those).
_ENVELOPE = {
    "sessionId": "session_id",
    "cwd": "cwd",
    "transcriptPath": "transcript_path",
    "prompt": "prompt",
    "source": "source",
    "reason": "reason",
    "trigger": "trigger",
    "customInstructions": "custom_instructions",
}


def to_claude(raw: dict[str, Any], event: str) -> tuple[dict[str, Any], str]:
    """A Copilot payload (camelCase) → (Claude Code's field names and tool shapes, the
    neutral event: ``PostToolUseFailure`` for a tool call that failed)."""
    out: dict[str, Any] = {}
    for key, name in _ENVELOPE.items():
        if key in raw:
            out[name] = raw[key]
    if event == "SessionStart":
        source = _str(raw.get("source"))
        out["source"] = SOURCES.get(source, source)
    if event == "PostToolUse" and _str(raw.get("toolName")):
        converted, error = convert(raw)
        out.update(converted)
        if error is not None:
            event = "PostToolUseFailure"
    elif event == "PermissionRequest":
        out["tool_name"] = _str(raw.get("toolName"))
        out["tool_input"] = _dict(raw.get("toolInput"))
    return out, event


def _neutral(event: str | None) -> str:
    if not event:
        raise payload.PayloadError("no hook event name (Copilot's payloads name none)")
    return EVENTS.get(event, event)


def _finish(inp: HookInput) -> HookInput:
    inp.tool_kind = tool_kind(inp.tool_name)
    # Each bash call gets a shell of its own (a new shellId): a `cd` in one moves neither
    # the session nor the next call.
    inp.shell_keeps_cwd = False
    return inp


def from_raw(raw: Any, event: str | None) -> HookInput:
    """A parsed Copilot payload → the neutral HookInput."""
    if not isinstance(raw, dict):
        raise payload.PayloadError("payload is not a JSON object")
    converted, name = to_claude(raw, _neutral(event))
    return _finish(payload.from_dict(converted, name))


def parse(data: bytes, event: str | None = None) -> HookInput:
    """Copilot's stdin bytes → the neutral HookInput (``payload.PayloadError`` if unusable)."""
    name = _neutral(event)
    return from_raw(payload.parse(data, name).raw, event)


# Fields worth recovering from the head of an oversized payload (the envelope comes
# first, then toolName and toolArgs' short fields, the big values last).
_SALVAGE_TOP = ("sessionId", "cwd", "transcriptPath", "toolName", "source", "reason", "trigger")
_SALVAGE_ARGS = ("path", "command", "description", "pattern")


def salvage(head: bytes, event: str | None = None) -> HookInput:
    """The neutral HookInput from the head of an oversized payload (see payload.salvage)."""
    from ctxmode.payload import _string_after_key

    name = _neutral(event)
    text = head.decode("utf-8", "ignore")
    raw: dict[str, Any] = {}
    for key in _SALVAGE_TOP:
        value = _string_after_key(text, key)
        if value is not None:
            raw[key] = value
    at = text.find('"toolArgs"')
    if at != -1:
        args = {}
        for key in _SALVAGE_ARGS:
            value = _string_after_key(text[at:], key)
            if value is not None:
                args[key] = value
        raw["toolArgs"] = args
    if not raw.get("sessionId"):
        raise payload.PayloadError("oversized payload without a readable sessionId")
    converted, neutral = to_claude(raw, name)
    converted["ctxmode_truncated"] = True
    return _finish(payload.from_dict(converted, neutral))


# -- output ---------------------------------------------------------------------------------

# Events whose flat additionalContext reaches the model (verified on 1.0.102). preCompact's
# output is not read; postToolUse's would be appended to the tool's result (unused).
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")


def output(event: str, text: str) -> bytes:
    """The stdout that hands ``text`` to the model, or b"" when ``event`` cannot."""
    if not text or event not in CONTEXT_EVENTS:
        return b""
    return (fastjson.dumps({"additionalContext": text}) + "\n").encode("utf-8", "replace")


# -- registration ---------------------------------------------------------------------------

# (event, timeout in seconds, matcher). Copilot's default timeout is 30 s. Its events take
# no matcher. permissionRequest fires only when Copilot would ask before a tool runs: its
# shim answers "allow" for ctxmode's own lookups (``ctxmode search``) and nothing else
# (``hosts.copilot.lookups``).
HOOKS: tuple[tuple[str, int, str | None], ...] = (
    ("postToolUse", 10, None),
    ("userPromptSubmitted", 10, None),
    ("preCompact", 30, None),
    ("sessionStart", 30, None),
    ("sessionEnd", 5, None),
    ("permissionRequest", 5, None),
)
# The shim each event runs (ctxmode/hooks/<shim>.py, with --host copilot).
SHIMS = {
    "postToolUse": "post_tool_use",
    "userPromptSubmitted": "user_prompt_submit",
    "preCompact": "pre_compact",
    "sessionStart": "session_start",
    "sessionEnd": "session_end",
    "permissionRequest": "permission_request",
}

# Copilot sets COPILOT_PROJECT_DIR and CLAUDE_PROJECT_DIR to the folder it started in, not
# the repository: the harness finds the project from the payload's cwd instead.
PROJECT_FROM_ENV = False

# Hooks: JSON. The user's in ~/.copilot/settings.json (``$COPILOT_HOME`` moves the folder)
# under "hooks"; a repository's in .github/hooks/*.json as {"version": 1, "hooks": {…}}
# (ctxmode's own file there), run only in a folder Copilot trusts.
SETTINGS_FORMAT = "json"
USER_DIR_ENV = "COPILOT_HOME"
USER_DIR_DEFAULT = "~/.copilot"
PROJECT_DIR_NAME = ".github/hooks"
SETTINGS_FILES = {
    "user": ("user", "settings.json"),
    "project": ("project", ".github/hooks/ctxmode.json"),
}
CONFIG_FILE = "config.json"  # in the user dir: trusted_folders (where repository hooks run)
