"""The error the agent was fighting survives the snapshot (issue 30, item 1).

The newest unresolved error is a key item like the last commit: it survives any budget
(shortened, never dropped), its section never goes whole, and the errors go newest
first in the calls' order. A failure that comes back — after its resolution, or after
other failures — is recorded again by the hooks, so that the snapshot knows it is open
and the newest.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from ctxmode import hookrun, paths
from ctxmode.events import SessionEvent
from ctxmode.snapshot import MIN_BUDGET, build_snapshot
from ctxmode.snapshot.coverage import coverage
from ctxmode.store import Store
from tests.snapshot_sessions import ev, stamp


def _events(rows: list[tuple[str, dict[str, Any]]]) -> list[SessionEvent]:
    return [ev(t, d, at=stamp(i * 1000), id=i + 1) for i, (t, d) in enumerate(rows)]


def _failure(command: str, error: str) -> tuple[str, dict[str, Any]]:
    return ("tool_error", {"tool": "Bash", "key": command, "error": error})


def _busy_session() -> list[SessionEvent]:
    """A session whose requests, tasks and files fill a small budget by themselves, with
    subagents, MCP tools and decisions beside three open errors (the newest last)."""
    rows: list[tuple[str, dict[str, Any]]] = [
        ("user_prompt", {"text": "Build the ledger export with tests " + "and more " * 60}),
        ("decision", {"text": "Always use Decimal for money, never float."}),
        ("subagent", {"agent_type": "reviewer", "description": "Review the ledger export"}),
        ("mcp_call", {"server": "billing", "tool": "lookup", "args": []}),
        _failure("npm run build:ledger", "error: TS2322 Type 'string' is not assignable"),
        _failure("pytest -q tests/test_rounding.py", "FAILED tests/test_rounding.py::test_half"),
    ]
    for n in range(12):
        rows.append(("task_create", {"id": str(n), "subject": f"Export step {n} " + "x" * 90}))
        rows.append(("file_edit", {"path": f"src/ledger/export_{n}/" + "deep/" * 20 + "mod.py"}))
    rows.append(_failure("pytest -q tests/test_export.py", "FAILED tests/test_export.py::test_csv"))
    rows.append(("user_prompt", {"text": "Now make the CSV export pass " + "please " * 90}))
    return _events(rows)


def _first_error(xml: str) -> ET.Element | None:
    return ET.fromstring(xml).find("errors/error")


@pytest.mark.parametrize("budget", [MIN_BUDGET, 1536, 2048, 3072, 4096])
def test_the_newest_unresolved_error_stays_while_less_important_sections_go(budget: int) -> None:
    xml = build_snapshot(_busy_session(), session_id="s", compact_seq=1, budget=budget)
    assert len(xml.encode()) <= budget
    first = _first_error(xml)
    # The section is there, and its first error is the newest one (shortened at most).
    assert first is not None, xml
    assert "pytest -q tests/test_export.py".startswith(first.get("key", "").rstrip("…")), xml
    assert (first.text or "").startswith("FAILED"), xml
    # What matters less went instead: whole sections, counted, when there was room to.
    omitted = ET.fromstring(xml).find("omitted_sections")
    if omitted is not None:
        assert "errors" not in omitted.attrib


def test_errors_go_newest_first_in_the_calls_order() -> None:
    rows = [
        _failure("make lint", "error: unused import"),
        _failure("pytest -q", "FAILED tests/test_a.py::test_x"),
        _failure("make docs", "error: broken link"),
        # The lint fails again (another call): now it is the newest, counted twice.
        _failure("make lint", "error: unused variable"),
    ]
    xml = build_snapshot(_events(rows), session_id="s", compact_seq=1)
    errors = ET.fromstring(xml).findall("errors/error")
    assert [e.get("key") for e in errors] == ["make lint", "make docs", "pytest -q"]
    assert errors[0].get("count") == "2" and errors[0].text == "error: unused variable"
    # Its resolution leaves the next newest first.
    resolved = _events([*rows, ("error_resolved", {"tool": "Bash", "key": "make lint"})])
    xml = build_snapshot(resolved, session_id="s", compact_seq=1)
    assert [e.get("key") for e in ET.fromstring(xml).findall("errors/error")] == [
        "make docs",
        "pytest -q",
    ]


def test_the_newest_error_counts_as_a_key_item_at_a_small_budget() -> None:
    xml = build_snapshot(_busy_session(), session_id="s", compact_seq=1, budget=MIN_BUDGET)
    found = coverage(xml, "We built the ledger export; the CSV export test still fails.")
    errors = [row for row in found["items"] if row["kind"] == "error"]  # type: ignore[attr-defined]
    assert [row["shown"] for row in errors] == ["error pytest -q tests/test_export.py"]
    assert errors[0]["kept"] is False  # the summary names no command: only ctxmode has it


def test_key_items_too_long_for_the_budget_give_way_one_section_at_a_time() -> None:
    # A search command so long that the lookups of all key sections (requests, errors,
    # git) cannot fit in the smallest budget: the least important go whole, the last
    # request stays (the document used to lose them all).
    events = _busy_session()
    events += _events([("git_branch", {"branch": "feature/ledger-export", "created": True}),
                       ("git_commit", {"message": "Add the ledger export", "sha": "3f9c2ab"})])  # fmt: skip
    xml = build_snapshot(
        events,
        session_id="s",
        compact_seq=1,
        budget=MIN_BUDGET,
        search_command="/opt/tools/" + "deep/" * 30 + "bin/ctxmode search",
    )
    assert len(xml.encode()) <= MIN_BUDGET
    root = ET.fromstring(xml)
    assert root.find("requests/prompt") is not None, xml
    assert root.find("git") is None, xml


# -- through the hooks: a failure that comes back is recorded again ----------------------


class _Hooks:
    """Claude Code's Bash calls through the hooks (in process), one tool_use_id each."""

    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path / "proj"
        (self.dir / ".git").mkdir(parents=True)
        self.env = {"CTXMODE_HOME": str(tmp_path / "data"), "CLAUDE_PROJECT_DIR": str(self.dir)}
        self.calls = 0

    def run(self, event: str, **fields: Any) -> bytes:
        payload = {"session_id": "s", "cwd": str(self.dir), "hook_event_name": event, **fields}
        return hookrun.run_hook(event, io.BytesIO(json.dumps(payload).encode()), self.env)

    def bash(self, command: str, *, error: str = "", stdout: str = "", call: str = "") -> None:
        if not call:
            self.calls += 1
            call = f"toolu_{self.calls:04d}"
        fields: dict[str, Any] = {"tool_name": "Bash", "tool_input": {"command": command},
                                  "tool_use_id": call}  # fmt: skip
        if error:
            self.run("PostToolUseFailure", error=error, is_interrupt=False, **fields)
        else:
            response = {"stdout": stdout, "stderr": "", "interrupted": False}
            self.run("PostToolUse", tool_response=response, **fields)

    def edit(self, name: str) -> None:
        path = str(self.dir / name)
        self.calls += 1
        self.run("PostToolUse", tool_name="Edit", tool_use_id=f"toolu_{self.calls:04d}",
                 tool_input={"file_path": path, "old_string": "a", "new_string": "b"},
                 tool_response={"filePath": path})  # fmt: skip

    def store(self) -> Store:
        return Store.open(paths.store_path(str(self.dir), self.env), readonly=True)

    def snapshot(self) -> str:
        self.run("PreCompact", trigger="auto", custom_instructions="")
        out = self.run("SessionStart", source="compact")
        return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


