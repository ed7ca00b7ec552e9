"""The Gemini CLI as a host: its stdin JSON, tool names, output shapes and settings file.

Facts from Gemini CLI 0.61.0 as run offline (``tests/fixtures/gemini-cli-0.61.0/``, made by
``scripts/record_gemini_fixtures.py``; the contract in ``/work/shared/gemini-hooks.md``):

- Events have Gemini's names: ``AfterTool`` (every tool, failed ones too), ``BeforeAgent``
  (the prompt), ``PreCompress`` (``trigger`` auto·manual), ``SessionStart`` (``source``
  startup·resume·clear), ``SessionEnd`` (``reason``), ``BeforeModel`` (the request, text
  parts only). They become ctxmode's neutral ones (:data:`EVENTS`); the envelope
  (``session_id``, ``cwd``, ``transcript_path``) is Claude Code's.
- The tools' input and output are converted to the shapes the extractors read
  (:func:`convert`). A tool that failed has ``tool_response.error {type, message}``; a shell
  command that exited non-zero has neither an error nor an exit-code field, only ``Exit
  Code: N`` in ``llmContent``. Both become ``PostToolUseFailure`` with an ``error`` like
  Claude Code's (``Exit code N\\n<output>``), so a later success resolves them.
- The prompt of ``-p`` carries SessionStart's context first, as ``<hook_context>…
  </hook_context>\\n\\n``: that is ours, not the user's, and is cut off.
- No event fires after a compression, and PreCompress(auto) fires before *every* request.
  The snapshot reaches the model through ``BeforeModel``: the compression's
  ``<state_snapshot>`` summary is found in the request (:func:`find_summary`) and the
  snapshot appended to that message (:func:`before_model_output`), on every request while
  the summary is in the history (``ctxmode.gemini_resume`` serves the same text each time).
- ``AfterAgent`` (once per turn, after the final answer) carries the turn's reply as
  ``prompt_response``: it becomes ctxmode's ``Stop`` with Claude Code's
  ``last_assistant_message``, kept as ``assistant_reply`` (``extract.replies``). Its hook
  prints nothing: a ``decision: deny`` there would make Gemini retry the turn.
- ``GEMINI_PROJECT_DIR``/``GEMINI_CWD`` are where ``gemini`` started, not the repository:
  the payload's ``cwd`` is what ``paths.identify`` climbs from, as for the other hosts.

On the hook path: stdlib-light, nothing but ``ctxmode.payload`` and ``ctxmode.fastjson``.
"""

from __future__ import annotations

from ctxmode import fastjson, hosts, payload

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctxmode.payload import HookInput

NAME = "gemini"
OPTION = "gemini"  # its name on the command line (--host, --client)
LABEL = "Gemini CLI"  # its name for people

# Gemini's event → ctxmode's neutral event (the handlers' names).
EVENTS = {
    "AfterTool": "PostToolUse",
    "BeforeAgent": "UserPromptSubmit",
    "PreCompress": "PreCompact",
    "SessionStart": "SessionStart",
    "SessionEnd": "SessionEnd",
    "BeforeModel": "BeforeModel",
    "AfterAgent": "Stop",
}
NATIVE = {neutral: native for native, neutral in EVENTS.items()}

# -- input ----------------------------------------------------------------------------------

# Tool name → neutral kind. Offered in 0.61.0 with --approval-mode yolo (gemini-hooks.md,
# "Tools"); write_todos, read_many_files and save_memory are documented, not offered there.
TOOL_KINDS = {
    "read_file": "file.read",
    "read_many_files": "file.read",  # its paths are a list: the first is recorded
    "write_file": "file.write",
    "replace": "file.edit",
    "glob": "file.glob",
    "list_directory": "file.glob",  # a listing of one folder: recorded as a search of it
    "grep_search": "file.grep",
    "run_shell_command": "shell",
    "web_fetch": "web.fetch",
    "google_web_search": "web.search",
    "write_todos": "todo.write",
    "enter_plan_mode": "plan.enter",
    "exit_plan_mode": "plan.exit",
}
# The tools 0.61.0 offers that ctxmode records nothing of, and why (a tool in neither table
# is a decision to make: tests/test_host_gemini.py checks the recorded tool lists).
NOT_RECORDED = {
    "activate_skill": "loads instructions into the context; changes nothing in the project",
    "invoke_agent": "a subagent's own tool calls reach the hooks as calls of their own",
    "list_background_processes": "a read of the CLI's own state",
    "read_background_output": "a read of a command's output; the command is recorded",
    "update_topic": "the CLI's title for the conversation",
    "save_memory": "writes the user's GEMINI.md memory, not the session's work",
}
MCP_PREFIX = "mcp_"  # MCP tools are named mcp_<server>_<tool>


