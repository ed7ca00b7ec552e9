"""Gemini CLI's chat recordings: where they are, and their records as the hooks would have seen them.

Gemini CLI (0.61.0) records each session as JSONL under ``~/.gemini/tmp/<project>/chats/``:
``session-<YYYY-MM-DDTHH-MM>-<first 8 of the session id>.jsonl``, where ``<project>`` is a
short name that ``~/.gemini/projects.json`` maps from the folder the CLI ran in (and
``<project>/.project_root`` names). Facts: /work/shared/gemini-hooks.md "Transcripts"; the
recorded chats of ``tests/fixtures/gemini-cli-<version>/history/`` (made by
``scripts/record_history.py gemini``). One JSON object a line:

- a header ``{sessionId, projectHash, startTime, lastUpdated, kind}``, repeated on resume;
- message records ``{id, timestamp, type: "user"|"gemini"|…, content, displayContent?,
  toolCalls?}``; one id can come twice (first without, then with its ``toolCalls``, each
  with ``args``, ``result`` — the ``functionResponse`` the model got: ``output`` or
  ``error`` —, ``resultDisplay`` and ``status``);
- patches ``{"$set": {messages|sessionId|lastUpdated: …}}``: a ``messages`` patch rewrites
  the list. A compression writes one whose history opens with the summary turn (a user
  message ``<state_snapshot>…``, then the model's "Got it. Thanks for the additional
  context!"); a resume writes the whole history again after the header (a summary in it
  then is an old one).

:func:`read` turns a file's records, from a byte offset on, into what ``ctxmode import``
needs (``ctxmode.history``): each tool call with its result becomes the AfterTool payload
the hook got (``tool_response {llmContent, returnDisplay, error?}``), converted by the
host as the hook converts it (a command's ``Exit Code: N``, a tool's error → a failure); a
prompt typed becomes a BeforeAgent one (without the CLI's ``<hook_context>``); a compression
a :class:`Boundary` with its summary. Like the hooks' events, the calls carry no
``tool_use_id`` (Gemini's AfterTool has none): the store tells what it has by content.

Never imported: the CLI's ``<session_context>`` turn, tool results as user turns (the calls
carry them), the model's text, the history re-listed by ``$set`` (but a new summary in it).

Not on the hook path (only ``ctxmode import`` and ``doctor`` load it).
"""

from __future__ import annotations

import os

from ctxmode.history import Boundary, Call, Chunk
from ctxmode.hosts import gemini

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ctxmode.payload import HookInput

CLIENT = gemini.NAME  # the host these chats are of (session_meta.client)
# Message types the CLI records that carry nothing to import.
QUIET_TYPES = frozenset({"gemini", "info", "error", "warning"})
OWN_OUTPUT = "<session_resume"
CHATS = "chats"
PROJECTS_FILE = "projects.json"
ROOT_FILE = ".project_root"


def gemini_dir(env: Mapping[str, str]) -> str:
    """``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini`` (HOME from ``env``): where
    ``ctxmode install --host gemini`` finds the CLI's user folder too."""
    home = env.get(gemini.USER_DIR_ENV, "").strip() or env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".gemini")


def chat_files(where: str, names: list[str] | None = None) -> list[str]:
    """The sessions' chats under ``where`` (``<project>/chats/session-*.jsonl``), of the
    project folders ``names`` only when given."""
    found: list[str] = []
    try:
        folders = sorted(os.listdir(where)) if names is None else sorted(names)
    except OSError:
        return found
    for name in folders:
        chats = os.path.join(where, name, CHATS)
        try:
            entries = sorted(os.listdir(chats))
        except OSError:
            continue
        found.extend(
            os.path.join(chats, n)
            for n in entries
            if n.startswith("session-") and n.endswith(".jsonl")
        )
    return found


def _projects(where: str) -> dict[str, str]:
    """``projects.json`` beside the ``tmp`` folder ``where``: folder → its short name."""
    import orjson

    try:
        with open(os.path.join(os.path.dirname(where), PROJECTS_FILE), "rb") as fh:
            doc = orjson.loads(fh.read(4 * 1024 * 1024))
    except (OSError, ValueError):
        return {}
    found = doc.get("projects") if isinstance(doc, dict) else None
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, str)}


def cwd_of(path: str) -> str:
    """The folder the CLI ran in for a chat at ``<tmp>/<project>/chats/<file>``: its
    ``.project_root``, else the folder ``projects.json`` maps to ``<project>``."""
    project = os.path.dirname(os.path.dirname(os.path.abspath(path)))
    try:
        with open(os.path.join(project, ROOT_FILE), encoding="utf-8") as fh:
            root = fh.read(8192).strip()
        if root:
            return root
    except (OSError, UnicodeDecodeError):
        pass
    name = os.path.basename(project)
    for folder, short in _projects(os.path.dirname(project)).items():
        if short == name:
            return folder
    return ""


