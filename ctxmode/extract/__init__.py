"""Hook payload → SessionEvents (pure): mask the payload, dispatch, then finish every event.

:func:`masked` is the privacy choke point: before any extractor sees the payload, every
string of its content (tool input and response, error, prompt) loses its ``<private>``
spans and is masked *whole*. Extractors cut text freely afterwards (error lines,
sentences, snippets): the secrets are already gone, so no cut can leave the head of one.

Each extractor returns *drafts* (``(type, data dict)``; the Bash extractor returns
SessionEvents). The dispatcher finishes them all the same way: secrets masked again in
every string value (masking the decoded values keeps the JSON valid), the data fitted to
its budget, category and default priority taken from :data:`ctxmode.events.TYPES`, and
the agent and tool-use ids copied from the input.

Extractor modules are imported on first use: one hook process handles one tool call,
so it loads only the module that call needs.
"""

from __future__ import annotations

from ctxmode import events, fastjson, redact
from ctxmode.events import SessionEvent
from ctxmode.extract.common import BUDGETS, DATA_BUDGET, NOTIFICATION_TAGS, fit, is_output_file
from ctxmode.payload import HookInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    Job = Callable[[HookInput], Any]

__all__ = ["KINDS", "extract", "kind_of", "masked"]

# PostToolUse tool kind (ctxmode.hosts.KINDS; a host maps its tool names to them)
# → (module in ctxmode.extract, function). "shell" and "mcp" are dispatched in jobs().
KINDS: dict[str, tuple[str, str]] = {
    "file.read": ("files", "read"),
    "file.write": ("files", "write"),
    "file.edit": ("files", "edit"),
    "notebook.edit": ("files", "notebook_edit"),
    "file.glob": ("files", "glob"),
    "file.grep": ("files", "grep"),
    "file.patch": ("files", "apply_patch"),
    "task.create": ("tasks", "task_create"),
    "task.update": ("tasks", "task_update"),
    "task.list": ("tasks", "task_list"),
    "todo.write": ("tasks", "todo_write"),
    "plan.enter": ("tasks", "plan_enter"),
    "plan.exit": ("tasks", "plan_exit"),
    "agent.run": ("agents", "subagent"),
    "agent.message": ("agents", "send_message"),
    "worktree.enter": ("ongoing", "worktree_enter"),
    "worktree.exit": ("ongoing", "worktree_exit"),
    "job.cron": ("ongoing", "cron_create"),
    "job.cron_delete": ("ongoing", "cron_delete"),
    "job.wakeup": ("ongoing", "wakeup"),
    "job.monitor": ("ongoing", "monitor"),
    "job.workflow": ("ongoing", "workflow"),
    "job.stop": ("ongoing", "task_stop"),
    "goal.create": ("ongoing", "goal_create"),
    "goal.update": ("ongoing", "goal_update"),
    "review.findings": ("ongoing", "findings"),
    "shell.output": ("bash", "background"),
    "web.fetch": ("agents", "web_fetch"),
    "web.search": ("agents", "web_search"),
    "ask.user": ("prompts", "ask_user"),
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


def kind_of(inp: HookInput) -> str:
    """The tool's neutral kind: as the host set it, else by the default host's names
    (an input built without a host: tests, the bench's payloads)."""
    kind = inp.tool_kind
    if kind is None:
        from ctxmode import hosts

        kind = inp.tool_kind = hosts.get().tool_kind(inp.tool_name)
    return kind


def jobs(inp: HookInput) -> list[Job]:
    """The extractors that apply to ``inp``."""
    if inp.event == "PostToolUse":
        kind = kind_of(inp)
        if kind == "shell":
            found: list[Job] = [_bash]
            if _has_patch(inp.tool_input):  # `apply_patch <<'EOF' ... EOF` through the shell
                found.append(_job("files", "apply_patch"))
            return found
        spec = KINDS.get(kind)
        if spec is not None:
            return [_job(*spec)]
        if kind == "mcp":
            return [_job("agents", "mcp")]
        if _has_patch(inp.tool_input):
            return [_job("files", "apply_patch")]
        return []
    if inp.event == "PostToolUseFailure":
        return [_job("errors", "tool_failure")]
    if inp.event == "UserPromptSubmit":
        if (inp.prompt or "").lstrip().startswith(NOTIFICATION_TAGS):
            # The client's turn that background work ended, not the user's (a prompt's hook
            # loads extract.ongoing only for one).
            return [_job("ongoing", "notification")]
        return [_job(m, f) for m, f in PROMPT_JOBS]
    if inp.event == "Stop":
        return [_job("replies", "assistant_reply")]
    if inp.event == "ClientOutput":  # ctxmode.history.CLIENT_OUTPUT_EVENT (not imported
        # here: a hook never gets one, and loads no more modules than it needs)
        return [_job("client", "command_output")]
    return []


# -- the choke point -----------------------------------------------------------------------

# The payload fields that carry content; the envelope (ids, cwd, tool name) is left alone.
CONTENT_FIELDS = (
    "tool_input",
    "tool_response",
    "error",
    "prompt",
    "compact_summary",
    "last_assistant_message",
    "turn_notes",
)
# Text no extractor reads is dropped, not masked (nothing of it is stored, and a 200 KB
# file then costs nothing): the file tools' contents, the results of searches and
# fetches (their extractors read the pattern, the URL and the counts). Diff lines keep only
# their +/- mark, which is all that the edit summary counts.
BULK_KINDS = frozenset(
    {"file.read", "file.write", "file.edit", "notebook.edit", "file.grep", "file.glob",
     "web.fetch", "web.search"}
)  # fmt: skip
BULK_FIELDS = frozenset(
    {"content", "old_string", "new_string", "oldString", "newString", "originalFile",
     "original_file", "new_source", "source", "cells", "outputs", "base64", "filenames",
     "result", "results"}
)  # fmt: skip
# A string longer than twice its half is reduced, before masking, to its head and tail,
# each at least that half and cut at a line boundary (redact.safe_head / safe_tail): a
# cut there leaves no piece of a secret behind, and masking megabytes would cost the
# hook its budget. No extractor reads further into a tool's output or error than 8 KB
# from either end (the Bash extractor's SCAN_CHARS); inputs and prompts keep more (an
# apply_patch command lists every file it changes).
RESPONSE_HALF = 8 * 1024
_RESPONSE_FIELDS = ("tool_response", "error", "last_assistant_message", "turn_notes")
INPUT_HALF = 64 * 1024
# What a file tool wrote is kept as an excerpt (ctxmode.extract.files): of these fields
# of its input, a head this long (cut where no secret is cut, redact.safe_head) is
# masked and kept; the rest is dropped like any bulk text.
HEAD_KINDS = frozenset({"file.write", "file.edit", "notebook.edit"})
HEAD_FIELDS = frozenset({"content", "new_string", "new_source"})
HEAD_CHARS = 1024
# What a read, a search or a fetch returned is kept the same way, from its response: a
# masked head of the text (a file's content, a grep's lines, a fetch's answer) or of the
# list of files found, for the extractor's excerpt (what an agent asks later: "which
# version did pyproject.toml declare?" is in the head of the file it read).
RESULT_KINDS = frozenset({"file.read", "file.grep", "file.glob", "web.fetch"})
RESULT_FIELDS = frozenset({"content", "result", "filenames"})
# Of a result, less than of a write is read (the excerpt's head is what is asked about):
# masking a 1 KB head of every file read cost a read's hook 9% more instructions. A
# fetch's answer (the model's summary of a page, all of it looked up) keeps more.
RESULT_HEAD_CHARS = 400
FETCH_HEAD_CHARS = 640
_NO_HEADS: frozenset[str] = frozenset()
_DONE = object()  # marks a masked HookInput; no JSON payload can forge it


def masked(inp: HookInput, extra: Iterable[Any] = (), memory: Any = None) -> HookInput:
    """``inp`` with its content stripped of ``<private>`` spans and masked, string by
    string, each string whole (keys included: an MCP call's argument names are stored).

    A value under a credential-like key (``"api_key": …``, ``{"name": "X_TOKEN",
    "value": …}``) is masked whatever it looks like. Idempotent: a masked input is
    returned as it is. ``extra``: the user's ``redact_patterns``. ``memory``
    (ctxmode.secret_memory.Memory): what the project's earlier payloads masked, masked
    here too wherever it occurs; what this payload masks is noted into it.
    """
    if inp.raw.get("ctxmode_masked") is _DONE:
        return inp
    raw = dict(inp.raw)
    kind = kind_of(inp)
    bulk = kind in BULK_KINDS and not _reads_output(kind, raw)
    extras = tuple(extra)
    # Two passes: every string masked whole, noting each value masked; then each such
    # value masked wherever else the payload repeats it (redact.mask_repeats).
    redact.collecting(True)
    try:
        for field in CONTENT_FIELDS:
            if field in raw:
                half = RESPONSE_HALF if field in _RESPONSE_FIELDS else INPUT_HALF
                heads, chars = _NO_HEADS, 0
                if field == "tool_input" and kind in HEAD_KINDS:
                    heads, chars = HEAD_FIELDS, HEAD_CHARS
                elif field == "tool_response" and kind in RESULT_KINDS:
                    heads = RESULT_FIELDS
                    chars = FETCH_HEAD_CHARS if kind == "web.fetch" else RESULT_HEAD_CHARS
                raw[field] = _scrub(raw[field], 0, bulk, extras, half, heads, chars)
    finally:
        found = redact.collecting(False)
    if kind == "shell":
        made = _generated(raw)
        if made:
            found = {**(found or {}), **made}
    if memory is not None and found:
        memory.remember(found)
    if found or (memory is not None and memory.lengths):
        for field in CONTENT_FIELDS:
            if field in raw:
                raw[field] = _repeats(raw[field], found or {}, 0, memory)
    raw["ctxmode_masked"] = _DONE
    out = HookInput(raw, inp.event)
    out.project_dir = inp.project_dir
    out.size = inp.size
    out.tool_kind = kind
    out.outcome_known = inp.outcome_known
    out.shell_keeps_cwd = inp.shell_keeps_cwd
    out.prompt_claims_compact = inp.prompt_claims_compact
    return out


def _reads_output(kind: str, raw: dict[str, Any]) -> bool:
    """Whether the call reads a log or a captured output (common.is_output_file): what
    it returned is kept like a command's output, masked over the same bounds."""
    if kind != "file.read":
        return False
    tool_input = raw.get("tool_input")
    if not isinstance(tool_input, dict):
        return False
    path = tool_input.get("file_path", tool_input.get("path"))
    return isinstance(path, str) and is_output_file(path)


def _generated(raw: dict[str, Any]) -> dict[str, str]:
    """What a shell command that makes secrets printed (redact.generated)."""
    tool_input = raw.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str):
        return {}
    outputs: list[str] = []
    _strings(raw.get("tool_response"), outputs, 0)
    _strings(raw.get("error"), outputs, 0)
    return redact.generated(command, outputs)


