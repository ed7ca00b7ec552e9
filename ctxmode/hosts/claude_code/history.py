"""Claude Code's transcripts: where they are, and their records as the hooks would have seen them.

Claude Code keeps each session as JSONL under ``$CLAUDE_CONFIG_DIR/projects/`` (default
``~/.claude/projects/``): ``<slug>/<session-id>.jsonl``, and a subagent's records in
``<slug>/<session-id>/subagents/agent-<id>.jsonl`` beside ``agent-<id>.meta.json`` (its
type). Facts: /work/shared/claude-code-transcripts.md and the recorded transcripts of
``tests/fixtures/claude-code-<version>/transcripts/``.

:func:`read` turns a file's records, from a byte offset on, into what ``ctxmode import``
needs, in file order: :class:`Call` items holding the neutral
:class:`~ctxmode.payload.HookInput` of the hook that would have fired (a ``tool_use``
paired with its ``tool_result`` → PostToolUse, or PostToolUseFailure when the result is an
error; a typed prompt → UserPromptSubmit; the text a turn ended with → Stop, its
``last_assistant_message``: a record whose ``stop_reason`` ends the turn, or, without
one, the last text before the next prompt), and :class:`Boundary` items (a compaction and
the summary the client wrote). The hooks' ``tool_response`` is the record's
``toolUseResult``; a subagent's results carry none (2.1.197 to 2.1.332), and the result's
text stands in.

What no hook sees is read too: a command the person ran at the prompt (``!cmd``: its
``<bash-input>`` turn and the ``<bash-stdout>`` one after it) → the PostToolUse of the Bash
call it was; what a client command printed (``<local-command-stdout>``, a user turn or a
``local_command`` system record) → :data:`ctxmode.history.CLIENT_OUTPUT_EVENT`. What is never
imported: ``attachment`` records — among them ``hook_additional_context``, which echoes
ctxmode's own ``<session_resume>`` back — the client's meta and compaction-summary turns,
and a subagent's prompt (no hook sees it).

Loaded by ``ctxmode import`` and ``doctor``, and by the Stop hook for :func:`turn_notes`
(the turn's texts read back from the end of the transcript).

Long on purpose (~640 lines): one record format, read in one pass, and the Stop hook's
read-back of a turn shares its rules (what a person's prompt is, a typed slash command
among them); split, the two would drift apart, and the hook and the import must agree.
"""

from __future__ import annotations

import os

from ctxmode import payload
from ctxmode.extract.common import NOTIFICATION_TAGS, tag_text
from ctxmode.history import CLIENT_OUTPUT_EVENT, Boundary, Call, Chunk, head_records
from ctxmode.hosts import claude_code

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ctxmode.payload import HookInput

CLIENT = claude_code.NAME  # the host these transcripts are of (session_meta.client)
# Record types the client writes that carry nothing to import (counted, not "unknown").
BOOKKEEPING = frozenset(
    {"attachment", "summary", "queue-operation", "mode", "last-prompt", "file-history-snapshot",
     "custom-title", "tag", "agent-name", "progress", "tools-used", "atis-latch", "cost-state",
     "api-request", "api-request-shape", "api-request-blob", "pr-link", "worktree-state"}
)  # fmt: skip
# User turns the client writes itself, not the person (hooks never see them as prompts).
CLIENT_TURNS = (
    "<command-", "<local-command", "<task-notification>", "<system-reminder>", "<bash-"
)  # fmt: skip
# A command the person ran at the prompt (``!cmd``, bash mode): the client runs it
# without the model and without any hook, and writes the command and what it printed as
# two user turns. Imported as the shell call it was (``shell_call``, its git commit, the
# error it printed), the person's.
USER_SHELL_INPUT = "<bash-input>"
USER_SHELL_OUTPUT = ("<bash-stdout>", "<bash-stderr>")
# What one of the client's own commands printed (``/cost``, ``/context``, a plugin's
# install, a skill's ``!`` line that failed): a user turn after the command's.
CLIENT_OUTPUT = ("<local-command-stdout>", "<local-command-stderr>")
COMMAND_TAGS = ("<command-name>", "<command-message>")

