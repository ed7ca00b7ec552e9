"""What a call printed that no event held, or held without the line asked about (issue 28,
eighth round).

Each rule comes from a class of blind questions whose answer was stored nowhere: the line
of a long output that names an error by its code only (``ERR_PNPM_EBUSY``, ``EADDRINUSE``)
or that a wrapper's lines crowded out (every line of ``pnpm -r`` names ``pnpm``); a log or
a background task's output the agent read with the Read tool; the middle and the end of a
long prompt (a pasted log, the question after it); what an MCP tool answered; and the
client's word that a background command or agent ended. Every new field is checked masked
(a secret planted in it never reaches the store) and bounded.

Hook payloads run through the installed hook command; transcripts through ``ctxmode
import``. The shapes are the recorded ones (``tests/fixtures/claude-code-2.1.197/``: Read,
MCP, UserPromptSubmit) and those of public Claude Code 2.0.x and 2.1.x transcripts
(``<bash-notification>``, ``<task-notification>``), reduced to the fields read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxmode.extract.bash import OUTPUT_HEAD, OUTPUT_MIDDLE, OUTPUT_TAIL, command_keys
from tests.helpers import hook_payload
from tests.hooktools import hook_env, run_hook
from tests.test_recall_rules import assert_kept, build_output, claude_call
from tests.test_shell_calls import GH_TOKEN, OPENAI_KEY, assert_no_secret, of_type, stored
from tests.test_turn_notes import record
from tests.test_user_commands import imported, write

# ------------------------------------------------------------------ error codes, programs


def test_an_error_named_by_its_code_only_is_kept_from_the_middle(project: Path) -> None:
    """No "error" in the line: an errno name or an ``ERR_`` code says it."""
    lines = [
        " ERR_PNPM_EBUSY  EBUSY: resource busy or locked, rename 'C:\\w\\node_modules\\.pnpm\\x'",
        "Error: listen EADDRINUSE: address already in use :::3000",
    ]
    assert_kept(project, "pnpm install", lines)


def test_a_refusal_without_the_word_error_is_kept_from_the_middle(project: Path) -> None:
    """What git, a browser driver and a command-line parser print when they refuse: no
    "error" in the line, and it is the reason the step failed."""
    lines = [
        " ! [rejected]        main -> main (fetch first)",
        "page.goto: Timeout 30000ms exceeded.",
        "ps: unrecognized option: a",
        "Operation aborted by the user",
    ]
    assert_kept(project, "git push && node check.mjs && ps -a", lines)


def test_a_wrappers_lines_do_not_crowd_out_the_compilers(project: Path) -> None:
    """Every line a workspace runner prints names the program (``pnpm``), and a few name
    the failure again; the compiler's own errors, which say what is wrong, are kept."""
    wrapper = [
        f"@app/{app}:typecheck: ERROR: command finished with error: command (C:\\app\\apps\\"
        f"{app}) C:\\Users\\me\\AppData\\Local\\pnpm\\.tools\\pnpm\\9.15.0\\bin\\pnpm.CMD run "
        "typecheck exited (2)"
        for app in ("web", "mobile", "admin")
    ]
    compiler = [
        f"@app/web:typecheck: src/{name}.tsx(1,48): error TS6059: File 'C:/app/packages/shared/"
        f"src/{name}.ts' is not under 'rootDir' 'C:/app/apps/web/src'."
        for name in ("App", "index", "client", "types")
    ]
    output = build_output(project, "cd C:/app && pnpm typecheck --force 2>&1", compiler + wrapper)
    for line in compiler:
        assert line in output, line
    assert len(output.split("\n…\n")[1]) <= OUTPUT_MIDDLE


def test_a_programs_name_is_no_key_to_its_output() -> None:
    """The words a command's output is searched for: not its programs (the first word of
    each command on the line, after any variable set for it), nor shell words."""
    assert command_keys("cd C:/app && pnpm typecheck --force 2>&1") == ("C:/app", "typecheck")
    assert command_keys("NODE_ENV=test pnpm jest auth.spec.ts | tail -40") == (
        "jest",
        "auth.spec.ts",
    )
    assert command_keys("grep -rn parseConfig src; make build") == ("parseConfig", "build")


# ------------------------------------------------------------------ a log read


def read_payload(project: Path, path: str, content: str) -> dict[str, Any]:
    """A Read's PostToolUse payload, as Claude Code 2.1.197 sends it."""
    return hook_payload(
        "PostToolUse",
        session_id="s1",
        cwd=str(project),
        tool_name="Read",
        tool_use_id="toolu_read",
        tool_input={"file_path": path},
        tool_response={
            "type": "text",
            "file": {
                "filePath": path,
                "content": content,
                "numLines": content.count("\n") + 1,
                "startLine": 1,
                "totalLines": content.count("\n") + 1,
            },
        },
    )


def server_log(middle: list[str]) -> str:
    lines = [f"GET /api/items?page={n} 200 in {n % 40 + 3}ms" for n in range(200)]
    lines[100:100] = middle
    return "\n".join(lines)


