"""Build ctxmode/data/sample_session.jsonl from the Claude Code 2.1.197 fixtures.

Every payload starts as a real captured payload (more/stream.jsonl, stream.print-mode.jsonl,
the top-level files); the story (prompts, file contents, commands) is then adjusted into one
coherent session, and every path is moved to the neutral /home/user/demo-project.
"""

from __future__ import annotations

import copy
import json
import sys
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures" / "claude-code-2.1.197"
OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "ctxmode" / "data" / "sample_session.jsonl"

MORE = [json.loads(line) for line in (FIX / "more" / "stream.jsonl").read_text().splitlines()]
PRINT = [json.loads(line) for line in (FIX / "stream.print-mode.jsonl").read_text().splitlines()]

PROJECT = "/home/user/demo-project"
HOME = "/home/user"
SESSION = "5f0c2a4e-8d7b-4c31-9e26-a1b3c4d5e6f7"
TRANSCRIPT = f"{HOME}/.claude/projects/-home-user-demo-project/{SESSION}.jsonl"
NS = uuid.UUID("00000000-0000-0000-0000-00000000c7d0")


def rewrite(value: Any) -> Any:
    """Move every fixture path to the demo project / home."""
    if isinstance(value, str):
        for old, new in (
            ("/home/dev/proj_auto", PROJECT),
            ("/home/dev/proj", PROJECT),
            ("/home/dev/home", HOME),
            ("/home/dev", HOME),
        ):
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [rewrite(item) for item in value]
    if isinstance(value, dict):
        return {key: rewrite(item) for key, item in value.items()}
    return value


class Session:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.turn = 0
        self.mode = "default"
        self.tool_n = 0

    def prompt_id(self) -> str:
        return str(uuid.uuid5(NS, f"turn-{self.turn}"))

    def add(self, source: dict[str, Any], **changes: Any) -> dict[str, Any]:
        payload = rewrite(copy.deepcopy(source["payload"]))
        payload["session_id"] = SESSION
        payload["transcript_path"] = TRANSCRIPT
        payload["cwd"] = PROJECT
        if "prompt_id" in payload:
            payload["prompt_id"] = self.prompt_id()
        if "permission_mode" in payload:
            payload["permission_mode"] = self.mode
        if "tool_use_id" in payload:
            self.tool_n += 1
            payload["tool_use_id"] = (
                f"toolu_demo_{self.tool_n:02d}_" + uuid.uuid5(NS, f"tool-{self.tool_n}").hex[:8]
            )
        for key, value in changes.items():
            payload[key] = value
        event = source["event"]
        assert payload["hook_event_name"] == event
        self.calls.append({"event": event, "payload": payload})
        return payload

    def user(self, text: str) -> None:
        self.turn += 1
        self.add(MORE[1], prompt=text)


def more(index: int, event: str, tool: str | None = None) -> dict[str, Any]:
    record = MORE[index]
    assert record["event"] == event, (index, record["event"])
    assert tool is None or record["payload"].get("tool_name") == tool, (index, tool)
    return record


def top(name: str) -> dict[str, Any]:
    return json.loads((FIX / name).read_text())


def bash(
    s: Session,
    command: str,
    description: str,
    stdout: str,
    *,
    git: Any = None,
    agent: tuple[str, str] | None = None,
) -> None:
    response = {
        "stdout": stdout,
        "stderr": "",
        "interrupted": False,
        "isImage": False,
        "noOutputExpected": False,
    }
    if git is not None:
        response["gitOperation"] = git
    payload = s.add(
        more(119, "PostToolUse", "Bash"),
        tool_input={"command": command, "description": description},
        tool_response=response,
    )
    if agent:
        _agent(payload, agent)


def _agent(payload: dict[str, Any], agent: tuple[str, str]) -> None:
    # Subagent payloads carry agent_id/agent_type right after permission_mode (as captured).
    items = list(payload.items())
    payload.clear()
    for key, value in items:
        payload[key] = value
        if key == "permission_mode":
            payload["agent_id"], payload["agent_type"] = agent