def _header(path: str) -> dict[str, Any] | None:
    import orjson

    try:
        with open(path, "rb") as fh:
            line = fh.readline(64 * 1024)
    except OSError:
        return None
    try:
        record = orjson.loads(line)
    except ValueError:
        return None
    return record if _is_header(record) else None


def _is_header(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("sessionId"), str)
        and "projectHash" in record
        and "$set" not in record
    )


# -- what ``ctxmode import`` and ``doctor`` call (ctxmode.hosts.contract.History) -----------


def folder(env: Mapping[str, str]) -> str:
    """Where Gemini CLI keeps its chats: ``~/.gemini/tmp``."""
    return os.path.join(gemini_dir(env), "tmp")


def files(where: str) -> list[str]:
    """Every session's chat under ``where``."""
    return chat_files(where)


def project_files(where: str, project_dir: str) -> list[str]:
    """The chats of the folders ``projects.json`` names within ``project_dir`` (every chat
    when it names none: the records' folder says for sure)."""
    names = [
        short
        for folder_, short in _projects(where).items()
        if folder_ == project_dir or folder_.startswith(project_dir.rstrip("/") + "/")
    ]
    return chat_files(where, names) if names else chat_files(where)


def head_cwd(path: str) -> tuple[str, str]:
    """``(cwd, session id)``: the folder the chat's project folder stands for, and the
    header's ``sessionId``."""
    header = _header(path)
    if header is None:
        return "", ""
    return cwd_of(path), str(header["sessionId"])


def claims(path: str) -> bool:
    """Whether a file given by name is a Gemini CLI chat: it opens with its header."""
    return _header(path) is not None


def subagent_of(path: str) -> tuple[str | None, str | None]:
    """Subagents' chats are not read (``session-*.jsonl`` only)."""
    return None, None


# The record of a compression: a ``messages`` patch whose history holds the summary turn.
BOUNDARY_MARK = b'"text":"<state_snapshot>'
SET_MESSAGES = b'{"$set":{"messages":'
HEADER_START = b'{"sessionId":'


def count_boundaries(data: bytes) -> int:
    """Compressions in ``data`` (whole lines of a chat): ``messages`` patches holding a
    summary turn, but those that re-list the history after a resume's header."""
    count = 0
    after_header = False
    for line in data.split(b"\n"):
        if line.startswith(HEADER_START):
            after_header = True
        elif line.startswith(SET_MESSAGES):
            if BOUNDARY_MARK in line and not after_header:
                count += 1
        elif line.startswith(b'{"id":'):
            after_header = False
    return count


def compact_summary(content: str) -> str:
    """The summary as the model reads it (the ``<state_snapshot>`` text)."""
    return content.strip()


# -- reading ---------------------------------------------------------------------------------


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
    """The records of ``data[start:]`` as :class:`Chunk` (see ``ctxmode.history``).

    ``data``: a whole chat, or a window of one that starts at a line start; the session
    and cwd come from the file (``path``) when the window holds no header.
    """
    import orjson

    loads = orjson.loads
    chunk = Chunk(start)
    if boundaries_before is None:
        boundaries_before = count_boundaries(data[:start]) if start else 0
    chunk.boundaries_before = boundaries_before
    cwd, session_id = head_cwd(path) if path else ("", "")
    chunk.cwd, chunk.session_id = cwd, session_id
    pending: dict[str, int] = {}  # tool call id → where its record starts, no result yet
    taken: set[str] = set()
    marks: list[tuple[int, int, str]] = []
    boundary_starts: list[int] = []
    after_header = False
    summaries: set[str] = set()
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
            record = loads(line)
        except ValueError:
            marks.append((pos, 1, ""))
            continue
        if not isinstance(record, dict):
            marks.append((pos, 1, ""))
            continue
        if _is_header(record):
            marks.append((pos, 0, ""))
            after_header = True
            session_id = session_id or str(record["sessionId"])
            chunk.session_id = chunk.session_id or session_id
            _times(chunk, _s(record.get("startTime")))
            continue
        patch = record.get("$set")
        if isinstance(patch, dict):
            marks.append((pos, 0, ""))
            found = _summary(patch.get("messages"))
            if found is not None and not after_header and found[0] not in summaries:
                summaries.add(found[0])
                boundary = Boundary(session_id, "auto", found[2] or chunk.last_at)
                boundary.summary = found[1]
                chunk.items.append(boundary)
                boundary_starts.append(line_start)
            continue
        kind = record.get("type")
        if not isinstance(kind, str) or "id" not in record:
            marks.append((pos, 0, _type_name(kind)))
            continue
        marks.append((pos, 0, ""))
        after_header = False
        at = _s(record.get("timestamp"))
        _times(chunk, at)
        if kind == "user":
            text = _prompt(record)
            if text:
                raw = {"session_id": session_id, "cwd": cwd, "prompt": text}
                chunk.items.append(Call(_input(raw, "BeforeAgent", path, len(line)), at))
                pending.clear()  # a call still without its result was cancelled
            continue
        calls = record.get("toolCalls") if kind == "gemini" else None
        if not isinstance(calls, list):
            if kind not in QUIET_TYPES:
                marks[-1] = (pos, 0, _type_name(kind))
            continue
        for tool_call in calls:
            if not isinstance(tool_call, dict):
                continue
            call_id = _s(tool_call.get("id"))
            if call_id in taken:
                continue
            result = tool_call.get("result")
            if not isinstance(result, list) or tool_call.get("status") == "cancelled":
                if call_id and tool_call.get("status") != "cancelled":
                    pending.setdefault(call_id, line_start)
                continue
            pending.pop(call_id, None)
            if call_id:
                taken.add(call_id)
            inp = _tool_call(tool_call, session_id, cwd, path, len(line))
            if inp is not None:
                chunk.items.append(Call(inp, _s(tool_call.get("timestamp")) or at))
    safe = pos
    if pending:
        safe = min(pending.values())
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


