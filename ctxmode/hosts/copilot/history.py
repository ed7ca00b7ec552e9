"""Copilot CLI's own session history, read as the hooks would have seen it (``ctxmode import``).

Copilot 1.0.102 keeps each session as JSONL in ``~/.copilot/session-state/<session-id>/
events.jsonl`` (``$COPILOT_HOME`` moves the folder). Each line is ``{"type", "data", "id",
"timestamp", "parentId"}``; the records read here (the recorded file:
``tests/fixtures/copilot-cli-1.0.102/events.jsonl``):

- ``session.start``: ``data.sessionId``, ``data.context.cwd`` (and ``session.resume``, a
  later run of the same session);
- ``user.message``: ``data.content``, the prompt as typed → UserPromptSubmit;
- ``tool.execution_start`` (``toolCallId``, ``toolName``, ``arguments``) paired with
  ``tool.execution_complete`` (``success``, ``result.content``): the postToolUse the hook
  got, converted by the host's own mapping (``hosts.copilot.to_claude``: a non-zero exit
  code in the text, or ``success: false``, is a failure);
- ``session.compaction_complete`` (``trigger``, ``summaryContent``): a compaction and its
  summary.

Everything else (hooks' own records, system messages, usage, turns) is bookkeeping. The
session id is the folder's name (a window of the file may start after ``session.start``).
Not on the hook path (only ``ctxmode import`` and ``doctor`` load it).
"""

from __future__ import annotations

import os

from ctxmode import payload
from ctxmode.history import Boundary, Call, Chunk
from ctxmode.hosts import copilot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ctxmode.payload import HookInput

CLIENT = copilot.NAME  # the host these sessions are of (session_meta.client)
STATE_DIR = "session-state"
FILE_NAME = "events.jsonl"
# The records read; all others are the client's bookkeeping.
READ = frozenset(
    {"session.start", "session.resume", "user.message", "tool.execution_start",
     "tool.execution_complete", "session.compaction_complete"}
)  # fmt: skip
# ctxmode's own output, echoed in a prompt's context by the client: never a prompt.
OWN_OUTPUT = "<session_resume"
BOUNDARY_MARK = b'"type":"session.compaction_complete"'


def folder(env: Mapping[str, str]) -> str:
    """``$COPILOT_HOME/session-state``, else ``~/.copilot/session-state`` (HOME from ``env``)."""
    base = env.get(copilot.USER_DIR_ENV, "").strip()
    if not base:
        home = env.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".copilot")
    return os.path.join(os.path.expanduser(base), STATE_DIR)


def files(where: str) -> list[str]:
    """Every session's events.jsonl under ``where``."""
    try:
        names = sorted(os.listdir(where))
    except OSError:
        return []
    found = [os.path.join(where, name, FILE_NAME) for name in names]
    return [path for path in found if os.path.isfile(path)]


def project_files(where: str, project_dir: str) -> list[str]:
    """The sessions that may be ``project_dir``'s (all of them: the folder names no
    project; their first records say for sure)."""
    return files(where)


def claims(path: str) -> bool:
    """Whether a file given by name is a Copilot session's history: its first record is
    ``session.start`` naming a session."""
    return bool(head_cwd(path)[1])


def head_cwd(path: str, limit: int = 16 * 1024) -> tuple[str, str]:
    """``(cwd, session id)`` of the file's ``session.start`` record (its first line: a
    short read, as doctor reads every session's head)."""
    import orjson

    try:
        with open(path, "rb") as fh:
            head = fh.read(limit)
    except OSError:
        return "", ""
    for line in head.split(b"\n")[:20]:
        if b'"session.start"' not in line:
            continue
        try:
            record = orjson.loads(line)
        except ValueError:
            continue
        data = record.get("data") if isinstance(record, dict) else None
        if record.get("type") != "session.start" or not isinstance(data, dict):
            continue
        context = data.get("context")
        cwd = _s(context.get("cwd")) if isinstance(context, dict) else ""
        return cwd, _s(data.get("sessionId"))
    return "", ""


def subagent_of(path: str) -> tuple[str | None, str | None]:
    """Copilot keeps a session's subagents in its own file: never a subagent's."""
    return None, None


def count_boundaries(data: bytes) -> int:
    """Compactions in ``data`` (the bare quotes cannot occur inside a JSON string)."""
    return data.count(BOUNDARY_MARK)


