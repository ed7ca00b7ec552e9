"""The newer Claude Code tools (2.1.3xx) → worktree moves and open work, from real payloads.

The payloads are Claude Code 2.1.332's, recorded by ``scripts/record_tools.py --payloads``
(``tests/fixtures/claude-code-2.1.332/tools/``): a session that enters a new worktree and an
existing one, schedules a cron job, a wake-up and a monitor, starts a workflow and a
background agent, messages an agent, stops the monitor and deletes the cron job.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxmode import payload
from ctxmode.extract import extract
from ctxmode.hosts import codex
from ctxmode.snapshot import build_snapshot
from tests.helpers import extracted, extracted_fixture

NEW = "../claude-code-2.1.332/tools/"
STREAM = Path(__file__).parent / "fixtures" / "claude-code-2.1.332" / "tools" / "stream.jsonl"
HOME = "/home/dev"

CASES: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = [
    (
        "PostToolUse.EnterWorktree.named.json",
        [
            (
                "worktree_change",
                {
                    "path": f"{HOME}/proj/.claude/worktrees/fix-login",
                    "via": "enter",
                    "branch": "worktree-fix-login",
                    "created": True,
                },
            )
        ],
    ),
    (
        "PostToolUse.EnterWorktree.path.json",
        [
            (
                "worktree_change",
                {"path": f"{HOME}/proj-hotfix", "via": "enter", "branch": "hotfix/login"},
            )
        ],
    ),
    (
        "PostToolUse.ExitWorktree.keep.json",
        [
            (
                "worktree_change",
                {
                    "path": f"{HOME}/proj",
                    "via": "exit",
                    "left": f"{HOME}/proj/.claude/worktrees/fix-login",
                    "left_branch": "worktree-fix-login",
                },
            )
        ],
    ),
    (
        "PostToolUse.CronCreate.cron.json",
        [
            (
                "job_start",
                {
                    "kind": "cron",
                    "id": "<cron id>",
                    "what": "check the deploy status",
                    "schedule": "Every 5 minutes",
                },
            )
        ],
    ),
    (
        "PostToolUse.CronDelete.cron_delete.json",
        [("job_end", {"kind": "cron", "id": "<cron id>", "status": "deleted"})],
    ),
    (
        "PostToolUse.ScheduleWakeup.wake.json",
        [
            (
                "job_start",
                {
                    "kind": "wakeup",
                    "id": "wakeup",
                    "what": "/loop check CI",
                    "schedule": "in 1200 s",
                    "reason": "wait for CI",
                },
            )
        ],
    ),
    (
        "PostToolUse.ScheduleWakeup.wake_stop.json",
        [("job_end", {"kind": "wakeup", "id": "wakeup", "status": "stopped"})],
    ),
    (
        "PostToolUse.Monitor.monitor.json",
        [
            (
                "job_start",
                {
                    "kind": "monitor",
                    "id": "<monitor id>",
                    "what": "watch the build log",
                    "command": "tail -f build.log",
                },
            )
        ],
    ),
    ("PostToolUse.TaskStop.stop.json", [("job_end", {"id": "<monitor id>", "status": "stopped"})]),
    (
        "PostToolUse.Workflow.workflow.json",
        [
            (
                "job_start",
                {"kind": "workflow", "id": "<workflow id>", "what": "check-build: Check the build"},
            )
        ],
    ),
    (
        "PostToolUse.Agent.background.json",
        [
            (
                "subagent",
                {
                    "agent_type": "general-purpose",
                    "description": "Audit dependencies",
                    "prompt": "Audit the dependencies. [mock-subagent]",
                },
            ),
            ("job_start", {"kind": "agent", "id": "<agent id>", "what": "Audit dependencies"}),
        ],
    ),
    # The client refused it ("main" is the sender itself): nothing was sent.
    ("PostToolUse.SendMessage.message.json", []),
    ("PostToolUse.ListAgents.json", []),
    ("PostToolUse.CronList.json", []),
    ("PostToolUse.ToolSearch.json", []),
    (
        "PostToolUse.ReportFindings.findings.json",
        [
            (
                "finding",
                {
                    "text": "README.md:1: The title names no product",
                    "path": "README.md",
                    "line": 1,
                },
            )
        ],
    ),
]


def _ids() -> dict[str, str]:
    """The ids the recorded session's tools answered with (they differ per recording)."""
    ids = {}
    for line in STREAM.read_text().splitlines():
        record = json.loads(line)
        p = record["payload"]
        if record["event"] != "PostToolUse":
            continue
        response = p.get("tool_response") or {}
        name = p.get("tool_name")
        if name == "CronCreate":
            ids["<cron id>"] = response["id"]
        elif name == "Monitor":
            ids["<monitor id>"] = response["taskId"]
        elif name == "Workflow":
            ids["<workflow id>"] = response["taskId"]
        elif name == "Agent":
            ids["<agent id>"] = response["agentId"]
    return ids