def _strings(node: Any, into: list[str], depth: int) -> None:
    if isinstance(node, str):
        into.append(node)
    elif depth <= MAX_DEPTH and isinstance(node, dict):
        for value in node.values():
            _strings(value, into, depth + 1)
    elif depth <= MAX_DEPTH and isinstance(node, list):
        for value in node:
            _strings(value, into, depth + 1)


def _repeats(node: Any, found: dict[str, str], depth: int, memory: Any = None) -> Any:
    """``node`` with every value in ``found`` masked where it occurs again, and every
    value ``memory`` remembers from earlier payloads."""
    if isinstance(node, str):
        return _again(node, found, memory)
    if depth > MAX_DEPTH:
        return None
    if isinstance(node, dict):
        return {
            (_again(k, found, memory) if isinstance(k, str) else k): _repeats(
                v, found, depth + 1, memory
            )
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_repeats(v, found, depth + 1, memory) for v in node]
    return node


def _again(text: str, found: dict[str, str], memory: Any) -> str:
    if found:
        text = redact.mask_repeats(text, found)
    if memory is not None:
        text = redact.mask_known(text, memory)
    return text


def _scrub_text(text: str, extras: tuple[Any, ...], half: int = INPUT_HALF) -> str:
    if len(text) > 2 * half + 4096:
        text = redact.safe_head(text, half) + "\n…\n" + redact.safe_tail(text, half)
    text = redact.strip_private(text)
    # One argument when there is no extra pattern (tests replace mask by a 1-arg stub).
    return redact.mask(text, extras) if extras else redact.mask(text)