def _summary(messages: Any) -> tuple[str, str, str] | None:
    """``(message id, summary, time)`` when a ``messages`` patch opens the history with
    the compression's summary turn (after the ``<session_context>`` turn), else None."""
    if not isinstance(messages, list):
        return None
    for index, message in enumerate(messages[:3]):
        if not isinstance(message, dict) or message.get("type") != "user":
            continue
        text = _text(message.get("content")).strip()
        if not text.startswith(gemini.SUMMARY_OPEN):
            continue
        after = messages[index + 1] if index + 1 < len(messages) else None
        ack = _text(after.get("content")).strip() if isinstance(after, dict) else ""
        if ack != gemini.SUMMARY_ACK:
            return None
        return _s(message.get("id")) or text[:200], text, _s(message.get("timestamp"))
    return None


def _text(content: Any) -> str:
    """The text parts of a message's content (a string, or a list of parts)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        part["text"]
        for part in content
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    )


def _prompt(record: dict[str, Any]) -> str:
    """What the person typed ("" for a turn of tool results or the CLI's own)."""
    content = record.get("content")
    if isinstance(content, list) and any(
        isinstance(p, dict) and ("functionResponse" in p or "functionCall" in p) for p in content
    ):
        return ""
    shown = record.get("displayContent")
    text = _text(shown) if shown is not None else _text(content)
    text = gemini.strip_hook_context(text)
    stripped = text.lstrip()
    if (
        not stripped
        or stripped.startswith((gemini.CONTEXT_OPEN, gemini.SUMMARY_OPEN))
        or OWN_OUTPUT in text
    ):
        return ""
    return text


def _tool_call(
    tool_call: dict[str, Any], session_id: str, cwd: str, path: str, size: int
) -> HookInput | None:
    """A tool call with its result → the AfterTool input the hook got (converted)."""
    name = _s(tool_call.get("name"))
    if not name:
        return None
    args = tool_call.get("args")
    response: dict[str, Any] = {}
    for part in tool_call.get("result") or []:
        function = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(function, dict) and isinstance(function.get("response"), dict):
            response = function["response"]
            break
    tool_response: dict[str, Any] = {"returnDisplay": tool_call.get("resultDisplay")}
    output = response.get("output")
    if isinstance(output, str):
        tool_response["llmContent"] = output
    error = response.get("error")
    if isinstance(error, str) and error:
        tool_response["error"] = {"message": error}
        tool_response.setdefault("llmContent", error)
    raw = {
        "session_id": session_id,
        "cwd": cwd,
        "tool_name": name,
        "tool_input": args if isinstance(args, dict) else {},
        "tool_response": tool_response,
    }
    return _input(raw, "AfterTool", path, size)


def _input(raw: dict[str, Any], event: str, path: str, size: int) -> HookInput:
    raw = {"transcript_path": path, "hook_event_name": event, **raw}
    inp = gemini.from_raw(raw, event)
    inp.size = size
    return inp


def _times(chunk: Chunk, at: str) -> None:
    if at:
        if not chunk.first_at or at < chunk.first_at:
            chunk.first_at = at
        if at > chunk.last_at:
            chunk.last_at = at


def _type_name(kind: object) -> str:
    if isinstance(kind, str):
        name = "".join(c if c.isprintable() else "?" for c in kind[:40])
        return name or "(empty)"
    return "(none)" if kind is None else f"({type(kind).__name__})"


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""
