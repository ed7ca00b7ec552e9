"""Codex's rollout files: where they are, and their records as the hooks would have seen them.

Codex keeps each session (a "thread") as JSONL under ``$CODEX_HOME/sessions/`` (default
``~/.codex/sessions/``): ``YYYY/MM/DD/rollout-<local time>-<session id>.jsonl``, one
``{timestamp, type, payload}`` a line (facts: /work/shared/codex-hooks.md "Transcripts";
the recorded rollouts of ``tests/fixtures/codex-<version>/history/``, made by
``scripts/record_history.py``). A resumed session appends to its file; a compaction
writes a ``compacted`` record holding the summary the model wrote.

:func:`read` turns a file's records, from a byte offset on, into what ``ctxmode import``
needs, in file order (``ctxmode.history``): a ``function_call`` / ``custom_tool_call``
paired with its ``*_output`` becomes the input of the hook that would have fired, in the
shape Codex hands its hooks (``Bash`` with ``{"command"}``, ``apply_patch`` with the patch;
then ``codex.convert``, as the hook does). Unlike the hooks, the import knows each call's
outcome (the exit code Codex writes only here, see ``rollout``): a call that failed is a
``PostToolUseFailure`` with the error the late outcome carries live (``Exit code N`` and the
output), one that succeeded a ``PostToolUse`` whose outcome is known. A user message the
person typed is a ``UserPromptSubmit``; a ``compacted`` record a :class:`Boundary`.

What is never imported: developer messages (among them what a hook injected: ctxmode's
own ``<session_resume>``), the client's own user turns (``<environment_context>``, the
AGENTS.md instructions, …), the assistant's text, and bookkeeping (``event_msg``,
``turn_context`` but its cwd, ``world_state``, token counts).

Not on the hook path (only ``ctxmode import`` and ``doctor`` load it).
"""

from __future__ import annotations

import os

from ctxmode import payload
from ctxmode.history import Boundary, Call, Chunk
from ctxmode.hosts import codex
from ctxmode.hosts.codex import rollout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ctxmode.payload import HookInput

CLIENT = codex.NAME  # the host these rollouts are of (session_meta.client)
# Record types Codex writes that carry nothing to import (counted, not "unknown").
BOOKKEEPING = frozenset(
    {"event_msg", "turn_context", "world_state", "token_usage_record", "session_meta"}
)
# response_item payload types that are no call, prompt or output (skipped quietly).
QUIET_ITEMS = frozenset({"reasoning", "compaction", "ghost_snapshot", "other"})
# User messages Codex writes itself (older rollouts have no provenance to tell them by).
CLIENT_TURNS = (
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions",
    "<turn_aborted>",
    "<user_shell_command>",
    "<skill",
    "<subagent_notification>",
)
OWN_OUTPUT = "<session_resume"
# The shell tools as they appear on the wire (hooks see them all as "Bash").
SHELL_CALLS = ("exec_command", "shell", "local_shell", "container.exec", "shell_command")
# Calls whose output is a JSON document the hooks receive parsed (create_goal's goal).
JSON_RESPONSES = ("create_goal", "update_goal")


def sessions_dir(env: Mapping[str, str]) -> str:
    """``$CODEX_HOME/sessions``, else ``~/.codex/sessions`` (HOME from ``env``)."""
    base = env.get(codex.USER_DIR_ENV)
    if not base:
        home = env.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".codex")
    return os.path.join(base, "sessions")


def rollout_files(where: str) -> list[str]:
    """Every ``rollout-*.jsonl`` under ``where`` (the dated folders), oldest first."""
    found: list[str] = []
    for folder, dirs, names in os.walk(where):
        dirs.sort()
        found.extend(
            os.path.join(folder, n)
            for n in sorted(names)
            if n.startswith("rollout-") and n.endswith(".jsonl")
        )
    return found


def _meta(path: str, limit: int = 4 * 1024 * 1024) -> dict[str, Any] | None:
    """The ``session_meta`` payload heading a rollout file, or None (its first lines only:
    the record opens the file, and its instructions make it tens of KB)."""
    import orjson

    try:
        with open(path, "rb") as fh:
            lines = [fh.readline(limit) for _ in range(3)]
    except OSError:
        return None
    for line in lines:
        if b'"session_meta"' not in line:
            continue
        try:
            record = orjson.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("type") == "session_meta":
            found = record.get("payload")
            return found if isinstance(found, dict) else None
    return None