def read(s: Session, rel: str, content: str, agent: tuple[str, str] | None = None) -> None:
    path = f"{PROJECT}/{rel}"
    lines = content.count("\n") + 1
    payload = s.add(
        more(21, "PostToolUse", "Read"),
        tool_input={"file_path": path},
        tool_response={
            "type": "text",
            "file": {
                "filePath": path,
                "content": content,
                "numLines": lines,
                "startLine": 1,
                "totalLines": lines,
            },
        },
    )
    if agent:
        _agent(payload, agent)


def edit(s: Session, rel: str, old: str, new: str, original: str) -> None:
    path = f"{PROJECT}/{rel}"
    base = top("PostToolUse.Edit.json")
    old_lines = old.split("\n")
    new_lines = new.split("\n")
    start = original[: original.index(old)].count("\n") + 1
    s.add(
        base,
        tool_input={"file_path": path, "old_string": old, "new_string": new, "replace_all": False},
        tool_response={
            "filePath": path,
            "oldString": old,
            "newString": new,
            "originalFile": original,
            "structuredPatch": [
                {
                    "oldStart": start,
                    "oldLines": len(old_lines),
                    "newStart": start,
                    "newLines": len(new_lines),
                    "lines": [f"-{line}" for line in old_lines]
                    + [f"+{line}" for line in new_lines],
                }
            ],
            "userModified": False,
            "replaceAll": False,
        },
    )


def write(s: Session, rel: str, content: str) -> None:
    path = f"{PROJECT}/{rel}"
    s.add(
        top("PostToolUse.Write.json"),
        tool_input={"file_path": path, "content": content},
        tool_response={
            "type": "create",
            "filePath": path,
            "content": content,
            "structuredPatch": [],
            "originalFile": None,
            "userModified": False,
        },
    )


def task_update(s: Session, task_id: str, status: str, before: str) -> None:
    s.add(
        more(88, "PostToolUse", "TaskUpdate"),
        tool_input={"taskId": task_id, "status": status},
        tool_response={
            "success": True,
            "taskId": task_id,
            "updatedFields": ["status"],
            "statusChange": {"from": before, "to": status},
        },
    )


def task_create(s: Session, task_id: str, subject: str, description: str, active: str) -> None:
    s.add(
        more(79, "PostToolUse", "TaskCreate"),
        tool_input={"subject": subject, "description": description, "activeForm": active},
        tool_response={"task": {"id": task_id, "subject": subject}},
    )


APP = (
    '"""Invoice helpers."""\n\n\ndef old_name(lines):\n    # TODO: round half-up\n'
    "    return sum(lines)\n\n\ndef total(lines):\n    return old_name(lines)\n\n\n"
    'ALIASES = {"sum": old_name}\n'
)
APP_RENAMED = APP.replace("old_name", "subtotal")
ROUND_OLD = "    # TODO: round half-up\n    return sum(lines)"
ROUND_NEW = (
    "    total = sum((Decimal(str(x)) for x in lines), Decimal(0))\n"
    '    return total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)'
)
EXPORT = (
    '"""CSV export of finished invoices."""\n\nimport csv\n\nfrom src.app import subtotal\n\n\n'
    "def export_csv(invoices, out):\n    writer = csv.writer(out)\n"
    '    writer.writerow(["number", "customer", "total"])\n    for inv in invoices:\n'
    "        if inv.finished:\n"
    "            writer.writerow([inv.number, inv.customer, subtotal(inv.lines)])\n"
)
PLAN = (
    "# Plan: CSV export of finished invoices\n\n"
    "1. Rename old_name to subtotal and round totals half-up with Decimal in src/app.py\n"
    "2. Add src/export.py with export_csv(invoices, out)\n"
    "3. Tests for .005 rounding cases and the CSV columns\n"
)
PLAN_FILE = f"{HOME}/.claude/plans/tidy-humming-ledger.md"


