"""PostToolUseFailure → ``tool_error {tool, key, error}``.

``key`` names what failed in the terms a later success will use (the command, the file,
the URL...), so an ``error_resolved`` can be matched to it and a resume can say which
command or file is still broken.
"""

from __future__ import annotations

from ctxmode.extract.agents import safe_url, split_mcp
from ctxmode.extract.common import clip, id_str, masked_excerpt, one_line, rel_path, s, trim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.events import SessionEvent
    from ctxmode.extract.common import Draft
    from ctxmode.payload import HookInput

# An error's first and last this-many characters: what failed comes first ("Exit code 1",
# the command's banner), why it failed last (a traceback's exception, a build's
# "error: ..." line, the hint below it).
ERROR_HEAD = 200
ERROR_TAIL = 200
KEY_CHARS = 200
# Same as the Bash extractor's ``output_error`` key, so one success resolves either.
COMMAND_KEY_CHARS = 300
INTERRUPTED = "[interrupted] "

_FILE_KEYS = ("file_path", "notebook_path")


def failure_key(inp: HookInput) -> str:
    """What failed: the command, file path, URL, query, pattern or task; else the tool name.

    Already masked and trimmed, so it equals the ``key`` stored in the event: the hook
    handler calls this on a later success to find the error it resolves. Computed from
    the masked payload (a no-op when the caller masked it already, as the hooks do).
    """
    from ctxmode.extract import masked

    inp = masked(inp)
    ti = inp.tool_input
    name = inp.tool_name
    command = s(ti.get("command"))
    if command.strip():
        return clip(command, COMMAND_KEY_CHARS)
    url = s(ti.get("url"))
    if url.strip():
        return safe_url(url)
    for key in _FILE_KEYS:
        path = s(ti.get(key))
        if path.strip():
            return clip(rel_path(path, inp.project_dir, inp.cwd), KEY_CHARS)
    if split_mcp(name)[0]:
        return name  # argument values may be secrets: the tool's name is the key
    task_id = id_str(ti.get("taskId"))
    if task_id:
        return task_id
    for key in ("query", "pattern"):
        value = s(ti.get(key))
        if value.strip():
            return clip(one_line(value), KEY_CHARS)
    path = s(ti.get("path"))  # a search's folder: less telling than its pattern
    if path.strip():
        return clip(rel_path(path, inp.project_dir, inp.cwd), KEY_CHARS)
    for key in ("description", "subject", "skill"):
        value = s(ti.get(key))
        if value.strip():
            return clip(one_line(value), KEY_CHARS)
    return name


def resolution(inp: HookInput, key: str, source_hook: str | None = "") -> SessionEvent:
    """The ``error_resolved`` event of the successful call ``inp``, which reruns the failure
    ``key`` (its :func:`failure_key`). One maker for the hooks, the late outcomes (Codex)
    and the transcript import. ``source_hook`` defaults to the input's event."""
    from ctxmode.events import make

    return make(
        "error_resolved",
        {"tool": inp.tool_name, "key": key},
        tool_use_id=inp.tool_use_id,
        agent_id=inp.agent_id,
        agent_type=inp.agent_type,
        source_hook=inp.event if source_hook == "" else source_hook,
    )


def tool_failure(inp: HookInput) -> list[Draft]:
    """A failed tool call → ``tool_error``; an interrupt by the user is marked in ``error``.
    A failed shell command is also kept as it ran (``shell_call``, see extract.bash): its
    exit code, and the head and tail of what it printed (the error's text)."""
    error = masked_excerpt((inp.error or "").strip(), ERROR_HEAD, ERROR_TAIL)
    if inp.is_interrupt:
        error = INTERRUPTED + error if error else INTERRUPTED.strip()
    tool = trim(inp.tool_name, 120) or "unknown"
    drafts: list[Draft] = [("tool_error", {"tool": tool, "key": failure_key(inp), "error": error})]
    command = s(inp.tool_input.get("command"))
    if command.strip() and inp.tool_kind == "shell":
        from ctxmode.extract.bash import call_data, described

        code, printed = exit_status(inp.error or "")
        if inp.is_interrupt:  # what the client says, not what the command printed
            code, printed = None, ""
        drafts.insert(0, ("shell_call", call_data(command, printed, "", code, described(inp))))
    return drafts


def exit_status(error: str) -> tuple[int | None, str]:
    """``"Exit code 2\n<output>"`` (Claude Code's and Gemini's failed command) → (2,
    the output); an error in another form → (None, the error)."""
    first, _, rest = error.partition("\n")
    if first.startswith("Exit code "):
        number = first[len("Exit code ") :].strip()
        if number.lstrip("-").isdigit():
            return int(number), rest
    return None, error