def tool_kind(tool_name: str) -> str:
    """The neutral kind of a Gemini tool ("" when ctxmode records nothing of it)."""
    kind = TOOL_KINDS.get(tool_name)
    if kind is not None:
        return kind
    return "mcp" if tool_name.startswith(MCP_PREFIX) and len(tool_name) > 4 else ""


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# The lines run_shell_command puts after a command's output in llmContent (0.61.0 writes
# "Output:", then "Exit Code:" when non-zero, "Signal:", "Background PIDs:", "Process Group
# PGID:"; older releases also "Command:", "Directory:", "Error:").
_SHELL_TRAILERS = (
    "Exit Code:",
    "Signal:",
    "Error:",
    "Background PIDs:",
    "Process Group PGID:",
    "Directory:",
    "Command:",
)


def shell_result(llm_content: str) -> tuple[str, int | None, str]:
    """``run_shell_command``'s llmContent → (output, exit code or None, signal or "")."""
    text = llm_content.strip()
    if text.startswith("<untrusted_context>"):
        text = text[len("<untrusted_context>") :]
        end = text.rfind("</untrusted_context>")
        if end != -1:
            text = text[:end]
    lines = text.strip("\n").split("\n")
    code: int | None = None
    signal = ""
    while lines and lines[-1].startswith(_SHELL_TRAILERS):
        line = lines.pop()
        value = line.split(":", 1)[1].strip()
        if line.startswith("Exit Code:"):
            code = int(value) if value.lstrip("-").isdigit() else code
        elif line.startswith("Signal:") and value not in ("(none)", ""):
            signal = value
    output = "\n".join(lines)
    if output.startswith("Command:"):  # older releases name the command first
        output = output.partition("\n")[2]
    if output.startswith("Output:"):
        output = output[len("Output:") :].lstrip(" ")
    if output.strip() == "(empty)":
        output = ""
    return output, code, signal


def _diff_lines(file_diff: str) -> list[str]:
    """The +/- lines of a unified diff (without its ---/+++ header lines)."""
    return [
        line
        for line in file_diff.split("\n")
        if line[:1] in ("+", "-") and not line.startswith(("+++", "---"))
    ]


def _first_url(text: str) -> str:
    for scheme in ("https://", "http://"):
        at = text.find(scheme)
        if at != -1:
            end = at
            while end < len(text) and text[end] not in " \t\r\n<>\"'`)]":
                end += 1
            return text[at:end].rstrip(".,;:!?")
    return ""


def _count(text: str, before: str) -> int | None:
    """The number in ``text`` right after ``before`` ("Found 3 file(s)" → 3)."""
    at = text.find(before)
    if at == -1:
        return None
    digits = ""
    for ch in text[at + len(before) :]:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else None