def build() -> list[dict[str, Any]]:
    s = Session()
    s.add(more(0, "SessionStart"))
    s.mode = "plan"
    s.user(
        "Add a CSV export of finished invoices to the invoice module (src/app.py), and round "
        "totals half-up. Plan it first.\n\nWe should always use Decimal for money, never "
        "float.\nFor the smoke test, the staging token is <private>tok-FAKE-123456</private>."
    )
    s.add(more(268, "PostToolUse", "EnterPlanMode"))
    s.add(
        more(272, "PostToolUse", "Write"),
        tool_input={"file_path": PLAN_FILE, "content": PLAN},
        tool_response={
            "type": "create",
            "filePath": PLAN_FILE,
            "content": PLAN,
            "structuredPatch": [],
            "originalFile": None,
            "userModified": False,
        },
    )
    read(s, "README.md", "# Demo project\n\nA small invoice demo.\nSee src/app.py.\n")
    read(s, "src/app.py", APP)
    s.add(more(25, "PostToolUse", "Glob"))
    s.add(more(33, "PostToolUse", "Grep"))
    s.mode = "default"
    s.add(
        more(276, "PostToolUse", "ExitPlanMode"),
        tool_input={
            "allowedPrompts": [{"tool": "Bash", "prompt": "run tests"}],
            "plan": PLAN,
            "planFilePath": PLAN_FILE,
        },
        tool_response={
            "plan": PLAN,
            "isAgent": False,
            "filePath": PLAN_FILE,
            "planWasEdited": True,
        },
    )
    task_create(
        s,
        "1",
        "Wire invoice export to CSV",
        "Export finished invoices as CSV rows.",
        "Wiring invoice export",
    )
    task_create(
        s,
        "2",
        "Write rounding tests",
        "Cover half-up rounding of invoice totals.",
        "Writing rounding tests",
    )
    task_update(s, "1", "in_progress", "pending")
    bash(
        s,
        "git checkout -b feature/csv-export",
        "Create branch feature/csv-export",
        "Switched to a new branch 'feature/csv-export'",
    )
    bash(
        s,
        "python3 -m venv .venv && .venv/bin/pip install -q pytest",
        "Create a virtual environment with pytest",
        "",
    )
    # (the edited file is rebuilt from APP by the Read that follows)
    s.add(
        more(41, "PostToolUse", "Edit"),
        tool_input={
            "file_path": f"{PROJECT}/src/app.py",
            "old_string": "old_name",
            "new_string": "subtotal",
            "replace_all": True,
        },
        tool_response=rewrite(
            json.loads(
                json.dumps(MORE[41]["payload"]["tool_response"]).replace("new_name", "subtotal")
            )
        ),
    )
    write(s, "src/export.py", EXPORT)
    bash(
        s,
        ".venv/bin/python -m pytest -q",
        "Run the test suite",
        "..F.F\n===== 2 failed, 3 passed in 0.12s =====",
    )
    task_update(s, "2", "in_progress", "pending")
    s.add(
        more(147, "PostToolUseFailure", "Bash"),
        tool_input={
            "command": ".venv/bin/python -m pytest -q tests/test_rounding.py",
            "description": "Run the rounding tests",
        },
        error=(
            "Exit code 1\nF.\nFAILED tests/test_rounding.py::test_half_up - AssertionError: "
            "assert 2.67 == Decimal('2.68')\n1 failed, 1 passed in 0.05s"
        ),
    )
    s.add(more(164, "PostToolUse", "WebSearch"))
    s.user("Use Decimal.quantize with ROUND_HALF_UP instead of round().")
    edit(s, "src/app.py", ROUND_OLD, ROUND_NEW, APP_RENAMED)
    edit(
        s,
        "src/app.py",
        '"""Invoice helpers."""\n',
        '"""Invoice helpers."""\n\nfrom decimal import ROUND_HALF_UP, Decimal\n',
        APP_RENAMED.replace(ROUND_OLD, ROUND_NEW),
    )
    bash(
        s,
        ".venv/bin/python -m pytest -q tests/test_rounding.py",
        "Run the rounding tests",
        "..\n2 passed in 0.04s",
    )
    bash(s, ".venv/bin/python -m pytest -q", "Run the test suite", ".....\n5 passed in 0.11s")
    task_update(s, "1", "completed", "in_progress")
    task_update(s, "2", "completed", "in_progress")
    reviewer = ("ae611b5df06ff9aad", "reviewer")
    read(s, "src/export.py", EXPORT, agent=reviewer)
    bash(
        s,
        "git diff --stat",
        "Show the diff summary",
        " src/app.py    | 10 ++++++----\n src/export.py | 13 +++++++++++++\n"
        " 2 files changed, 19 insertions(+), 4 deletions(-)",
        agent=reviewer,
    )
    agent_call = more(254, "PostToolUse", "Agent")
    response = copy.deepcopy(agent_call["payload"]["tool_response"])
    response["prompt"] = "Review the CSV export in src/export.py for edge cases."
    response["content"] = [
        {
            "type": "text",
            "text": (
                "Looks good. One edge case: an invoice without lines exports a total of 0.00, "
                "which is fine; consider a totals row at the end."
            ),
        }
    ]
    s.add(
        agent_call,
        tool_input={
            "description": "Review the CSV export",
            "prompt": "Review the CSV export in src/export.py for edge cases.",
            "subagent_type": "reviewer",
        },
        tool_response=response,
    )
    s.add(more(206, "PostToolUse", "mcp__mockdir__lookup"))
    bash(s, "git add -A", "Stage all changes", "")
    message = "Add CSV export of finished invoices\n\nTotals are rounded half-up with Decimal."
    bash(
        s,
        f"git commit -m \"$(cat <<'EOF'\n{message}\nEOF\n)\"",
        "Commit the CSV export",
        "[feature/csv-export 4e1c9a2] Add CSV export of finished invoices\n"
        " 3 files changed, 31 insertions(+), 4 deletions(-)\n create mode 100644 src/export.py",
        git={"commit": {"sha": "4e1c9a2", "kind": "committed"}},
    )
    s.user("Now add a totals row at the end of the CSV. Don't change the column order.")
    task_create(
        s,
        "3",
        "Add a totals row to the CSV export",
        "Append one row with the sum of all exported totals.",
        "Adding a totals row",
    )
    task_update(s, "3", "in_progress", "pending")
    read(s, "src/export.py", EXPORT)
    s.add(
        more(65, "PostToolUseFailure", "Read"),
        tool_input={"file_path": f"{PROJECT}/tests/test_export.py"},
        error=f"File does not exist. Note: your current working directory is {PROJECT}.",
    )
    # The context fills up: Claude Code compacts, then starts the session again.
    s.add(PRINT[45], trigger="manual", custom_instructions=None)
    s.add(PRINT[47])
    s.turn += 1  # the first prompt after compaction
    s.add(more(1, "UserPromptSubmit"), prompt="Go on with the totals row.")
    edit(
        s,
        "src/export.py",
        "            writer.writerow([inv.number, inv.customer, subtotal(inv.lines)])\n",
        "            writer.writerow([inv.number, inv.customer, subtotal(inv.lines)])\n"
        '    writer.writerow(["", "TOTAL", sum(subtotal(i.lines) for i in invoices '
        "if i.finished)])\n",
        EXPORT,
    )
    s.add(more(4, "SessionEnd"), reason="other")
    return s.calls


def main() -> None:
    calls = build()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as handle:
        for call in calls:
            handle.write(json.dumps(call, ensure_ascii=False) + "\n")
    print(f"{len(calls)} calls written to {OUT}")


if __name__ == "__main__":
    main()
