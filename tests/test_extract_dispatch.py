"""The dispatcher: routing, isolation of failing extractors, masking, budgets, properties."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxmode import events, payload, redact
from ctxmode.events import SessionEvent
from ctxmode.extract import KINDS, extract, jobs, prompts
from ctxmode.extract.common import BUDGETS, DATA_BUDGET, fit
from ctxmode.hosts.claude_code import TOOL_KINDS
from tests.hooktools import FIXTURES

REPO = Path(__file__).resolve().parents[1]
PROJECT = "/home/dev/proj"


def make_input(event: str, **raw: Any) -> payload.HookInput:
    raw.setdefault("session_id", "s")
    raw.setdefault("cwd", PROJECT)
    inp = payload.from_dict(raw, event)
    inp.project_dir = PROJECT
    return inp


def assert_well_formed(event: SessionEvent, inp: payload.HookInput) -> None:
    """The contract every returned event meets, whatever the input."""
    assert event.type in events.TYPES
    category, _, _ = events.TYPES[event.type]
    assert event.category == category
    assert isinstance(event.priority, int) and 1 <= event.priority <= 5
    assert isinstance(event.data, str)
    assert len(event.data) <= BUDGETS.get(event.type, DATA_BUDGET)
    decoded = json.loads(event.data)
    assert isinstance(decoded, dict)
    assert json.dumps(decoded, ensure_ascii=False, separators=(",", ":")) == event.data
    assert (event.agent_id, event.agent_type, event.tool_use_id) == (
        inp.agent_id,
        inp.agent_type,
        inp.tool_use_id,
    )


# -- routing ------------------------------------------------------------------------------------

ROUTES = [
    *((name, ".".join(KINDS[kind])) for name, kind in TOOL_KINDS.items() if kind in KINDS),
    ("mcp__github__create_issue", "agents.mcp"),
]


@pytest.mark.parametrize(("tool", "route"), ROUTES)
def test_routing(tool: str, route: str) -> None:
    [job] = jobs(make_input("PostToolUse", tool_name=tool))
    assert job.__qualname__ == route


@pytest.mark.parametrize(
    ("event", "tool", "routes"),
    [
        ("PostToolUseFailure", "Read", ["errors.tool_failure"]),
        ("PostToolUseFailure", "Bash", ["errors.tool_failure"]),
        ("UserPromptSubmit", "", ["prompts.user_prompt", "prompts.signals", "prompts.urls"]),
        ("PostToolUse", "Bash", ["_bash"]),
        ("PostToolUse", "TaskGet", []),
        ("PostToolUse", "Skill", []),
        ("PreCompact", "", []),
        ("SessionStart", "", []),
    ],
)
def test_routing_by_event(event: str, tool: str, routes: list[str]) -> None:
    assert [j.__qualname__ for j in jobs(make_input(event, tool_name=tool))] == routes


def test_agent_fields_and_tool_use_id_on_every_event() -> None:
    inp = make_input(
        "PostToolUse",
        tool_name="Write",
        agent_id="a42",
        agent_type="reviewer",
        tool_use_id="toolu_7",
        tool_input={"file_path": f"{PROJECT}/CLAUDE.md"},
    )
    got = extract(inp)
    assert [(e.type, e.data, e.agent_id, e.agent_type, e.tool_use_id) for e in got] == [
        (
            "file_write",
            '{"path":"CLAUDE.md","given":"/home/dev/proj/CLAUDE.md"}',
            "a42",
            "reviewer",
            "toolu_7",
        ),
        ("rule_edit", '{"path":"CLAUDE.md"}', "a42", "reviewer", "toolu_7"),
    ]
    assert [(e.category, e.priority) for e in got] == [("file", 2), ("rule", 1)]


def test_identical_events_in_one_call_are_kept_once() -> None:
    patch = "*** Begin Patch\n*** Update File: a.py\n*** Update File: a.py\n*** End Patch"
    got = extract(make_input("PostToolUse", tool_name="apply_patch", tool_input={"input": patch}))
    assert [(e.type, e.data) for e in got] == [("file_edit", '{"path":"a.py"}')]


# -- isolation ----------------------------------------------------------------------------------


def test_a_raising_extractor_costs_only_its_own_events(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(inp: payload.HookInput) -> list[Any]:
        raise RuntimeError("bug")

    monkeypatch.setattr(prompts, "signals", boom)
    got = extract(make_input("UserPromptSubmit", prompt="Fix it, see https://example.com/a"))
    assert [(e.type, e.data) for e in got] == [
        ("user_prompt", '{"text":"Fix it, see https://example.com/a"}'),
        ("url_ref", '{"url":"https://example.com/a"}'),
    ]


def _bash_input() -> payload.HookInput:
    return make_input(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "git status"},
        tool_response={"stdout": "", "stderr": ""},
        tool_use_id="toolu_b",
    )


def test_missing_bash_module_gives_no_bash_events(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ctxmode.extract.bash", None)  # import raises ImportError
    assert extract(_bash_input()) == []
    # Other tools are unaffected.
    read = make_input("PostToolUse", tool_name="Read", tool_input={"file_path": "/x"})
    assert [e.type for e in extract(read)] == ["file_read"]


def _fake_bash(monkeypatch: pytest.MonkeyPatch, result: Any) -> None:
    module = types.ModuleType("ctxmode.extract.bash")

    def fake_extract(inp: payload.HookInput) -> Any:
        if isinstance(result, Exception):
            raise result
        return result

    module.extract = fake_extract  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ctxmode.extract.bash", module)


def test_broken_bash_module_gives_no_bash_events(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_bash(monkeypatch, RuntimeError("parser bug"))
    assert extract(_bash_input()) == []
    _fake_bash(monkeypatch, "not a list")
    assert extract(_bash_input()) == []


def test_bash_events_are_checked_and_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_bash(
        monkeypatch,
        [
            SessionEvent("no_such_type", "git", 2, '{"a":1}'),  # unknown type: dropped
            SessionEvent("git_op", "git", 3, "plain text"),  # not a JSON object: dropped
            SessionEvent("git_op", "git", 3, "[1]"),  # not an object: dropped
            SessionEvent(
                "git_commit", "file", 9, '{"message":"fix: x"}'
            ),  # category/priority fixed
            SessionEvent(
                "git_branch", "git", 3, '{"op":"switch","branch":"dev"}', bytes_avoided=12
            ),
            ("cwd_change", {"path": "/home/dev/proj/src"}),  # drafts are accepted too
            "garbage",
            None,
        ],
    )
    got = extract(_bash_input())
    assert [
        (e.type, e.category, e.priority, e.data, e.bytes_avoided, e.tool_use_id) for e in got
    ] == [
        ("git_commit", "git", 1, '{"message":"fix: x"}', 0, "toolu_b"),
        ("git_branch", "git", 3, '{"op":"switch","branch":"dev"}', 12, "toolu_b"),
        ("cwd_change", "cwd", 3, '{"path":"/home/dev/proj/src"}', 0, "toolu_b"),
    ]


# -- masking ------------------------------------------------------------------------------------


def test_masking_that_inserts_json_specials_keeps_json_valid(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(redact, "mask", lambda text: text.replace("SECRET", '"\\\n[R]\\"'))
    inp = make_input(
        "PostToolUseFailure",
        tool_name="Bash",
        tool_input={"command": "echo SECRET"},
        error="failed: SECRET",
    )
    call, event = extract(inp)
    assert json.loads(call.data) == {"command": 'echo "\\\n[R]\\"', "output": 'failed: "\\\n[R]\\"'}
    assert json.loads(event.data) == {
        "tool": "Bash",
        "key": 'echo "\\\n[R]\\"',
        "error": 'failed: "\\\n[R]\\"',
    }


def test_a_mask_failure_drops_the_event(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(text: str) -> str:
        raise ValueError("mask bug")

    monkeypatch.setattr(redact, "mask", broken)
    # Fail closed: nothing that could not be masked is returned, and nothing raises.
    assert extract(make_input("UserPromptSubmit", prompt="my password is hunter2")) == []
    assert (
        extract(make_input("PostToolUse", tool_name="Read", tool_input={"file_path": "/x"})) == []
    )


def test_mask_applies_to_bash_events(monkeypatch: pytest.MonkeyPatch) -> None:
    token = "ghp_" + "Q" * 36
    _fake_bash(monkeypatch, [events.make("git_commit", {"message": f"add {token}"})])
    [event] = extract(_bash_input())
    assert token not in event.data and "[REDACTED:" in event.data


SECRETS = {
    "github": "ghp_" + "Ab1" * 12,
    "anthropic": "sk-ant-api03-" + "x1Y2z3" * 8,
    "aws": "AKIAIOSFODNN7EXAMPLE",
}


@pytest.mark.parametrize("secret", list(SECRETS.values()), ids=list(SECRETS))
@pytest.mark.parametrize(
    ("event", "fields"),
    [
        ("UserPromptSubmit", {"prompt": "Don't leak {s}, always rotate {s}."}),
        (
            "PostToolUse",
            {"tool_name": "Read", "tool_input": {"file_path": "/home/dev/proj/{s}.env"}},
        ),
        (
            "PostToolUse",
            {
                "tool_name": "TaskCreate",
                "tool_input": {"subject": "rotate {s}", "description": "old: {s}"},
                "tool_response": {"task": {"id": "1", "subject": "rotate {s}"}},
            },
        ),
        (
            "PostToolUse",
            {
                "tool_name": "TodoWrite",
                "tool_input": {"todos": [{"content": "rotate {s}", "status": "pending"}]},
            },
        ),
        ("PostToolUse", {"tool_name": "ExitPlanMode", "tool_input": {"plan": "1. revoke {s}"}}),
        (
            "PostToolUse",
            {
                "tool_name": "Agent",
                "tool_input": {"description": "check {s}"},
                "tool_response": "found {s} in config",
            },
        ),
        ("PostToolUse", {"tool_name": "WebSearch", "tool_input": {"query": "leaked {s}"}}),
        (
            "PostToolUse",
            {
                "tool_name": "WebFetch",
                "tool_input": {"url": "https://example.com/?key={s}", "prompt": "is {s} ok"},
            },
        ),
        ("PostToolUse", {"tool_name": "mcp__vault__{s}", "tool_input": {"{s}": "{s}"}}),
        ("PostToolUse", {"tool_name": "Grep", "tool_input": {"pattern": "{s}"}}),
        (
            "PostToolUseFailure",
            {"tool_name": "Bash", "tool_input": {"command": "login {s}"}, "error": "rejected {s}"},
        ),
    ],
)
def test_secrets_never_leave_the_extractors(
    secret: str, event: str, fields: dict[str, Any]
) -> None:
    filled = json.loads(json.dumps(fields).replace("{s}", secret))
    inp = make_input(event, **filled)
    got = extract(inp)
    assert got, "expected at least one event"
    for e in got:
        assert secret not in e.data
        assert_well_formed(e, inp)


# -- fitting ------------------------------------------------------------------------------------


def test_fit_keeps_small_data_as_is() -> None:
    assert fit({"path": "a.py", "n": 1}, 100) == '{"path":"a.py","n":1}'


def test_fit_shares_the_cut_between_long_fields() -> None:
    out = fit({"a": "x" * 600, "b": "y" * 600, "c": "short"}, 500)
    data = json.loads(out)
    assert len(out) <= 500 and data["c"] == "short"
    assert abs(len(data["a"]) - len(data["b"])) <= 1 and data["a"].endswith("…")


def test_fit_trims_the_key_last() -> None:
    out = fit({"tool": "Bash", "key": "k" * 300, "error": "\x00" * 400}, 1000)
    assert len(out) <= 1000 and json.loads(out)["key"] == "k" * 300


def test_fit_drops_list_items_when_strings_cannot_give() -> None:
    out = fit({"args": [f"a{i}" for i in range(500)]}, 200)
    data = json.loads(out)
    assert len(out) <= 200 and data["args"] == [f"a{i}" for i in range(len(data["args"]))]


# -- every real payload --------------------------------------------------------------------------


def _all_payloads() -> list[tuple[str, dict[str, Any]]]:
    # transcripts/ holds what `ctxmode import` reads (tests/test_import.py), not payloads.
    def payloads(pattern: str) -> list[Path]:
        return [p for p in sorted(FIXTURES.rglob(pattern)) if "transcripts" not in p.parts]

    # tools.*.json list the tools a client offers (tests/test_tool_tables.py), no payloads.
    found = [
        (p.name, json.loads(p.read_text()))
        for p in payloads("*.json")
        if not p.name.startswith("tools.")
    ]
    for stream in payloads("*.jsonl"):
        for n, line in enumerate(stream.read_text().splitlines()):
            found.append((f"{stream.name}:{n}", json.loads(line)))
    return found


def test_every_captured_payload_gives_well_formed_events() -> None:
    payloads = _all_payloads()
    assert len(payloads) > 400, f"the recorded payloads under {FIXTURES} are missing"
    counts: dict[str, int] = {}
    for _name, record in payloads:
        inp = payload.from_dict(record["payload"], record["event"])
        inp.project_dir = PROJECT
        for event in extract(inp):
            assert_well_formed(event, inp)
            counts[event.category] = counts.get(event.category, 0) + 1
    # The captured sessions exercise every category these extractors own (no captured
    # session touched a rule file: rules are covered by hand-written payloads).
    for category in (
        "file",
        "task",
        "plan",
        "prompt",
        "decision",
        "intent",
        "error",
        "subagent",
        "mcp",
        "external-ref",
    ):
        assert counts.get(category), category


# -- the property: arbitrary input never raises, output always well-formed -------------------

KEYS = [
    "file_path",
    "notebook_path",
    "content",
    "edits",
    "offset",
    "limit",
    "pattern",
    "path",
    "output_mode",
    "todos",
    "taskId",
    "status",
    "subject",
    "description",
    "plan",
    "planFilePath",
    "url",
    "query",
    "prompt",
    "subagent_type",
    "command",
    "answers",
    "input",
    "patch",
    "edit_mode",
    "cell_type",
    "cell_id",
    "replace_all",
    "old_string",
    "new_string",
]
TOOL_NAMES = [*TOOL_KINDS, "Bash", "mcp__srv__tool", "mcp__x", "Skill", "TaskGet", "apply_patch"]
SPECIAL = st.sampled_from(
    [
        "/home/dev/proj/CLAUDE.md",
        "C:\\proj\\.claude\\rules\\a.md",
        "../../../etc/passwd",
        "",
        "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n*** Delete File: \n",
        "https://u:p@h/?token=x",
        "ghp_" + "a" * 36,
        "<private>x</private>",
        "\x00\ud7ff\U0010ffff",
        "No, don't. You are a senior engineer. From now on, always test.",
        "x" * 5000,
    ]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40) | SPECIAL,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    event=st.sampled_from(["PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop"]),
    tool_name=st.sampled_from(TOOL_NAMES) | st.text(max_size=20),
    tool_input=st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), JSON, max_size=6),
    tool_response=JSON | JSON.map(json.dumps),
    prompt=st.none() | st.integers() | st.text(max_size=300) | SPECIAL,
    error=st.none() | st.text(max_size=600) | st.integers(),
    agent=st.none() | st.text(max_size=10),
    project=st.sampled_from([PROJECT, "C:\\proj", "/", ""]),
    cwd=st.sampled_from([PROJECT, f"{PROJECT}/src", "", "rel/dir"]),
)
def test_arbitrary_input_never_raises_and_stays_well_formed(
    event: str,
    tool_name: str,
    tool_input: dict[str, Any],
    tool_response: Any,
    prompt: Any,
    error: Any,
    agent: str | None,
    project: str,
    cwd: str,
) -> None:
    raw = {
        "session_id": "s",
        "cwd": cwd,
        "tool_name": tool_name,
        "tool_input": tool_input,
        "tool_response": tool_response,
        "prompt": prompt,
        "error": error,
        "agent_id": agent,
        "agent_type": agent,
        "tool_use_id": agent,
        "is_interrupt": True,
    }
    inp = payload.from_dict(raw, event)
    inp.project_dir = project
    for e in extract(inp):
        assert_well_formed(e, inp)


WORDS = [
    "no",
    "don't",
    "use",
    "instead",
    "you",
    "are",
    "a",
    "senior",
    "engineer",
    "act",
    "as",
    "from",
    "now",
    "on",
    "always",
    "never",
    "let's",
    "go",
    "with",
    "fix",
    "the",
    "bug",
    "review",
    "test",
    "write",
    "nein",
    "du",
    "bist",
    "ab",
    "jetzt",
    "statt",
    ",",
    ".",
    "?",
    "!",
    ";",
    "—",
    "\n",
    "```",
    "https://x.io/a",
    "please",
    "can",
    "rather",
    "than",
    "%",
    "*",
    "_",
    "|",
    "..3",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS) | st.text(max_size=6), max_size=60))
def test_prompt_analysis_never_raises(words: list[str]) -> None:
    text = " ".join(words)
    inp = make_input("UserPromptSubmit", prompt=text)
    got = extract(inp)
    for e in got:
        assert_well_formed(e, inp)
        if e.type == "intent":
            assert json.loads(e.data)["intent"] in prompts.INTENTS
    cleaned = redact.strip_private(text).strip()
    kinds = [e.type for e in got]
    if cleaned:
        assert kinds[0] == "user_prompt"
    # Any word outside a fence or a slash command gives an intent.
    if (
        any(c.isalpha() for c in cleaned)
        and "```" not in cleaned
        and not (prompts.is_slash_command(cleaned))
    ):
        assert "intent" in kinds


# -- hot-path hygiene --------------------------------------------------------------------------

MINE = ["__init__", "common", "files", "tasks", "prompts", "agents", "errors"]


@pytest.mark.parametrize("module", MINE)
def test_no_regular_expressions_at_all(module: str) -> None:
    tree = ast.parse((REPO / "ctxmode" / "extract" / f"{module}.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    # ``typing`` and friends appear only under ``if TYPE_CHECKING:`` (test_imports checks).
    assert not imported & {"re", "json", "os", "posixpath", "ntpath", "pathlib", "shlex"}


def test_one_call_loads_only_what_it_needs() -> None:
    code = """
import sys
sys.path.insert(0, REPO)
from ctxmode import payload, redact
redact.mask = lambda text: text  # measure the extractors alone
from ctxmode.extract import extract
inp = payload.from_dict({"tool_name": "Read", "tool_input": {"file_path": "/p/a.py"}},
                        "PostToolUse")
inp.project_dir = "/p"
assert [e.data for e in extract(inp)] == ['{"path":"a.py","given":"/p/a.py"}']
loaded = sorted(m for m in sys.modules if m.startswith("ctxmode.extract."))
inp = payload.from_dict({"prompt": "No, use pytest instead. You are a senior engineer."},
                        "UserPromptSubmit")
assert [e.type for e in extract(inp)] == ["user_prompt", "intent", "decision", "role"]
print(loaded, "re" in sys.modules, "json" in sys.modules, "typing" in sys.modules)
""".replace("REPO", repr(str(REPO)))
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "['ctxmode.extract.common',",
        "'ctxmode.extract.files']",
        "False",
        "False",
        "False",
    ]