def convert(raw: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """Gemini's AfterTool payload → (the shapes the extractors read, the failure's error
    or None). A new dict; ``raw`` is left as it is."""
    name = _str(raw.get("tool_name"))
    kind = tool_kind(name)
    tool_input = _dict(raw.get("tool_input"))
    response = _dict(raw.get("tool_response"))
    display = response.get("returnDisplay")
    content = _str(response.get("llmContent"))
    out = dict(raw)
    error_obj = response.get("error")
    error: str | None = None
    if isinstance(error_obj, dict):
        error = _str(error_obj.get("message")) or _str(error_obj.get("type")) or "error"
    elif isinstance(error_obj, str) and error_obj:
        error = error_obj
    new_input: dict[str, Any] = dict(tool_input)
    new_response: Any = response
    if kind == "shell":
        command = _str(tool_input.get("command"))
        new_input = {"command": command}
        if _str(tool_input.get("description")):
            new_input["description"] = tool_input["description"]
        output, code, signal = shell_result(content) if content else (_str(display), None, "")
        new_response = {"stdout": output, "stderr": ""}
        if error is None and code:
            error = f"Exit code {code}\n{output}".rstrip("\n")
        elif error is None and signal:
            error = f"Killed by signal {signal}\n{output}".rstrip("\n")
    elif kind in ("file.write", "file.edit"):
        shown = _dict(display)
        new_response = {}
        if kind == "file.write" and isinstance(shown.get("isNewFile"), bool):
            new_response["type"] = "create" if shown["isNewFile"] else "update"
        lines = _diff_lines(_str(shown.get("fileDiff")))
        if kind == "file.edit" and lines:
            new_response["structuredPatch"] = [{"lines": lines}]
        if _str(shown.get("filePath")):
            new_response["filePath"] = shown["filePath"]
        new_input = {"file_path": _str(tool_input.get("file_path"))}
        if tool_input.get("allow_multiple") is True:
            new_input["replace_all"] = True
        # What it wrote (write_file's content, replace's new_string): a masked head is
        # kept as the event's excerpt (extract.masked, extract.files).
        for key in ("content", "new_string"):
            if isinstance(tool_input.get(key), str):
                new_input[key] = tool_input[key]
    elif kind == "file.read":
        path = _str(tool_input.get("file_path")) or _str(tool_input.get("absolute_path"))
        paths = tool_input.get("paths") or tool_input.get("include")
        if not path and isinstance(paths, list) and paths and isinstance(paths[0], str):
            path = paths[0]
        new_input = {"file_path": path}
        for key in ("offset", "limit"):
            if isinstance(tool_input.get(key), int):
                new_input[key] = tool_input[key]
        new_response = {}
    elif kind == "file.glob":
        folder = _str(tool_input.get("dir_path")) or _str(tool_input.get("path"))
        pattern = _str(tool_input.get("pattern")) or ("*" if name == "list_directory" else "")
        new_input = {"pattern": pattern}
        if folder:
            new_input["path"] = folder
        new_response = {}
        shown = _dict(display)
        if name == "list_directory" and isinstance(shown.get("files"), list):
            new_response["numFiles"] = len(shown["files"])
        else:
            found = _count(content, "Found ")
            if found is not None:
                new_response["numFiles"] = found
    elif kind == "file.grep":
        folder = _str(tool_input.get("dir_path")) or _str(tool_input.get("path"))
        new_input = {"pattern": _str(tool_input.get("pattern")), "output_mode": "content"}
        if folder:
            new_input["path"] = folder
        new_response = {}
        matches = _dict(display).get("matches")
        if isinstance(matches, list):
            new_response["numLines"] = len(matches)
        else:
            found = _count(content, "Found ")
            if found is not None:
                new_response["numLines"] = found
    elif kind == "web.fetch":
        prompt = _str(tool_input.get("prompt"))
        url = _str(tool_input.get("url")) or _first_url(prompt)
        new_input = {"url": url, "prompt": prompt} if url else {}
        new_response = {}
    elif kind == "web.search":
        new_input = {"query": _str(tool_input.get("query"))}
        new_response = {}
    elif kind == "todo.write":
        todos = tool_input.get("todos")
        if isinstance(todos, list):
            new_input = {
                "todos": [
                    {
                        "content": _str(t.get("description")) or _str(t.get("content")),
                        "status": _str(t.get("status")),
                    }
                    for t in todos
                    if isinstance(t, dict)
                ]
            }
    elif kind == "mcp":
        context = _dict(raw.get("mcp_context"))
        server = _str(context.get("server_name"))
        tool = _str(context.get("tool_name"))
        if not (server and tool):
            server, _, tool = name[len(MCP_PREFIX) :].partition("_")
        if server and tool:
            out["tool_name"] = f"mcp__{server}__{tool}"
        new_response = content
    out["tool_input"] = new_input
    out["tool_response"] = new_response
    if error is not None:
        out["error"] = error
    return out, error


def strip_hook_context(prompt: str) -> str:
    """The user's prompt without the ``<hook_context>…</hook_context>`` blocks the CLI put
    around it (SessionStart's context before it in ``-p``; a hook's after it)."""
    text = prompt
    while text.startswith("<hook_context>"):
        end = text.find("</hook_context>")
        if end == -1:
            break
        text = text[end + len("</hook_context>") :].lstrip("\n")
    while text.endswith("</hook_context>"):
        start = text.rfind("<hook_context>")
        if start == -1:
            break
        text = text[:start].rstrip("\n")
    return text


def _neutral(event: str | None, raw: dict[str, Any]) -> str | None:
    named = _str(raw.get("hook_event_name"))
    if event in EVENTS:
        return EVENTS[event]
    if event:
        return event
    return EVENTS.get(named, named) or None


def _finish(inp: HookInput) -> HookInput:
    inp.tool_kind = tool_kind(inp.tool_name) if not inp.tool_name.startswith("mcp__") else "mcp"
    # A shell command runs in a shell of its own (the payload's cwd is where the session is).
    inp.shell_keeps_cwd = False
    # The compaction snapshot reaches the model through BeforeModel only (once per
    # compression): a prompt must not hand it over too.
    inp.prompt_claims_compact = False
    if inp.prompt:
        # In raw too: later steps (masking) rebuild the input from it.
        inp.prompt = inp.raw["prompt"] = strip_hook_context(inp.prompt)
    return inp


def from_raw(raw: dict[str, Any], event: str | None) -> HookInput:
    """A parsed Gemini payload → the neutral HookInput."""
    if not isinstance(raw, dict):
        raise payload.PayloadError("payload is not a JSON object")
    name = _neutral(event, raw)
    raw = dict(raw)
    if name == "PostToolUse" and raw.get("tool_name"):
        raw, error = convert(raw)
        if error is not None:
            name = "PostToolUseFailure"
    elif name == "BeforeModel":
        # Only the summary is read from the request: it keys the snapshot (see
        # ctxmode.resume_cache); the request is answered from raw (output_for).
        found = find_summary(raw.get("llm_request"))
        raw["compact_summary"] = found[1] if found is not None else None
        raw["trigger"] = "auto"
    elif name == "Stop":
        _reply(raw)
    return _finish(payload.from_dict(raw, name))


def _reply(raw: dict[str, Any]) -> None:
    """AfterAgent's fields → Stop's, in place: ``prompt_response`` is the reply; the
    prompt it repeats was recorded by BeforeAgent and is dropped (nothing reads it here)."""
    raw["last_assistant_message"] = _str(raw.pop("prompt_response", None))
    raw.pop("prompt", None)


# BeforeModel's stdin is the whole conversation: parsed up to this size (the summary's
# request follows a compression, so it is far below the model's window).
MAX_REQUEST_BYTES = 64 * 1024 * 1024
# hookrun reads this much of an event's stdin before keeping only its head.
INPUT_LIMITS = {"BeforeModel": MAX_REQUEST_BYTES}


def parse(data: bytes, event: str | None = None) -> HookInput:
    """Gemini's stdin bytes → the neutral HookInput (``payload.PayloadError`` if unusable)."""
    if len(data) > payload.MAX_PARSE_BYTES and event == "BeforeModel":
        try:
            raw = fastjson.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, fastjson.JSONDecodeError) as exc:
            raise payload.PayloadError(f"invalid JSON: {exc}") from None
        return from_raw(raw, event)
    return from_raw(payload.parse(data, event).raw, event)