def test_a_log_read_keeps_its_error_lines_masked(project: Path) -> None:
    """A log (a background task's output, a server's log) read with the Read tool is what
    a command printed: its head, its tail and the error lines from between, masked."""
    middle = [
        "Error: Can't resolve 'tailwindcss' in '/srv/app'",
        f"retrying with OPENAI_API_KEY={OPENAI_KEY}",
    ]
    path = "/tmp/claude-501/-srv-app/tasks/b75f1d4.output"
    payload = read_payload(project, path, server_log(middle))
    proc = run_hook("PostToolUse", payload, env=hook_env(CLAUDE_PROJECT_DIR=str(project)))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    rows = stored(project)
    (read,) = of_type(rows, "file_read")
    excerpt = read["excerpt"]
    assert "Error: Can't resolve 'tailwindcss' in '/srv/app'" in excerpt
    assert excerpt.startswith("GET /api/items?page=0 ") and excerpt.endswith("page=199 200 in 42ms")
    head, kept, tail = excerpt.split("\n…\n")
    assert len(head) <= OUTPUT_HEAD and len(tail) <= OUTPUT_TAIL and len(kept) <= OUTPUT_MIDDLE
    assert_no_secret(rows)


def test_a_source_file_read_keeps_the_short_excerpt(project: Path) -> None:
    """A source file is not an output: its excerpt stays the head and tail it was."""
    payload = read_payload(project, str(project / "server.py"), server_log(["Error: x"]))
    run_hook("PostToolUse", payload, env=hook_env(CLAUDE_PROJECT_DIR=str(project)))
    (read,) = of_type(stored(project), "file_read")
    assert "Error: x" not in read["excerpt"] and len(read["excerpt"]) <= 420


# ------------------------------------------------------------------ a long prompt


def test_a_long_prompt_keeps_its_question_and_the_pasted_error(project: Path) -> None:
    log = "\n".join(
        f'INFO: 10.0.0.{n % 250}:5{n:04d} - "GET /auth/me HTTP/1.1" 200 OK' for n in range(60)
    )
    text = (
        f"look at the server terminal:\n{log}\n"
        "OSError: org/llama-3.1-8b-instruct-awq is not a local folder and is not a valid model "
        f"identifier (token {GH_TOKEN})\n{log}\nwhy does the client say the HF token is missing?"
    )
    payload = hook_payload("UserPromptSubmit", session_id="s1", cwd=str(project), prompt=text)
    proc = run_hook("UserPromptSubmit", payload, env=hook_env(CLAUDE_PROJECT_DIR=str(project)))
    assert (proc.returncode, proc.stderr) == (0, b"")
    rows = stored(project)
    (prompt,) = of_type(rows, "user_prompt")
    kept = prompt["text"]
    assert "OSError: org/llama-3.1-8b-instruct-awq is not a local folder" in kept
    assert kept.endswith("why does the client say the HF token is missing?")
    assert len(kept) <= 1500
    assert_no_secret(rows)


# ------------------------------------------------------------------ an MCP tool's answer


def test_what_an_mcp_tool_answered_is_kept_masked_and_bounded(project: Path) -> None:
    answer = json.dumps(
        {"ok": False, "code": "INIT_KERNEL_500", "detail": "DISPATCH_MAP has no init_anchor entry",
         "session": f"bearer {GH_TOKEN}", "trace": ["frame"] * 3000}
    )  # fmt: skip
    claude_call(
        project,
        "mcp__kernel__init",
        {"actor_id": "claude-code", "intent": "map the pipeline"},
        [{"type": "text", "text": answer}],
    )
    rows = stored(project)
    (call,) = of_type(rows, "mcp_call")
    assert call["args"] == ["actor_id", "intent"]
    assert "DISPATCH_MAP has no init_anchor entry" in call["output"]
    assert len(call["output"]) <= 1400
    assert "map the pipeline" not in json.dumps(rows)  # argument values still are not kept
    assert_no_secret(rows)


# ------------------------------------------------------------------ background work ended


def notice(n: int, cwd: str, body: str, tag: str = "task-notification") -> dict[str, Any]:
    return record("user", f"<{tag}>\n{body}\n</{tag}>", n, cwd)


def test_an_imported_notification_ends_the_work_and_keeps_the_report(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    cwd = str(project)
    report = (
        f"Nginx is configured. The API key {OPENAI_KEY} was left in /etc/app.env.\n"
        + "\n".join(f"step {n}: ok" for n in range(80))
        + "\nFAILED: certbot could not reach the ACME server\nRemaining: enable the site."
    )
    path = write(
        tmp_path,
        [
            record("user", "set up nginx in the background", 0, cwd),
            notice(
                1,
                cwd,
                "<task-id>a6e70b749f8db1422</task-id>\n<status>completed</status>\n"
                f'<summary>Agent "Nginx setup" completed</summary>\n<result>{report}</result>',
            ),
            notice(
                2,
                cwd,
                "<shell-id>b6fe28a</shell-id>\n<status>failed</status>\n<summary>Background "
                'command "Start Hugo development server" failed with exit code 137.</summary>',
                tag="bash-notification",
            ),
        ],
    )
    rows = imported(path, project)
    ends = {row["id"]: row for row in of_type(rows, "job_end")}
    assert ends["b6fe28a"]["what"].endswith("failed with exit code 137.")
    agent = ends["a6e70b749f8db1422"]
    assert (agent["status"], agent["what"]) == ("completed", 'Agent "Nginx setup" completed')
    assert "FAILED: certbot could not reach the ACME server" in agent["result"]
    assert agent["result"].endswith("Remaining: enable the site.")
    assert len(agent["result"]) <= 2700
    # Neither is a request of the person's.
    assert [p["text"] for p in of_type(rows, "user_prompt")] == ["set up nginx in the background"]
