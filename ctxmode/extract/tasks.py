"""Task and plan tools → ``task`` and ``plan`` events.

The events are shaped so the current task list can be rebuilt by replaying them in order:
``task_create`` and ``task_update`` are keyed by the client's task id (updates carry only
the fields that changed), ``task_list`` and ``todo_write`` carry the whole list.
"""

from __future__ import annotations

from ctxmode import fastjson, redact
from ctxmode.extract.common import DATA_BUDGET, as_dict, clip, id_str, rel_path, s

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctxmode.extract.common import Draft
    from ctxmode.payload import HookInput

SUBJECT_CHARS = 200
DESCRIPTION_CHARS = 300
PLAN_CHARS = 1500
MAX_ITEMS = 100
# Items' text is shortened to this before any item is dropped from a list.
MIN_ITEM_CHARS = 40


def task_create(inp: HookInput) -> list[Draft]:
    """TaskCreate ``{subject, description}`` → ``task_create {id, subject, [description], status}``."""
    task = as_dict(as_dict(inp.tool_response).get("task"))
    subject = s(task.get("subject")) or s(inp.tool_input.get("subject"))
    task_id = id_str(task.get("id")) or id_str(inp.tool_input.get("taskId"))
    if not subject.strip() and not task_id:
        return []
    data: dict[str, object] = {"id": task_id, "subject": clip(subject, SUBJECT_CHARS)}
    description = s(inp.tool_input.get("description"))
    if description.strip():
        data["description"] = clip(description, DESCRIPTION_CHARS)
    data["status"] = s(task.get("status")) or "pending"
    return [("task_create", data)]


def task_update(inp: HookInput) -> list[Draft]:
    """TaskUpdate → ``task_update {id, ...}`` with only the fields that changed."""
    response = as_dict(inp.tool_response)
    if response.get("success") is False:
        return []  # the client refused the update: nothing changed
    task_id = id_str(inp.tool_input.get("taskId")) or id_str(response.get("taskId"))
    if not task_id:
        return []
    data: dict[str, object] = {"id": task_id}
    status = s(inp.tool_input.get("status")) or s(as_dict(response.get("statusChange")).get("to"))
    if status.strip():
        data["status"] = status.strip()
    for key, limit in (("subject", SUBJECT_CHARS), ("description", DESCRIPTION_CHARS)):
        value = s(inp.tool_input.get(key))
        if value.strip():
            data[key] = clip(value, limit)
    # Owner or dependency changes alone do not change what the resume shows.
    return [("task_update", data)] if len(data) > 1 else []


def task_list(inp: HookInput) -> list[Draft]:
    """TaskList → ``task_list {tasks: [{id, subject, status}]}``, the whole list."""
    tasks = as_dict(inp.tool_response).get("tasks")
    if not isinstance(tasks, list):
        return []
    items: list[dict[str, Any]] = []
    for task in tasks[:MAX_ITEMS]:
        if isinstance(task, dict):
            items.append(
                {
                    "id": id_str(task.get("id")),
                    "subject": clip(s(task.get("subject")), SUBJECT_CHARS),
                    "status": s(task.get("status")),
                }
            )
    return [("task_list", fit_items({"tasks": items}, "tasks", "subject"))]


def todo_write(inp: HookInput) -> list[Draft]:
    """TodoWrite (older clients) ``{todos: [...]}`` → ``todo_write {todos: [{content, status}]}``."""
    todos = inp.tool_input.get("todos")
    if not isinstance(todos, list):
        return []
    items: list[dict[str, Any]] = []
    for todo in todos[:MAX_ITEMS]:
        if isinstance(todo, dict):
            content = s(todo.get("content")) or s(todo.get("subject"))
            items.append({"content": clip(content, SUBJECT_CHARS), "status": s(todo.get("status"))})
    # An empty list is meaningful: the model cleared its todos.
    return [("todo_write", fit_items({"todos": items}, "todos", "content"))]


def fit_items(data: dict[str, Any], key: str, text_key: str) -> dict[str, Any]:
    """Shrink a list event to the data budget the way that keeps the most of it.

    First every item's text is shortened to a common cap (no shorter than
    ``MIN_ITEM_CHARS``), then completed items go (the open ones are what a resume needs),
    then items from the end; ``more`` counts what was dropped, so a reader knows the
    list is partial.
    """
    # Leave room for masking, which may lengthen a string a little.
    budget = DATA_BUDGET - 60
    if len(fastjson.dumps(data)) <= budget:
        return data
    items: list[dict[str, Any]] = data[key]

    def capped(cap: int) -> list[dict[str, Any]]:
        return [
            {**item, text_key: _cut(item[text_key], cap)} if len(item[text_key]) > cap else item
            for item in items
        ]

    lo, hi = MIN_ITEM_CHARS, max((len(i[text_key]) for i in items), default=MIN_ITEM_CHARS)
    while lo < hi:  # the largest cap at which the whole list fits
        mid = (lo + hi + 1) // 2
        if len(fastjson.dumps({key: capped(mid)})) <= budget:
            lo = mid
        else:
            hi = mid - 1
    kept = capped(lo)
    dropped = 0
    while kept and len(fastjson.dumps({key: kept, "more": dropped})) > budget:
        done = next((i for i, t in enumerate(kept) if t.get("status") == "completed"), None)
        kept.pop(done if done is not None else len(kept) - 1)
        dropped += 1
    return {key: kept, "more": dropped} if dropped else {key: kept}


def _cut(text: str, cap: int) -> str:
    return text[: redact.cut_at(text, cap - 1)].rstrip() + "…"


def plan_enter(inp: HookInput) -> list[Draft]:
    """EnterPlanMode → ``plan_enter {}``."""
    return [("plan_enter", {})]


def plan_exit(inp: HookInput) -> list[Draft]:
    """ExitPlanMode → ``plan_exit {plan, [path]}``: the approved plan, trimmed."""
    response = as_dict(inp.tool_response)
    # 2.1.197 adds ``plan`` and ``planFilePath`` to the input from the plan file; the
    # response repeats them (as ``filePath``); older clients send only ``plan``.
    plan = s(inp.tool_input.get("plan")) or s(response.get("plan"))
    data: dict[str, object] = {"plan": clip(plan, PLAN_CHARS)}
    where = s(inp.tool_input.get("planFilePath")) or s(response.get("filePath"))
    if where.strip():
        data["path"] = rel_path(where, inp.project_dir, inp.cwd)
    return [("plan_exit", data)]
