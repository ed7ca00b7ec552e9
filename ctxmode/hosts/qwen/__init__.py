"""Qwen Code as a host: its stdin JSON, tool names, output shape and settings files.

Facts from Qwen Code 0.24.4 as run offline (``tests/fixtures/qwen-code-0.24.4/``, made by
``scripts/record_qwen_fixtures.py``; ``/work/shared/next-hosts.md``, "Qwen Code"):

- Claude Code's hook protocol: the same event names and snake_case envelope
  (``session_id``, ``cwd``, ``transcript_path``, ``source``, ``trigger``, ``prompt``,
  ``compact_summary``), so ``payload.parse`` reads it. A failed tool fires
  ``PostToolUseFailure`` with ``error``; a shell command's ``error`` and output are Qwen's
  text (``Command: …\\nOutput: …\\nExit Code: N``), turned into Claude Code's shapes here
  (:func:`convert`).
- A compaction: PreCompact, PostCompact (``compact_summary``), SessionStart ``compact``.
  SessionStart's context goes into the *system prompt* of the running process only: a
  headless ``qwen --continue "/compress"`` ends before any request, and the next run
  rebuilds the system prompt (SessionStart ``resume``). So the snapshot rides the next
  ``UserPromptSubmit`` instead (``start_claims_compact`` False): that context becomes a part
  of the user's message, kept in the chat history Qwen resumes. It fires again with
  ``prompt: ""`` when a turn goes on after tool results, so a compaction in mid-turn is
  handed over on the next request of the turn.
- Qwen escapes ``<`` and ``>`` in every ``additionalContext`` (``&lt;``/``&gt;``): an XML
  snapshot would reach the model as entity soup. :func:`output` hands the same snapshot over
  as an outline without angle brackets (``ctxmode.hosts.qwen.outline``).
- Stop carries the turn's reply as Claude Code's does (``last_assistant_message``): kept
  as ``assistant_reply`` (``extract.replies``) with nothing converted.
- ``QWEN_PROJECT_DIR``/``CLAUDE_PROJECT_DIR`` name the folder qwen started in: the project
  is climbed to from the payload's cwd, as for Gemini.

On the hook path: stdlib-light, nothing but ``ctxmode.payload``; ``outline`` is imported
only when there is something to print.
"""

from __future__ import annotations

from ctxmode import hosts, payload

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctxmode.payload import HookInput

NAME = "qwen"
OPTION = "qwen"  # its name on the command line (--host, --client)
LABEL = "Qwen Code"  # its name for people

# -- input ----------------------------------------------------------------------------------

# Tool name → neutral kind. Every tool 0.24.4 offers (declared, or deferred: reachable
# through tool_search/tool_call, whose calls reach the hooks under the target's own name),
# recorded in tests/fixtures/qwen-code-0.24.4/tools.*.json, is here or in NOT_RECORDED; so
# are the other names of its registry that other modes offer (interactive, plan mode).
TOOL_KINDS = {
    "read_file": "file.read",
    "write_file": "file.write",
    "edit": "file.edit",
    "glob": "file.glob",
    "list_directory": "file.glob",  # a listing of one folder: recorded as a search of it
    "grep_search": "file.grep",
    "notebook_edit": "notebook.edit",
    "run_shell_command": "shell",
    "todo_write": "todo.write",
    "task_create": "task.create",
    "task_update": "task.update",
    "task_list": "task.list",
    "enter_plan_mode": "plan.enter",
    "exit_plan_mode": "plan.exit",
    "agent": "agent.run",
    "send_message": "agent.message",
    "enter_worktree": "worktree.enter",
    "exit_worktree": "worktree.exit",
    "cron_create": "job.cron",
    "cron_delete": "job.cron_delete",
    "loop_wakeup": "job.wakeup",
    "monitor": "job.monitor",
    "workflow": "job.workflow",
    "task_stop": "job.stop",
    "update_goal": "goal.update",
    "report_findings": "review.findings",
    "web_fetch": "web.fetch",
    "web_search": "web.search",
    "ask_user_question": "ask.user",
}
NOT_RECORDED = {
    "tool_search": "loads deferred tools' schemas; changes nothing",
    "tool_call": "runs a deferred tool, which reaches the hooks under its own name",
    "get_goal": "a read: update_goal records the goal",
    "list_agents": "a read of the agents one can message: agent/send_message are recorded",
    "skill": "loads instructions into the turn; the work they lead to is recorded",
    "cron_list": "a read: cron_create/cron_delete record the jobs",
    "read_mcp_resource": "a read of one MCP resource",
    "record_artifact": "the CLI's own record of an artifact of the turn",
    "zoom_image": "shows the model part of an image; changes nothing",
    "save_memory": "writes the user's QWEN.md memory, not the session's work",
    "lsp": "a read of the language server's view of the code",
}
MCP_PREFIX = "mcp__"  # MCP tools are named mcp__<server>__<tool>, as in Claude Code


