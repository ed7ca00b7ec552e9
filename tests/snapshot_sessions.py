"""Realistic event sequences for the snapshot tests: the fixture stream, and scripted sessions.

The events are written the way the extractors (issue 3) store them, per the contract in
``ctxmode.events.TYPES``; they are written out by hand here so that the snapshot tests do
not depend on the extractors.
"""

from __future__ import annotations

import datetime as _dt

from ctxmode import fastjson
from ctxmode.events import TYPES, SessionEvent

FIXTURE_SESSION = "54a54534-123d-48d0-8d54-13291b1891fa"
_EPOCH = _dt.datetime(2026, 12, 2, 14, 51, 20, 123000, tzinfo=_dt.timezone.utc)


def stamp(ms: int, start: _dt.datetime = _EPOCH) -> str:
    """ISO-8601 UTC with milliseconds, ``ms`` after ``start`` (the store's format)."""
    t = start + _dt.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def ev(
    type: str,
    data: dict[str, object] | str,
    *,
    at: str,
    id: int,
    session_id: str = FIXTURE_SESSION,
    tool_use_id: str | None = None,
    agent_id: str | None = None,
    agent_type: str | None = None,
    priority: int | None = None,
) -> SessionEvent:
    """A stored event as ``store.session_events`` returns it."""
    category, default_priority, _ = TYPES[type]
    return SessionEvent(
        type,
        category,
        default_priority if priority is None else priority,
        data if isinstance(data, str) else fastjson.dumps(data),
        tool_use_id=tool_use_id,
        agent_id=agent_id,
        agent_type=agent_type,
        session_id=session_id,
        created_at=at,
        id=id,
    )


class _Log:
    """Appends events with increasing ids and times."""

    def __init__(self, session_id: str, start: _dt.datetime, step_ms: int) -> None:
        self.events: list[SessionEvent] = []
        self.session_id = session_id
        self.start = start
        self.step_ms = step_ms
        self.ms = 0

    def add(self, type: str, data: dict[str, object] | str, *, gap: int = 1, **kw: object) -> None:
        self.ms += gap * self.step_ms
        self.events.append(
            ev(
                type,
                data,
                at=stamp(self.ms, self.start),
                id=len(self.events) + 1,
                session_id=self.session_id,
                **kw,  # type: ignore[arg-type]
            )
        )


def fixture_session(compaction: int) -> list[SessionEvent]:
    """Session 54a54534 of stream.print-mode.jsonl, as stored when its ``compaction``-th
    PreCompact (1: ``/compact``, 2: ``/compact`` with instructions) fires.

    Lines 0-28 (startup run): the prompt, Write hello.py, one Bash with git init/add/commit/log
    (stdout ``fffa6df init``), Edit hello.py, TaskCreate #1, a failing ``ls`` (exit 2), an Agent
    call. Lines 31 and 38: two more prompts (resume, continue). Line 45: PreCompact #1.
    Line 53: the after-compact prompt. Line 60: PreCompact #2. UserPromptSubmit fires twice per
    prompt in that capture; the store's dedup keeps one event.
    """
    s = 0
    events: list[SessionEvent] = []

    def add(type: str, data: dict[str, object], ms: int, tool_use_id: str | None = None) -> None:
        events.append(ev(type, data, at=stamp(ms), id=len(events) + 1, tool_use_id=tool_use_id))

    add("user_prompt", {"text": "create hello.py and commit it"}, s)
    add("intent", {"intent": "implement"}, s)
    add("file_write", {"path": "hello.py", "kind": "create"}, s + 2_871, "toolu_mock_0_e02431f6")
    bash = "toolu_mock_1_c9c96ab5"
    add("git_op", {"op": "init", "args": "-q"}, s + 4_512, bash)
    add("git_op", {"op": "add", "args": "-A"}, s + 4_512, bash)
    add("git_commit", {"message": "init", "sha": "fffa6df"}, s + 4_512, bash)
    add("git_query", {"op": "log", "args": "--oneline"}, s + 4_512, bash)
    add(
        "file_edit",
        {"path": "hello.py", "summary": 'print("hello") → print("hello, world")'},
        s + 6_020,
        "toolu_mock_2_72079e47",
    )
    add(
        "task_create",
        {"id": "1", "subject": "Create hello.py and commit it", "description": "mock task"},
        s + 7_388,
        "toolu_mock_3_97378032",
    )
    add(
        "tool_error",
        {
            "tool": "Bash",
            "key": "ls /nonexistent-mock-dir",
            "error": "Exit code 2\nls: cannot access '/nonexistent-mock-dir': No such file or directory",
        },
        s + 8_950,
        "toolu_mock_4_1a68c1b3",
    )
    add(
        "subagent",
        {
            "agent_type": "general-purpose",
            "description": "Say hi",
            "summary": "Mock reply to: Say hi (mock subagent). MOCK-SAW: none",
        },
        s + 10_207,
        "toolu_mock_5_72abb50e",
    )
    add("user_prompt", {"text": "what did you do?"}, s + 61_530)
    add("intent", {"intent": "investigate"}, s + 61_530)
    add("user_prompt", {"text": "and then?"}, s + 95_004)
    if compaction >= 2:
        add("user_prompt", {"text": "after compact: what now?"}, s + 171_845)
        add("intent", {"intent": "investigate"}, s + 171_845)
    return events


