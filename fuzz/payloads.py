"""Hostile hook inputs, shared by the hypothesis tests and the atheris harness.

Structure-aware: every input starts from a real Claude Code payload (the captured
fixtures, plus the older ``TodoWrite``/``Task``/``MultiEdit`` shapes), then gets a few
mutations: a field replaced by a hostile value (wrong type, huge, lone surrogates,
control characters, XML and shell metacharacters, secrets, ``<private>`` spans), a key
dropped or added, the tool renamed, the event swapped, and finally an encoding twist
(BOM, non-ASCII escapes, truncation, trailing garbage, nesting). The mutations take
their choices from a :class:`Chooser`, so hypothesis (``HypothesisChooser``) and a
coverage-guided fuzzer (``BytesChooser`` over the fuzzer's bytes) drive the same code.

``check_output`` is the output contract every hook run must meet.
"""

from __future__ import annotations

import copy
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Protocol

from ctxmode.payload import EVENTS

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "claude-code-2.1.197"

# The events ctxmode registers for, and (the contract checked below, so written out
# here rather than taken from the code under test) the two that may print.
HOOK_EVENTS = EVENTS
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")

PROJECT = "/home/dev/proj"

# Shapes the fixtures of 2.1.197 do not have: older clients, other tools.
EXTRA_SEEDS: list[dict[str, Any]] = [
    {
        "hook_event_name": "PostToolUse",
        "session_id": "seed-todo",
        "cwd": PROJECT,
        "tool_name": "TodoWrite",
        "tool_input": {
            "todos": [
                {"content": "Write the parser", "status": "in_progress", "id": "1"},
                {"content": "Add tests", "status": "pending", "id": "2"},
            ]
        },
        "tool_response": {"oldTodos": [], "newTodos": []},
    },
    {
        "hook_event_name": "PostToolUse",
        "session_id": "seed-task",
        "cwd": PROJECT,
        "tool_name": "Task",
        "tool_input": {"description": "Review", "prompt": "Review app.py", "subagent_type": "rev"},
        "tool_response": {"content": [{"type": "text", "text": "Looks fine."}]},
    },
    {
        "hook_event_name": "PostToolUse",
        "session_id": "seed-multiedit",
        "cwd": PROJECT,
        "tool_name": "MultiEdit",
        "tool_input": {
            "file_path": f"{PROJECT}/src/app.py",
            "edits": [{"old_string": "a", "new_string": "b", "replace_all": False}],
        },
        "tool_response": {"filePath": f"{PROJECT}/src/app.py"},
    },
]

TOOL_NAMES = (
    "Bash", "Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "WebFetch",
    "WebSearch", "TodoWrite", "Task", "Agent", "TaskCreate", "TaskUpdate", "TaskList",
    "TaskGet", "EnterPlanMode", "ExitPlanMode", "Skill", "AskUserQuestion",
    "mcp__mockdir__lookup", "mcp__", "mcp____", "mcp__a__b__c", "", "apply_patch",
)  # fmt: skip

HOSTILE_STRINGS = (
    "",
    " ",
    "\x00",
    "\ud800",  # a lone surrogate: not encodable as UTF-8
    "\udfff\ud800",
    "\u2028\u2029\ufeff\u200b",
    "😀" * 50,
    "a\x1b[31mred\x1b[0m\x07\x08\x0c",
    "]]><!--<session_resume>&amp;&lt;<?xml?>",
    "<private>hidden</private>",
    "<private>unterminated",
    "'; DROP TABLE session_events; --",
    '" OR 1=1 --',
    "$(rm -rf /) `id` ; | && || > < >> 2>&1",
    "cd /tmp && git commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)\"",
    "git -C ../other -c user.name=x commit --message=hello",
    "export GITHUB_TOKEN=ghp_" + "A1b2C3d4" * 5,
    "curl -u admin:hunter2hunter2 https://user:pw@example.com/?token=abc123",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
    "../../../../etc/passwd",
    "C:\\Users\\Dev\\proj\\a.py",
    "//server/share/x",
    "/" * 300,
    "a/" * 2000,
    "%s%n%x{0}{}",
    "NaN",
    "Infinity",
    "-0",
    "1e999",
    "\\",
    "\\u0000",
    "events_fts MATCH '*'",
)  # fmt: skip