USER_SHELL_NOTE = "run by the user at the prompt (! bash mode)"
# An assistant message's stop_reason when the turn ends with it (the API's; "tool_use"
# when a tool call follows; none in the records of clients before ~2.1).
TURN_ENDS = ("end_turn", "stop_sequence", "max_tokens", "refusal")
# A prompt's blocks the IDE extension adds (2.0.x: "The user opened the file … in the
# IDE. This may or may not be related to the current task."): not the user's words, and
# their path and boilerplate would match every question about that file.
IDE_NOTES = ("<ide_opened_file>",)
# ctxmode's own output, should a client ever echo it inside a user turn.
OWN_OUTPUT = "<session_resume"
SUMMARY_HEAD = "Summary:\n"
SUMMARY_TAIL = "\n\nIf you need specific details from before compaction"


def projects_dir(env: Mapping[str, str]) -> str:
    """``$CLAUDE_CONFIG_DIR/projects``, else ``~/.claude/projects`` (HOME from ``env``)."""
    base = env.get(claude_code.USER_DIR_ENV)
    if not base:
        home = env.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".claude")
    return os.path.join(base, "projects")


def slug(path: str) -> str:
    """The client's folder name for a cwd: each character but an ASCII letter or digit
    becomes ``-`` (lossy: ``/a_b`` and ``/a-b`` share one)."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in path)


def session_files(projects: str, prefix: str = "") -> list[str]:
    """The sessions' own transcripts (no subagents) in the folders named ``prefix…``."""
    found: list[str] = []
    try:
        folders = sorted(e.path for e in os.scandir(projects) if e.name.startswith(prefix))
    except OSError:
        return found
    for folder in folders:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        found.extend(os.path.join(folder, n) for n in names if n.endswith(".jsonl"))
    return found


def transcript_files(projects: str) -> list[str]:
    """Every transcript under ``projects``: each session's file, then its subagents' files."""
    found: list[str] = []
    try:
        slugs = sorted(os.scandir(projects), key=lambda e: e.name)
    except OSError:
        return found
    for slug in slugs:
        if not slug.is_dir(follow_symlinks=False):
            continue
        try:
            entries = sorted(os.scandir(slug.path), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False):
                found.append(entry.path)
                found.extend(subagent_files(entry.path))
    return found


def subagent_files(session_file: str) -> list[str]:
    """The subagent transcripts of a session's file (``<session>/subagents/agent-*.jsonl``)."""
    folder = os.path.join(session_file[: -len(".jsonl")], "subagents")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if n.endswith(".jsonl")]


def subagent_of(path: str) -> tuple[str | None, str | None]:
    """``(agent_id, agent_type)`` of a subagent transcript, ``(None, None)`` for a session's."""
    name = os.path.basename(path)
    if os.path.basename(os.path.dirname(path)) != "subagents" or not name.startswith("agent-"):
        return None, None
    agent_id = name[len("agent-") : -len(".jsonl")]
    agent_type = None
    meta = os.path.join(os.path.dirname(path), f"agent-{agent_id}.meta.json")
    try:
        import orjson

        with open(meta, "rb") as fh:
            doc = orjson.loads(fh.read(64 * 1024))
        value = doc.get("agentType") if isinstance(doc, dict) else None
        agent_type = value if isinstance(value, str) and value else None
    except (OSError, ValueError):
        pass
    return agent_id, agent_type


def head_cwd(path: str) -> tuple[str, str]:
    """``(cwd, session_id)`` of the first records of ``path`` that name them (the slug of
    the folder is lossy: the records hold the real cwd)."""
    cwd = sid = ""
    for record in head_records(path, (b'"cwd"', b'"sessionId"')):
        if not isinstance(record, dict):
            continue
        cwd = cwd or _s(record.get("cwd"))
        sid = sid or _s(record.get("sessionId"))
        if cwd and sid:
            break
    return cwd, sid


# -- what ``ctxmode import`` and ``doctor`` call (ctxmode.hosts.contract.History) -----------


def folder(env: Mapping[str, str]) -> str:
    """Where Claude Code keeps its transcripts (:func:`projects_dir`)."""
    return projects_dir(env)


def files(where: str) -> list[str]:
    """Every transcript under ``where`` (:func:`transcript_files`)."""
    return transcript_files(where)


