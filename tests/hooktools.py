"""Run the hook scripts the way Claude Code does: a fresh process, stdin, sh -c."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# The real hook payloads of the Claude Code version the suite is verified with, recorded by
# scripts/record_fixtures.py and kept in the repository (see tests/fixtures/README.md).
CLIENT_VERSION = "2.1.197"
FIXTURES = REPO / "tests" / "fixtures" / f"claude-code-{CLIENT_VERSION}"
SHIMS = {
    "PostToolUse": "post_tool_use.py",
    "PostToolUseFailure": "post_tool_use_failure.py",
    "UserPromptSubmit": "user_prompt_submit.py",
    "PreCompact": "pre_compact.py",
    "SessionStart": "session_start.py",
    "SessionEnd": "session_end.py",
    "PostCompact": "post_compact.py",
    "Stop": "stop.py",
}


def hook_command(event: str, python: str = sys.executable, host: str | None = None) -> list[str]:
    """The hook's argv; ``host`` names the client (``--host codex``; None: Claude Code)."""
    argv = [python, "-I", "-S", str(REPO / "ctxmode" / "hooks" / SHIMS[event])]
    return [*argv, "--host", host] if host else argv


def hook_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CLAUDECODE"))}
    env.update(extra)
    return env


def run_hook(
    event: str,
    stdin: bytes | str | dict[str, Any],
    *,
    env: dict[str, str] | None = None,
    timeout: float = 30,
    host: str | None = None,
) -> subprocess.CompletedProcess[bytes]:
    if isinstance(stdin, dict):
        stdin = json.dumps(stdin)
    if isinstance(stdin, str):
        stdin = stdin.encode()
    return subprocess.run(
        hook_command(event, host=host),
        input=stdin,
        capture_output=True,
        env=env if env is not None else hook_env(),
        timeout=timeout,
        check=False,
    )


def start_hook(
    event: str, stdin: bytes, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        hook_command(event),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env if env is not None else hook_env(),
    )
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    return proc


def load_fixture(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())["payload"]


def stream(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