def tool_kind(tool_name: str) -> str:
    """The neutral kind of a Qwen Code tool ("" when ctxmode records nothing of it)."""
    kind = TOOL_KINDS.get(tool_name)
    if kind is not None:
        return kind
    return "mcp" if tool_name.startswith(MCP_PREFIX) else ""


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# The lines run_shell_command puts after a command's output (0.24.4: "Error:", "Exit Code:",
# "Signal:", "Background PIDs:", "Process Group PGID:"), and before it ("Command:",
# "Directory:").
_TRAILERS = ("Error:", "Exit Code:", "Signal:", "Background PIDs:", "Process Group PGID:")


def shell_result(text: str) -> tuple[str, int | None, str]:
    """``run_shell_command``'s text (llmContent, or a failure's ``error``) → (output, exit
    code or None, signal or "")."""
    lines = text.strip("\n").split("\n")
    code: int | None = None
    signal = ""
    while lines and lines[-1].startswith(_TRAILERS):
        line = lines.pop()
        value = line.split(":", 1)[1].strip()
        if line.startswith("Exit Code:"):
            code = int(value) if value.lstrip("-").isdigit() else code
        elif line.startswith("Signal:") and value not in ("(none)", ""):
            signal = value
    while lines and lines[0].startswith(("Command:", "Directory:")):
        lines.pop(0)
    output = "\n".join(lines)
    if output.startswith("Output:"):
        output = output[len("Output:") :].lstrip(" ")
    if output.strip() in ("(empty)", "(none)"):
        output = ""
    return output, code, signal


def _diff_lines(file_diff: str) -> list[str]:
    """The +/- lines of a unified diff (without its ---/+++ header lines)."""
    return [
        line
        for line in file_diff.split("\n")
        if line[:1] in ("+", "-") and not line.startswith(("+++", "---"))
    ]


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
    """A Qwen tool payload → (the shapes the extractors read, the failure's error or None).

    A new dict; ``raw`` is left as it is. Qwen's file tools take Claude Code's input
    (``file_path``, ``content``, ``old_string``/``new_string``); their responses and the
    shell's are text, turned into Claude Code's response shapes.
    """
    name = _str(raw.get("tool_name"))
    kind = tool_kind(name)
    tool_input = _dict(raw.get("tool_input"))
    response = _dict(raw.get("tool_response"))
    content = _str(response.get("llmContent"))
    display = _dict(response.get("returnDisplay"))
    error = raw.get("error") if isinstance(raw.get("error"), str) else None
    out = dict(raw)
    if kind == "shell":
        command = _str(tool_input.get("command"))
        new_input = {"command": command}
        if _str(tool_input.get("description")):
            new_input["description"] = tool_input["description"]
        out["tool_input"] = new_input
        text = error if error is not None else content
        output, code, signal = shell_result(text) if text else ("", None, "")
        out["tool_response"] = {"stdout": output, "stderr": ""}
        if code:
            error = f"Exit code {code}\n{output}".rstrip("\n")
        elif signal:
            error = f"Killed by signal {signal}\n{output}".rstrip("\n")
        elif error is not None:
            error = output or error  # refused or not started: its own words
    elif kind in ("file.write", "file.edit") and error is None:
        new_response: dict[str, Any] = {}
        if kind == "file.write":
            created = content.startswith("Successfully created")
            new_response["type"] = "create" if created else "update"
        lines = _diff_lines(_str(display.get("fileDiff")))
        if kind == "file.edit" and lines:
            new_response["structuredPatch"] = [{"lines": lines}]
        if _str(display.get("filePath")):
            new_response["filePath"] = display["filePath"]
        out["tool_response"] = new_response
    elif kind == "file.glob" and error is None:
        new_input = {"pattern": _str(tool_input.get("pattern")) or "*"}
        folder = _str(tool_input.get("path")) or _str(tool_input.get("dir_path"))
        if folder:
            new_input["path"] = folder
        out["tool_input"] = new_input
        found = _count(content, "Found ")
        out["tool_response"] = {"numFiles": found} if found is not None else {}
    elif kind == "file.grep" and error is None:
        new_input = {"pattern": _str(tool_input.get("pattern")), "output_mode": "content"}
        folder = _str(tool_input.get("path"))
        if folder:
            new_input["path"] = folder
        out["tool_input"] = new_input
        found = _count(content, "Found ")
        out["tool_response"] = {"numLines": found} if found is not None else {}
    elif kind in ("file.read", "web.fetch", "web.search"):
        out["tool_response"] = {}  # what was read stays out: the path/url/query is the fact
    elif kind == "mcp":
        out["tool_response"] = content or raw.get("tool_response")
    if error is not None:
        out["error"] = error
    return out, error


