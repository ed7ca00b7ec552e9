"""Qwen Code's chat history: where it is, and its records as the hooks would have seen them.

Qwen Code 0.24.4 keeps each session as JSONL under ``$QWEN_HOME/projects/`` (default
``~/.qwen/projects/``): ``<folder>/chats/<session-id>.jsonl``, the folder being the path qwen
started in with each character but an ASCII letter or digit turned into ``-``. Facts: the
recorded chats of ``tests/fixtures/qwen-code-0.24.4/chats/`` (scripts/record_qwen_fixtures.py).

Records (``type``): ``user`` (a prompt: ``message.parts[].text``), ``assistant`` (the model's
turn: ``parts[].functionCall {id, name, args}``), ``tool_result`` (``parts[].functionResponse
{id, name, response{output|error}}`` and ``toolCallResult {callId, status, resultDisplay}``),
``system`` (``chat_compression`` with ``systemPayload.info`` and the ``compressedHistory``
whose first user text is the summary; ``ui_telemetry``, ``attribution_snapshot``: bookkeeping).

:func:`read` turns them into :class:`Call` items holding the neutral input of the hook that
would have fired — a function call paired with its result → PostToolUse (PostToolUseFailure
when the result is an error), shaped as Qwen's hook payload and converted by
``hosts.qwen.from_raw``; a typed prompt → UserPromptSubmit — and :class:`Boundary` items (a
compression and its summary). The call's id is the model's (``call_…``), which the hooks
record too (``hosts.qwen`` takes ``tool_call_id``): what they captured is not imported twice.
ctxmode's own context part in a prompt (``<qwen:user-prompt-submit-context>``) is dropped.

Not on the hook path (only ``ctxmode import`` and ``doctor`` load it).
"""

from __future__ import annotations

import os

from ctxmode.history import Boundary, Call, Chunk, head_records
from ctxmode.hosts import qwen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ctxmode.payload import HookInput

CLIENT = qwen.NAME  # the host these chats are of (session_meta.client)
BOUNDARY_MARK = b'"subtype":"chat_compression"'
# Record types that carry nothing to import (counted, not "unknown").
BOOKKEEPING = frozenset({"system"})
# The context part a UserPromptSubmit hook added to the prompt (ours or another hook's).
CONTEXT_PARTS = ("<qwen:user-prompt-submit-context>", "<qwen:session-start-context")
# The words Qwen puts after the summary in the compressed history's first turn.
SUMMARY_TAIL = "\n\nResume the prior task using the summary above."


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def projects_dir(env: Mapping[str, str]) -> str:
    """``$QWEN_HOME/projects``, else ``~/.qwen/projects`` (HOME from ``env``)."""
    base = env.get(qwen.USER_DIR_ENV, "").strip()
    if not base:
        home = env.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".qwen")
    return os.path.join(base, "projects")


def slug(path: str) -> str:
    """Qwen's folder name for a path (``sanitizeCwd``): each character but an ASCII letter
    or digit becomes ``-``."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in path)


def chat_files(projects: str, prefix: str = "") -> list[str]:
    """The chats in the project folders named ``prefix…``."""
    found: list[str] = []
    try:
        folders = sorted(e.path for e in os.scandir(projects) if e.name.startswith(prefix))
    except OSError:
        return found
    for folder in folders:
        chats = os.path.join(folder, "chats")
        try:
            names = sorted(os.listdir(chats))
        except OSError:
            continue
        found.extend(os.path.join(chats, n) for n in names if n.endswith(".jsonl"))
    return found


def head_cwd(path: str) -> tuple[str, str]:
    """``(cwd, session_id)`` of the first records of ``path`` that name them."""
    cwd = sid = ""
    for record in head_records(path, (b'"sessionId"',)):
        if not isinstance(record, dict):
            continue
        cwd = cwd or _s(record.get("cwd"))
        sid = sid or _s(record.get("sessionId"))
        if cwd and sid:
            break
    return cwd, sid


# -- what ``ctxmode import`` and ``doctor`` call (ctxmode.hosts.contract.History) -----------


def folder(env: Mapping[str, str]) -> str:
    """Where Qwen Code keeps its chats (:func:`projects_dir`)."""
    return projects_dir(env)


def files(where: str) -> list[str]:
    """Every chat under ``where``."""
    return chat_files(where)


def project_files(where: str, project_dir: str) -> list[str]:
    """The chats that may be ``project_dir``'s (its folder and its subfolders', by the
    lossy folder name: the records' cwd says for sure)."""
    return chat_files(where, prefix=slug(project_dir))