@pytest.mark.parametrize(("name", "expected"), CASES, ids=[c[0] for c in CASES])
def test_recorded_payloads_of_the_newer_tools(
    name: str, expected: list[tuple[str, dict[str, Any]]]
) -> None:
    ids = _ids()
    want = [
        (etype, {k: ids.get(v, v) if isinstance(v, str) else v for k, v in data.items()})
        for etype, data in expected
    ]
    assert extracted_fixture(NEW + name) == want


def test_a_message_sent_to_a_background_agent_is_recorded() -> None:
    assert extracted(
        "SendMessage",
        {"to": "a03f15d7468a6a979", "summary": "add the lockfile", "message": "Also check it."},
        {"success": True},
    ) == [
        (
            "subagent",
            {
                "agent_type": "message",
                "to": "a03f15d7468a6a979",
                "description": "to a03f15d7468a6a979: add the lockfile",
            },
        )
    ]


def test_removing_the_worktree_on_exit_is_said() -> None:
    got = extracted(
        "ExitWorktree",
        {"action": "remove", "discard_changes": True},
        {"action": "remove", "restoredCwd": "/home/dev/proj", "worktreePath": "/w/x"},
    )
    assert got == [
        (
            "worktree_change",
            {"path": "/home/dev/proj", "via": "exit", "left": "/w/x", "removed": True},
        )
    ]


def _replayed(lines: list[str]) -> list[Any]:
    """Every event the extractors make of the recorded session, in order."""
    events = []
    for line in lines:
        record = json.loads(line)
        if record["event"] != "PostToolUse":
            continue
        inp = payload.from_dict(record["payload"], record["event"])
        inp.project_dir = "/home/dev/proj"
        events.extend(extract(inp))
    return events


def _first(lines: list[str], tool: str) -> int:
    """The index of the first PostToolUse of ``tool`` in the stream."""
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record["event"] == "PostToolUse" and record["payload"]["tool_name"] == tool:
            return i
    raise AssertionError(f"no {tool} in the stream")


def test_the_snapshot_lists_open_work_and_where_the_session_works() -> None:
    lines = STREAM.read_text().splitlines()
    ids = _ids()
    # Up to the workflow: the session is back in the project, the cron job, the wake-up,
    # the monitor and the workflow are open.
    cut = _first(lines, "Agent")
    snap = build_snapshot(_replayed(lines[:cut]), session_id="s", compact_seq=1)
    assert 'worktree="/home/dev/proj"' in snap, snap
    for what in ("check the deploy status", "/loop check CI", "watch the build log",
                 "check-build: Check the build"):  # fmt: skip
        assert what in snap, (what, snap)
    assert f'id="{ids["<cron id>"]}"' in snap
    assert 'schedule="Every 5 minutes"' in snap

    # The whole session: the monitor stopped, the cron job deleted, the loop stopped; the
    # workflow and the background agent remain open.
    snap = build_snapshot(_replayed(lines), session_id="s", compact_seq=1)
    assert "watch the build log" not in snap
    assert "check the deploy status" not in snap
    assert "/loop check CI" not in snap
    assert "check-build: Check the build" in snap
    assert '<job kind="agent"' in snap and "Audit dependencies" in snap
    # The review's finding, still to fix, is among the decisions.
    assert "<finding>README.md:1: The title names no product</finding>" in snap, snap


