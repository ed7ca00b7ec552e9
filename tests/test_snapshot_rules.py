"""Exact rules of the snapshot that a user notices, one test each: which facts survive the
budget and in which order, how long values are cut, the lookup hints, how events are read
(statuses, counts, failed commits) and the hand-over root. Written against the survivors
of a mutation pass (``scripts/mutation.py snapshot``): each test fails when its rule breaks."""

from __future__ import annotations

import itertools
import shlex
import xml.etree.ElementTree as ET

import pytest

from ctxmode import snapshot
from ctxmode.events import SessionEvent
from ctxmode.snapshot import MAX_CHARS, build_snapshot, provenance
from ctxmode.snapshot.repeat import is_pointer, pointer_since
from ctxmode.snapshot.selection import _RANK
from tests.snapshot_sessions import ev, section, stamp


def snap(events: list[SessionEvent], **kw: object) -> str:
    kw.setdefault("session_id", "s1")
    kw.setdefault("compact_seq", 1)
    xml = build_snapshot(events, **kw)  # type: ignore[arg-type]
    ET.fromstring(xml)  # every document parses
    return xml


def seq(*specs: tuple) -> list[SessionEvent]:
    """Events from ``(type, data)`` or ``(type, data, fields)`` tuples, one second apart."""
    out: list[SessionEvent] = []
    for n, (type_, data, *fields) in enumerate(specs):
        out.append(ev(type_, data, at=stamp(n * 1000), id=n + 1, **(fields[0] if fields else {})))
    return out


def lookup_options(xml: str, tag: str) -> list[str]:
    """The options of ``tag``'s lookup, as the shell reads them."""
    raw = section(xml, tag) or ""
    look = raw[raw.index("<lookup>") + len("<lookup>") : raw.index("</lookup>")]
    return shlex.split(look)


# ---------------------------------------------------------------------------------------
# Reading the events


def test_event_data_read_back_as_bytes_still_counts() -> None:
    # SQLite hands back a BLOB when one was stored in the data column: same facts.
    events = seq(("user_prompt", {"text": "fix the login redirect"}))
    events[0].data = events[0].data.encode()  # type: ignore[assignment]
    assert "<prompt>fix the login redirect</prompt>" in snap(events)


def test_a_commit_whose_data_is_null_still_counts_as_a_commit() -> None:
    events = seq(("git_commit", {"message": "x"}), ("file_edit", {"path": "a.py"}))
    events[0].data = None  # type: ignore[assignment]
    git = section(snap(events), "git")
    assert git is not None and "<commit>(no message)</commit>" in git
    assert 'changed_since_commit="1"' in git


@pytest.mark.parametrize("status", ["in-progress", "In Progress", " IN_PROGRESS "])
def test_a_task_status_is_normalised(status: str) -> None:
    events = seq(
        ("task_create", {"id": "1", "subject": "first"}),
        ("task_create", {"id": "2", "subject": "second"}),
        ("task_update", {"id": "2", "status": status}),
    )
    tasks = ET.fromstring(snap(events)).findall("tasks/task")
    # The task in progress is listed first, with the status the other tools use.
    assert [(t.get("id"), t.get("status")) for t in tasks] == [
        ("2", "in_progress"),
        ("1", "pending"),
    ]


def test_a_listed_task_without_a_status_is_pending() -> None:
    events = seq(("task_list", {"tasks": [{"id": "7", "subject": "write docs"}]}))
    (task,) = ET.fromstring(snap(events)).findall("tasks/task")
    assert task.attrib == {"id": "7", "status": "pending"} and task.text == "write docs"


def test_each_edit_of_a_rule_file_counts_once() -> None:
    # Each call reports a file event and a rule event: two calls, two edits.
    events = seq(
        ("file_edit", {"path": "CLAUDE.md"}, {"tool_use_id": "t1"}),
        ("rule_edit", {"path": "CLAUDE.md"}, {"tool_use_id": "t1"}),
        ("file_edit", {"path": "CLAUDE.md"}, {"tool_use_id": "t2"}),
        ("rule_edit", {"path": "CLAUDE.md"}, {"tool_use_id": "t2"}),
    )
    assert '<file path="CLAUDE.md" change="edit" count="2"/>' in snap(events)