def salvage(head: bytes, event: str | None = None) -> HookInput:
    """The neutral HookInput from the head of an oversized payload (see payload.salvage)."""
    inp = payload.salvage(head, event)
    raw = dict(inp.raw)
    tool_input = _dict(raw.get("tool_input"))
    if raw.get("tool_name") == "run_shell_command":
        raw["tool_input"] = {"command": _str(tool_input.get("command"))}
    name = _neutral(event, raw)
    return _finish(payload.from_dict(raw, name))


# -- the compression summary in a model request -----------------------------------------

SUMMARY_OPEN = "<state_snapshot>"
SUMMARY_CLOSE = "</state_snapshot>"
SUMMARY_MARK = SUMMARY_OPEN.encode()  # what the BeforeModel entry looks for in stdin
RESUME_MARK = "<session_resume"  # the root tag of ctxmode's snapshot


# The model turn the CLI puts after the compressed history's first user turn (0.61.0).
SUMMARY_ACK = "Got it. Thanks for the additional context!"
CONTEXT_OPEN = "<session_context>"
CONTEXT_CLOSE = "</session_context>"


def find_summary(llm_request: Any) -> tuple[int, str] | None:
    """(index of the message, the summary) of the compression summary in a BeforeModel
    request, or None.

    Accepted only where the CLI puts one after a real compression (gemini-hooks.md,
    "Compression"): the history's first user turn is the ``<session_context>`` part and
    the summary, ``<state_snapshot>…</state_snapshot>``, and nothing else (the snapshot
    a hook appended to it aside), and the model turn after it is the CLI's own
    acknowledgement. A ``<state_snapshot>`` the user typed into a prompt is a prompt: in
    the first turn it follows the context part too, but no acknowledgement follows it.
    """
    messages = _dict(llm_request).get("messages")
    if not isinstance(messages, list):
        return None
    for index, message in enumerate(messages[:2]):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        found = _summary_turn(_str(message.get("content")))
        if found is None:
            continue
        after = messages[index + 1] if index + 1 < len(messages) else None
        if (
            isinstance(after, dict)
            and after.get("role") == "model"
            and _str(after.get("content")).strip() == SUMMARY_ACK
        ):
            return index, found
        return None
    return None