def test_the_snapshot_says_the_worktree_the_session_entered() -> None:
    lines = STREAM.read_text().splitlines()
    cut = _first(lines, "ExitWorktree")
    snap = build_snapshot(_replayed(lines[:cut]), session_id="s", compact_seq=1)
    assert 'worktree="/home/dev/proj/.claude/worktrees/fix-login"' in snap, snap
    assert 'branch="worktree-fix-login"' in snap


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        ("create_goal", {"objective": "Make the ledger reconcile"},
         [("job_start", {"kind": "goal", "id": "goal", "what": "Make the ledger reconcile"})]),
        ("update_goal", {"status": "blocked"},
         [("job_start", {"kind": "goal", "id": "goal", "status": "blocked"})]),
        ("update_goal", {"status": "complete"},
         [("job_end", {"kind": "goal", "id": "goal", "status": "complete"})]),
        ("get_goal", {}, []),
    ],
)  # fmt: skip
def test_codex_goals_are_open_work(
    tool: str, tool_input: dict[str, Any], expected: list[tuple[str, dict[str, Any]]]
) -> None:
    raw = {
        "session_id": "s",
        "cwd": "/tmp/proj",
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": "{}",
        "tool_use_id": "call_1",
    }
    inp = codex.parse(json.dumps(raw).encode(), "PostToolUse")
    inp.project_dir = "/tmp/proj"
    assert [(e.type, json.loads(e.data)) for e in extract(inp)] == expected


def test_a_recorded_codex_goal_is_open_work_in_the_snapshot() -> None:
    """Codex 0.171.0 fires PostToolUse for create_goal (recorded by
    scripts/record_codex_fixtures.py); the goal is open work until it is complete."""
    path = Path(__file__).parent / "fixtures" / "codex-0.171.0" / "PostToolUse.create_goal.json"
    raw = json.loads(path.read_text())
    inp = codex.parse(json.dumps(raw).encode(), "PostToolUse")
    inp.project_dir = "/tmp/proj"
    events = extract(inp)
    objective = "Make the ledger reconcile with the bank statement"
    assert [(e.type, json.loads(e.data)) for e in events] == [
        ("job_start", {"kind": "goal", "id": "goal", "what": objective})
    ]
    snap = build_snapshot(events, session_id="s", compact_seq=1)
    assert f'<job kind="goal" id="goal" status="active">{objective}</job>' in snap, snap


def _prompts(lines: list[str]) -> list[Any]:
    """The UserPromptSubmit payloads of the recorded session, as the hook gets them."""
    out = []
    for line in lines:
        record = json.loads(line)
        if record["event"] == "UserPromptSubmit":
            inp = payload.from_dict(record["payload"], record["event"])
            inp.project_dir = "/home/dev/proj"
            out.append(inp)
    return out


def test_a_task_notification_ends_the_work_it_names() -> None:
    """The prompt the client submits when background work ends (recorded): a job_end with
    the client's summary line and the agent's report, and no user request."""
    prompts = _prompts(STREAM.read_text().splitlines())
    notices = [inp for inp in prompts if inp.prompt.startswith("<task-notification>")]
    assert len(notices) >= 2 and len(notices) < len(prompts)
    notified = [e for inp in notices for e in extract(inp)]
    ends = [json.loads(e.data) for e in notified if e.type == "job_end"]
    assert {e.type for e in notified} == {"job_end"}  # not a prompt, an intent, a URL
    agent = next(d for d in ends if d["what"] == 'Agent "Audit dependencies" finished')
    assert agent["status"] == "completed"
    assert agent["result"] == "Subagent report: nothing unusual found."
    assert agent["id"] == "adf1b1bda5b5ccacf"
    workflow = next(d for d in ends if "Check the build" in d["what"])
    assert workflow["id"] == "wwdmxsics" and "result" not in workflow