def test_an_error_recorded_as_plain_text_shows_its_text() -> None:
    xml = snap(seq(("tool_error", "Exit code 1\nModuleNotFoundError: foo")))
    (error,) = ET.fromstring(xml).findall("errors/error")
    assert error.text == "Exit code 1 | ModuleNotFoundError: foo"


def test_a_failed_commit_shows_only_when_its_output_proves_it() -> None:
    events = seq(
        ("git_commit", {"message": "never made"}, {"tool_use_id": "t1"}),
        (
            "tool_error",
            {"tool": "Bash", "key": "git commit", "error": "hook failed"},
            {"tool_use_id": "t1"},
        ),
        ("git_commit", {"message": "made anyway", "sha": "abc1234"}, {"tool_use_id": "t2"}),
        (
            "tool_error",
            {"tool": "Bash", "key": "git push", "error": "rejected"},
            {"tool_use_id": "t2"},
        ),
    )
    commits = ET.fromstring(snap(events)).findall("git/commit")
    assert [(c.get("sha"), c.text) for c in commits] == [("abc1234", "made anyway")]


def test_a_git_op_repeated_is_counted() -> None:
    events = seq(
        ("git_op", {"op": "push", "args": "origin main"}),
        ("git_op", {"op": "push", "args": "origin main"}),
    )
    assert '<op count="2">push origin main</op>' in snap(events)


def test_a_subagent_run_twice_is_counted() -> None:
    events = seq(
        ("subagent", {"agent_type": "reviewer", "description": "Review the diff"}),
        ("subagent", {"agent_type": "reviewer", "description": "Review the diff"}),
    )
    assert '<subagent type="reviewer" count="2">Review the diff</subagent>' in snap(events)


# ---------------------------------------------------------------------------------------
# Sections


def test_at_most_six_rule_files_newest_first() -> None:
    events = seq(*[("rule_read", {"path": f"rules/r{n}.md"}) for n in range(8)])
    rules = ET.fromstring(snap(events)).find("rules")
    assert rules is not None and rules.get("omitted") == "2"
    assert [r.get("path") for r in rules.findall("rule")] == [
        f"rules/r{n}.md" for n in range(7, 1, -1)
    ]


def test_the_environment_section_with_only_a_cwd_or_only_a_setup() -> None:
    env = ET.fromstring(snap(seq(("cwd_change", {"path": "/w/app"})))).find("environment")
    assert env is not None and env.get("cwd") == "/w/app"
    events = seq(("env_setup", {"kind": "install", "tool": "npm", "detail": "npm ci"}))
    env = ET.fromstring(snap(events)).find("environment")
    assert env is not None and env.get("cwd") is None
    assert [s.text for s in env.findall("setup")] == ["npm ci"]


def test_the_git_lookup_lists_its_events_when_nothing_was_committed() -> None:
    events = seq(
        ("git_branch", {"op": "switch", "branch": "feature/login-redirect", "created": True}),
        ("git_op", {"op": "push", "args": "-u origin feature/login-redirect"}),
    )
    xml = snap(events)
    assert lookup_options(xml, "git") == [
        "--session",
        "s1",
        "--type",
        "git_commit,git_branch,git_op",
    ]
    assert ET.fromstring(xml).find("git/op") is not None


@pytest.mark.parametrize(
    ("events", "tag", "kinds"),
    [
        (seq(("user_prompt", {"text": "<<>> & <> $(id)"})), "requests", "prompt"),
        (seq(("task_create", {"id": "1", "subject": "&&& '"})), "tasks", "task"),
        (seq(("decision", {"text": "<> `id`"})), "decisions", "decision,role"),
    ],
)
def test_a_lookup_holds_no_item_text(events: list[SessionEvent], tag: str, kinds: str) -> None:
    """What a section's items say never reaches its lookup: it lists the section's kind."""
    assert lookup_options(snap(events), tag) == ["--session", "s1", "--category", kinds]


# ---------------------------------------------------------------------------------------
# How long a value may be (full detail, nothing else competing for the budget)

WORDS = " ".join(f"w{n:04d}" for n in range(400))  # 2,399 characters: 5-letter words
SOLID = "z" * 2000


def _prompts(last: str, goal: str = "start") -> list[tuple]:
    texts = [goal, "p1", "p2", last]
    return [("user_prompt", {"text": t}) for t in texts]


