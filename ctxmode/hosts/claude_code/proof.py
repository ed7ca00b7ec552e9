"""``ctxmode install --verify``: the proof run as Claude Code makes the calls.

The common part (throwaway root and project, the contract checked on each call, the
snapshot, the store) is :mod:`ctxmode.proof`; here is what is Claude Code's: its shell
(``sh -c``), its environment (``CLAUDE_PROJECT_DIR``), and a short session in the shapes of
2.1.197 that ends in a compaction (``SessionStart`` ``compact`` must print the snapshot).

CLI-only: never imported by a hook.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ctxmode import proof
from ctxmode.config_files import read_text
from ctxmode.hosts import claude_code

_SESSION = "c7a3e1d2-0b5f-4c1e-9a77-3f2d8e6b1a90"


def sample_session(project: str) -> list[tuple[str, dict[str, object]]]:
    """A short realistic session (shapes of Claude Code 2.1.197) ending in a compaction."""
    base = {
        "session_id": _SESSION,
        "transcript_path": f"{project}/.transcript.jsonl",
        "cwd": project,
        "permission_mode": "default",
    }
    hello = f"{project}/hello.py"

    def call(event: str, **fields: object) -> tuple[str, dict[str, object]]:
        return event, {**base, "hook_event_name": event, **fields}

    return [
        call("SessionStart", source="startup", model="claude-sonnet-4-5"),
        call("UserPromptSubmit", prompt="Add a hello module, test it and commit"),
        call(
            "PostToolUse",
            tool_name="Write",
            tool_input={"file_path": hello, "content": 'print("hello")\n'},
            tool_response={
                "type": "create",
                "filePath": hello,
                "content": 'print("hello")\n',
                "structuredPatch": [],
                "originalFile": None,
            },
            tool_use_id="toolu_sample_1",
        ),
        call(
            "PostToolUse",
            tool_name="TaskCreate",
            tool_input={
                "subject": "Test the hello module",
                "description": "Run pytest",
                "activeForm": "Testing the hello module",
            },
            tool_response={"task": {"id": "1", "subject": "Test the hello module"}},
            tool_use_id="toolu_sample_2",
        ),
        call(
            "PostToolUseFailure",
            tool_name="Bash",
            tool_input={"command": "python -m pytest -q", "description": "Run the tests"},
            tool_use_id="toolu_sample_3",
            error="Exit code 1\nFAILED test_hello.py::test_greets - AssertionError",
            is_interrupt=False,
        ),
        call(
            "PostToolUse",
            tool_name="Edit",
            tool_input={
                "file_path": hello,
                "old_string": '"hello"',
                "new_string": '"hello, world"',
                "replace_all": False,
            },
            tool_response={
                "filePath": hello,
                "oldString": '"hello"',
                "newString": '"hello, world"',
                "structuredPatch": [],
                "userModified": False,
                "replaceAll": False,
            },
            tool_use_id="toolu_sample_4",
        ),
        call(
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": 'git commit -am "Add hello module"', "description": "Commit"},
            tool_response={
                "stdout": "[main 1a2b3c4] Add hello module\n 1 file changed",
                "stderr": "",
                "interrupted": False,
                "isImage": False,
                "gitOperation": {"commit": {"sha": "1a2b3c4", "kind": "committed"}},
            },
            tool_use_id="toolu_sample_5",
        ),
        call(
            "Stop",
            stop_hook_active=False,
            last_assistant_message="Added hello.py, fixed the greeting and committed it.",
            background_tasks=[],
            session_crons=[],
        ),
        call("PreCompact", trigger="manual", custom_instructions=None),
        call("SessionStart", source="compact", model="claude-sonnet-4-5"),
        call("SessionEnd", reason="other"),
    ]


def verify(path: str, shell: Sequence[str] = ("sh", "-c")) -> proof.VerifyResult:
    """Run the ctxmode commands registered in ``path`` on :func:`sample_session`.

    Each command runs through ``sh -c`` as Claude Code runs it, with Claude Code's
    environment (``CLAUDE_PROJECT_DIR``), in a throwaway data root and project
    (:mod:`ctxmode.proof`); the real store is never touched.
    """
    # A version-gated event (claude_code.MIN_VERSIONS) is left out for older clients.
    required = [event for event, _, _ in claude_code.HOOKS if event not in claude_code.MIN_VERSIONS]
    commands, problem = proof.commands_in(path, read_text(os.path.realpath(path)), required)
    if problem:
        return proof.VerifyResult(problems=[problem])

    def env(home: str, project: str, scratch: str) -> dict[str, str]:
        values = proof.base_env(("CLAUDE_", "CLAUDECODE"))
        values.update(CTXMODE_HOME=home, CLAUDE_PROJECT_DIR=project)
        return values

    client = proof.Client(
        "Claude Code",
        shell,
        env,
        lambda project, scratch: [proof.Call(e, p) for e, p in sample_session(project)],
        speaks=("SessionStart", "UserPromptSubmit"),
        expect=("hello.py",),
    )
    return proof.run(commands, client)