HOSTILE_SCALARS: tuple[Any, ...] = (
    None, True, False, 0, -1, 2**63, -(2**63) - 1, 10**400, 1.5, float("nan"), float("inf"),
    [], {}, [None], {"": None}, [[[]]],
)  # fmt: skip

ENCODINGS = ("plain", "ascii", "bom", "truncate", "garbage", "nest", "pretty", "dup-keys")


class Chooser(Protocol):
    """Where the mutations take their decisions from."""

    def int(self, low: int, high: int) -> int: ...

    def text(self, max_size: int) -> str: ...


def pick(chooser: Chooser, items: Any) -> Any:
    return items[chooser.int(0, len(items) - 1)]


def load_seeds(fixtures: Path = FIXTURES) -> list[dict[str, Any]]:
    """Every captured payload (all events, not only ours; the newest client's newer tools
    too), then the extra shapes. The ``tools.*.json`` lists are no payloads."""
    seeds: list[dict[str, Any]] = []
    if fixtures.is_dir():
        newer = fixtures.parent / "claude-code-2.1.332" / "tools"
        found = [*fixtures.glob("*.json"), *fixtures.glob("more/*.json"), *newer.glob("*.json")]
        for path in sorted(found):
            if not path.name.startswith("tools."):
                seeds.append(json.loads(path.read_text())["payload"])
    seeds.extend(EXTRA_SEEDS)
    return seeds