CAPS = [
    # (events, path to the element, attribute or None for its text, the cap)
    (_prompts("last", goal=SOLID), "requests/goal", None, 300),
    (_prompts(SOLID), "requests/prompt", None, 700),
    ([("task_create", {"id": "1", "subject": SOLID})], "tasks/task", None, 120),
    (
        [("todo_write", {"todos": [{"content": SOLID, "status": "pending"}]})],
        "tasks/task",
        None,
        120,
    ),
    ([("tool_error", {"tool": "Bash", "key": "make", "error": SOLID})], "errors/error", None, 300),
    ([("tool_error", {"tool": SOLID, "key": "make", "error": "x"})], "errors/error", "tool", 40),
    ([("git_commit", {"message": SOLID, "sha": "abc1234"})], "git/commit", None, 120),
    (
        [("env_setup", {"kind": "install", "tool": SOLID, "detail": "x"})],
        "environment/setup",
        "tool",
        40,
    ),
    ([("mcp_call", {"server": SOLID, "tool": "lookup"})], "mcp/tool", "server", 60),
    ([("web_search", {"query": SOLID})], "references/web_search", None, 160),
]


@pytest.mark.parametrize(("specs", "where", "attr", "cap"), CAPS)
def test_a_long_value_is_cut_to_its_cap(
    specs: list[tuple], where: str, attr: str | None, cap: int
) -> None:
    node = ET.fromstring(snap(seq(*specs), budget=MAX_CHARS)).findall(where)[-1]
    value = node.get(attr) if attr else node.text
    assert value is not None
    assert len(value) == cap and value.endswith("…") and value[:-1] == SOLID[: cap - 1]


def test_a_cut_ends_at_a_word_boundary() -> None:
    root = ET.fromstring(snap(seq(*_prompts(WORDS)), budget=MAX_CHARS))
    text = root.findall("requests/prompt")[-1].text or ""
    assert text.endswith("…") and WORDS.startswith(text[:-1] + " ")
    assert 700 * 3 // 4 <= len(text) <= 700


@pytest.mark.parametrize(
    ("specs", "where"),
    [
        ([("file_edit", {"path": "/deep" * 60 + "/src/app.py"})], "files_changed/file"),
        ([("file_read", {"path": "/deep" * 60 + "/src/app.py"})], "files_read/file"),
        ([("rule_read", {"path": "/deep" * 60 + "/src/app.py"})], "rules/rule"),
    ],
)
def test_a_long_path_keeps_its_end(specs: list[tuple], where: str) -> None:
    node = ET.fromstring(snap(seq(*specs), budget=MAX_CHARS)).find(where)
    assert node is not None
    path = node.get("path") or ""
    assert len(path) == 160 and path == "…" + ("/deep" * 60 + "/src/app.py")[-159:]


# ---------------------------------------------------------------------------------------
# The budget: which sections give way first, and by how much


def _long(n: int, what: str) -> str:
    return f"{what} {n} " + " ".join(f"{what}{k}" for k in range(60))


SECTION_EVENTS: dict[str, list[tuple]] = {
    "requests": [("user_prompt", {"text": _long(n, "ask")}) for n in range(4)],
    "tasks": [("task_create", {"id": str(n), "subject": _long(n, "task")}) for n in range(8)],
    "files_changed": [("file_edit", {"path": f"src/{'pkg/' * 35}m{n}.py"}) for n in range(8)],
    "files_read": [("file_read", {"path": f"doc/{'sub/' * 35}r{n}.md"}) for n in range(5)],
    "errors": [
        ("tool_error", {"tool": "Bash", "key": f"make t{n}", "error": _long(n, "err")})
        for n in range(4)
    ],
    "decisions": [("decision", {"text": _long(n, "dec")}) for n in range(5)],
    "plan": [("plan_exit", {"plan": _long(0, "plan") * 3})],
    "rules": [("rule_read", {"path": f"rules/{'sub/' * 35}r{n}.md"}) for n in range(6)],
    "git": [("git_commit", {"message": _long(n, "commit"), "sha": f"{n}" * 7}) for n in range(5)],
    "environment": [
        ("env_setup", {"kind": "install", "tool": "pip", "detail": _long(n, "pkg")})
        for n in range(5)
    ],
    "subagents": [
        ("subagent", {"agent_type": "worker", "description": _long(n, "job")}) for n in range(4)
    ],
    "mcp": [("mcp_call", {"server": "s" * 70 + str(n), "tool": "t" * 70}) for n in range(5)],
    "references": [("web_search", {"query": _long(n, "query")}) for n in range(5)],
}
BY_RANK = sorted(_RANK, key=_RANK.__getitem__)


