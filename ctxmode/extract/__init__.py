"""Hook payload → SessionEvents (pure): dispatch, then mask and fit every event.

Each extractor returns *drafts* (``(type, data dict)``; the Bash extractor returns
SessionEvents). The dispatcher finishes them all the same way: secrets masked in every
string value (masking the decoded values keeps the JSON valid, and masking before
trimming means a cut can never leave half a token), the data fitted to its budget,
category and default priority taken from :data:`ctxmode.events.TYPES`, and the agent and
tool-use ids copied from the input.

Extractor modules are imported on first use: one hook process handles one tool call,
so it loads only the module that call needs.
"""

from __future__ import annotations

from ctxmode import events, fastjson, redact
from ctxmode.events import SessionEvent
from ctxmode.extract.common import BUDGETS, DATA_BUDGET, fit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ctxmode.payload import HookInput

    Job = Callable[[HookInput], Any]

__all__ = ["TOOLS", "extract"]

# PostToolUse tool name → (module in ctxmode.extract, function).
TOOLS: dict[str, tuple[str, str]] = {
    "Read": ("files", "read"),
    "Write": ("files", "write"),
    "Edit": ("files", "edit"),
    "MultiEdit": ("files", "edit"),
    "NotebookEdit": ("files", "notebook_edit"),
    "Glob": ("files", "glob"),
    "Grep": ("files", "grep"),
    "apply_patch": ("files", "apply_patch"),
    "ApplyPatch": ("files", "apply_patch"),
    "TaskCreate": ("tasks", "task_create"),
    "TaskUpdate": ("tasks", "task_update"),
    "TaskList": ("tasks", "task_list"),
    "TodoWrite": ("tasks", "todo_write"),
    "EnterPlanMode": ("tasks", "plan_enter"),
    "ExitPlanMode": ("tasks", "plan_exit"),
    "Agent": ("agents", "subagent"),
    "Task": ("agents", "subagent"),  # the subagent tool's name before Claude Code 2.x
    "WebFetch": ("agents", "web_fetch"),
    "WebSearch": ("agents", "web_search"),
    "AskUserQuestion": ("prompts", "ask_user"),
    # TaskGet, TaskOutput, Skill, ...: reads that change nothing the resume shows.
}

PROMPT_JOBS = (("prompts", "user_prompt"), ("prompts", "signals"), ("prompts", "urls"))
MAX_DEPTH = 20


def _job(module: str, func: str) -> Job:
    def run(inp: HookInput) -> Any:
        mod = __import__(f"ctxmode.extract.{module}", fromlist=[func])
        return getattr(mod, func)(inp)

    run.__qualname__ = f"{module}.{func}"
    return run


def _bash(inp: HookInput) -> Any:
    """The Bash extractor (its own module); missing or broken, it yields no events."""
    try:
        mod = __import__("ctxmode.extract.bash", fromlist=["extract"])
    except Exception:
        return []
    fn = getattr(mod, "extract", None)
    return fn(inp) if callable(fn) else []


def _has_patch(tool_input: dict[str, Any]) -> bool:
    """Cheap pre-check (one substring test per field) for an apply_patch-style input."""
    for value in tool_input.values():
        if isinstance(value, str) and "*** " in value:
            return True
        if isinstance(value, list) and any(isinstance(v, str) and "*** " in v for v in value):
            return True
    return False


def jobs(inp: HookInput) -> list[Job]:
    """The extractors that apply to ``inp``."""
    if inp.event == "PostToolUse":
        name = inp.tool_name
        if name == "Bash":
            found: list[Job] = [_bash]
            if _has_patch(inp.tool_input):  # `apply_patch <<'EOF' ... EOF` through the shell
                found.append(_job("files", "apply_patch"))
            return found
        spec = TOOLS.get(name)
        if spec is not None:
            return [_job(*spec)]
        if name.startswith("mcp__"):
            return [_job("agents", "mcp")]
        if _has_patch(inp.tool_input):
            return [_job("files", "apply_patch")]
        return []
    if inp.event == "PostToolUseFailure":
        return [_job("errors", "tool_failure")]
    if inp.event == "UserPromptSubmit":
        return [_job(m, f) for m, f in PROMPT_JOBS]
    return []


def extract(inp: HookInput) -> list[SessionEvent]:
    """Every event in ``inp``, masked and within budget. Never raises."""
    try:
        todo = jobs(inp)
    except Exception:
        return []
    out: list[SessionEvent] = []
    seen: set[tuple[str, str]] = set()
    for job in todo:
        try:
            produced = job(inp)
            items = list(produced) if isinstance(produced, (list, tuple)) else []
        except Exception:
            continue  # one extractor's bug costs its own events, nothing else
        for item in items:
            try:
                event = finish(item, inp)
            except Exception:
                event = None  # fail closed: an event masking could not vouch for is dropped
            if event is not None and (event.type, event.data) not in seen:
                seen.add((event.type, event.data))
                out.append(event)
    return out


def finish(item: Any, inp: HookInput) -> SessionEvent | None:
    """A draft or SessionEvent → a well-formed, masked, fitted SessionEvent (or None)."""
    priority: Any = None
    avoided: Any = 0
    if isinstance(item, SessionEvent):
        type_, priority, avoided = item.type, item.priority, item.bytes_avoided
        try:
            data = fastjson.loads(item.data) if isinstance(item.data, str) else None
        except fastjson.JSONDecodeError:
            return None
    elif isinstance(item, tuple) and len(item) == 2:
        type_, data = item
    else:
        return None
    spec = events.TYPES.get(type_) if isinstance(type_, str) else None
    if spec is None or not isinstance(data, dict):
        return None
    category, default_priority, _ = spec
    if not (isinstance(priority, int) and not isinstance(priority, bool) and 1 <= priority <= 5):
        priority = default_priority
    text = fit(_mask(data, 0), BUDGETS.get(type_, DATA_BUDGET))
    return SessionEvent(
        type_,
        category,
        priority,
        text,
        agent_id=inp.agent_id,
        agent_type=inp.agent_type,
        tool_use_id=inp.tool_use_id,
        bytes_avoided=avoided if isinstance(avoided, int) and avoided >= 0 else 0,
    )


def _mask(node: Any, depth: int) -> Any:
    """``node`` with ``<private>`` spans removed and secrets masked in every string value.

    Keys are our own names. Private spans go from every field, not only prompts: a user
    may paste one into anything the model then echoes into a tool call.
    """
    if isinstance(node, str):
        return redact.mask(redact.strip_private(node))
    if depth > MAX_DEPTH:
        return None
    if isinstance(node, dict):
        return {str(k): _mask(v, depth + 1) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [_mask(v, depth + 1) for v in node]
    if node is None or isinstance(node, (bool, int, float)):
        return node
    return redact.mask(redact.strip_private(str(node)))
