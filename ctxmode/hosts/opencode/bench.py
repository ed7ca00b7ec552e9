"""``ctxmode bench``: OpenCode's hook calls, as ctxmode's plugin makes them (``--host opencode``).

The plugin spawns the shims with the payloads below (OpenCode 1.18.33's shapes, recorded in
``tests/fixtures/opencode-1.18.33/``): a failed ``bash`` call and a prompt. CLI-only: never
imported by a hook.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from ctxmode.bench.cases import TOOL_TARGET, Case, HostCommands
from ctxmode.bench.results import Sample

# A case's "event" for the plugin's call of the shim of that neutral event.
OPENCODE = "opencode:"
# The plugin's hook → the neutral event its shim serves.
SHIM_EVENTS = {"tool.execute.after": "PostToolUse", "chat.message": "UserPromptSubmit"}

CASES: tuple[Case, ...] = (
    Case(
        "OpenCode tool.execute.after bash", OPENCODE + "PostToolUse", "opencode_bash", *TOOL_TARGET
    ),
    Case("OpenCode chat.message", OPENCODE + "UserPromptSubmit", "opencode_prompt", 2.5),
)

# What the plugin sends for a `bash` call that exited 1 (its command numbered).
OPENCODE_BASH: dict[str, Any] = {
    "hook_event_name": "PostToolUse",  # the bench's key (the case's event): the plugin sends none
    "hook": "tool.execute.after",
    "directory": "@PROJECT@",
    "input": {
        "tool": "bash",
        "sessionID": "@SESSION@",
        "callID": "call_@N@",
        "args": {"command": "pytest tests/test_ledger_@N@.py", "description": "run the tests"},
    },
    "output": {
        "title": "pytest tests/test_ledger_@N@.py",
        "metadata": {"output": "1 failed in 0.02s\n", "exit": 1, "truncated": False},
        "output": "1 failed in 0.02s\n",
    },
}
OPENCODE_PROMPT: dict[str, Any] = {
    "hook_event_name": "UserPromptSubmit",
    "hook": "chat.message",
    "directory": "@PROJECT@",
    "input": {"sessionID": "@SESSION@"},
    "output": {
        "message": {"id": "msg_@N@", "role": "user", "sessionID": "@SESSION@"},
        "parts": [{"type": "text", "text": "please fix the ledger module (@N@)"}],
    },
}
PAYLOADS: dict[str, dict[str, Any]] = {
    "opencode_bash": OPENCODE_BASH,
    "opencode_prompt": OPENCODE_PROMPT,
}


def commands(settings_path: str | None, python: str | None) -> HostCommands:
    """The commands the plugin ``ctxmode install --host opencode`` writes would spawn."""
    from ctxmode.hosts.opencode.install import hook_specs

    found = {
        OPENCODE + SHIM_EVENTS[spec.event]: spec.command
        for spec in hook_specs(python)
        if spec.event in SHIM_EVENTS
    }
    return HostCommands(found, python)


def prepare(project: str, scratch: str, session: str, wanted: Set[str]) -> dict[str, str]:
    return {}


def check(case: Case, sample: Sample) -> list[str]:
    return []