def test_the_snapshot_no_longer_lists_work_that_ended() -> None:
    """Replayed with its prompts, the session's workflow and background agent ended (the
    client said so): neither is open work in the snapshot any more."""
    events = []
    for line in STREAM.read_text().splitlines():
        record = json.loads(line)
        if record["event"] in ("PostToolUse", "UserPromptSubmit"):
            inp = payload.from_dict(record["payload"], record["event"])
            inp.project_dir = "/home/dev/proj"
            events.extend(extract(inp))
    snap = build_snapshot(events, session_id="s", compact_seq=1)
    assert "check-build: Check the build" not in snap, snap
    assert '<job kind="agent"' not in snap, snap


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # 2.1.x: a background command failed.
        (
            "<task-notification>\n<task-id>bfclp7jpk</task-id>\n<tool-use-id>toolu_01</tool-use-id>\n"
            "<output-file>C:\\Temp\\claude\\tasks\\bfclp7jpk.output</output-file>\n"
            '<status>failed</status>\n<summary>Background command "Run setup script directly" '
            "failed with exit code 58</summary>\n</task-notification>",
            {
                "id": "bfclp7jpk",
                "status": "failed",
                "what": 'Background command "Run setup script directly" failed with exit code 58',
            },
        ),
        # 2.0.x: the older tag, a shell's id.
        (
            "<bash-notification>\n<shell-id>b6fe28a</shell-id>\n<output-file>/tmp/claude/tasks/"
            "b6fe28a.output</output-file>\n<status>failed</status>\n<summary>Background command "
            '"Start Hugo development server" failed with exit code 137.</summary>\n'
            "Read the output file to retrieve the output.\n</bash-notification>",
            {
                "id": "b6fe28a",
                "status": "failed",
                "what": 'Background command "Start Hugo development server" failed with exit '
                "code 137.",
            },
        ),
        # A monitor's event ends nothing.
        (
            "<task-notification>\n<task-id>bq1rxrg79</task-id>\n<summary>Monitor event: "
            '"harness status"</summary>\n<event>[Monitor timed out]</event>\n'
            "</task-notification>",
            None,
        ),
    ],
)
def test_task_notification_shapes(text: str, expected: dict[str, Any] | None) -> None:
    got = extracted_prompt(text)
    assert got == ([("job_end", expected)] if expected else [])


def extracted_prompt(text: str) -> list[tuple[str, dict[str, Any]]]:
    inp = payload.from_dict(
        {"session_id": "s", "cwd": "/p", "hook_event_name": "UserPromptSubmit", "prompt": text},
        "UserPromptSubmit",
    )
    inp.project_dir = "/p"
    return [(e.type, json.loads(e.data)) for e in extract(inp)]


def test_an_agent_report_is_masked_and_bounded() -> None:
    """An agent's report is kept as a command's output: masked whole before it is cut,
    its head and tail and the error line from between."""
    key = (
        "sk-ant-api03-"
        + "Zq8Xw2Lp5Nv7Bc3Df9Gh1Jk4Mn6Rt0Yu2Ws8Ea5Qo3Ti7Pl1Kx9Cv4Bn6Mz2Ds5Fg8Hj0Lk3A-"
        + "x" * 8
        + "AA"
    )
    middle = "\n".join(f"checked module {i}: fine" for i in range(150))
    report = (
        f"Set ANTHROPIC_API_KEY={key} for the run.\n{middle}\n"
        "ERROR: tests/test_auth.py::test_refresh failed: token expired\n"
        f"{middle}\nDone: 1 failure, 299 passed."
    )
    text = (
        "<task-notification>\n<task-id>a5e2</task-id>\n<status>completed</status>\n"
        f'<summary>Agent "Audit auth" completed</summary>\n<result>{report}</result>\n'
        "</task-notification>"
    )
    [(kind, data)] = extracted_prompt(text)
    assert kind == "job_end"
    assert key not in json.dumps(data) and "[REDACTED" in data["result"]
    assert "ERROR: tests/test_auth.py::test_refresh failed: token expired" in data["result"]
    assert data["result"].endswith("Done: 1 failure, 299 passed.")
    assert len(data["result"]) <= 2700