def _finish(inp: HookInput) -> HookInput:
    inp.tool_kind = tool_kind(inp.tool_name)
    # A shell command runs in a shell of its own (the payload's cwd is where qwen runs).
    inp.shell_keeps_cwd = False
    # The compaction snapshot reaches the model through the next prompt (see above).
    inp.start_claims_compact = False
    return inp


def from_raw(raw: dict[str, Any], event: str | None) -> HookInput:
    """A parsed Qwen payload → the neutral HookInput."""
    if not isinstance(raw, dict):
        raise payload.PayloadError("payload is not a JSON object")
    name = event or _str(raw.get("hook_event_name")) or None
    if _str(raw.get("tool_call_id")):
        # The model's id of the call (``call_…``), which Qwen's chat history keeps too
        # (``tool_use_id`` is the CLI's own): an import then knows the calls the hooks
        # captured (hosts.qwen.history).
        raw = {**raw, "tool_use_id": raw["tool_call_id"]}
    if name in ("PostToolUse", "PostToolUseFailure") and raw.get("tool_name"):
        raw, error = convert(raw)
        name = "PostToolUseFailure" if error is not None else "PostToolUse"
    return _finish(payload.from_dict(raw, name))


def parse(data: bytes, event: str | None = None) -> HookInput:
    """Qwen's stdin bytes → the neutral HookInput (``payload.PayloadError`` if unusable)."""
    return from_raw(payload.parse(data, event).raw, event)


def salvage(head: bytes, event: str | None = None) -> HookInput:
    """The neutral HookInput from the head of an oversized payload (see payload.salvage)."""
    inp = payload.salvage(head, event)
    raw = dict(inp.raw)
    if raw.get("tool_name") == "run_shell_command":
        raw["tool_input"] = {"command": _str(_dict(raw.get("tool_input")).get("command"))}
    return _finish(payload.from_dict(raw, inp.event))


# -- output ---------------------------------------------------------------------------------

# Events whose hookSpecificOutput.additionalContext reaches the model (verified on 0.24.4):
# SessionStart's goes into the system prompt, UserPromptSubmit's into the user's message.
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")


def output(event: str, text: str) -> bytes:
    """The stdout that hands ``text`` to the model, or b"" when ``event`` cannot: the
    snapshot as an outline, since Qwen escapes the angle brackets of XML."""
    if not text or event not in CONTEXT_EVENTS:
        return b""
    from ctxmode.hosts.qwen.outline import outline

    return hosts.additional_context(event, outline(text))


# -- registration ---------------------------------------------------------------------------

# (event, timeout in seconds, matcher): Claude Code's registration. Matchers: "" matches
# every tool; None writes none (every source and trigger is wanted).
HOOKS: tuple[tuple[str, int, str | None], ...] = (
    ("PostToolUse", 10, ""),
    ("PostToolUseFailure", 10, ""),
    ("UserPromptSubmit", 10, None),
    ("PreCompact", 30, None),
    ("SessionStart", 30, None),
    ("SessionEnd", 5, None),
    ("PostCompact", 10, None),
    # The text each turn ended with (``last_assistant_message``, as Claude Code's Stop),
    # kept as ``assistant_reply``. Prints nothing (a Stop hook's decision could block).
    ("Stop", 10, None),
)

# QWEN_PROJECT_DIR and CLAUDE_PROJECT_DIR are the folder qwen started in, not the
# repository: the harness climbs from the payload's cwd instead.
PROJECT_FROM_ENV = False

SETTINGS_FORMAT = "json"
USER_DIR_ENV = "QWEN_HOME"  # the user folder itself when set (0.24.4), else ~/.qwen
USER_DIR_DEFAULT = "~/.qwen"
PROJECT_DIR_NAME = ".qwen"
SETTINGS_FILES = {
    "user": ("user", "settings.json"),
    "project": ("project", ".qwen/settings.json"),
}
# In the user dir: with security.folderTrust.enabled (off by default in 0.24.4), a
# project's settings (its hooks too) load only in a folder trusted there.
TRUST_FILE = "trustedFolders.json"