def session_20() -> list[SessionEvent]:
    """A short, hand-scripted session: 20 events of one bug fix, with a plan and a push."""
    log = _Log("sess-20-rounding", _dt.datetime(2026, 12, 3, 9, 0, tzinfo=_dt.timezone.utc), 9_000)
    add = log.add
    add(
        "user_prompt",
        {"text": "Invoice totals are off by a cent for .005 amounts; fix the rounding."},
    )
    add("intent", {"intent": "fix"}, gap=0)
    add("rule_read", {"path": "CLAUDE.md"})
    add("file_read", {"path": "CLAUDE.md"}, gap=0)
    add("file_read", {"path": "src/invoice/rounding.py", "offset": 1, "limit": 120})
    add("file_search", {"tool": "Grep", "pattern": "round\\(", "matches": 7})
    add(
        "plan_exit",
        {
            "plan": "# Plan: invoice rounding\n\n1. Round totals half-up in src/invoice/rounding.py\n2. Add tests for .005 cases\n",
            "path": "/home/dev/.claude/plans/zany-beaming-marshmallow.md",
        },
    )
    add("task_create", {"id": "1", "subject": "Round totals half-up", "status": "pending"})
    add("task_create", {"id": "2", "subject": "Add tests for .005 cases"})
    add("task_update", {"id": "1", "status": "in_progress"})
    add(
        "file_edit",
        {"path": "src/invoice/rounding.py", "summary": "use Decimal.quantize(ROUND_HALF_UP)"},
        tool_use_id="toolu_e1",
    )
    add(
        "output_error",
        {
            "tool": "Bash",
            "key": "pytest -q",
            "error": "FAILED tests/test_rounding.py::test_half_cent - assert 1.0 == 1.01\n1 failed, 12 passed in 0.41s",
        },
    )
    add("user_prompt", {"text": "Always use Decimal for money, never float."})
    add("decision", {"text": "Always use Decimal for money, never float."}, gap=0)
    add(
        "file_edit",
        {"path": "src/invoice/rounding.py", "summary": "Decimal(str(x))"},
        tool_use_id="toolu_e2",
    )
    add("error_resolved", {"tool": "Bash", "key": "pytest -q"})
    add("task_update", {"id": "1", "status": "completed"})
    add(
        "git_commit",
        {
            "message": "Round invoice totals half-up with Decimal\n\nFixes the .005 cent drift.",
            "sha": "3f9c2ab",
        },
    )
    add("git_op", {"op": "push", "args": "origin fix/rounding"})
    add("user_prompt", {"text": "Now add the .005 tests & check the CSV export <total> column."})
    assert len(log.events) == 20
    return log.events


