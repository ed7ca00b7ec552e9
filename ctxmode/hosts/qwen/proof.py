"""``ctxmode install --host qwen --verify``: the proof run as Qwen Code makes the calls.

The common part is :mod:`ctxmode.proof`; here is what is Qwen's, as 0.24.4 was seen to do it
(``tests/fixtures/qwen-code-0.24.4/``):

- the shell: a hook's command runs through ``bash -c`` in the session's cwd;
- the environment: the CLI's own, plus ``QWEN_PROJECT_DIR``, ``CLAUDE_PROJECT_DIR`` (the
  folder qwen started in) and ``QWEN_CODE_SESSION_ID``;
- the payloads: Claude Code's envelope with Qwen's tools — ``write_file``/``edit`` with
  ``{llmContent, returnDisplay{fileDiff, filePath}}``, ``run_shell_command`` whose failure is
  a ``PostToolUseFailure`` with Qwen's text (``Exit Code: 2``), ``UserPromptSubmit`` again
  with ``prompt: ""`` after each tool batch;
- the compaction (``qwen --continue "/compress"``): PreCompact, PostCompact with the summary,
  SessionStart ``compact`` — whose context would live in that process's system prompt
  only — then ``resume`` in the next run, whose first prompt hands the snapshot over, as
  an outline (Qwen escapes angle brackets).

CLI-only: never imported by a hook.
"""

from __future__ import annotations

import json
import os

from ctxmode import proof, settings
from ctxmode.hosts import qwen

SESSION = "4a4bfa37-cc6e-4923-bb81-bfc19fc9d011"
MODEL = "qwen3-coder-plus"
FAILING = "python3 tests/test_reconcile.py"
FILE = "src/ledger/reconcile.py"
COMMIT = "git add -A && git commit -q -m 'Reconcile ledger totals'"
ROOT = "session_resume "  # how the outline's first line starts


def shell() -> tuple[str, ...]:
    return ("bash", "-c") if os.path.exists("/bin/bash") else ("sh", "-c")


def environment(home: str, project: str, scratch: str) -> dict[str, str]:
    env = proof.base_env(("CLAUDE_", "CLAUDECODE", "CODEX_", "GEMINI_", "QWEN_"))
    env.update(
        CTXMODE_HOME=home,
        QWEN_PROJECT_DIR=project,
        CLAUDE_PROJECT_DIR=project,
        QWEN_CODE_SESSION_ID=SESSION,
        QWEN_CODE_NO_RELAUNCH="true",
    )
    return env


def _shell_text(command: str, output: str, code: int) -> str:
    return (
        f"Command: {command}\nDirectory: (root)\nOutput: {output}\nError: (none)\n"
        f"Exit Code: {code}\nSignal: (none)\nProcess Group PGID: (none)"
    )