# -- what ``ctxmode import`` and ``doctor`` call (ctxmode.hosts.contract.History) -----------


def folder(env: Mapping[str, str]) -> str:
    """Where Codex keeps its rollouts (:func:`sessions_dir`)."""
    return sessions_dir(env)


def files(where: str) -> list[str]:
    """Every rollout under ``where``."""
    return rollout_files(where)


def project_files(where: str, project_dir: str) -> list[str]:
    """The rollouts that may be ``project_dir``'s: all of them (their names say no
    project; the first record's cwd does)."""
    return rollout_files(where)


def head_cwd(path: str) -> tuple[str, str]:
    """``(cwd, session id)`` its ``session_meta`` names."""
    meta = _meta(path)
    if meta is None:
        return "", ""
    return _s(meta.get("cwd")), _s(meta.get("id")) or _s(meta.get("session_id"))


def claims(path: str) -> bool:
    """Whether a file given by name is a Codex rollout: it opens with ``session_meta``."""
    return bool(head_cwd(path)[1])


def subagent_of(path: str) -> tuple[str | None, str | None]:
    """Codex's subagents keep rollouts of their own, imported as sessions of their own."""
    return None, None


BOUNDARY_MARK = b'"type":"compacted"'


def count_boundaries(data: bytes) -> int:
    """Compactions in ``data``: its ``compacted`` records (the bare quotes cannot occur
    inside a JSON string, and Codex writes its JSON without spaces)."""
    return data.count(BOUNDARY_MARK)


def compact_summary(content: str) -> str:
    """The model's summary, without the preamble Codex puts before it."""
    return rollout.summary_of(content)


# -- reading ---------------------------------------------------------------------------------