def project_files(where: str, project_dir: str) -> list[str]:
    """The sessions' transcripts that may be ``project_dir``'s, cheaply (by the folder's
    lossy slug: their records' cwd says for sure)."""
    return session_files(where, prefix=slug(project_dir))


def claims(path: str) -> bool:
    """Whether a file given by name is a Claude Code transcript: its first records name
    a ``sessionId`` and a ``cwd`` (Gemini CLI's chats name a ``sessionId`` alone)."""
    return all(head_cwd(path))


# -- reading ---------------------------------------------------------------------------------


BOUNDARY_MARK = b'"subtype":"compact_boundary"'


def count_boundaries(data: bytes) -> int:
    """Compactions in ``data`` (a file's bytes before an offset), to number those after it.

    The bare quotes cannot occur inside a JSON string (they would be escaped there), so
    this counts records, never a prompt that merely mentions the word.
    """
    return data.count(BOUNDARY_MARK)


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
    """The records of ``data[start:]`` as :class:`Chunk`.

    ``data``: a whole transcript's bytes, or a window of one that starts at a line start
    (``ctxmode import`` reads a file in windows); then ``boundaries_before`` says how many
    compactions the file holds before it (None: counted in ``data[:start]``). ``at_end``:
    ``data`` runs to the end of the file, so a reply no record has said ends its turn
    (clients write no ``stop_reason`` on many) is the turn's end: the session's last
    words ("Moved the report to reports/") are not held back for a prompt that never
    comes.
    """
    import orjson

    loads = orjson.loads
    chunk = Chunk(start)
    if boundaries_before is None:
        boundaries_before = count_boundaries(data[:start]) if start else 0
    chunk.boundaries_before = boundaries_before
    pending: dict[str, tuple[dict[str, Any], int, dict[str, Any]]] = {}
    # Per line before the safe offset: (end offset, counted as skipped?, unknown type or "")
    marks: list[tuple[int, int, str]] = []
    boundary: Boundary | None = None
    # Where the last compaction's line starts while its summary may still come (only
    # bookkeeping read since): the offset stays before it, so that a read cut between the
    # two reads the pair again next time, as a tool call waiting for its result.
    open_boundary = -1
    boundary_starts: list[int] = []
    sidechain_file = agent_id is not None
    # The assistant's last text since the last prompt or tool call, of a record that does
    # not say whether it ends the turn (older clients write no stop_reason): the turn's
    # reply once the next prompt comes. Until then the offset stays before it (as before
    # a tool_use waiting for its result), so a read cut there decides it next time.
    reply: tuple[dict[str, Any], str, str, int] | None = None
    # The assistant's texts of the turn so far (its notes between tool calls, then its
    # reply): what the Stop hook reads back from the transcript (turn_notes).
    said: list[str] = []
    # The turn's last text (as ``reply``), kept past a tool call after it: a turn the user
    # interrupted, or cut into with a new prompt, ends on a tool call, and no Stop hook
    # runs; what the agent wrote in it ("All 124 tests pass") is kept as its reply.
    last_said: tuple[dict[str, Any], str, str, int] | None = None
    # A command the person ran at the prompt, until what it printed comes (the next user
    # turn), and a client command as typed (with its line start), until what it printed
    # comes: the offset stays before either meanwhile, so that a window cut between the
    # two reads the pair whole next time.
    shell_typed: tuple[dict[str, Any], str, str, int] | None = None
    client_command: tuple[str, int] | None = None
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
        kind = record.get("type")
        at = _s(record.get("timestamp"))
        if kind not in ("user", "assistant", "system"):
            role = _turn_role(record) if kind not in BOOKKEEPING else None
            if role is None:
                unknown = "" if kind in BOOKKEEPING else _type_name(kind)
                marks.append((pos, 0, unknown))
                continue
            # A record of a type this version does not know that carries a turn of the
            # conversation (a message with a role and content: tool calls, results, a
            # prompt): read as that turn, by its structure.
            kind = role
        marks.append((pos, 0, ""))
        _envelope(chunk, record, at)
        if kind == "system":
            said_here = _s(record.get("content")).lstrip()
            if record.get("subtype") == "local_command" and not record.get("isSidechain"):
                # (2.0.3x on: a client command and what it printed are system records.)
                client_command = _local_command(
                    record, said_here, client_command, line_start, path, chunk
                )
                continue
            if record.get("subtype") == "compact_boundary":
                meta = record.get("compactMetadata")
                trigger = _s(meta.get("trigger")) if isinstance(meta, dict) else ""
                boundary = Boundary(_s(record.get("sessionId")), trigger, at)
                chunk.items.append(boundary)
                open_boundary = line_start
                boundary_starts.append(line_start)
            continue
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "user" and record.get("isCompactSummary"):
            # The summary belongs to the compaction just before it, if nothing but
            # bookkeeping came between (else that compaction is settled without one).
            if open_boundary != -1 and boundary is not None and isinstance(content, str):
                boundary.summary = compact_summary(content)
            open_boundary = -1
            said, last_said = [], None  # the turn's notes before a compaction: the summary's
            continue
        open_boundary = -1  # any other turn settles the last compaction
        if shell_typed is not None and not _starts(content, USER_SHELL_OUTPUT):
            # (What the person's command printed is the very next turn; none came.)
            chunk.items.append(_user_shell_call(shell_typed, "", path))
            shell_typed = None
        if client_command is not None and not _starts(content, ("<local-command-", *COMMAND_TAGS)):
            client_command = None  # (it printed nothing)
        if kind == "assistant":
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        tool_id = _s(block.get("id"))
                        if tool_id:
                            pending[tool_id] = (block, line_start, record)
                        reply = None  # the text before a tool call does not end the turn
                    elif isinstance(block, dict) and block.get("type") == "text":
                        text = _s(block.get("text"))
                        if text.strip() and not (sidechain_file or record.get("isSidechain")):
                            reply = last_said = (record, text, at, line_start)
                            said.append(text)
                ends = message.get("stop_reason") if isinstance(message, dict) else None
                if reply is not None and ends in TURN_ENDS:
                    chunk.items.append(_reply_call(reply, path, said))  # the Stop hook's
                    reply, last_said, said = None, None, []
            continue
        # a user record: a prompt, or tool results
        if isinstance(content, str) or _only_text(content):
            if sidechain_file or record.get("isSidechain"):
                continue
            said_here = (content if isinstance(content, str) else _text_of(content)).lstrip()
            if said_here.startswith((USER_SHELL_INPUT, *USER_SHELL_OUTPUT)):
                if shell_typed is not None:
                    output = said_here if not said_here.startswith(USER_SHELL_INPUT) else ""
                    chunk.items.append(_user_shell_call(shell_typed, output, path))
                    shell_typed = None
                if said_here.startswith(USER_SHELL_INPUT):
                    command = tag_text(said_here, "bash-input")
                    shell_typed = (record, command, at, line_start) if command.strip() else None
                continue
            client_command = _local_command(
                record, said_here, client_command, line_start, path, chunk
            )
            if said_here.startswith(CLIENT_OUTPUT):
                continue
            if said_here.startswith(NOTIFICATION_TAGS):
                # Background work ended: the prompt the client submits for it (2.1.3xx
                # fires UserPromptSubmit with it), which ends nothing of the turn.
                chunk.items.append(
                    Call(_input(record, "UserPromptSubmit", {"prompt": said_here}, path), at)
                )
                continue
            text = _prompt_text(record, content)
            if text:
                ended = reply or last_said
                if ended is not None:
                    chunk.items.append(_reply_call(ended, path, said))
                reply, last_said, said = None, None, []
                chunk.items.append(
                    Call(_input(record, "UserPromptSubmit", {"prompt": text}, path), at)
                )
                # A new prompt: a call still without a result was interrupted, and never
                # gets one; it must not hold the offset back for good.
                pending.clear()
            continue
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            tool_id = _s(block.get("tool_use_id"))
            found = pending.pop(tool_id, None)
            if found is None:
                continue  # its tool_use was before the offset of a finished pair, or lost
            use = found[0]
            call = _tool_call(record, use, block, len(line), path, agent_id, agent_type)
            if call is not None:
                chunk.items.append(Call(call, at))
    if at_end and not chunk.truncated:
        if shell_typed is not None:  # the file ends before what it printed
            chunk.items.append(_user_shell_call(shell_typed, "", path))
            shell_typed = None
        if reply is not None:
            chunk.items.append(_reply_call(reply, path, said))
            reply = None
    # The safe offset: before the first tool_use still waiting for its result.
    safe = pos
    if pending:
        safe = min(begin for _, begin, _ in pending.values())
    if reply is not None:
        safe = min(safe, reply[3])
    if shell_typed is not None:
        safe = min(safe, shell_typed[3])
    if client_command is not None:
        safe = min(safe, client_command[1])
    if open_boundary != -1:
        safe = min(safe, open_boundary)
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