def claims(path: str) -> bool:
    """Whether a file given by name is a Qwen chat: ``…/chats/<id>.jsonl`` whose first
    records name a ``sessionId``."""
    parts = os.path.normpath(path).split(os.sep)
    return len(parts) >= 2 and parts[-2] == "chats" and bool(head_cwd(path)[1])


def subagent_of(path: str) -> tuple[str | None, str | None]:
    """Qwen keeps a subagent's turns out of the session's chat: none is one."""
    return None, None


def count_boundaries(data: bytes) -> int:
    """Compressions in ``data`` (the bare quotes cannot occur inside a JSON string)."""
    return data.count(BOUNDARY_MARK)


def compact_summary(content: str) -> str:
    """The summary the model wrote, without the words Qwen puts after it."""
    tail = content.find(SUMMARY_TAIL)
    return (content[:tail] if tail != -1 else content).strip()


# -- reading ---------------------------------------------------------------------------------


def _parts(record: dict[str, Any]) -> list[dict[str, Any]]:
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _prompt(parts: list[dict[str, Any]]) -> str:
    """The person's words: the text parts, without a hook's context parts."""
    texts = [
        p["text"]
        for p in parts
        if isinstance(p.get("text"), str) and not p["text"].lstrip().startswith(CONTEXT_PARTS)
    ]
    return "\n".join(texts)


def _envelope(chunk: Chunk, record: dict[str, Any], at: str) -> None:
    if not chunk.session_id:
        chunk.session_id = _s(record.get("sessionId"))
    if not chunk.cwd:
        chunk.cwd = _s(record.get("cwd"))
    if not chunk.branch:
        chunk.branch = _s(record.get("gitBranch"))
    if at:
        if not chunk.first_at or at < chunk.first_at:
            chunk.first_at = at
        if at > chunk.last_at:
            chunk.last_at = at


def _base(record: dict[str, Any], event: str, path: str) -> dict[str, Any]:
    return {
        "session_id": _s(record.get("sessionId")),
        "cwd": _s(record.get("cwd")),
        "transcript_path": path,
        "hook_event_name": event,
    }


def _tool_call(
    record: dict[str, Any],
    call: dict[str, Any],
    response: dict[str, Any],
    size: int,
    path: str,
) -> HookInput | None:
    """A function call and its response → the hook input Qwen would have handed ctxmode."""
    name = _s(call.get("name"))
    if not name:
        return None
    args = call.get("args")
    args = args if isinstance(args, dict) else {}
    if name == "tool_call" and isinstance(args.get("name"), str):
        # A deferred tool: the hooks see it under its own name and arguments.
        name = args["name"]
        inner = args.get("arguments")
        args = inner if isinstance(inner, dict) else {}
    outcome = record.get("toolCallResult")
    outcome = outcome if isinstance(outcome, dict) else {}
    status = _s(outcome.get("status"))
    display = outcome.get("resultDisplay")
    body = response.get("response")
    body = body if isinstance(body, dict) else {}
    raw = _base(record, "PostToolUse", path)
    raw.update(tool_name=name, tool_input=args, tool_call_id=_s(call.get("id")))
    error = body.get("error")
    if status == "error" or (error is not None and "output" not in body):
        raw["hook_event_name"] = "PostToolUseFailure"
        shown = _s(display.get("text")) if isinstance(display, dict) else ""
        raw["error"] = _s(error) or shown or "error"
    else:
        raw["tool_response"] = {"llmContent": _s(body.get("output")), "returnDisplay": display}
    inp = qwen.from_raw(raw, str(raw["hook_event_name"]))
    inp.size = size
    return inp