class _Pending:
    """A call waiting for its output: the item, where its line starts, the cwd then."""

    __slots__ = ("begin", "cwd", "item")

    def __init__(self, item: dict[str, Any], begin: int, cwd: str) -> None:
        self.item = item
        self.begin = begin
        self.cwd = cwd


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

    ``data``: a whole rollout, or a window of one that starts at a line start; a window
    without the ``session_meta`` record takes the session and cwd from the file's head
    (``path``). ``boundaries_before``: the compactions before it (None: counted in
    ``data[:start]``).
    """
    import orjson

    loads = orjson.loads
    chunk = Chunk(start)
    if boundaries_before is None:
        boundaries_before = count_boundaries(data[:start]) if start else 0
    chunk.boundaries_before = boundaries_before
    session_id, cwd = "", ""
    if path:
        cwd, session_id = head_cwd(path)
    chunk.session_id, chunk.cwd = session_id, cwd
    pending: dict[str, _Pending] = {}
    marks: list[tuple[int, int, str]] = []  # (line end, skipped?, unknown type or "")
    boundary_starts: list[int] = []
    last_trigger = ""
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
        if _bulk(line):
            # Most of a rollout is bookkeeping (token counts, world states): passed over
            # without parsing, its time taken from the line's head.
            marks.append((pos, 0, ""))
            _times(chunk, _head_time(line))
            continue
        try:
            record = loads(line)
        except ValueError:
            marks.append((pos, 1, ""))
            continue
        if not isinstance(record, dict) or not isinstance(record.get("payload"), dict):
            marks.append((pos, 1, ""))
            continue
        kind = record.get("type")
        item: dict[str, Any] = record["payload"]
        at = _s(record.get("timestamp"))
        if kind not in BOOKKEEPING and kind not in ("response_item", "compacted"):
            marks.append((pos, 0, _type_name(kind)))
            continue
        marks.append((pos, 0, ""))
        _times(chunk, at)
        if kind == "session_meta":
            session_id = session_id or _s(item.get("id")) or _s(item.get("session_id"))
            cwd = cwd or _s(item.get("cwd"))
            chunk.session_id = chunk.session_id or session_id
            chunk.cwd = chunk.cwd or cwd
            git = item.get("git")
            if isinstance(git, dict) and not chunk.branch:
                chunk.branch = _s(git.get("branch"))
            continue
        if kind == "turn_context":
            cwd = _s(item.get("cwd")) or cwd  # where the turn's calls run
            continue
        if kind == "event_msg":
            if item.get("type") == "task_started":
                last_trigger = _trigger(item)
            continue
        if kind != "response_item" and kind != "compacted":
            continue
        if kind == "compacted":
            boundary = Boundary(session_id, last_trigger or "auto", at)
            message = _s(item.get("message"))
            # A compaction by OpenAI's own endpoint keeps no readable summary.
            boundary.summary = message if message.strip() else None
            chunk.items.append(boundary)
            boundary_starts.append(line_start)
            continue
        what = item.get("type")
        if what == "message":
            if item.get("role") != "user":
                continue
            text = _prompt(item)
            if text:
                raw = {"session_id": session_id, "cwd": cwd, "prompt": text}
                chunk.items.append(Call(_input(raw, "UserPromptSubmit", path), at))
                # A new prompt: a call still without its output was interrupted.
                pending.clear()
            continue
        if what in ("function_call", "custom_tool_call", "local_shell_call"):
            call_id = _s(item.get("call_id")) or _s(item.get("id"))
            if call_id:
                pending[call_id] = _Pending(item, line_start, cwd)
            continue
        if what in ("function_call_output", "custom_tool_call_output"):
            found = pending.pop(_s(item.get("call_id")), None)
            if found is None:
                continue  # its call lay before the offset of a finished pair, or is lost
            inp = _tool_call(found, item, session_id, path, len(line))
            if inp is not None:
                chunk.items.append(Call(inp, at))
            continue
        if what == "web_search_call":
            inp = _web_search(item, session_id, cwd, path)
            if inp is not None:
                chunk.items.append(Call(inp, at))
            continue
        if what not in QUIET_ITEMS:
            marks[-1] = (pos, 0, f"response_item:{_type_name(what)}")
    safe = pos
    if pending:
        safe = min(p.begin for p in pending.values())
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


_BULK = (b'"type":"world_state"', b'"type":"token_usage_record"', b'"type":"event_msg"')
TIME_HEAD = b'{"timestamp":"'


def _bulk(line: bytes) -> bool:
    """A record read for nothing but its time: all but ``task_started`` of the events,
    world states, token records (their type heads the line, after the time)."""
    head = line[:120]
    if not any(kind in head for kind in _BULK):
        return False
    return b'"task_started"' not in line[:240]


def _head_time(line: bytes) -> str:
    if not line.startswith(TIME_HEAD):
        return ""
    end = line.find(b'"', len(TIME_HEAD), 80)
    return line[len(TIME_HEAD) : end].decode("ascii", "replace") if end != -1 else ""


def _trigger(item: dict[str, Any]) -> str:
    """``manual`` when a turn was started to compact, else "" (then ``auto``: ``codex
    exec`` compacts only so; the TUI's /compact was not run here, its turn's
    ``turn_trigger`` naming it is an assumption)."""
    attribution = item.get("turn_attribution")
    trigger = _s(attribution.get("turn_trigger")) if isinstance(attribution, dict) else ""
    return "manual" if "compact" in trigger else ""


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


def _prompt(item: dict[str, Any]) -> str:
    """The text of a user message the person typed ("" for the client's own turns).

    Codex (0.169.0) marks each part's provenance: ``user`` for what was typed, ``harness``
    for its environment context and instructions. Older rollouts carry none: their own
    turns are told by the tags that open them.
    """
    content = item.get("content")
    if not isinstance(content, list):
        return ""
    passthrough = item.get("internal_chat_message_metadata_passthrough")
    metadata = passthrough.get("content_item_metadata") if isinstance(passthrough, dict) else None
    parts: list[str] = []
    for index, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") not in ("input_text", "text"):
            continue
        text = _s(part.get("text"))
        if isinstance(metadata, list) and index < len(metadata):
            meta = metadata[index]
            origin = meta.get("provenance") if isinstance(meta, dict) else None
            if isinstance(origin, dict) and origin.get("type") != "user":
                continue
        elif text.lstrip().startswith(CLIENT_TURNS):
            continue
        parts.append(text)
    text = "\n".join(parts)
    if not text.strip() or OWN_OUTPUT in text:
        return ""
    return text


def _input(raw: dict[str, Any], event: str, path: str) -> HookInput:
    raw = {"transcript_path": path, "hook_event_name": event, **raw}
    inp = payload.from_dict(raw, event)
    inp.tool_kind = codex.tool_kind(inp.tool_name)
    inp.shell_keeps_cwd = False  # as codex._finish: each command runs in a shell of its own
    return inp


def _arguments(item: dict[str, Any]) -> dict[str, Any]:
    import orjson

    args = item.get("arguments")
    if isinstance(args, dict):
        return args
    try:
        found = orjson.loads(args) if isinstance(args, str) else None
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _call_shape(found: _Pending) -> tuple[str, dict[str, Any], str] | None:
    """``(tool name, tool input, cwd)`` as Codex hands them to its hooks, or None for a
    tool ctxmode records nothing of."""
    item = found.item
    name = _s(item.get("name"))
    if item.get("type") == "custom_tool_call":
        text = item.get("input")
        if name != "apply_patch" or not isinstance(text, str):
            return None
        return "apply_patch", {"command": text}, found.cwd
    if item.get("type") == "local_shell_call":
        action = item.get("action")
        args = action if isinstance(action, dict) else {}
        name = "local_shell"
    else:
        args = _arguments(item)
    if name in SHELL_CALLS:
        command = args.get("cmd") or args.get("command")
        if isinstance(command, list):
            command = " ".join(str(part) for part in command)
        if not isinstance(command, str) or not command.strip():
            return None
        workdir = args.get("workdir") or args.get("working_directory")
        where = workdir if isinstance(workdir, str) and workdir else found.cwd
        return "Bash", {"command": command}, where
    if name and codex.tool_kind(name):
        return name, args, found.cwd
    return None


def _tool_call(
    found: _Pending, output: dict[str, Any], session_id: str, path: str, size: int
) -> HookInput | None:
    shape = _call_shape(found)
    if shape is None:
        return None
    name, tool_input, cwd = shape
    text = rollout._text(output.get("output"))
    raw: dict[str, Any] = {
        "session_id": session_id,
        "cwd": cwd,
        "tool_name": name,
        "tool_input": tool_input,
        "tool_use_id": _s(output.get("call_id")),
    }
    kind = codex.tool_kind(name)
    code, body = rollout.outcome(name, text) if kind in ("shell", "file.patch") else (0, text)
    if code:
        # The failure as the late outcome hands it live (rollout._input): the output,
        # after the exit code a shell command ended with.
        raw["error"] = f"Exit code {code}\n{body}" if kind == "shell" else body
        event = "PostToolUseFailure"
    else:
        raw["tool_response"] = _response(name, kind, text, body)
        event = "PostToolUse"
    inp = _input(codex.convert(raw), event, path)
    # Known here, unlike live: a success that reruns an open failure resolves it. An
    # output that names no exit code (a command still running) proves nothing.
    inp.outcome_known = code is not None
    inp.size = size
    return inp


def _response(name: str, kind: str, text: str, body: str) -> Any:
    """The ``tool_response`` the hook gets: apply_patch's whole output text, a shell
    command's output (``codex.convert`` wraps it), a goal tool's JSON parsed."""
    if kind == "shell":
        return body
    if name in JSON_RESPONSES:
        import orjson

        try:
            return orjson.loads(text)
        except ValueError:
            return text
    return text


def _web_search(item: dict[str, Any], session_id: str, cwd: str, path: str) -> HookInput | None:
    action = item.get("action")
    query = _s(action.get("query")) if isinstance(action, dict) else ""
    if not query:
        return None
    raw = {
        "session_id": session_id,
        "cwd": cwd,
        "tool_name": "web_search",
        "tool_input": {"query": query},
        "tool_use_id": _s(item.get("id")) or None,
        "tool_response": {},
    }
    return _input(raw, "PostToolUse", path)


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""