FLAKY = "Exit code 1\nFAILED tests/test_clock.py::test_timing - TimeoutError"


def test_a_failure_that_comes_back_after_its_fix_is_open_again(tmp_path: Path) -> None:
    hooks = _Hooks(tmp_path)
    hooks.bash("pytest -q tests/test_clock.py", error=FLAKY)
    hooks.edit("src/clock.py")
    hooks.bash("pytest -q tests/test_clock.py", stdout="1 passed in 0.2s")
    hooks.edit("src/clock.py")
    hooks.bash("pytest -q tests/test_clock.py", error=FLAKY)  # fails exactly as before
    with hooks.store() as store:
        assert store.open_error_keys("s") == {"pytest -q tests/test_clock.py"}
    first = _first_error(hooks.snapshot())
    assert first is not None and first.get("key") == "pytest -q tests/test_clock.py"


def test_a_failure_run_again_after_others_is_the_newest(tmp_path: Path) -> None:
    hooks = _Hooks(tmp_path)
    hooks.bash("pytest -q", error=FLAKY)
    hooks.bash("make lint", error="Exit code 2\nerror: unused import")
    hooks.bash("pytest -q", error=FLAKY)  # the same failure, a later call
    errors = ET.fromstring(hooks.snapshot()).findall("errors/error")
    assert [(e.get("key"), e.get("count")) for e in errors] == [
        ("pytest -q", "2"),
        ("make lint", None),
    ]


def test_one_call_reported_twice_is_one_failure(tmp_path: Path) -> None:
    # Two registrations of the hooks (user and project scope) run it twice for one call.
    hooks = _Hooks(tmp_path)
    hooks.bash("pytest -q", error=FLAKY, call="toolu_same")
    hooks.bash("pytest -q", error=FLAKY, call="toolu_same")
    with hooks.store() as store:
        assert [e.type for e in store.session_events("s")].count("tool_error") == 1


def test_over_the_cap_a_resolved_error_is_not_open_again(tmp_path: Path) -> None:
    # The cap evicts the least important events first: a resolution evicted before the
    # error it resolves would leave that error open, the newest error of the snapshot.
    from ctxmode.events import make

    with Store.open(str(tmp_path / "s.db")) as store:

        def add(*events: SessionEvent) -> None:
            store.add_events("s", list(events), source_hook="PostToolUse", project_dir="/p",
                             max_events=8)  # fmt: skip

        add(make("tool_error", {"tool": "Bash", "key": "make lint", "error": "error: E501"}))
        add(make("tool_error", {"tool": "Bash", "key": "pytest -q", "error": "FAILED a"}))
        add(make("error_resolved", {"tool": "Bash", "key": "pytest -q"}))
        for n in range(12):
            add(make("file_edit", {"path": f"src/m{n}.py"}))
        assert store.open_error_keys("s") == {"make lint"}
        xml = build_snapshot(store.session_events("s"), session_id="s", compact_seq=1)
    assert [e.get("key") for e in ET.fromstring(xml).findall("errors/error")] == ["make lint"]