def _turn_role(record: dict[str, Any]) -> str | None:
    """``user`` or ``assistant`` when a record of another type carries a conversation turn
    (``message`` with that role and a content), else None."""
    message = record.get("message")
    if not isinstance(message, dict) or "content" not in message:
        return None
    role = message.get("role")
    return role if role in ("user", "assistant") else None


def _type_name(kind: object) -> str:
    """A record's type as counted among the unknown ones (its name, short; or its JSON kind)."""
    if isinstance(kind, str):
        name = "".join(c if c.isprintable() else "?" for c in kind[:40])
        return name or "(empty)"
    return "(none)" if kind is None else f"({type(kind).__name__})"


def compact_summary(content: str) -> str:
    """The summary the model wrote, out of the client's framing of it."""
    head = content.find(SUMMARY_HEAD)
    text = content[head + len(SUMMARY_HEAD) :] if head != -1 else content
    tail = text.find(SUMMARY_TAIL)
    return (text[:tail] if tail != -1 else text).strip()


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


def _client_turn(record: dict[str, Any]) -> bool:
    if record.get("isMeta") or record.get("isVisibleInTranscriptOnly"):
        return True
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    text = content if isinstance(content, str) else _text_of(content)
    return text.lstrip().startswith(CLIENT_TURNS)