def _summary_turn(content: str) -> str | None:
    """The summary when ``content`` is the context part and a summary alone, else None."""
    text = content.lstrip()
    if text.startswith(CONTEXT_OPEN):
        end = text.find(CONTEXT_CLOSE)
        if end == -1:
            return None
        text = text[end + len(CONTEXT_CLOSE) :].lstrip()
    if not text.startswith(SUMMARY_OPEN):
        return None
    close = text.find(SUMMARY_CLOSE)
    if close == -1:
        return None
    rest = text[close + len(SUMMARY_CLOSE) :].strip()
    if rest and not (rest.startswith(RESUME_MARK) and rest.endswith("</session_resume>")):
        return None  # more typed after it: a prompt, not the CLI's summary turn
    return text[: close + len(SUMMARY_CLOSE)]


def before_model_output(llm_request: Any, snapshot: str) -> bytes:
    """BeforeModel's stdout: the messages up to the summary's, the snapshot appended to it
    (later messages are left as they are by the CLI); b"" when there is no summary, or the
    message holds a snapshot already (never twice in one request)."""
    found = find_summary(llm_request)
    if found is None or not snapshot:
        return b""
    index = found[0]
    messages = llm_request["messages"]
    message = messages[index]
    content = _str(message.get("content"))
    if RESUME_MARK in content[content.find(SUMMARY_CLOSE) :]:
        return b""
    changed = [{"role": m.get("role"), "content": _str(m.get("content"))} for m in messages[:index]]
    changed.append({"role": "user", "content": content + "\n\n" + snapshot})
    document = {
        "hookSpecificOutput": {"hookEventName": "BeforeModel", "llm_request": {"messages": changed}}
    }
    return (fastjson.dumps(document) + "\n").encode("utf-8", "replace")


# -- output ---------------------------------------------------------------------------------

# Events whose hookSpecificOutput.additionalContext reaches the model (verified on 0.61.0):
# SessionStart's is put before the prompt, BeforeAgent's after it. PreCompress's never does.
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")


def output(event: str, text: str) -> bytes:
    """The stdout that hands ``text`` to the model, or b"" when ``event`` cannot."""
    if not text or event not in CONTEXT_EVENTS:
        return b""
    return hosts.additional_context(NATIVE.get(event, event), text)


def output_for(inp: HookInput, text: str) -> bytes:
    """Like :func:`output`, for events whose output depends on the input (BeforeModel)."""
    if inp.event == "BeforeModel":
        return before_model_output(inp.raw.get("llm_request"), text)
    return output(inp.event, text)


# -- registration ---------------------------------------------------------------------------

# (event, timeout in **milliseconds**, matcher). Gemini's default is 60000 ms. Matchers of
# SessionStart/SessionEnd/PreCompress are exact strings ("" matches all); of AfterTool an
# unanchored regex ("" matches all); BeforeAgent and BeforeModel ignore it. PreCompress is
# registered for "manual" only: "auto" fires before every model request, compression or
# not (BeforeModel builds the snapshot once the summary shows).
HOOKS: tuple[tuple[str, int, str | None], ...] = (
    ("AfterTool", 10000, ""),
    ("BeforeAgent", 10000, None),
    ("PreCompress", 30000, "manual"),
    ("SessionStart", 30000, ""),
    ("SessionEnd", 5000, ""),
    ("BeforeModel", 20000, None),
    # The turn's reply (AfterAgent's prompt_response); it ignores the matcher.
    ("AfterAgent", 10000, None),
)
# The handler names (Gemini dedups identical name:command pairs across settings layers).
HANDLER_NAMES = {event: f"ctxmode-{event.lower()}" for event, _t, _m in HOOKS}
# The shim each event runs (ctxmode/hooks/<shim>.py, with --host gemini but BeforeModel's).
SHIMS = {
    "AfterTool": "post_tool_use",
    "BeforeAgent": "user_prompt_submit",
    "PreCompress": "pre_compact",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "BeforeModel": "before_model",
    "AfterAgent": "stop",
}

# Gemini sets CLAUDE_PROJECT_DIR (and GEMINI_PROJECT_DIR) to the folder it started in, not
# the repository: the harness finds the project from the payload's cwd instead.
PROJECT_FROM_ENV = False

SETTINGS_FORMAT = "json"
USER_DIR_ENV = "GEMINI_CLI_HOME"  # not read by 0.61.0: it uses $HOME/.gemini
USER_DIR_DEFAULT = "~/.gemini"
PROJECT_DIR_NAME = ".gemini"
SETTINGS_FILES = {
    "user": ("user", "settings.json"),
    "project": ("project", ".gemini/settings.json"),
}
TRUST_FILE = "trustedFolders.json"  # in the user dir: project hooks run in trusted folders
