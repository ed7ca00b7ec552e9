"""What agents look up is stored (issue 28): every shell call with the head and tail of its
output, and what the agent sent outside, through the real hooks of every host.

Each new field is masked (a secret in the command, the output, a pull request's body or
a message never reaches the store, not even a piece of it where an excerpt was cut) and
bounded (a huge output or body costs a few hundred bytes).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ctxmode import paths
from ctxmode.extract.bash import OUTPUT_HEAD, OUTPUT_TAIL, SENT_CHARS
from ctxmode.extract.common import output_excerpt as excerpt_of
from tests.helpers import cli, hook_payload
from tests.hooktools import hook_env, run_hook

# Fake secrets of well-known shapes (GitHub, OpenAI, AWS): the masker knows them by
# structure; they are generated here, never real.
GH_TOKEN = "ghp_" + "R4nd0mT0k3nV4lu3x" * 2 + "AbCd"
OPENAI_KEY = "sk-proj-" + "Q7wErTyUiOpAsDfGhJkL" * 2
AWS_KEY = "AKIA" + "Z7Q2W8E4R6T1Y3U5"

SECRETS = (GH_TOKEN, OPENAI_KEY, AWS_KEY)


def stored(project: Path) -> list[dict[str, Any]]:
    """The events as the store file holds them, read with sqlite3 (not through a
    command, which could mask what it shows)."""
    path = paths.store_path(str(project), os.environ)
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT type, data FROM session_events ORDER BY id").fetchall()
    finally:
        conn.close()
    return [{"type": type_, "data": json.loads(data)} for type_, data in rows]


def of_type(rows: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [row["data"] for row in rows if row["type"] == kind]


def assert_no_secret(rows: list[dict[str, Any]]) -> None:
    text = json.dumps(rows)
    for secret in SECRETS:
        for start in range(len(secret) - 10 + 1):
            assert secret[start : start + 10] not in text, secret


def long_output(secret_line: int) -> str:
    """A build log of 400 lines with a secret on one of them and the summary at the end."""
    lines = [f"[{n:03d}] compiling module_{n}.ts" for n in range(400)]
    lines[secret_line] = f"[{secret_line:03d}] using token {GH_TOKEN} for the registry"
    lines[-1] = "Build finished: 400 modules, 0 errors, listening on port 4173"
    return "\n".join(lines)


def claude_bash(
    project: Path, command: str, stdout: str, stderr: str = "", **response: object
) -> None:
    payload = hook_payload(
        "PostToolUse",
        session_id="s1",
        cwd=str(project),
        tool_name="Bash",
        tool_use_id="toolu_1",
        tool_input={"command": command, "description": "run"},
        tool_response={
            "stdout": stdout,
            "stderr": stderr,
            "interrupted": False,
            "isImage": False,
            **response,
        },
    )
    proc = run_hook("PostToolUse", payload, env=hook_env(CLAUDE_PROJECT_DIR=str(project)))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


# ------------------------------------------------------------------ every host


def test_claude_code_shell_call_keeps_command_exit_and_output(project: Path) -> None:
    command = f"OPENAI_API_KEY={OPENAI_KEY} npm run build -- --mode production"
    # The secret is in the head the excerpt keeps: masked whole first, then cut.
    claude_bash(project, command, long_output(secret_line=3), stderr="warn: 1 deprecation")
    rows = stored(project)
    (call,) = of_type(rows, "shell_call")
    assert call["command"].startswith("OPENAI_API_KEY=[REDACTED")
    assert call["command"].endswith(" npm run build -- --mode production")
    assert call["exit"] == 0
    output = call["output"]
    assert output.startswith("[000] compiling module_0.ts\n")
    assert output.endswith("listening on port 4173\nwarn: 1 deprecation")
    assert "\n…\n" in output and len(output) <= OUTPUT_HEAD + OUTPUT_TAIL + 3
    assert_no_secret(rows)


def test_an_output_saved_to_a_file_says_where(project: Path) -> None:
    """Claude Code saves an output too large for the context to a file and hands over its
    first ~30 KB: the call keeps where the whole output is, and its size."""
    saved = f"{project}/.claude-home/projects/p/s1/tool-results/b4lrbihvg.txt"
    head = "\n".join(f"[{n:05d}] 20:58:00.914 iBeacon region entered" for n in range(700))
    claude_bash(
        project,
        "grep -E 'lock|Lock' app.log",
        head,
        persistedOutputPath=saved,
        persistedOutputSize=50084,
    )
    (call,) = of_type(stored(project), "shell_call")
    assert (call["saved"], call["bytes"]) == (saved, 50084)
    assert call["output"].startswith("[00000] 20:58:00.914 iBeacon")


def test_a_failed_claude_code_command_keeps_its_exit_code(project: Path) -> None:
    payload = hook_payload(
        "PostToolUseFailure",
        session_id="s1",
        cwd=str(project),
        tool_name="Bash",
        tool_use_id="toolu_2",
        tool_input={"command": f"curl -H 'Authorization: token {GH_TOKEN}' https://x/api"},
        error="Exit code 22\ncurl: (22) The requested URL returned error: 401",
        is_interrupt=False,
    )
    env = hook_env(CLAUDE_PROJECT_DIR=str(project))
    assert run_hook("PostToolUseFailure", payload, env=env).returncode == 0
    rows = stored(project)
    (call,) = of_type(rows, "shell_call")
    assert call["exit"] == 22
    assert call["output"] == "curl: (22) The requested URL returned error: 401"
    assert_no_secret(rows)


def test_codex_shell_call_has_no_exit_code_its_hook_cannot_tell(project: Path) -> None:
    from tests import test_host_codex as codex_tests  # here: see gemini_tests

    payload = codex_tests.moved(codex_tests.load("PostToolUse.Bash.json"), project, None)
    payload["tool_input"] = {"command": f"echo {AWS_KEY} && npm ls react"}
    payload["tool_response"] = long_output(secret_line=397)  # in the tail kept
    codex_tests.hook("PostToolUse", payload)
    rows = stored(project)
    (call,) = of_type(rows, "shell_call")
    assert "exit" not in call  # PostToolUse fires for failures too: the rollout tells
    assert call["command"].endswith("&& npm ls react") and AWS_KEY not in call["command"]
    assert call["output"].endswith("listening on port 4173")
    assert_no_secret(rows)


def test_gemini_shell_calls_keep_their_exit_codes(project: Path) -> None:
    # Imported here: the host tests import this module's corpus (tests/replies.py).
    from tests import test_host_gemini as gemini_tests

    ok = gemini_tests.moved(gemini_tests.load("AfterTool.run_shell_command.json"), project)
    gemini_tests.hook("AfterTool", ok, project)
    failed = gemini_tests.moved(
        gemini_tests.load("AfterTool.run_shell_command.exit3.json"), project
    )
    gemini_tests.hook("AfterTool", failed, project)
    calls = of_type(stored(project), "shell_call")
    assert calls == [
        {"command": "echo tour-ok", "exit": 0, "output": "tour-ok"},
        {"command": "echo tour-fail >&2; exit 3", "exit": 3, "output": "tour-fail"},
    ]


def test_every_hosts_shell_calls_are_searched_alike(project: Path) -> None:
    claude_bash(project, "npm run preview", "Local: http://localhost:4173/")
    from tests import test_host_codex as codex_tests  # here: see gemini_tests

    payload = codex_tests.moved(codex_tests.load("PostToolUse.Bash.json"), project, None)
    payload["tool_input"] = {"command": "cargo build --release"}
    payload["tool_response"] = "Finished release [optimized] target(s) in 41.2s"
    codex_tests.hook("PostToolUse", payload)
    # Imported here: the host tests import this module's corpus (tests/replies.py).
    from tests import test_host_gemini as gemini_tests

    ok = gemini_tests.moved(gemini_tests.load("AfterTool.run_shell_command.json"), project)
    gemini_tests.hook("AfterTool", ok, project)
    for query, command in (
        ("which port did preview use", "npm run preview"),
        ("how long did the release build take", "cargo build --release"),
        ("tour-ok", "echo tour-ok"),
    ):
        hits = json.loads(cli("search", "--project", str(project), "--json", query).output)
        assert json.loads(hits[0]["data"])["command"] == command, query


# ------------------------------------------------------------------ what the agent sent


def test_a_pull_request_body_is_kept_masked_and_bounded(project: Path) -> None:
    body = "## Summary\nRounds half cents up.\n\nDeploy with " + OPENAI_KEY + "\n" + "x" * 5000
    command = f'gh pr create --title "Fix rounding" --body "{body}" --base main'
    claude_bash(project, command, "https://github.com/o/r/pull/42\n")
    rows = stored(project)
    (sent,) = of_type(rows, "message_sent")
    assert sent["via"] == "gh pr create"
    assert sent["title"] == "Fix rounding"
    assert sent["text"].startswith("## Summary\nRounds half cents up.\n\nDeploy with [REDACTED")
    assert len(sent["text"]) <= SENT_CHARS
    (call,) = of_type(rows, "shell_call")
    assert call["output"] == "https://github.com/o/r/pull/42"
    assert all(len(json.dumps(row["data"])) <= 3000 for row in rows)
    assert_no_secret(rows)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ('gh pr comment 42 --body "LGTM after the fix"',
         {"via": "gh pr comment", "to": "42", "text": "LGTM after the fix"}),
        ("gh issue create -R o/r -t 'Crash on start' -b 'Steps: run it'",
         {"via": "gh issue create", "to": "o/r", "title": "Crash on start", "text": "Steps: run it"}),
        ("gh pr review 7 --approve --body=Nice",
         {"via": "gh pr review", "to": "7", "text": "Nice"}),
        ("glab mr note 12 -m 'rebased'", {"via": "glab mr note", "to": "12", "text": "rebased"}),
        ("gh pr create --fill", None),  # no text given: nothing sent to keep
        ("gh pr view 42 --comments", None),  # reads, sends nothing
    ],
)  # fmt: skip
def test_what_gh_sends(project: Path, command: str, expected: dict[str, str] | None) -> None:
    claude_bash(project, command, "")
    assert of_type(stored(project), "message_sent") == ([expected] if expected else [])


def test_a_message_sent_through_an_mcp_tool_is_kept_masked(project: Path) -> None:
    payload = hook_payload(
        "PostToolUse",
        session_id="s1",
        cwd=str(project),
        tool_name="mcp__slack__post_message",
        tool_use_id="toolu_3",
        tool_input={
            "channel": "#deploys",
            "text": f"Deployed v2.3 with key {AWS_KEY}" + "!" * 4000,
        },
        tool_response={"ok": True},
    )
    env = hook_env(CLAUDE_PROJECT_DIR=str(project))
    assert run_hook("PostToolUse", payload, env=env).returncode == 0
    rows = stored(project)
    (sent,) = of_type(rows, "message_sent")
    assert sent["via"] == "slack post_message" and sent["to"] == "#deploys"
    assert sent["text"].startswith("Deployed v2.3 with key [REDACTED") and len(sent["text"]) <= 2000
    assert of_type(rows, "mcp_call") == [
        {"server": "slack", "tool": "post_message", "args": ["channel", "text"]}
    ]
    assert_no_secret(rows)


def test_an_mcp_tool_that_sends_nothing_keeps_only_its_argument_names(project: Path) -> None:
    payload = hook_payload(
        "PostToolUse",
        session_id="s1",
        cwd=str(project),
        tool_name="mcp__db__query",
        tool_use_id="toolu_4",
        tool_input={"sql": "select * from users", "password": "hunter2hunter2"},
        tool_response="3 rows",
    )
    assert (
        run_hook("PostToolUse", payload, env=hook_env(CLAUDE_PROJECT_DIR=str(project))).returncode
        == 0
    )
    rows = stored(project)
    assert of_type(rows, "message_sent") == []
    assert "hunter2" not in json.dumps(rows) and "select" not in json.dumps(rows)


# ------------------------------------------------------------------ the excerpt


def output_excerpt(text: str) -> str:
    return excerpt_of(text, OUTPUT_HEAD, OUTPUT_TAIL)


def test_output_excerpt_head_and_tail_at_line_ends() -> None:
    assert output_excerpt("short\noutput\n") == "short\noutput"
    text = "\n".join(f"line {n:03d} " + "." * 20 for n in range(100))
    excerpt = output_excerpt(text)
    head, tail = excerpt.split("\n…\n")
    assert text.startswith(head) and text.endswith(tail)
    assert head.endswith("." * 20) and tail.startswith("line ")  # whole lines
    assert len(head) <= OUTPUT_HEAD and len(tail) <= OUTPUT_TAIL


def test_output_excerpt_never_splits_a_mask() -> None:
    mask = "[REDACTED:github-token]"
    text = "a" * (OUTPUT_HEAD - 5) + mask + "b" * 2000 + mask + "c" * (OUTPUT_TAIL - 10)
    head, tail = output_excerpt(text).split("\n…\n")
    assert "[REDACTED" not in head or mask in head
    assert "REDACTED" not in tail or mask in tail