def _head(value: Any, extras: tuple[Any, ...], chars: int) -> str:
    """A masked head of ``chars`` of a text, or of a list of names one per line (a glob's
    files); "" for anything else."""
    if isinstance(value, list):
        names: list[str] = []
        size = 0
        for item in value:
            if not isinstance(item, str) or size > chars:
                break
            names.append(item)
            size += len(item) + 1
        value = "\n".join(names)
    if not isinstance(value, str):
        return ""
    return _scrub_text(redact.safe_head(value, chars), extras)


def _scrub(
    node: Any,
    depth: int,
    bulk: bool,
    extras: tuple[Any, ...],
    half: int,
    heads: frozenset[str] = frozenset(),
    head_chars: int = 0,
) -> Any:
    if isinstance(node, str):
        return _scrub_text(node, extras, half)
    if depth > MAX_DEPTH:
        return None
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        # {"name": "API_TOKEN", "value": "…"}: the value of a named secret.
        named = node.get("name", node.get("key"))
        secret_value = isinstance(named, str) and redact.is_secret_name(named)
        for key, value in node.items():
            if not isinstance(key, str):
                name = str(key)
            elif len(key) <= 24 and key.replace("_", "").isalpha():
                name = key  # an identifier without digits: a field name, never a token
            else:
                name = _scrub_text(key, extras)
            if bulk and key in BULK_FIELDS:
                value = _head(value, extras, head_chars) if key in heads else ""
            elif bulk and key == "lines" and isinstance(value, list):
                value = [v[:1] if isinstance(v, str) else None for v in value]
            elif (
                isinstance(value, str)
                and value.strip()
                and (redact.is_secret_name(name) or (secret_value and key == "value"))
            ):
                if not value.startswith(redact.PREFIX):
                    redact.note_secret(value)
                    value = redact.PREFIX + "credential]"
            else:
                value = _scrub(value, depth + 1, bulk, extras, half, heads, head_chars)
            out[name] = value
        return out
    if isinstance(node, (list, tuple)):
        return [_scrub(v, depth + 1, bulk, extras, half, heads, head_chars) for v in node]
    return node


def extract(inp: HookInput) -> list[SessionEvent]:
    """Every event in ``inp``, masked and within budget. Never raises."""
    try:
        inp = masked(inp)
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