def _only_text(content: Any) -> bool:
    """A prompt typed with an image or pasted blocks: text blocks, no tool result."""
    if not isinstance(content, list) or not content:
        return False
    types = {b.get("type") for b in content if isinstance(b, dict)}
    return "text" in types and "tool_result" not in types


def _text_of(content: Any, skip: tuple[str, ...] = ()) -> str:
    """The text blocks of ``content`` joined, those that start with one of ``skip`` left out."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        b["text"]
        for b in content
        if isinstance(b, dict)
        and b.get("type") == "text"
        and isinstance(b.get("text"), str)
        and not (skip and b["text"].lstrip().startswith(skip))
    ]
    return "\n".join(parts)


def _input(record: dict[str, Any], event: str, fields: dict[str, Any], path: str) -> HookInput:
    raw = {
        "session_id": _s(record.get("sessionId")),
        "cwd": _s(record.get("cwd")),
        "transcript_path": path,
        "hook_event_name": event,
        **fields,
    }
    inp = payload.from_dict(raw, event)
    inp.tool_kind = claude_code.tool_kind(inp.tool_name)
    return inp


def _reply_call(reply: tuple[dict[str, Any], str, str, int], path: str, said: list[str]) -> Call:
    """The Stop hook's input for a turn that ended with ``reply`` (record, text, time,
    line start), with the turn's notes: what the assistant wrote before it (``said``,
    the turn's texts so far, the reply last)."""
    record, text, at, _start = reply
    notes = kept_notes(said[:-1] if said and said[-1] == text else said)
    fields: dict[str, Any] = {"last_assistant_message": text}
    if notes:
        fields["turn_notes"] = notes
    return Call(_input(record, "Stop", fields, path), at)


def _command_line(text: str) -> str:
    """A client command as typed (``/compact focus on tests``), from its record."""
    name = tag_text(text, "command-name").strip()
    return f"{name} {tag_text(text, 'command-args').strip()}".strip()


def _starts(content: Any, tags: tuple[str, ...]) -> bool:
    """Whether a turn's text starts with one of ``tags``."""
    said = content if isinstance(content, str) else _text_of(content)
    return said.lstrip().startswith(tags)


