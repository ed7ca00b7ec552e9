"""Tool outcomes from a Codex session's rollout file, read incrementally on the hook path.

Codex fires PostToolUse for a command that exited non-zero too, with no exit code, and a
patch that fails to apply fires no PostToolUse at all. The exit code is in the rollout file
(``transcript_path``: ``$CODEX_HOME/sessions/…/rollout-…-<session>.jsonl``), one JSON object
a line: a ``function_call`` (``exec_command``, arguments ``{"cmd", "workdir"}``) or a
``custom_tool_call`` (``apply_patch``, ``input``), later its ``*_output`` with the same
``call_id`` ("Process exited with code N" / "Exit code: N", or "apply_patch verification
failed: …"). Codex writes a call's output *after* that call's PostToolUse ran, so each
hook reads what the file gained since the last one: the outcomes of the earlier calls, and
the summary of a compaction (a ``compacted`` record), which becomes a ``PostCompact`` input.

Each read starts where the last stopped (``<root>/codex/<session>.json``, 0600: the path,
the offset, and the calls still waiting for their output), takes at most ``MAX_READ`` bytes
and stops at the last complete line, so no hook ever reads the whole file. A call's command
is kept masked (``redact.mask`` on the whole text, then cut): the state file holds no
secret. The outcomes become inputs the handlers know: a failure is a ``PostToolUseFailure``
(``error``: the output), a success a ``PostToolUse`` whose outcome is known, which resolves
an open error of the same key — the rule Claude Code's hooks follow.
"""

from __future__ import annotations

import os

from ctxmode import fastjson, payload

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ctxmode.payload import HookInput

# Bytes read per hook call at most (the rest waits for the next call).
MAX_READ = 1024 * 1024
# Calls remembered while their output is pending (the newest; a call that never answers
# must not grow the state without bound).
MAX_PENDING = 64
# A command is kept this long, masked first (the error key uses its first 300 characters).
COMMAND_CHARS = 2000
STATE_DIR = "codex"

_SHELL_CALLS = ("exec_command", "shell", "local_shell", "container.exec", "shell_command")
_MARKERS = (b'"function_call', b'"custom_tool_call')


def state_path(root: str, session_id: str) -> str:
    safe = "".join(ch for ch in session_id if ch.isalnum() or ch in "-_")[:100] or "session"
    return os.path.join(root, STATE_DIR, safe + ".json")


def _load(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            state = fastjson.loads(fh.read(256 * 1024).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def _save(path: str, state: dict[str, Any]) -> None:
    from ctxmode import paths

    paths.ensure_dir(os.path.dirname(path))
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, fastjson.dumps(state).encode("utf-8", "surrogatepass"))
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _read_lines(path: str, offset: int) -> tuple[list[bytes], int]:
    """The complete lines from ``offset`` (at most MAX_READ bytes) and the next offset."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if offset > size:
            offset = 0  # the file was replaced by a shorter one: start over
        fh.seek(offset)
        chunk = fh.read(MAX_READ)
        end = chunk.rfind(b"\n")
        if end == -1:
            if len(chunk) < MAX_READ:
                return [], offset  # a line still being written
            # One line longer than MAX_READ (a huge output): skip it, to its end.
            skipped = len(chunk)
            while True:
                more = fh.read(MAX_READ)
                if not more:
                    return [], offset  # still being written: try again next time
                cut = more.find(b"\n")
                if cut != -1:
                    return [], offset + skipped + cut + 1
                skipped += len(more)
        return chunk[:end].split(b"\n"), offset + end + 1


def _text(value: Any) -> str:
    """An output as text: a string, or the texts of a list of content items."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            str(part.get("text")) for part in value if isinstance(part, dict) and part.get("text")
        )
    return ""


def _after(text: str, marker: str) -> int | None:
    """The integer right after ``marker`` in ``text``'s header, or None."""
    at = text.find(marker)
    if at == -1 or at > 400:
        return None
    digits = ""
    for ch in text[at + len(marker) :].lstrip():
        if ch.isdigit() or (ch == "-" and not digits):
            digits += ch
        else:
            break
    try:
        return int(digits)
    except ValueError:
        return None


def outcome(tool: str, output: str) -> tuple[int | None, str]:
    """(exit code or None when unknown, the output text without its header)."""
    body = output
    cut = output.find("Output:\n")
    if 0 <= cut <= 400:
        body = output[cut + len("Output:\n") :]
    if output.startswith("{"):  # older Codex: {"output": ..., "metadata": {"exit_code": N}}
        try:
            doc = fastjson.loads(output)
        except ValueError:
            doc = None
        if isinstance(doc, dict):
            meta = doc.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            text = doc.get("output")
            return (code if isinstance(code, int) else None), text if isinstance(text, str) else ""
    code = _after(output, "Process exited with code")
    if code is None:
        code = _after(output, "Exit code:")
    if code is None and tool == "apply_patch" and output.strip():
        # "apply_patch verification failed: …", "Invalid patch: …": no code, a failure.
        return 1, output
    return code, body


PATCH_HEADERS = ("*** Update File:", "*** Add File:", "*** Delete File:")


def first_patch_file(text: str) -> str:
    """The path of the first file a ``*** Begin Patch`` text touches ("" if none)."""
    best = -1
    for header in PATCH_HEADERS:
        at = text.find(header)
        while at > 0 and text[at - 1] != "\n":
            at = text.find(header, at + 1)
        if at != -1 and (best == -1 or at < best):
            best = at
    if best == -1:
        return ""
    end = text.find("\n", best)
    line = text[best : end if end != -1 else len(text)]
    return line.split(":", 1)[1].strip()