@pytest.mark.parametrize(("keep", "give"), list(itertools.pairwise(BY_RANK)), ids="-over-".join)
def test_the_less_important_section_gives_way_first(keep: str, give: str) -> None:
    events = seq(*SECTION_EVENTS[keep], *SECTION_EVENTS[give])
    full = snap(events, budget=MAX_CHARS)
    assert len(full.encode()) < MAX_CHARS  # both whole
    # A little too small for both: only the less important one is shortened.
    tight = snap(events, budget=len(full.encode()) - 60)
    assert section(tight, keep) == section(full, keep)
    assert section(tight, give) != section(full, give)


def test_the_last_request_is_shortened_in_halving_steps() -> None:
    # Only the last request; a longer search command leaves it less room, step by step.
    events = seq(("user_prompt", {"text": SOLID}))
    seen = []
    for n in range(0, 1000, 10):
        xml = snap(events, budget=1024, search_command="ctxmode search" + "x" * n)
        prompt = ET.fromstring(xml).find("requests/prompt")
        seen.append(len(prompt.text or "") if prompt is not None else 0)
    assert seen == sorted(seen, reverse=True)  # less room never gives more text
    # Full (700) does not fit 1 KB; then half, a quarter, ... a sixteenth, then nothing
    # but the root and preface (0).
    assert sorted(set(seen), reverse=True) == [350, 175, 87, 43, 0]


def test_the_oldest_recent_request_goes_before_the_goal() -> None:
    prompts = [f"goal {SOLID}", f"first {SOLID}", f"second {SOLID}", f"last {SOLID}"]
    events = seq(*[("user_prompt", {"text": p}) for p in prompts])
    tags = []
    # Less and less room: a smaller budget, then a longer search command.
    room = [(b, "ctxmode search") for b in range(2400, 1023, -40)]
    room += [(1024, "ctxmode search" + "x" * n) for n in range(0, 400, 20)]
    for budget, command in room:
        req = ET.fromstring(snap(events, budget=budget, search_command=command)).find("requests")
        assert req is not None
        tags.append([(e.tag, (e.text or "").split()[0]) for e in req if e.tag != "lookup"])
    assert [("goal", "goal"), ("prompt", "first"), ("prompt", "second"), ("prompt", "last")] in (
        tags
    )
    assert [("goal", "goal"), ("prompt", "second"), ("prompt", "last")] in tags
    assert [("goal", "goal"), ("prompt", "last")] in tags
    assert tags[-1] == [("prompt", "last")]  # the last request never goes


# ---------------------------------------------------------------------------------------
# Never failing, and the hand-over


def test_a_fault_anywhere_still_gives_a_well_formed_document(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: object) -> str:
        raise RuntimeError("a bug in the preface")

    monkeypatch.setattr(snapshot, "preface_text", broken)
    xml = build_snapshot(seq(("user_prompt", {"text": "hi"})), session_id="s1", compact_seq=1)
    assert xml == "<session_resume/>\n"


def test_a_handed_on_end_snapshot_without_an_end_time_says_it_ended() -> None:
    stored = build_snapshot([], session_id="old", compact_seq=1, kind="end")
    xml = provenance(
        stored, from_session="old", kind="end", seq=1, taken_at="", reason="inject_on_startup"
    )
    preface = ET.fromstring(xml).find("preface")
    assert preface is not None and "(id old, ended)" in (preface.text or "")


def test_a_bare_root_handed_on_gets_its_provenance() -> None:
    xml = provenance(
        "<session_resume/>\n",
        from_session="old",
        kind="end",
        seq=2,
        taken_at="2026-12-02T14:51:20.123Z",
        reason="inject_on_clear",
    )
    root = ET.fromstring(xml)
    assert root.get("source") == "previous-session" and root.get("end") == "2"
    assert "after /clear" in (root.findtext("preface") or "")


def test_only_a_session_resume_root_is_read_as_a_pointer() -> None:
    # What is stored is always ctxmode's own document: any other text is no pointer, and
    # its state is that of its whole text.
    other = '<other unchanged_since="3">p</other>\n'
    assert not is_pointer(other) and pointer_since(other) is None
    assert is_pointer('<session_resume session="s" unchanged_since="3">p</session_resume>')