def sample_session(project: str, scratch: str) -> list[proof.Call]:
    """A short ledger session in Qwen 0.24.4's shapes: a file written and edited, a test run
    that fails (exit 2), a commit, the turn's reply (Stop), ``/compress``, and the next run's
    first prompt."""
    chats = os.path.join(scratch, "qwen", "projects", "-project", "chats")
    base = {
        "session_id": SESSION,
        "transcript_path": os.path.join(chats, f"{SESSION}.jsonl"),
        "cwd": project,
        "permission_mode": "yolo",
        "timestamp": "2026-12-06T03:55:01.944Z",
    }
    path = os.path.join(project, FILE)

    def call(event: str, **fields: object) -> proof.Call:
        return proof.Call(event, {**base, "hook_event_name": event, **fields})

    def tool(name: str, args: dict[str, object], response: dict[str, object]) -> proof.Call:
        return call("PostToolUse", tool_name=name, tool_input=args, tool_response=response)

    code = "def reconcile(entries):\n    return round(sum(entries), 2)\n"
    written = f"--- reconcile.py\tOriginal\n+++ reconcile.py\tWritten\n@@ -0,0 +1,2 @@\n+{code}"
    missing = f"python3: can't open file '{project}/tests/test_reconcile.py': [Errno 2]"
    return [
        call("SessionStart", source="startup", model=MODEL),
        call("UserPromptSubmit", prompt="please fix the ledger module"),
        tool(
            "write_file",
            {"file_path": path, "content": code},
            {
                "llmContent": f"Successfully created and wrote to new file: {path}.",
                "returnDisplay": {"fileDiff": written, "filePath": path, "originalContent": ""},
            },
        ),
        call("UserPromptSubmit", prompt=""),
        tool(
            "edit",
            {"file_path": path, "old_string": "2)", "new_string": "2) or 0.0"},
            {
                "llmContent": f"The file: {path} has been updated.",
                "returnDisplay": {"fileDiff": "@@ -2 +2 @@\n-a\n+b\n", "filePath": path},
            },
        ),
        call(
            "PostToolUseFailure",
            tool_name="run_shell_command",
            tool_input={"command": FAILING, "description": "run the tests"},
            error=_shell_text(FAILING, missing, 2),
            is_interrupt=False,
        ),
        tool(
            "run_shell_command",
            {"command": COMMIT, "description": "commit"},
            {"llmContent": _shell_text(COMMIT, "(empty)", 0), "returnDisplay": ""},
        ),
        call("UserPromptSubmit", prompt=""),
        # The turn ends: Stop hands over the text it ended with (prints nothing).
        call(
            "Stop",
            prompt_id=f"{SESSION}########0",
            stop_hook_active=False,
            last_assistant_message="The module is written and committed; its test file is missing.",
            background_tasks=[],
            crons=[],
            context_usage=0.3,
            context_limit=200000,
            input_tokens=60000,
        ),
        # `qwen --continue "/compress"`
        call("SessionStart", source="resume", model=MODEL),
        call("PreCompact", trigger="manual", custom_instructions=""),
        call("PostCompact", trigger="manual", compact_summary="The ledger module was fixed."),
        call("SessionStart", source="compact", model=MODEL),
        # `qwen --continue "what is left?"`: its prompt carries the snapshot.
        call("SessionStart", source="resume", model=MODEL),
        call("UserPromptSubmit", prompt="what is left to do?"),
        call("UserPromptSubmit", prompt=""),
    ]


def snapshot_of(stdout: bytes) -> str | None:
    """The snapshot a UserPromptSubmit's stdout hands over (None: not one)."""
    try:
        context = json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        return None
    return context if isinstance(context, str) else None


def check_outline(text: str) -> tuple[str | None, int]:
    """(None, its size) when ``text`` is the snapshot's outline: it starts with its root's
    line and holds no angle bracket that Qwen would escape in its structure."""
    if not text.startswith(ROOT):
        return "no snapshot outline was handed over (it starts otherwise)", 0
    if "<session_resume" in text or "</" in text:
        return "the snapshot was handed over as XML, which Qwen escapes", 0
    size = len(text.encode("utf-8"))
    if size > 10_000:
        return f"the snapshot outline is {size} bytes (over 10,000)", size
    return None, size


def verify(path: str) -> proof.VerifyResult:
    """Run the ctxmode commands registered in the Qwen settings file ``path`` on
    :func:`sample_session`, as Qwen runs them, in a throwaway data root and project."""
    try:
        with open(os.path.realpath(path), encoding="utf-8") as fh:
            text: str | None = fh.read()
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError) as exc:
        return proof.VerifyResult(problems=[f"cannot read {path}: {exc}"])
    try:
        commands, problem = proof.commands_in(path, text, [e for e, _, _ in qwen.HOOKS])
    except settings.SettingsError as exc:
        return proof.VerifyResult(problems=[f"{path}: {exc}"])
    if problem:
        return proof.VerifyResult(problems=[problem])
    client = proof.Client(
        "Qwen Code",
        shell(),
        environment,
        sample_session,
        speaks=qwen.CONTEXT_EVENTS,
        # The written file, the commit, and the failed run.
        expect=(FILE, "Reconcile ledger totals", FAILING),
        delivers="UserPromptSubmit",
        snapshot_of=snapshot_of,
        checks_text=check_outline,
    )
    return proof.run(commands, client)