def kept(text: str) -> str:
    """``text`` as the state file may keep it: private spans out, masked whole, then cut
    where no mask is split (a huge text is first reduced to a head that cuts no secret)."""
    from ctxmode import redact

    if len(text) > 16 * COMMAND_CHARS:
        text = redact.safe_head(text, 8 * COMMAND_CHARS)
    text = redact.mask(redact.strip_private(text))
    return text[: redact.cut_at(text, COMMAND_CHARS)]


def _call(item: dict[str, Any], cwd: str) -> list[str] | None:
    """[tool name as hooks see it, key text (masked), cwd] of a call item, or None."""
    name = item.get("name")
    if item.get("type") == "custom_tool_call":
        text = item.get("input")
        if name != "apply_patch" or not isinstance(text, str):
            return None
        first = first_patch_file(text)
        return ["apply_patch", kept(first), cwd] if first else None
    if name not in _SHELL_CALLS:
        return None
    try:
        args = fastjson.loads(item.get("arguments") or "")
    except (ValueError, TypeError):
        return None
    if not isinstance(args, dict):
        return None
    command = args.get("cmd") or args.get("command")
    if isinstance(command, list):
        command = " ".join(str(part) for part in command)
    if not isinstance(command, str) or not command.strip():
        return None
    workdir = args.get("workdir")
    where = workdir if isinstance(workdir, str) and workdir else cwd
    return ["Bash", kept(command), where]


def _input(inp: HookInput, call: list[str], call_id: str, code: int, body: str) -> HookInput:
    tool, key, cwd = call[0], call[1], call[2]
    raw: dict[str, Any] = {
        "session_id": inp.session_id,
        "cwd": cwd or inp.cwd,
        "transcript_path": inp.transcript_path,
        "tool_name": tool,
        "tool_input": {"command": key} if tool == "Bash" else {"file_path": key},
        "tool_use_id": call_id,
    }
    if code:
        raw["error"] = f"Exit code {code}\n{body}" if tool == "Bash" else body
    late = payload.from_dict(raw, "PostToolUseFailure" if code else "PostToolUse")
    late.project_dir = inp.project_dir
    late.tool_kind = "shell" if tool == "Bash" else "file.patch"
    return late


# Codex installs the summary behind this preamble (the "compacted" record's message).
SUMMARY_AFTER = "Here is the summary produced by"


def summary_of(message: str) -> str:
    """The model's summary in a ``compacted`` record's message, without Codex's preamble."""
    at = message.find(SUMMARY_AFTER)
    if at != -1:
        newline = message.find("\n", at)
        if newline != -1:
            return message[newline + 1 :].strip()
    return message.strip()


def _compacted(inp: HookInput, line: bytes) -> HookInput | None:
    """A ``compacted`` record → a PostCompact input carrying the summary (Codex's own
    PostCompact payload has none)."""
    try:
        record = fastjson.loads(line.decode("utf-8", "replace"))
    except ValueError:
        return None
    item = record.get("payload") if isinstance(record, dict) else None
    message = item.get("message") if isinstance(item, dict) else None
    if record.get("type") != "compacted" or not isinstance(message, str):
        return None
    raw = {"session_id": inp.session_id, "cwd": inp.cwd, "compact_summary": summary_of(message)}
    late = payload.from_dict(raw, "PostCompact")
    late.project_dir = inp.project_dir
    return late


def outcomes(inp: HookInput, lines: list[bytes], pending: dict[str, list[str]]) -> list[HookInput]:
    """The tool outcomes in ``lines``, in order; ``pending`` (call id → call) is updated."""
    found: list[HookInput] = []
    for line in lines:
        head = line[:300]
        if b'"compacted"' in head[:120]:
            summary = _compacted(inp, line)
            if summary is not None:
                found.append(summary)
            continue
        if b'"response_item"' not in head or not any(m in head for m in _MARKERS):
            continue
        try:
            record = fastjson.loads(line.decode("utf-8", "replace"))
        except ValueError:
            continue
        item = record.get("payload") if isinstance(record, dict) else None
        if not isinstance(item, dict):
            continue
        kind, call_id = item.get("type"), item.get("call_id")
        if not isinstance(call_id, str):
            continue
        if kind in ("function_call", "custom_tool_call"):
            call = _call(item, inp.cwd)
            if call is not None:
                pending[call_id] = call
                while len(pending) > MAX_PENDING:
                    del pending[next(iter(pending))]
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call = pending.pop(call_id, None)
            if call is None:
                continue
            code, body = outcome(call[0], _text(item.get("output")))
            if code is not None:
                found.append(_input(inp, call, call_id, code, body))
    return found


def read_outcomes(inp: HookInput, root: str) -> tuple[list[HookInput], Callable[..., None] | None]:
    """What the rollout gained since the last read: (outcomes, save the new position)."""
    rollout = inp.transcript_path or ""
    if not os.path.isfile(rollout):
        return [], None
    path = state_path(root, inp.session_id)
    state = _load(path)
    offset = state.get("offset") if state.get("path") == rollout else 0
    pending = state.get("calls") if state.get("path") == rollout else None
    offset = offset if isinstance(offset, int) and offset >= 0 else 0
    pending = pending if isinstance(pending, dict) else {}
    lines, new_offset = _read_lines(rollout, offset)
    if new_offset == offset:
        return [], None
    found = outcomes(inp, lines, pending)
    new_state = {"path": rollout, "offset": new_offset, "calls": pending}

    def save(scrub: Callable[[str], str] | None = None) -> None:
        # ``scrub``: what the store remembers is masked in the kept texts too (the
        # secrets its earlier payloads masked: see ctxmode.secret_memory).
        if scrub is not None:
            for call in pending.values():
                if isinstance(call, list) and len(call) > 1 and isinstance(call[1], str):
                    call[1] = scrub(call[1])
        _save(path, new_state)

    return found, save
