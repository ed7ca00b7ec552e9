"""PostToolUseFailure → tool_error {tool, key, error}; the key a later success resolves."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxmode import payload
from ctxmode.events import SessionEvent
from ctxmode.extract import extract
from ctxmode.extract.errors import ERROR_HEAD, ERROR_TAIL, failure_key
from tests.helpers import PROJECT, fixture, tool_payload

GH_TOKEN = "ghp_" + "Z9y8X7w6V5" * 4


def failure(
    tool: str, tool_input: Any, error: Any, *, interrupt: bool = False, project: str = PROJECT
) -> payload.HookInput:
    raw = tool_payload(
        tool,
        tool_input,
        event="PostToolUseFailure",
        tool_use_id="toolu_9",
        session_id="s",
        cwd=project,
        error=error,
        is_interrupt=interrupt,
    )
    inp = payload.from_dict(raw, "PostToolUseFailure")
    inp.project_dir = project
    return inp


def events_of(inp: payload.HookInput) -> list[tuple[str, dict[str, Any]]]:
    """The error events of a failure (a failed shell command's ``shell_call``: its tests)."""
    return [(e.type, json.loads(e.data)) for e in errors_of(inp)]


def errors_of(inp: payload.HookInput) -> list[SessionEvent]:
    return [e for e in extract(inp) if e.type != "shell_call"]


FIXTURE_CASES = [
    (
        "PostToolUseFailure.Bash.json",
        {
            "tool": "Bash",
            "key": "ls /nonexistent-mock-dir",
            "error": "Exit code 2\nls: cannot access '/nonexistent-mock-dir': No such file or directory",
        },
    ),
    (
        "more/PostToolUseFailure.Bash.exit2.json",
        {
            "tool": "Bash",
            "key": "echo 'partial output'; echo 'error: bad input' >&2; exit 2",
            "error": "Exit code 2\npartial output\nerror: bad input",
        },
    ),
    (
        "more/PostToolUseFailure.Read.missing.json",
        {
            "tool": "Read",
            "key": "does/not/exist.txt",
            "error": "File does not exist. Note: your current working directory is /home/dev/proj.",
        },
    ),
    (
        "more/PostToolUseFailure.WebFetch.plain_http_page.json",
        {
            "tool": "WebFetch",
            "key": "http://127.0.0.1:35399/page",
            "error": "error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER",
        },
    ),
    (
        "more/PostToolUseFailure.WebFetch.preflight_failed.json",
        {
            "tool": "WebFetch",
            "key": "http://127.0.0.1:35399/page",
            "error": "Unable to verify if domain 127.0.0.1 is safe to fetch. This may be due to "
            "network restrictions or enterprise security policies blocking claude.ai.",
        },
    ),
    (
        "more/PostToolUseFailure.mcp__mockdir__lookup.is_error.json",
        {
            "tool": "mcp__mockdir__lookup",
            "key": "mcp__mockdir__lookup",
            "error": "lookup failed: no entry named 'missing'",
        },
    ),
]


@pytest.mark.parametrize(("name", "expected"), FIXTURE_CASES, ids=[c[0] for c in FIXTURE_CASES])
def test_real_failures(name: str, expected: dict[str, Any]) -> None:
    record = fixture(name)
    inp = payload.from_dict(record["payload"], record["event"])
    inp.project_dir = PROJECT
    [event] = errors_of(inp)
    assert (event.type, event.category, event.priority) == ("tool_error", "error", 1)
    assert json.loads(event.data) == expected
    assert event.tool_use_id == record["payload"]["tool_use_id"]
    # The handler matches a later success by this key: it must equal the stored one.
    assert failure_key(inp) == expected["key"]


CASES = [
    (
        "Edit",
        {"file_path": f"{PROJECT}/src/a.py", "old_string": "x", "new_string": "y"},
        "String to replace not found in file.",
        {"tool": "Edit", "key": "src/a.py", "error": "String to replace not found in file."},
    ),
    (
        "NotebookEdit",
        {"notebook_path": "/elsewhere/n.ipynb"},
        "Cell not found",
        {"tool": "NotebookEdit", "key": "/elsewhere/n.ipynb", "error": "Cell not found"},
    ),
    (
        "Grep",
        {"pattern": "TODO(", "path": "src"},
        "regex parse error",
        {"tool": "Grep", "key": "TODO(", "error": "regex parse error"},
    ),
    (
        "LS",
        {"path": f"{PROJECT}/build"},
        "No such directory",
        {"tool": "LS", "key": "build", "error": "No such directory"},
    ),
    (
        "Glob",
        {"pattern": "**/*.rs"},
        "timed out",
        {"tool": "Glob", "key": "**/*.rs", "error": "timed out"},
    ),
    (
        "WebSearch",
        {"query": "python decimal"},
        "API Error: 400",
        {"tool": "WebSearch", "key": "python decimal", "error": "API Error: 400"},
    ),
    (
        "TaskUpdate",
        {"taskId": "7", "status": "done"},
        "Invalid status",
        {"tool": "TaskUpdate", "key": "7", "error": "Invalid status"},
    ),
    (
        "Agent",
        {"description": "Review app.py", "prompt": "...", "subagent_type": "reviewer"},
        "Agent type 'reviewer' not found",
        {"tool": "Agent", "key": "Review app.py", "error": "Agent type 'reviewer' not found"},
    ),
    (
        "ExitPlanMode",
        {},
        "User rejected the plan",
        {"tool": "ExitPlanMode", "key": "ExitPlanMode", "error": "User rejected the plan"},
    ),
    # Missing or odd error fields.
    ("Read", {"file_path": f"{PROJECT}/a"}, None, {"tool": "Read", "key": "a", "error": ""}),
    (
        "Read",
        {"file_path": f"{PROJECT}/a"},
        {"code": 5},
        {"tool": "Read", "key": "a", "error": "{'code': 5}"},
    ),
    ("", {}, "boom", {"tool": "unknown", "key": "", "error": "boom"}),
]


@pytest.mark.parametrize(("tool", "tool_input", "error", "expected"), CASES)
def test_failures(
    tool: str, tool_input: dict[str, Any], error: Any, expected: dict[str, Any]
) -> None:
    inp = failure(tool, tool_input, error)
    assert events_of(inp) == [("tool_error", expected)]
    assert failure_key(inp) == expected["key"]


def test_interrupt_is_marked() -> None:
    inp = failure("Bash", {"command": "sleep 100"}, "The user interrupted the tool", interrupt=True)
    assert events_of(inp) == [
        (
            "tool_error",
            {
                "tool": "Bash",
                "key": "sleep 100",
                "error": "[interrupted] The user interrupted the tool",
            },
        )
    ]
    assert events_of(failure("Bash", {"command": "sleep 1"}, "", interrupt=True)) == [
        ("tool_error", {"tool": "Bash", "key": "sleep 1", "error": "[interrupted]"})
    ]


def test_a_long_error_keeps_its_head_and_its_tail() -> None:
    """What failed comes first, why last: a long error keeps both ends, ~400 characters."""
    lines = [f"line {i}: something went wrong" for i in range(200)]
    lines[-1] = "ValueError: the rate must be positive"
    error = "Exit code 1\n" + "\n".join(lines)
    inp = failure("Read", {"file_path": f"{PROJECT}/rates.csv"}, error)
    [(_, data)] = events_of(inp)
    assert data["error"].startswith("Exit code 1\nline 0: something went wrong\nline 1:")
    assert data["error"].endswith("\nValueError: the rate must be positive")
    assert "…" in data["error"] and "line 100:" not in data["error"]
    assert 300 <= len(data["error"]) <= ERROR_HEAD + ERROR_TAIL + 8


def test_windows_path_key() -> None:
    inp = failure(
        "Read", {"file_path": "C:\\proj\\src\\main.rs"}, "File does not exist.", project="C:\\proj"
    )
    assert events_of(inp) == [
        ("tool_error", {"tool": "Read", "key": "src/main.rs", "error": "File does not exist."})
    ]


@pytest.mark.parametrize(
    ("tool", "tool_input", "error"),
    [
        (
            "Bash",
            {"command": f"curl -H 'Authorization: token {GH_TOKEN}' https://api.github.com"},
            "Exit code 22",
        ),
        ("Bash", {"command": "deploy"}, f"error: bad credentials {GH_TOKEN}"),
        ("Read", {"file_path": f"{PROJECT}/keys/{GH_TOKEN}.txt"}, "File does not exist."),
        ("WebFetch", {"url": f"https://x:{GH_TOKEN}@example.com/?token={GH_TOKEN}"}, "403"),
        ("mcp__db__query", {"password": GH_TOKEN}, f"auth failed for {GH_TOKEN}"),
    ],
)
def test_secrets_masked_in_keys_and_errors(
    tool: str, tool_input: dict[str, Any], error: str
) -> None:
    inp = failure(tool, tool_input, error)
    [event] = errors_of(inp)
    assert GH_TOKEN not in event.data
    assert "[REDACTED:" in event.data
    assert all(GH_TOKEN not in e.data for e in extract(inp))  # the shell_call too
    assert json.loads(event.data)["key"] == failure_key(inp)
    assert GH_TOKEN not in failure_key(inp)


def test_key_survives_an_error_that_blows_the_budget() -> None:
    # Control characters encode to six characters each: the error must give way, not the key.
    command = "pytest tests/test_" + "x" * 250 + ".py"
    inp = failure("Bash", {"command": command}, "\x1b[31mFAILED\x1b[0m " * 80)
    [event] = errors_of(inp)
    data = json.loads(event.data)
    assert len(event.data) <= 1000
    assert data["key"] == failure_key(inp) == command
    assert data["error"].startswith("\x1b[31mFAILED")


def test_a_failed_shell_command_is_kept_with_its_exit_code_and_output() -> None:
    lines = [f"collected line {i}" for i in range(300)]
    lines[-1] = "E   AssertionError: expected 0.13, got 0.125"
    error = "Exit code 1\n" + "\n".join(lines)
    [call, _] = extract(failure("Bash", {"command": "pytest -q tests/test_rounding.py"}, error))
    data = json.loads(call.data)
    assert (call.type, call.category, call.priority) == ("shell_call", "shell", 5)
    assert data["command"] == "pytest -q tests/test_rounding.py"
    assert data["exit"] == 1
    # Head and tail: the tool_error keeps the head only; the cause is often at the end.
    assert data["output"].startswith("collected line 0\n")
    assert data["output"].endswith("\nE   AssertionError: expected 0.13, got 0.125")
    assert "\n…\n" in data["output"] and len(data["output"]) < 700
    # An error not in the "Exit code N" form keeps no exit code; an interrupt, no output.
    [call, _] = extract(failure("Bash", {"command": "make"}, "Command timed out"))
    assert json.loads(call.data) == {"command": "make", "output": "Command timed out"}
    [call, _] = extract(failure("Bash", {"command": "sleep 9"}, "Interrupted", interrupt=True))
    assert json.loads(call.data) == {"command": "sleep 9"}


def test_a_failed_shell_commands_output_is_masked_before_it_is_cut() -> None:
    # The secret straddles where the excerpt's head would end: masked whole first.
    error = "Exit code 1\n" + "x" * 300 + f" token={GH_TOKEN}\n" + "tail line\n" * 80
    for event in extract(failure("Bash", {"command": "deploy"}, error)):
        assert GH_TOKEN not in event.data and GH_TOKEN[:12] not in event.data