def read(
    data: bytes,
    start: int = 0,
    *,
    agent_id: str | None = None,
    agent_type: str | None = None,
    path: str = "",
    boundaries_before: int | None = None,
    at_end: bool = False,
) -> Chunk:
    """The records of ``data[start:]`` as :class:`Chunk` (see ``ctxmode.history.Chunk``)."""
    import json

    chunk = Chunk(start)
    if boundaries_before is None:
        boundaries_before = count_boundaries(data[:start]) if start else 0
    chunk.boundaries_before = boundaries_before
    pending: dict[str, tuple[dict[str, Any], int]] = {}
    marks: list[tuple[int, int, str]] = []  # (line end, skipped?, unknown type)
    boundary_starts: list[int] = []
    pos, size = start, len(data)
    while pos < size:
        end = data.find(b"\n", pos)
        if end == -1:
            chunk.truncated = bool(data[pos:].strip())
            break
        line = data[pos:end]
        line_start, pos = pos, end + 1
        if not line.strip():
            marks.append((pos, 0, ""))
            continue
        try:
            record = json.loads(line)
        except ValueError:
            marks.append((pos, 1, ""))
            continue
        if not isinstance(record, dict):
            marks.append((pos, 1, ""))
            continue
        kind = record.get("type")
        at = _s(record.get("timestamp"))
        if kind not in ("user", "assistant", "tool_result", "system"):
            marks.append((pos, 0, kind if isinstance(kind, str) else "(none)"))
            continue
        marks.append((pos, 0, ""))
        _envelope(chunk, record, at)
        if kind == "system":
            if record.get("subtype") == "chat_compression":
                payload = record.get("systemPayload")
                payload = payload if isinstance(payload, dict) else {}
                info = payload.get("info")
                info = info if isinstance(info, dict) else {}
                boundary = Boundary(_s(record.get("sessionId")), _s(info.get("triggerReason")), at)
                history = payload.get("compressedHistory")
                first = history[0] if isinstance(history, list) and history else None
                if isinstance(first, dict):
                    text = "\n".join(
                        p["text"]
                        for p in first.get("parts") or []
                        if isinstance(p, dict) and isinstance(p.get("text"), str)
                    )
                    boundary.summary = compact_summary(text) or None
                chunk.items.append(boundary)
                boundary_starts.append(line_start)
            continue
        parts = _parts(record)
        if kind == "assistant":
            for part in parts:
                call = part.get("functionCall")
                if isinstance(call, dict) and _s(call.get("id")):
                    pending[call["id"]] = (call, line_start)
            continue
        if kind == "user":
            if any("functionResponse" in p for p in parts):
                kind = "tool_result"  # a result in a user turn (older records)
            else:
                text = _prompt(parts)
                if text.strip():
                    raw = _base(record, "UserPromptSubmit", path)
                    raw["prompt"] = text
                    chunk.items.append(Call(qwen.from_raw(raw, "UserPromptSubmit"), at))
                    pending.clear()  # a call still without a result never gets one
                continue
        for part in parts:
            response = part.get("functionResponse")
            if not isinstance(response, dict):
                continue
            found = pending.pop(_s(response.get("id")), None)
            if found is None:
                continue
            inp = _tool_call(record, found[0], response, len(line), path)
            if inp is not None:
                chunk.items.append(Call(inp, at))
    safe = pos
    if pending:
        safe = min(begin for _, begin in pending.values())
    chunk.offset = safe
    chunk.boundaries = sum(1 for begin in boundary_starts if begin < safe)
    for line_end, bad, unknown in marks:
        if line_end > safe:
            break
        chunk.records += 1
        chunk.skipped += bad
        if unknown:
            chunk.unknown += 1
            chunk.unknown_types[unknown] = chunk.unknown_types.get(unknown, 0) + 1
    return chunk