def _user_shell_call(typed: tuple[dict[str, Any], str, str, int], printed: str, path: str) -> Call:
    """The PostToolUse a Bash call would have had for a command the person ran at the
    prompt (``typed``: its record, command line, time, line start), ``printed`` the turn
    that holds its ``<bash-stdout>`` and ``<bash-stderr>``. Said to be the person's
    in its ``description``; no exit code (the client writes none)."""
    record, command, at, _start = typed
    uuid = _s(record.get("uuid"))
    fields: dict[str, Any] = {
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": USER_SHELL_NOTE},
        "tool_use_id": f"bash-mode:{uuid}" if uuid else "",
        "tool_response": {
            "stdout": _plain(tag_text(printed, "bash-stdout")),
            "stderr": _plain(tag_text(printed, "bash-stderr")),
            "interrupted": False,
        },
    }
    inp = _input(record, "PostToolUse", fields, path)
    inp.size = len(printed)
    inp.outcome_known = False  # (no exit code: what it printed says)
    return Call(inp, at)


def _local_command(
    record: dict[str, Any],
    text: str,
    typed: tuple[str, int] | None,
    line_start: int,
    path: str,
    chunk: Chunk,
) -> tuple[str, int] | None:
    """A turn of the client's own commands (``text``, a user turn's or a ``local_command``
    system record's): what a command printed is added to ``chunk`` (the command ``typed``
    before it, if any); the client command still waiting for its output after this turn
    is returned (this one's, when the turn is a command as typed)."""
    if text.startswith(CLIENT_OUTPUT):
        printed = _client_output(record, text, typed, path, _s(record.get("timestamp")))
        if printed is not None:
            chunk.items.append(printed)
        return None
    if text.startswith(COMMAND_TAGS):
        return _command_line(text), line_start
    return typed


def _client_output(
    record: dict[str, Any], text: str, typed: tuple[str, int] | None, path: str, at: str
) -> Call | None:
    """What a client command printed (``text``: ``<local-command-stdout>`` or ``-stderr``),
    as the neutral input of :data:`ctxmode.history.CLIENT_OUTPUT_EVENT` (no hook has one);
    None when it printed nothing."""
    printed = "\n".join(
        part
        for part in (_plain(tag_text(text, tag[1:-1])) for tag in CLIENT_OUTPUT)
        if part.strip()
    )
    if not printed.strip():
        return None
    command = typed[0] if typed is not None else ""
    fields: dict[str, Any] = {
        # (Older clients wrote the command's name without its slash.)
        "tool_input": {"command": command if command[:1] in ("/", "") else "/" + command},
        "tool_response": {"stdout": printed},
    }
    return Call(_input(record, CLIENT_OUTPUT_EVENT, fields, path), at)


# A terminal's escape sequences (colour, bold) the client keeps in what a command printed.
_ESCAPE = "\x1b["


def _plain(text: str) -> str:
    """``text`` without the terminal's colour and style sequences (ESC [ … letter)."""
    if _ESCAPE not in text:
        return text
    import re

    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def _prompt_text(record: dict[str, Any], content: Any) -> str:
    """The text of a user record that is a person's prompt, else "" (a client's own
    turn, a subagent's, ctxmode's output echoed)."""
    if record.get("isSidechain"):
        return ""
    typed = _typed_command(content if isinstance(content, str) else _text_of(content))
    if typed:
        return typed
    if _client_turn(record):
        return ""
    text = content if isinstance(content, str) else _text_of(content, IDE_NOTES)
    return text if text.strip() and OWN_OUTPUT not in text else ""


def _typed_command(text: str) -> str:
    """A slash command the user typed with arguments, as UserPromptSubmit gives it
    (``/greet Alice``), from its record (``<command-name>/greet</command-name>`` …
    ``<command-args>Alice</command-args>``); "" for any other text, and for a command
    without arguments (``/clear``, ``/compact``: the client's own, which no hook sees).
    What the user wrote after a command is theirs: a pasted error, a plan, a link."""
    if not text.lstrip().startswith(COMMAND_TAGS):
        return ""
    name = tag_text(text, "command-name")
    args = tag_text(text, "command-args").strip()
    return f"{name} {args}" if name.startswith("/") and args else ""


# A turn's notes, read back from the end of the transcript at Stop: from a window of its
# last bytes, a wider one when the turn's prompt is not in it; at most this many texts.
TURN_WINDOWS = (256 * 1024, 2 * 1024 * 1024)
TURN_NOTES_MAX = 200


