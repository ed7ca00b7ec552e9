"""Task and plan tools → task/plan events, from which the task list can be rebuilt."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxmode import payload
from ctxmode.extract import extract
from ctxmode.extract.common import DATA_BUDGET
from tests.helpers import PROJECT, extracted, extracted_fixture, fixture

PLAN = (
    "# Plan: invoice rounding\n\n1. Round totals half-up in src/app.py\n2. Add tests for .005 cases"
)

FIXTURE_CASES = [
    (
        "PostToolUse.TaskCreate.json",
        [
            (
                "task_create",
                {
                    "id": "1",
                    "subject": "Create hello.py and commit it",
                    "description": "mock task",
                    "status": "pending",
                },
            )
        ],
    ),
    (
        "more/PostToolUse.TaskCreate.first.json",
        [
            (
                "task_create",
                {
                    "id": "1",
                    "subject": "Wire invoice export to CSV",
                    "description": "Export finished invoices as CSV rows.",
                    "status": "pending",
                },
            )
        ],
    ),
    (
        "more/PostToolUse.TaskUpdate.in_progress.json",
        [("task_update", {"id": "1", "status": "in_progress"})],
    ),
    (
        "more/PostToolUse.TaskUpdate.completed.json",
        [("task_update", {"id": "1", "status": "completed"})],
    ),
    (
        "more/PostToolUse.TaskUpdate.rename.json",
        [("task_update", {"id": "2", "subject": "Write rounding and CSV tests"})],
    ),
    (
        "more/PostToolUse.TaskList.json",
        [
            (
                "task_list",
                {
                    "tasks": [
                        {"id": "1", "subject": "Wire invoice export to CSV", "status": "completed"},
                        {"id": "2", "subject": "Write rounding and CSV tests", "status": "pending"},
                    ]
                },
            )
        ],
    ),
    ("more/PostToolUse.TaskGet.json", []),  # a read: changes nothing
    ("more/PostToolUse.EnterPlanMode.print_permission_prompt_tool.json", [("plan_enter", {})]),
    ("more/interactive.PostToolUse.EnterPlanMode.json", [("plan_enter", {})]),
    (
        "more/PostToolUse.ExitPlanMode.print_permission_prompt_tool.json",
        [
            (
                "plan_exit",
                {"plan": PLAN, "path": "/home/dev/.claude/plans/zany-beaming-marshmallow.md"},
            )
        ],
    ),
    (
        "more/interactive.PostToolUse.ExitPlanMode.json",
        [
            (
                "plan_exit",
                {"plan": PLAN, "path": "/home/dev/.claude/plans/sparkling-drifting-snowflake.md"},
            )
        ],
    ),
]


@pytest.mark.parametrize(("name", "expected"), FIXTURE_CASES, ids=[c[0] for c in FIXTURE_CASES])
def test_real_payloads(name: str, expected: list[tuple[str, dict[str, Any]]]) -> None:
    assert extracted_fixture(name) == expected


def test_task_events_replay_to_the_clients_own_list() -> None:
    """Replaying create/update events in order gives exactly what TaskList reported."""
    tasks: dict[str, dict[str, str]] = {}
    for name in (
        "more/PostToolUse.TaskCreate.first.json",
        "more/PostToolUse.TaskCreate.second.json",
        "more/PostToolUse.TaskUpdate.in_progress.json",
        "more/PostToolUse.TaskUpdate.completed.json",
        "more/PostToolUse.TaskUpdate.rename.json",
    ):
        for kind, data in extracted_fixture(name):
            if kind == "task_create":
                tasks[data["id"]] = {
                    "id": data["id"],
                    "subject": data["subject"],
                    "status": data["status"],
                }
            elif kind == "task_update":
                tasks[data["id"]].update({k: v for k, v in data.items() if k != "id"})
    listed = fixture("more/PostToolUse.TaskList.json")["payload"]["tool_response"]["tasks"]
    assert list(tasks.values()) == [
        {"id": t["id"], "subject": t["subject"], "status": t["status"]} for t in listed
    ]


OLDER_CASES = [
    # TodoWrite (clients before TaskCreate): the full list every time.
    (
        "TodoWrite",
        {
            "todos": [
                {"content": "Read the parser", "status": "completed", "activeForm": "Reading"},
                {"content": "Fix rounding", "status": "in_progress", "activeForm": "Fixing"},
                {"content": "Add tests", "status": "pending", "activeForm": "Adding tests"},
            ]
        },
        {"oldTodos": [], "newTodos": []},
        [
            (
                "todo_write",
                {
                    "todos": [
                        {"content": "Read the parser", "status": "completed"},
                        {"content": "Fix rounding", "status": "in_progress"},
                        {"content": "Add tests", "status": "pending"},
                    ]
                },
            )
        ],
    ),
    # Even older items carried an id and a priority: dropped, content and status kept.
    (
        "TodoWrite",
        {
            "todos": [
                {"id": "1", "content": "Ship", "status": "pending", "priority": "high"},
                "junk",
                None,
            ]
        },
        None,
        [("todo_write", {"todos": [{"content": "Ship", "status": "pending"}]})],
    ),
    ("TodoWrite", {"todos": []}, None, [("todo_write", {"todos": []})]),  # list cleared
    ("TodoWrite", {"todos": "not a list"}, None, []),
    # Status only in the response; integer ids; a status change and a rename at once.
    (
        "TaskUpdate",
        {"taskId": 3},
        {"success": True, "statusChange": {"from": "pending", "to": "in_progress"}},
        [("task_update", {"id": "3", "status": "in_progress"})],
    ),
    (
        "TaskUpdate",
        {"taskId": "4", "status": "completed", "subject": "Renamed", "description": "New scope"},
        None,
        [
            (
                "task_update",
                {
                    "id": "4",
                    "status": "completed",
                    "subject": "Renamed",
                    "description": "New scope",
                },
            )
        ],
    ),
    (
        "TaskUpdate",
        {"taskId": "4", "status": "deleted"},
        {"success": True},
        [("task_update", {"id": "4", "status": "deleted"})],
    ),
    # Refused by the client, only an owner change, or no id: nothing to record.
    ("TaskUpdate", {"taskId": "1", "status": "completed"}, {"success": False}, []),
    ("TaskUpdate", {"taskId": "1", "owner": "agent-2"}, {"success": True}, []),
    ("TaskUpdate", {"status": "completed"}, None, []),
    # TaskCreate with the response missing (or as a JSON string).
    (
        "TaskCreate",
        {"subject": "Orphan"},
        None,
        [("task_create", {"id": "", "subject": "Orphan", "status": "pending"})],
    ),
    (
        "TaskCreate",
        {"subject": "S"},
        '{"task": {"id": 7, "subject": "S"}}',
        [("task_create", {"id": "7", "subject": "S", "status": "pending"})],
    ),
    ("TaskCreate", {}, {}, []),
    ("TaskList", {}, {"tasks": None}, []),
    ("TaskList", {}, {"tasks": []}, [("task_list", {"tasks": []})]),
    # ExitPlanMode of older clients: only the plan, no file path, no response.
    ("ExitPlanMode", {"plan": "1. Do it"}, None, [("plan_exit", {"plan": "1. Do it"})]),
    (
        "ExitPlanMode",
        {},
        {"plan": "From the response", "filePath": f"{PROJECT}/plan.md"},
        [("plan_exit", {"plan": "From the response", "path": "plan.md"})],
    ),
]


@pytest.mark.parametrize(("tool", "tool_input", "response", "expected"), OLDER_CASES)
def test_older_and_partial_shapes(
    tool: str, tool_input: dict[str, Any], response: Any, expected: list[tuple[str, dict[str, Any]]]
) -> None:
    assert extracted(tool, tool_input, response) == expected


def test_long_plan_is_trimmed_from_the_end() -> None:
    plan = "# Plan\n" + "".join(f"{i}. step number {i} of the plan\n" for i in range(200))
    [(kind, data)] = extracted("ExitPlanMode", {"plan": plan})
    assert kind == "plan_exit"
    assert data["plan"].startswith("# Plan\n0. step number 0 of the plan\n1. step")
    assert data["plan"].endswith("…")
    assert 1200 <= len(data["plan"]) <= 1500


def test_a_long_todo_list_fits_and_keeps_open_items_first() -> None:
    todos = [
        {
            "content": f"Task {i}: " + "do a fairly long piece of work " * 4,
            "status": "completed" if i % 2 == 0 else "pending",
        }
        for i in range(60)
    ]
    [event] = [e for e in _events("TodoWrite", {"todos": todos})]
    assert len(event.data) <= DATA_BUDGET
    data = json.loads(event.data)
    kept = data["todos"]
    assert data["more"] == 60 - len(kept)
    assert len(kept) >= 10
    # Completed items are dropped before open ones.
    assert all(t["status"] == "pending" for t in kept)
    assert [t["content"].split(":")[0] for t in kept] == [f"Task {i}" for i in range(1, 60, 2)][
        : len(kept)
    ]


def test_a_short_todo_list_is_untouched() -> None:
    todos = [{"content": "x" * 150, "status": "pending"} for _ in range(3)]
    [(_kind, data)] = extracted("TodoWrite", {"todos": todos})
    assert data == {"todos": [{"content": "x" * 150, "status": "pending"}] * 3}


def _events(tool: str, tool_input: Any) -> list[Any]:
    inp = payload.from_dict({"tool_name": tool, "tool_input": tool_input}, "PostToolUse")
    inp.project_dir = PROJECT
    return extract(inp)