def compact_summary(content: str) -> str:
    """The summary as the model wrote it (Copilot keeps it unframed)."""
    return content.strip()


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
    """The records of ``data[start:]`` as :class:`Chunk` (see ``ctxmode.history``)."""
    import orjson

    chunk = Chunk(start)
    if boundaries_before is None:
        boundaries_before = count_boundaries(data[:start]) if start else 0
    chunk.boundaries_before = boundaries_before
    # A window after the first starts past session.start: the folder names the session,
    # and the file's head its cwd.
    chunk.session_id = os.path.basename(os.path.dirname(path)) if path else ""
    chunk.cwd = head_cwd(path)[0] if path else ""
    pending: dict[str, tuple[dict[str, Any], int]] = {}
    marks: list[tuple[int, int, str]] = []
    boundary_starts: list[int] = []
    pos = start
    size = len(data)
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
            record = orjson.loads(line)
        except ValueError:
            marks.append((pos, 1, ""))
            continue
        if not isinstance(record, dict) or not isinstance(record.get("data"), dict):
            marks.append((pos, 1, ""))
            continue
        kind = _s(record.get("type"))
        body: dict[str, Any] = record["data"]
        at = _s(record.get("timestamp"))
        marks.append((pos, 0, "" if kind in READ or "." in kind else (kind[:40] or "(none)")))
        if kind not in READ:
            continue
        _times(chunk, at)
        if kind in ("session.start", "session.resume"):
            context = body.get("context")
            if not chunk.cwd and isinstance(context, dict):
                chunk.cwd = _s(context.get("cwd"))
            if not chunk.session_id:
                chunk.session_id = _s(body.get("sessionId"))
        elif kind == "user.message":
            text = _s(body.get("content"))
            if text.strip() and OWN_OUTPUT not in text:
                raw = {"sessionId": chunk.session_id, "cwd": chunk.cwd, "prompt": text}
                chunk.items.append(Call(_input(raw, "userPromptSubmitted", path), at))
            pending.clear()  # a new prompt: a call without a result never gets one
        elif kind == "tool.execution_start":
            call_id = _s(body.get("toolCallId"))
            if call_id:
                pending[call_id] = (body, line_start)
        elif kind == "tool.execution_complete":
            found = pending.pop(_s(body.get("toolCallId")), None)
            if found is not None:
                inp = _tool_call(chunk, found[0], body, path)
                if inp is not None:
                    inp.size = len(line)
                    chunk.items.append(Call(inp, at))
        elif kind == "session.compaction_complete":
            boundary = Boundary(chunk.session_id, _s(body.get("trigger")), at)
            summary = _s(body.get("summaryContent"))
            boundary.summary = compact_summary(summary) if summary else None
            chunk.items.append(boundary)
            boundary_starts.append(line_start)
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


def _times(chunk: Chunk, at: str) -> None:
    if at:
        if not chunk.first_at or at < chunk.first_at:
            chunk.first_at = at
        if at > chunk.last_at:
            chunk.last_at = at


def _input(raw: dict[str, Any], event: str, path: str) -> HookInput:
    inp = copilot.from_raw(raw, event)
    inp.transcript_path = path or None
    return inp


def _tool_call(
    chunk: Chunk, start: dict[str, Any], done: dict[str, Any], path: str
) -> HookInput | None:
    """A started call and its completion → the postToolUse the hook got."""
    name = _s(start.get("toolName"))
    if not name:
        return None
    result = done.get("result")
    text = _s(result.get("content")) if isinstance(result, dict) else ""
    failed = done.get("success") is False
    error_obj = done.get("error")
    if failed and isinstance(error_obj, dict) and error_obj.get("code") == "denied":
        return None  # refused before it ran: no hook saw it, nothing happened
    if failed and not text:
        error = done.get("error")
        text = _s(error.get("message")) if isinstance(error, dict) else _s(error)
    arguments = start.get("arguments")
    raw = {
        "sessionId": chunk.session_id,
        "cwd": chunk.cwd,
        "toolName": name,
        "toolArgs": arguments if isinstance(arguments, dict) else {},
        "toolResult": {"resultType": "failure" if failed else "success", "textResultForLlm": text},
    }
    try:
        inp = _input(raw, "postToolUse", path)
    except payload.PayloadError:
        return None
    inp.tool_use_id = _s(start.get("toolCallId")) or None
    return inp


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""