_FILES = (
    "src/invoice/export.py",
    "src/invoice/rounding.py",
    "src/invoice/models.py",
    "src/invoice/tax.py",
    "src/cli.py",
    "tests/test_export.py",
    "tests/test_rounding.py",
    "tests/test_tax.py",
    "docs/usage.md",
    "pyproject.toml",
    "src/invoice/currency.py",
)
_PROMPTS = (
    ("Wire the invoice export to CSV", "implement"),
    ("Why does the tax total differ from the sum of the lines?", "investigate"),
    ("Fix the failing rounding tests", "fix"),
    ("Refactor the currency conversion into its own module", "refactor"),
    ("Review the CLI argument parsing", "review"),
    ("Document the export command in docs/usage.md", "document"),
    ("Add tests for negative invoice lines", "test"),
)
_SUBJECTS = (
    "Export invoices as CSV",
    "Explain the tax rounding gap",
    "Fix rounding of half cents",
    "Move currency conversion to currency.py",
    "Review argument parsing in cli.py",
    "Document the export command",
    "Test negative invoice lines",
)


def work_session(n: int, session_id: str = "sess-work") -> list[SessionEvent]:
    """A long scripted session of exactly ``n`` events: numbered episodes of real work.

    Episode k: a prompt (with its intent), two reads, a task created and started, an edit,
    a test run (failing in every other episode), a fix; the failure is resolved except in
    every fifth episode; the task completes except in every third; a commit. Interleaved
    by k: a branch switch, pushes, decisions and a standing instruction, environment setup,
    a cwd change, web references, MCP calls, subagents, rule files, plans, task renames,
    deletions, new and deleted files, and a failed Read of a missing file later created.
    """
    log = _Log(session_id, _dt.datetime(2026, 12, 4, 8, 30, tzinfo=_dt.timezone.utc), 4_321)
    add = log.add
    k = 0
    while len(log.events) < n:
        prompt, intent = _PROMPTS[k % len(_PROMPTS)]
        subject = _SUBJECTS[k % len(_SUBJECTS)]
        task_id = str(k + 1)
        a = _FILES[k % len(_FILES)]
        b = _FILES[(k * 3 + 1) % len(_FILES)]
        add("user_prompt", {"text": f"{prompt} (step {k + 1})"})
        add("intent", {"intent": intent}, gap=0)
        if k == 0:
            add("rule_read", {"path": "CLAUDE.md"})
            add(
                "role",
                {"text": "You are a careful senior Python engineer; keep diffs small."},
                gap=0,
            )
        if k % 6 == 0:
            add(
                "git_branch",
                {"op": "switch", "branch": f"feature/invoice-{k // 6 + 1}", "created": True},
            )
        add("file_read", {"path": a})
        add("file_read", {"path": b, "offset": 40, "limit": 80})
        add(
            "file_search",
            {"tool": "Grep", "pattern": f"def {subject.split()[0].lower()}", "matches": k % 4},
        )
        add(
            "task_create",
            {
                "id": task_id,
                "subject": f"{subject} #{k + 1}",
                "description": f"{prompt}. Acceptance: tests green (step {k + 1}).",
            },
        )
        add("task_update", {"id": task_id, "status": "in_progress"})
        if k % 4 == 2 and k > 0:
            add(
                "task_update",
                {"id": str(k), "subject": f"{_SUBJECTS[(k - 1) % len(_SUBJECTS)]} (renamed) #{k}"},
            )
        if k % 9 == 8:
            add("task_update", {"id": str(k - 1), "status": "deleted"})
        if k % 8 == 3:
            add(
                "plan_exit",
                {
                    "plan": f"# Plan {k + 1}: {subject}\n\n1. Read {a}\n2. Change {a} and {b}\n3. Run pytest -q and commit\n",
                    "path": f"/home/dev/.claude/plans/plan-{k + 1}.md",
                },
            )
        add("file_edit", {"path": a, "summary": f"step {k + 1}"}, tool_use_id=f"toolu_{k}_a")
        if k % 3 == 1:
            add(
                "file_write",
                {"path": f"src/invoice/new_{k}.py", "kind": "create"},
                tool_use_id=f"toolu_{k}_w",
            )
        failing = k % 2 == 1
        test_cmd = f"pytest -q {_FILES[5 + k % 3]}"
        if failing:
            add(
                "output_error",
                {
                    "tool": "Bash",
                    "key": test_cmd,
                    "error": f"FAILED {_FILES[5 + k % 3]}::test_case_{k} - AssertionError\n2 failed, {10 + k} passed in 0.52s",
                },
            )
            add(
                "file_edit",
                {"path": b, "summary": f"fix for step {k + 1}"},
                tool_use_id=f"toolu_{k}_b",
            )
            if k % 5 != 4:
                add("error_resolved", {"tool": "Bash", "key": test_cmd})
        if k % 10 == 6:
            missing = f"data/fixtures/invoice_{k}.json"
            add(
                "tool_error",
                {"tool": "Read", "key": missing, "error": f"File does not exist: {missing}"},
            )
            add("file_write", {"path": missing, "kind": "create"}, tool_use_id=f"toolu_{k}_m")
        if k % 4 == 1:
            add(
                "decision",
                {
                    "text": f"Use Decimal with ROUND_HALF_UP everywhere money is rounded (decided at step {k + 1})"
                },
            )
        if k % 5 == 1:
            add(
                "env_setup",
                {
                    "kind": "install",
                    "tool": "pip",
                    "detail": f"pip install -e .[test] (round {k // 5 + 1})",
                },
            )
        if k == 2:
            add("cwd_change", {"path": "/home/dev/proj/src"})
            add(
                "env_setup",
                {
                    "kind": "venv",
                    "tool": "python",
                    "detail": "python -m venv .venv && source .venv/bin/activate",
                },
            )
        if k % 4 == 1:
            add(
                "web_fetch",
                {
                    "url": f"https://docs.python.org/3/library/decimal.html#step{k}",
                    "prompt": "rounding modes",
                },
            )
        if k % 7 == 5:
            add("web_search", {"query": f"python csv quoting excel compatibility {k}"})
        if k % 3 == 0:
            add(
                "mcp_call",
                {
                    "server": "billing",
                    "tool": "lookup_owner" if k % 2 else "get_invoice",
                    "args": ["invoice_id"],
                },
            )
        if k % 5 == 2:
            add(
                "subagent",
                {
                    "agent_type": "reviewer" if k % 2 else "general-purpose",
                    "description": f"Review step {k + 1} diff",
                },
            )
        if k == 7:
            add("rule_edit", {"path": "CLAUDE.md"}, tool_use_id="toolu_rule")
            add(
                "file_edit",
                {"path": "CLAUDE.md", "summary": "add rounding rule"},
                gap=0,
                tool_use_id="toolu_rule",
            )
        if k % 10 == 9:
            add("file_delete", {"path": f"src/invoice/new_{k - 2}.py"})
        if k % 3 != 2:
            add("task_update", {"id": task_id, "status": "completed"})
        add("git_op", {"op": "add", "args": "-A"})
        add(
            "git_commit",
            {
                "message": f"{subject} (step {k + 1})\n\nPart of the invoice work.",
                "sha": f"{(k * 2654435761) % 16**7:07x}",
            },
        )
        if k % 4 == 3:
            add("git_op", {"op": "push", "args": f"origin feature/invoice-{k // 6 + 1}"})
        k += 1
    events = log.events[:n]
    return events


def section(xml: str, tag: str) -> str | None:
    """The raw text of one section, from its start tag to its end tag (inclusive)."""
    start = xml.find(f"<{tag}>")
    if start < 0:
        start = xml.find(f"<{tag} ")
    if start < 0:
        return None
    end = xml.index(f"</{tag}>\n", start) + len(f"</{tag}>\n")
    return xml[start:end]