def hostile_value(chooser: Chooser, depth: int = 0) -> Any:
    """A JSON value meant to break whoever reads it."""
    kind = chooser.int(0, 7 if depth < 3 else 4)
    if kind == 0:
        return pick(chooser, HOSTILE_STRINGS)
    if kind == 1:
        # A copy: a later mutation may add keys to it, and the table must stay as it is.
        return copy.deepcopy(pick(chooser, HOSTILE_SCALARS))
    if kind == 2:
        return chooser.text(64)
    if kind == 3:
        # Large (up to 200k characters), well within the parse cap: exercises
        # trimming, masking and the store without costing a second per case.
        unit = pick(chooser, (*HOSTILE_STRINGS[1:], "x"))
        return unit * max(1, chooser.int(100, 200_000) // len(unit))
    if kind == 4:
        return pick(chooser, HOSTILE_STRINGS) + chooser.text(16) + pick(chooser, HOSTILE_STRINGS)
    if kind == 5:
        return [hostile_value(chooser, depth + 1) for _ in range(chooser.int(0, 4))]
    if kind == 6:
        return {
            pick(chooser, ("file_path", "command", "content", "url", "text", "type", "x")):
            hostile_value(chooser, depth + 1)
            for _ in range(chooser.int(0, 4))
        }  # fmt: skip
    return {"type": "text", "text": hostile_value(chooser, depth + 1)}


def _containers(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The dicts a mutation may touch: the payload and its nested objects."""
    found: list[dict[str, Any]] = []
    stack: list[Any] = [payload]
    while stack and len(found) < 64:
        node = stack.pop()
        if isinstance(node, dict):
            found.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node[:8])
    return found


def mutate(payload: dict[str, Any], chooser: Chooser) -> dict[str, Any]:
    """Apply 0-5 mutations to a deep copy of ``payload``."""
    payload = json.loads(json.dumps(payload))
    for _ in range(chooser.int(0, 5)):
        targets = _containers(payload)
        target = pick(chooser, targets)
        keys = list(target)
        action = chooser.int(0, 6)
        if action <= 2 and keys:  # replace a value
            target[pick(chooser, keys)] = hostile_value(chooser)
        elif action == 3 and keys:  # drop a key
            del target[pick(chooser, keys)]
        elif action == 4:  # add a key (known names first: they reach the extractors)
            name = pick(chooser, ("tool_input", "tool_response", "error", "prompt", "source",
                                  "reason", "agent_id", "agent_type", "cwd", "session_id",
                                  "is_interrupt", chooser.text(8)))  # fmt: skip
            target[name] = hostile_value(chooser)
        elif action == 5:
            payload["tool_name"] = pick(chooser, TOOL_NAMES)
        else:
            payload["hook_event_name"] = pick(chooser, (*HOOK_EVENTS, "Bogus", ""))
    return payload


def encode(payload: Any, chooser: Chooser) -> bytes:
    """Serialise ``payload`` with one of the encoding twists."""
    how = pick(chooser, ENCODINGS)
    ascii_only = how == "ascii"
    try:
        text = json.dumps(payload, ensure_ascii=ascii_only, indent=2 if how == "pretty" else None)
    except ValueError:  # float("nan") is fine for json.dumps; anything else falls back
        text = json.dumps(str(payload))
    data = text.encode("utf-8", "surrogatepass")
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "truncate":
        return data[: chooser.int(0, max(len(data) - 1, 0))]
    if how == "garbage":
        return data + pick(chooser, (b"}", b"\x00", b"\xff\xfe", b"{}", b" trailing"))
    if how == "nest":
        depth = chooser.int(1, 5000)
        return b"[" * depth + data + b"]" * depth
    if how == "dup-keys" and data.startswith(b"{") and len(data) > 2:
        return b'{"session_id": 1, "session_id": "dup",' + data[1:]
    return data


def hook_input(chooser: Chooser, seeds: list[dict[str, Any]]) -> tuple[str, bytes]:
    """(event the hook script is for, stdin bytes)."""
    event = pick(chooser, HOOK_EVENTS)
    mode = chooser.int(0, 9)
    if mode == 0:  # raw bytes, no structure at all
        return event, chooser.text(256).encode("utf-8", "surrogatepass")
    seed = pick(chooser, seeds)
    return event, encode(mutate(seed, chooser), chooser)


def check_output(event: str, out: bytes) -> None:
    """Raise AssertionError unless ``out`` is within the hook output contract.

    Empty, or for SessionStart/UserPromptSubmit exactly one JSON object
    ``{"hookSpecificOutput": {"hookEventName": event, "additionalContext": <xml>}}``
    on one line, whose context is a well-formed ``<session_resume>`` document.
    """
    if not out:
        return
    assert event in CONTEXT_EVENTS, f"{event} printed {out[:200]!r}"
    assert out.endswith(b"\n") and out.count(b"\n") == 1, f"not one line: {out[:200]!r}"
    document = json.loads(out)
    assert list(document) == ["hookSpecificOutput"], document
    inner = document["hookSpecificOutput"]
    assert sorted(inner) == ["additionalContext", "hookEventName"], inner
    assert inner["hookEventName"] == event
    context = inner["additionalContext"]
    assert isinstance(context, str) and context
    assert ET.fromstring(context).tag == "session_resume"


class BytesChooser:
    """Decisions read from a byte string (for atheris): the same bytes, the same input."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        value = self.data[self.pos]
        self.pos += 1
        return value

    def int(self, low: int, high: int) -> int:
        if high <= low:
            return low
        span = high - low + 1
        value = 0
        for _ in range(4 if span > 256 else 1):
            value = (value << 8) | self._byte()
        return low + value % span

    def text(self, max_size: int) -> str:
        size = self.int(0, max_size)
        chunk = self.data[self.pos : self.pos + size]
        self.pos += len(chunk)
        # surrogateescape: invalid UTF-8 becomes lone surrogates, hostile on purpose.
        return chunk.decode("utf-8", "surrogateescape")


class HypothesisChooser:
    """Decisions drawn from hypothesis (``st.data()``), so failures shrink."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self._data = data
        self._st = st

    def int(self, low: int, high: int) -> int:
        if high <= low:
            return low
        value: int = self._data.draw(self._st.integers(low, high))
        return value

    def text(self, max_size: int) -> str:
        value: str = self._data.draw(self._st.text(max_size=max_size))
        return value


def environment(root: str, project: str | None = PROJECT) -> dict[str, str]:
    """A hook environment with its own data root (never the real home)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CLAUDECODE"))}
    env.pop("CTXMODE_DISABLE", None)
    env["CTXMODE_HOME"] = root
    if project is not None:
        env["CLAUDE_PROJECT_DIR"] = project
    return env
