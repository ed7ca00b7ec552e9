"""Hook input: bytes from stdin → a validated :class:`HookInput`, ctxmode's neutral payload.

A host module (``ctxmode.hosts``) turns its client's stdin into a HookInput; its field
names are ctxmode's own (Claude Code's happen to be the same). Parsing is lenient on
purpose: clients add keys, drop keys and send nulls (see the fixtures of 2.1.197
and older shapes), and a hook must never fail over a field it did not need.
"""

from __future__ import annotations

from ctxmode import fastjson

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The hook events ctxmode registers for. Others are accepted and ignored.
EVENTS = (
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
)

# Payloads above this are not parsed (see hookrun: they are skipped, not failed).
MAX_PARSE_BYTES = 8 * 1024 * 1024


class PayloadError(ValueError):
    """The input is not a hook payload we can use."""


def _str(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# Bounds of the envelope's ids and names (a client's are far shorter: a session id is a
# UUID, a tool name ~60 characters). A longer one is cut and given a digest of the
# whole (:func:`bounded`): stored and used as a file name at a bounded size, and two
# that share a long head stay two.
ID_CHARS = 128
NAME_CHARS = 256
WORD_CHARS = 64
# A path longer than this names no file (PATH_MAX): such a cwd or transcript is none.
PATH_CHARS = 4096
_DIGEST_CHARS = 16


def bounded(value: str | None, limit: int) -> str | None:
    """``value`` itself when at most ``limit`` characters, else its head and ``~`` and 16
    hex digits of SHA-256 of the whole (deterministic: the same value, the same result;
    two values, two results)."""
    if value is None or len(value) <= limit:
        return value
    from ctxmode.hashing import sha256_hex

    return value[: limit - _DIGEST_CHARS - 1] + "~" + sha256_hex(value)[:_DIGEST_CHARS]


def _id(value: Any, limit: int = ID_CHARS) -> str | None:
    return bounded(_str(value), limit)


def _path(value: Any) -> str | None:
    text = _str(value)
    return text if text is None or len(text) <= PATH_CHARS else None


class HookInput:
    """The fields ctxmode uses, each with a safe type; ``raw`` keeps the rest."""

    __slots__ = (
        "agent_id",
        "agent_type",
        "compact_summary",
        "custom_instructions",
        "cwd",
        "error",
        "event",
        "is_interrupt",
        "last_assistant_message",
        "late",
        "outcome_known",
        "project_dir",
        "prompt",
        "prompt_claims_compact",
        "raw",
        "reason",
        "session_id",
        "shell_keeps_cwd",
        "size",
        "source",
        "start_claims_compact",
        "tool_input",
        "tool_kind",
        "tool_name",
        "tool_response",
        "tool_use_id",
        "transcript_path",
        "trigger",
        "turn_notes",
    )

    def __init__(self, raw: dict[str, Any], event: str) -> None:
        self.raw = raw
        self.event = event
        # Ids and names bounded here, at the parse (see bounded): whatever a payload
        # holds, every later step (the store, file names, the snapshot) sees them short.
        self.session_id = _id(raw.get("session_id")) or ""
        self.cwd = _path(raw.get("cwd")) or ""
        self.transcript_path = _path(raw.get("transcript_path"))
        self.agent_id = _id(raw.get("agent_id"))
        # An empty agent_type (seen on the SubagentStop of every compaction) means "none".
        self.agent_type = _id(raw.get("agent_type")) or None
        self.tool_name = _id(raw.get("tool_name"), NAME_CHARS) or ""
        # The tool's neutral kind (ctxmode.hosts.KINDS), set by the host that parsed the
        # input; None when built without one (then the default host's names apply).
        self.tool_kind: str | None = None
        self.tool_input: dict[str, Any] = _dict(raw.get("tool_input"))
        # Often a dict, but MCP tools return a list of content blocks or a JSON string.
        self.tool_response: Any = raw.get("tool_response")
        self.tool_use_id = _id(raw.get("tool_use_id"))
        error = raw.get("error")
        self.error = error if isinstance(error, str) else (None if error is None else str(error))
        self.is_interrupt = raw.get("is_interrupt") is True
        self.prompt = _str(raw.get("prompt"))
        self.source = _id(raw.get("source"), WORD_CHARS)
        self.trigger = _id(raw.get("trigger"), WORD_CHARS)
        self.reason = _id(raw.get("reason"), WORD_CHARS)
        self.custom_instructions = _str(raw.get("custom_instructions"))
        # PostCompact: the summary the model wrote of the conversation it replaces.
        self.compact_summary = _str(raw.get("compact_summary"))
        # Stop: the text the agent ended its turn with, and what it wrote before it in
        # the turn, between its tool calls (a host reads them from its transcript).
        self.last_assistant_message = _str(raw.get("last_assistant_message"))
        notes = raw.get("turn_notes")
        self.turn_notes = (
            [n for n in notes if isinstance(n, str)] if isinstance(notes, list) else []
        )
        # Set by the harness: the project (paths.project_dir) and the payload's size in
        # bytes as read from stdin (the raw tool traffic this call stands for).
        self.project_dir = ""
        self.size = 0
        # Set by the host that parsed the input: whether a PostToolUse proves the call
        # succeeded (False for a client that fires it for failed calls too: Codex), and
        # the tool outcomes the client reported late (HookInputs of earlier calls, from
        # Codex's rollout file; see hookrun).
        self.outcome_known = True
        self.late: list[HookInput] = []
        # Whether the client's shell keeps a `cd` for its next command (Claude Code: yes, and
        # its payload's cwd is where the command left it; Codex: each command starts afresh
        # where the session is, which the cwd names). Set False by such a host.
        self.shell_keeps_cwd = True
        # Whether UserPromptSubmit hands over the session's unclaimed compaction snapshot
        # (a client that may drop SessionStart's output after a compaction). False for a
        # host with its own route for it (Gemini: BeforeModel, once per compression).
        self.prompt_claims_compact = True
        # Whether SessionStart (``compact``, or ``resume`` of the session itself) hands
        # over the session's compaction snapshot. False for a host whose SessionStart
        # context lives only as long as the client's process (Qwen Code: the system
        # prompt, rebuilt on every resume): its next prompt carries it instead, into the
        # history the client keeps (``prompt_claims_compact``).
        self.start_claims_compact = True

    def __repr__(self) -> str:
        return f"HookInput({self.event!r}, session={self.session_id!r}, tool={self.tool_name!r})"


def from_dict(raw: dict[str, Any], event: str | None = None) -> HookInput:
    """Build a HookInput; ``event`` (from the hook script) wins over the payload's name."""
    if not isinstance(raw, dict):
        raise PayloadError("payload is not a JSON object")
    name = event or _str(raw.get("hook_event_name")) or ""
    if not name:
        raise PayloadError("no hook event name")
    return HookInput(raw, name)


def parse(data: bytes, event: str | None = None) -> HookInput:
    """Parse stdin bytes into a HookInput or raise :class:`PayloadError`."""
    if not data.strip():
        raise PayloadError("empty input")
    if len(data) > MAX_PARSE_BYTES:
        raise PayloadError(f"payload of {len(data)} bytes exceeds {MAX_PARSE_BYTES}")
    # Decoded here, not by fastjson.loads(bytes): its "utf-8-sig" makes every hook
    # import the encodings.utf_8_sig codec (~0.3 ms); "utf-8" is a C fast path. Same
    # result: a leading BOM is dropped, invalid UTF-8 is refused with the same message.
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PayloadError(f"invalid JSON: not UTF-8: {exc}") from None
    try:
        raw = fastjson.loads(text)
    except fastjson.JSONDecodeError as exc:
        raise PayloadError(f"invalid JSON: {exc}") from None
    return from_dict(raw, event)


# Fields worth recovering from the head of an oversized payload, top level first.
# Claude Code writes the envelope (session_id, cwd, hook_event_name, tool_name) and the
# tool_input's short fields before the big values (file contents, tool output).
_SALVAGE_TOP = (
    "session_id",
    "transcript_path",
    "cwd",
    "hook_event_name",
    "tool_name",
    "tool_use_id",
    "agent_id",
    "agent_type",
    "source",
    "reason",
    "trigger",
)
_SALVAGE_INPUT = (
    "file_path",
    "notebook_path",
    "path",
    "command",
    "description",
    "subject",
    "taskId",
    "status",
    "url",
    "pattern",
)


def _string_after_key(text: str, key: str) -> str | None:
    """The string value of the first ``"key": "..."`` in ``text``, if complete."""
    from ctxmode.fastjson import scan_string

    needle = f'"{key}"'
    start = text.find(needle)
    while start != -1:
        i = start + len(needle)
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i < len(text) and text[i] == ":":
            i += 1
            while i < len(text) and text[i] in " \t\r\n":
                i += 1
            if i < len(text) and text[i] == '"':
                return scan_string(text, i + 1)
            return None
        start = text.find(needle, start + 1)
    return None


def salvage(head: bytes, event: str | None = None) -> HookInput:
    """A HookInput from the head of a payload too large to parse.

    Keeps what identifies the call (session, cwd, tool, path or command) so that a
    huge Write still records which file was written; the big values are not needed.
    """
    text = head.decode("utf-8", "ignore")
    raw: dict[str, Any] = {}
    for key in _SALVAGE_TOP:
        value = _string_after_key(text, key)
        if value is not None:
            raw[key] = value
    tool_start = text.find('"tool_input"')
    if tool_start != -1:
        tool_text = text[tool_start:]
        tool_input = {}
        for key in _SALVAGE_INPUT:
            value = _string_after_key(tool_text, key)
            if value is not None:
                tool_input[key] = value
        raw["tool_input"] = tool_input
    raw["ctxmode_truncated"] = True
    if not raw.get("session_id"):
        raise PayloadError("oversized payload without a readable session_id")
    return from_dict(raw, event)
