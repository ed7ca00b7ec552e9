"""Regenerate ctxmode/data/bench_payloads.json from the Claude Code 2.1.197 fixtures.

Run by hand (``python3 benchmarks/make_bench_payloads.py``) when the fixtures change.
The installed package cannot read tests/fixtures, so ``ctxmode bench`` ships the
shapes it needs. Placeholders, filled in per run by ctxmode.bench: ``@PROJECT@``
(the throwaway project directory), ``@SESSION@`` (the session id) and ``@N@`` (a
number unique to the call, so that no two calls are deduplicated by the store).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "claude-code-2.1.197"
OUT = REPO / "ctxmode" / "data" / "bench_payloads.json"
FIXTURE_PROJECT = "/home/dev/proj"
FIXTURE_SESSIONS = (
    "54a54534-123d-48d0-8d54-13291b1891fa",
    "95a83197-84f6-49bb-bcf9-43c8a50593d9",
    "182c53c4-a9da-47f7-ac9e-9bdc0d46c0b1",
    "4d3360dc-aa9a-4122-89b1-f5689080a7f7",
    "be62f06e-3459-4a0d-8f2b-6d7550942861",
)
TRANSCRIPT = "/home/dev/.claude/projects/-home-dev-proj/@SESSION@.jsonl"

# A source file of ~4 KB, about what a Read of a small module returns.
MODULE = "".join(
    f"def line_total_{i}(quantity: int, unit_price: float) -> float:\n"
    f'    """Total of invoice line {i}, rounded half-up to cents."""\n'
    f"    return round(quantity * unit_price + 0.0000001, 2)\n\n\n"
    for i in range(24)
)
# ~2 KB of pytest output, the usual stdout of a Bash test run.
PYTEST_OUT = (
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.11.7, pytest-8.2.0, pluggy-1.5.0\n"
    "rootdir: @PROJECT@\ncollected 24 items\n\n"
    + "".join(
        f"tests/test_invoice_{i}.py ....                                        [ {i * 4:>2}%]\n"
        for i in range(1, 25)
    )
    + "\n============================== 24 passed in 0.41s ==============================\n"
)


# The summary a PostCompact carries: a real one's shape (analysis, then the nine numbered
# parts), about this session's work, so coverage has key items to find in it.
COMPACT_SUMMARY = '<analysis>\nThe conversation covered the rounding fix and the CSV export.\n</analysis>\n<summary>\n1. Primary Request and Intent: The user asked to fix invoice totals that were off by a cent, then to check the CSV export.\n2. Key Technical Concepts: Decimal, half-up rounding, CSV export.\n3. Files and Code Sections: src/invoice/rounding.py (round half-up with Decimal); tests/test_rounding.py (new tests).\n4. Errors and fixes: pytest tests/test_export.py -q failed: the CSV total column showed 10.004.\n5. All user messages: "Invoice totals are off by a cent; fix the rounding." "Now check the CSV export total column as well."\n6. Pending Tasks: Add tests for the .005 cases.\n7. Current Work: committed 3f9c2ab Round invoice totals half-up with Decimal.\n8. Next Step: fix the CSV export total column.\n</summary>'

# What Claude Code 2.1.197 sends a status line command (its documented fields), with the
# context window 71% used.
STATUS_LINE = {
    "session_id": "@SESSION@",
    "transcript_path": "/home/dev/.claude/projects/-home-dev-proj/@SESSION@.jsonl",
    "cwd": "@PROJECT@",
    "prompt_id": "684c342a-ea78-4e5b-8062-ff559f43d4ac",
    "model": {"id": "claude-opus-4-8", "display_name": "Opus 4.8"},
    "workspace": {"current_dir": "@PROJECT@", "project_dir": "@PROJECT@", "added_dirs": []},
    "version": "2.1.197",
    "output_style": {"name": "default"},
    "cost": {
        "total_cost_usd": 0.4182,
        "total_duration_ms": 91234,
        "total_api_duration_ms": 40211,
        "total_lines_added": 120,
        "total_lines_removed": 31,
    },
    "context_window": {
        "total_input_tokens": 142210,
        "total_output_tokens": 812,
        "context_window_size": 200000,
        "current_usage": {
            "input_tokens": 3,
            "output_tokens": 812,
            "cache_creation_input_tokens": 1207,
            "cache_read_input_tokens": 141000,
        },
        "used_percentage": 71,
        "remaining_percentage": 29,
    },
    "exceeds_200k_tokens": False,
    "fast_mode": False,
    "thinking": {"enabled": True},
}


def load(name: str) -> dict:
    payload = json.loads((FIXTURES / name).read_text())["payload"]
    text = json.dumps(payload)
    for session in FIXTURE_SESSIONS:
        text = text.replace(session, "@SESSION@")
    text = text.replace(FIXTURE_PROJECT, "@PROJECT@")
    payload = json.loads(text)
    payload["transcript_path"] = TRANSCRIPT
    payload.pop("duration_ms", None)
    return payload


def build() -> dict:
    edit = load("PostToolUse.Edit.json")
    path = "@PROJECT@/src/invoice_@N@.py"
    edit["tool_input"].update(
        file_path=path, old_string="round(total, 2)", new_string="round(total + 1e-9, 2)"
    )
    edit["tool_response"].update(
        filePath=path,
        oldString="round(total, 2)",
        newString="round(total + 1e-9, 2)",
        originalFile=MODULE.replace("0.0000001", "total"),
    )
    edit["tool_response"]["structuredPatch"][0]["lines"] = [
        "-    return round(total, 2)",
        "+    return round(total + 1e-9, 2)",
    ]
    edit["tool_use_id"] = "toolu_bench_edit_@N@"

    read = load("more/PostToolUse.Read.text.json")
    read["tool_input"]["file_path"] = "@PROJECT@/src/ledger_@N@.py"
    read["tool_response"]["file"].update(
        filePath="@PROJECT@/src/ledger_@N@.py",
        content=MODULE,
        numLines=MODULE.count("\n"),
        totalLines=MODULE.count("\n"),
    )
    read["tool_use_id"] = "toolu_bench_read_@N@"

    bash = load("PostToolUse.Bash.json")
    bash["tool_input"] = {
        "command": "python -m pytest tests/test_invoice_@N@.py -q",
        "description": "Run the invoice tests",
    }
    bash["tool_response"]["stdout"] = PYTEST_OUT
    bash["tool_use_id"] = "toolu_bench_bash_@N@"

    failure = load("PostToolUseFailure.Bash.json")
    failure["tool_input"] = {
        "command": "python -m pytest tests/test_invoice_@N@.py -q",
        "description": "Run the invoice tests",
    }
    failure["error"] = (
        "Exit code 1\n"
        + PYTEST_OUT.split("collected")[0]
        + "FAILED tests/test_invoice_@N@.py::test_rounding - AssertionError: "
        "assert 10.0 == 10.01\n========================= 1 failed, 23 passed in 0.44s "
        "========================="
    )
    failure["tool_use_id"] = "toolu_bench_fail_@N@"

    prompt = load("UserPromptSubmit.json")
    prompt["prompt"] = (
        "The invoice totals are off by a cent for case @N@: fix the rounding "
        "in src/invoice_@N@.py, add a regression test and run the suite."
    )

    write = load("PostToolUse.Write.json")
    write["tool_input"].update(file_path="@PROJECT@/src/export_@N@.py", content=MODULE)
    write["tool_response"].update(filePath="@PROJECT@/src/export_@N@.py", content=MODULE)
    write["tool_use_id"] = "toolu_bench_write_@N@"

    task = load("more/PostToolUse.TaskCreate.first.json")
    task["tool_input"]["subject"] = "Export invoice batch @N@ as CSV"
    task["tool_response"]["task"] = {"id": "@N@", "subject": "Export invoice batch @N@ as CSV"}
    task["tool_use_id"] = "toolu_bench_task_@N@"

    update = load("more/PostToolUse.TaskUpdate.completed.json")
    update["tool_input"]["taskId"] = "@N@"
    update["tool_response"]["taskId"] = "@N@"
    update["tool_use_id"] = "toolu_bench_update_@N@"

    grep = load("more/PostToolUse.Grep.content.json")
    grep["tool_input"]["pattern"] = "TODO\\(@N@\\)"
    grep["tool_use_id"] = "toolu_bench_grep_@N@"

    commit = load("PostToolUse.Bash.json")
    commit["tool_input"] = {
        "command": "git commit -am 'Fix invoice rounding, case @N@'",
        "description": "Commit the fix",
    }
    commit["tool_response"]["stdout"] = (
        "[main 4f2a@N@] Fix invoice rounding, case @N@\n"
        " 2 files changed, 14 insertions(+), 3 deletions(-)"
    )
    commit["tool_use_id"] = "toolu_bench_commit_@N@"

    pre_compact = load("PreCompact.auto.json")
    session_start = load("SessionStart.compact.json")
    startup = load("SessionStart.startup.json")
    startup["session_id"] = "bench-startup-@N@"
    startup["transcript_path"] = TRANSCRIPT.replace("@SESSION@", "bench-startup-@N@")
    end = load("SessionEnd.other.json")
    post_compact = load("PostCompact.auto.json")
    post_compact["cwd"] = "@PROJECT@"
    post_compact["compact_summary"] = COMPACT_SUMMARY
    stop = load("Stop.json")
    # A real transcript to read the turn's notes from (the bundled 2.1.332 session).
    stop["transcript_path"] = "@TRANSCRIPT@"
    stop["last_assistant_message"] = (
        "Done (@N@): invoice totals now round half-up with Decimal; tests/test_rounding.py "
        "covers the .005 cases."
    )

    return {
        "_comment": "Generated by benchmarks/make_bench_payloads.py from the Claude Code "
        "2.1.197 fixtures; placeholders @PROJECT@, @SESSION@, @N@, @TRANSCRIPT@ (see "
        "ctxmode.bench).",
        "payloads": {
            "edit": edit,
            "read": read,
            "bash": bash,
            "failure": failure,
            "prompt": prompt,
            "write": write,
            "task": task,
            "task_update": update,
            "grep": grep,
            "commit": commit,
            "pre_compact": pre_compact,
            "session_start_compact": session_start,
            "post_compact": post_compact,
            "stop": stop,
            "session_start_startup": startup,
            "session_end": end,
            "statusline": STATUS_LINE,
            **codex_payloads(),
        },
        # The mix used to seed the 1,000-event session (tool calls dominate, as they do).
        "seed": [
            "edit",
            "read",
            "bash",
            "read",
            "grep",
            "edit",
            "failure",
            "bash",
            "prompt",
            "write",
            "task",
            "commit",
            "read",
            "task_update",
            "edit",
        ],
    }


def codex_payloads() -> dict[str, dict[str, object]]:
    """The Codex CLI's shapes (tests/fixtures/codex-0.169.0): a shell call with its output
    as a string, a patch, a prompt; their rollout file is the one ctxmode.bench writes."""
    base: dict[str, object] = {
        "session_id": "@SESSION@",
        "turn_id": "01a23a9c-afd8-7e31-925e-c8b9cc83f60f",
        "transcript_path": "@PROJECT@/.codex-rollout.jsonl",
        "cwd": "@PROJECT@",
        "model": "gpt-5.5",
        "permission_mode": "bypassPermissions",
    }
    passed = "".join(f"tests/test_ledger_@N@.py::test_case_{i} PASSED\n" for i in range(40))
    patch = (
        "*** Begin Patch\n*** Update File: src/ledger_@N@.py\n@@\n-    total = 0\n"
        "+    total = Decimal(0)\n*** End Patch"
    )
    return {
        "codex_bash": base
        | {
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "python -m pytest tests/test_ledger_@N@.py -q"},
            "tool_response": passed + "40 passed in 0.31s\n",
            "tool_use_id": "call_bash_@N@",
        },
        "codex_patch": base
        | {
            "hook_event_name": "PostToolUse",
            "tool_name": "apply_patch",
            "tool_input": {"command": patch},
            "tool_response": "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated "
            "the following files:\nM src/ledger_@N@.py\n",
            "tool_use_id": "call_patch_@N@",
        },
        "codex_prompt": base
        | {
            "hook_event_name": "UserPromptSubmit",
            "prompt": "Now make the ledger totals exact (@N@) and rerun the tests.",
        },
    }


if __name__ == "__main__":
    if sys.argv[1:]:
        sys.exit(f"usage: {sys.argv[0]} (no arguments): rewrites {OUT.relative_to(REPO)}")
    OUT.write_text(json.dumps(build(), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")