def turn_notes(path: str, reply: str) -> list[str]:
    """What the assistant wrote in the turn that ``reply`` ends, before it, oldest first
    ("All 57 tests pass", "port 3000 is taken: the server is on 3001"): its texts between
    the tool calls since the turn's prompt, as :func:`read` passes them with the turn's
    reply. Read here, for the Stop hook, from the end of the transcript at ``path`` back
    to the prompt (at most the last :data:`TURN_WINDOWS` bytes); [] when it cannot be
    read. On the hook path: no orjson (a hook runs with ``-S``), ctxmode.fastjson."""
    said: list[str] = []
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            for window in TURN_WINDOWS:
                fh.seek(max(0, size - window))
                said, found = _texts_back_to_prompt(fh.read(window))
                if found or window >= size:
                    break
    except (OSError, ValueError):
        return []
    if said and said[-1] == reply:
        said.pop()
    return kept_notes(said)


# Of a turn's notes, the first and the last this many are kept (whole: each is masked
# whole after): the reply's ``notes`` hold its head and tail, the rest are events of
# their own (extract.replies); a turn of more, rare, loses some of its middle, and the
# Stop hook has no more text to mask than this.
NOTES_FIRST = 4
NOTES_LAST = 96


def kept_notes(notes: list[str]) -> list[str]:
    """The notes of a turn that are passed on: the first :data:`NOTES_FIRST` and the last
    :data:`NOTES_LAST`."""
    if len(notes) <= NOTES_FIRST + NOTES_LAST:
        return list(notes)
    return notes[:NOTES_FIRST] + notes[-NOTES_LAST:]


def _texts_back_to_prompt(data: bytes) -> tuple[list[str], bool]:
    """The assistant's texts after the last prompt in ``data`` (JSONL, its first line
    maybe cut), oldest first, and whether that prompt was found."""
    from ctxmode.fastjson import loads

    said: list[str] = []
    end = len(data)
    while end > 0 and len(said) < TURN_NOTES_MAX:
        start = data.rfind(b"\n", 0, max(end - 1, 0)) + 1
        line, end = data[start:end], start
        # Parsed only when it may be a prompt or hold a text: a tool's result (its
        # tool_use_id key; in a string it would read \"tool_use_id\") and a call
        # without text are skipped unread, however long.
        if b'"user"' in line:
            if b'"tool_use_id"' in line and b'"isCompactSummary"' not in line:
                continue
        elif b'"assistant"' not in line or b'"text"' not in line:
            continue
        try:
            record = loads(line)
        except ValueError:
            continue  # the window's first, cut line
        if not isinstance(record, dict):
            continue
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        kind = record.get("type")
        if kind == "user":
            if record.get("isCompactSummary") or (
                (isinstance(content, str) or _only_text(content)) and _prompt_text(record, content)
            ):
                return said, True
        elif kind == "assistant" and isinstance(content, list) and not record.get("isSidechain"):
            texts = [
                _s(b.get("text"))
                for b in content
                if isinstance(b, dict) and b.get("type") == "text" and _s(b.get("text")).strip()
            ]
            said[:0] = texts
    return said, False


def _tool_call(
    record: dict[str, Any],
    use: dict[str, Any],
    result: dict[str, Any],
    size: int,
    path: str,
    agent_id: str | None,
    agent_type: str | None,
) -> HookInput | None:
    name = _s(use.get("name"))
    if not name:
        return None
    tool_input = use.get("input")
    fields: dict[str, Any] = {
        "tool_name": name,
        "tool_input": tool_input if isinstance(tool_input, dict) else {},
        "tool_use_id": _s(use.get("id")),
    }
    if agent_id is not None:
        fields["agent_id"] = agent_id
        if agent_type:
            fields["agent_type"] = agent_type
    text = _text_of(result.get("content"))
    if result.get("is_error") is True:
        fields["error"] = text
        fields["is_interrupt"] = "[Request interrupted by user" in text
        inp = _input(record, "PostToolUseFailure", fields, path)
    else:
        response = record.get("toolUseResult")
        if response is None or isinstance(response, str):
            # A subagent's results carry no toolUseResult: the text is what there is
            # (the shape the hooks get for a shell command, a string for the others).
            kind = claude_code.tool_kind(name)
            response = (
                {"stdout": text, "stderr": "", "interrupted": False} if kind == "shell" else text
            )
        fields["tool_response"] = response
        inp = _input(record, "PostToolUse", fields, path)
    inp.size = size
    return inp


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""
