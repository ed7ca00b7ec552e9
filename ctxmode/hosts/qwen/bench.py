"""``ctxmode bench``: Qwen Code's hook calls, as Qwen makes them (``--host qwen``).

A failed shell command (PostToolUseFailure with Qwen's text), and the prompt after a
compaction, which hands the snapshot over as an outline. CLI-only: never imported by a hook.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from ctxmode.bench.cases import TOOL_TARGET, Case, HostCommands
from ctxmode.bench.results import Sample

# A case's "event" for Qwen's hook command of that event.
QWEN = "qwen:"

CASES: tuple[Case, ...] = (
    Case(
        "Qwen PostToolUseFailure run_shell_command",
        QWEN + "PostToolUseFailure",
        "qwen_shell_failed",
        *TOOL_TARGET,
    ),
    Case("Qwen UserPromptSubmit", QWEN + "UserPromptSubmit", "qwen_prompt", 2.5),
)

# Qwen Code 0.24.4's payloads (tests/fixtures/qwen-code-0.24.4/), numbered.
_ENVELOPE: dict[str, Any] = {
    "session_id": "@SESSION@",
    "transcript_path": "@PROJECT@/.qwen-session.jsonl",
    "cwd": "@PROJECT@",
    "timestamp": "2026-12-06T03:55:03.364Z",
    "permission_mode": "yolo",
    "prompt_id": "@SESSION@########0",
}
QWEN_SHELL_FAILED: dict[str, Any] = {
    **_ENVELOPE,
    "hook_event_name": "PostToolUseFailure",
    "tool_name": "run_shell_command",
    "tool_input": {"command": "pytest tests/test_ledger_@N@.py", "description": "run the tests"},
    "error": "Command: pytest tests/test_ledger_@N@.py\nDirectory: (root)\n"
    "Output: 1 failed in 0.02s\nError: (none)\nExit Code: 1\nSignal: (none)\n"
    "Process Group PGID: (none)",
    "is_interrupt": False,
    "tool_use_id": "toolu_@N@",
    "duration_ms": 453,
}
QWEN_PROMPT: dict[str, Any] = {
    **_ENVELOPE,
    "hook_event_name": "UserPromptSubmit",
    "prompt": "now fix the rounding in part @N@ please",
}
PAYLOADS: dict[str, dict[str, Any]] = {
    "qwen_shell_failed": QWEN_SHELL_FAILED,
    "qwen_prompt": QWEN_PROMPT,
}


def commands(settings_path: str | None, python: str | None) -> HostCommands:
    """The commands ``ctxmode install --host qwen`` would write, run by ``python``."""
    from ctxmode.hosts.qwen.install import hook_specs

    found = {QWEN + spec.event: spec.command for spec in hook_specs(python)}
    return HostCommands(found, python)


def prepare(project: str, scratch: str, session: str, wanted: Set[str]) -> dict[str, str]:
    """Nothing to prepare: the payloads are templates."""
    return {}


def check(case: Case, sample: Sample) -> list[str]:
    """A tool call prints nothing (Qwen would show it to the model)."""
    if case.payload == "qwen_shell_failed" and sample.stdout:
        return [f"printed {sample.stdout[:80]!r} for a tool call"]
    return []
