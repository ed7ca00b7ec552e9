"""Behaviours of the hook handlers a mutation pass found untested (issue 13).

Each test drives the hooks as Claude Code does (``hookrun.run_hook`` in process, or the
real hook scripts as processes where that is the point) and fails when the behaviour
it names is broken.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from ctxmode import hookrun, paths
from ctxmode.events import make
from ctxmode.snapshot import build_snapshot
from ctxmode.store import Store
from tests.hooktools import hook_env, run_hook


class Project:
    """A project folder and a data root; hooks run in process with their environment."""

    def __init__(self, tmp_path: Path, config: dict[str, Any] | None = None) -> None:
        self.dir = tmp_path / "proj"
        (self.dir / ".claude").mkdir(parents=True)
        if config is not None:
            (self.dir / ".claude" / "ctxmode.json").write_text(json.dumps(config))
        self.env = {"CTXMODE_HOME": str(tmp_path / "data"), "CLAUDE_PROJECT_DIR": str(self.dir)}

    def hook(self, event: str, session: str, **fields: Any) -> str | None:
        """Run one hook; the additionalContext it printed, or None if it printed nothing."""
        payload = {"session_id": session, "cwd": str(self.dir), "hook_event_name": event}
        payload.update(fields)
        out = hookrun.run_hook(event, io.BytesIO(json.dumps(payload).encode()), self.env)
        if not out:
            return None
        return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])

    def write(self, session: str, name: str) -> None:
        path = str(self.dir / name)
        self.hook(
            "PostToolUse", session, tool_name="Write",
            tool_input={"file_path": path, "content": "x = 1\n"},
            tool_response={"type": "create", "filePath": path},
        )  # fmt: skip

    def read(self, session: str, path: str) -> None:
        self.hook(
            "PostToolUse", session, tool_name="Read", tool_input={"file_path": path},
            tool_response={"type": "text", "file": {"filePath": path, "content": "text"}},
        )  # fmt: skip

    def bash(self, session: str, command: str, stdout: str = "") -> None:
        self.hook(
            "PostToolUse", session, tool_name="Bash", tool_input={"command": command},
            tool_response={"stdout": stdout, "stderr": "", "interrupted": False},
        )  # fmt: skip

    def bash_failed(self, session: str, command: str, error: str) -> None:
        self.hook(
            "PostToolUseFailure", session, tool_name="Bash",
            tool_input={"command": command}, error=error,
        )  # fmt: skip

    def store(self) -> Store:
        return Store.open(paths.store_path(str(self.dir), self.env), readonly=True)

    def events(self, session: str) -> list[tuple[str, dict[str, Any]]]:
        with self.store() as store:
            return [(e.type, json.loads(e.data)) for e in store.session_events(session)]

    def resumes(self, session: str) -> list[dict[str, Any]]:
        with self.store() as store:
            return store.resumes(session)

    def everything(self) -> str:
        """Every stored byte of every event, as text."""
        with self.store() as store:
            return json.dumps(store.dump())


# -- who gets which snapshot -------------------------------------------------------------


def test_a_fork_with_no_events_of_its_own_gets_the_parents_end_snapshot(tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.write("parent", "billing.py")
    p.hook("SessionEnd", "parent", reason="other")
    (end,) = p.resumes("parent")
    assert end["kind"] == "end" and not end["consumed"]

    context = p.hook("SessionStart", "forked", source="fork")
    assert context is not None and "billing.py" in context
    root = ET.fromstring(context)
    assert (root.tag, root.attrib.get("from_session")) == ("session_resume", "parent")
    (end,) = p.resumes("parent")
    assert end["consumed"] and end["consumed_by"] == "forked"
    # Delivered once: a second fork gets nothing.
    assert p.hook("SessionStart", "forked-again", source="fork") is None


def test_a_fork_of_a_session_with_events_gets_nothing(tmp_path: Path) -> None:
    """The other side of the rule: a session with a history of its own keeps it."""
    p = Project(tmp_path)
    p.write("parent", "billing.py")
    p.hook("SessionEnd", "parent", reason="other")
    p.write("child", "child.py")
    assert p.hook("SessionStart", "child", source="fork") is None


def test_the_prompt_fallback_claims_only_its_own_sessions_snapshot(tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.write("a", "a.py")
    p.hook("PreCompact", "a", trigger="auto")
    p.write("b", "b.py")
    # Another session's prompt neither prints nor takes session a's compaction snapshot.
    assert p.hook("UserPromptSubmit", "b", prompt="carry on with b") is None
    (snap,) = p.resumes("a")
    assert not snap["consumed"]
    # a's own next prompt does (its SessionStart output was dropped by the client).
    context = p.hook("UserPromptSubmit", "a", prompt="carry on with a")
    assert context is not None and "a.py" in context and "b.py" not in context
    (snap,) = p.resumes("a")
    assert snap["consumed"] and snap["consumed_by"] == "a"
    assert p.hook("UserPromptSubmit", "a", prompt="and then") is None


def test_a_second_session_end_supersedes_the_first_end_snapshot(tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.write("s", "first.py")
    p.hook("SessionEnd", "s", reason="other")
    # More work and a second end without a resume in between (a resume would discard the
    # first end snapshot by itself): e.g. a second client process of the same session.
    p.write("s", "second.py")
    p.hook("SessionEnd", "s", reason="other")
    older, newer = p.resumes("s")
    assert (older["kind"], older["consumed"], older["consumed_by"]) == ("end", 1, "superseded")
    assert ET.fromstring(newer["snapshot"]).attrib["end"] == "2"  # the session's 2nd end
    unclaimed = [r for r in p.resumes("s") if r["kind"] == "end" and not r["consumed"]]
    assert len(unclaimed) == 1
    assert "second.py" in unclaimed[0]["snapshot"] and "first.py" in unclaimed[0]["snapshot"]
    # The next session gets the newer one, and there is nothing left after it.
    context = p.hook("SessionStart", "next", source="resume")
    assert context is not None and "second.py" in context
    assert p.hook("SessionStart", "after-next", source="resume") is None


# -- errors and their resolution --------------------------------------------------------


def _open_errors(p: Project, session: str) -> set[str]:
    with p.store() as store:
        return store.open_error_keys(session)


def test_a_rerun_that_exits_0_but_prints_failed_does_not_resolve_the_error(
    tmp_path: Path,
) -> None:
    p = Project(tmp_path)
    p.bash_failed("s", "pytest -q", "Exit code 1\nFAILED tests/test_a.py::test_a - assert 1 == 2")
    assert _open_errors(p, "s") != set()
    # The same command again: exit 0 (no PostToolUseFailure) but the output says it failed.
    p.bash(
        "s", "pytest -q", stdout="FAILED tests/test_a.py::test_a - assert 1 == 2\n1 failed in 0.02s"
    )
    types = [t for t, _ in p.events("s")]
    assert "error_resolved" not in types
    assert "output_error" in types
    assert _open_errors(p, "s") != set()
    # A clean rerun does resolve it.
    p.bash("s", "pytest -q", stdout="1 passed in 0.01s")
    assert [t for t, _ in p.events("s")].count("error_resolved") == 1
    assert _open_errors(p, "s") == set()


def test_failure_then_success_through_the_real_hooks_resolves_the_error(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = hook_env(CTXMODE_HOME=str(tmp_path / "data"), CLAUDE_PROJECT_DIR=str(project))
    base = {"session_id": "real", "cwd": str(project), "tool_input": {"command": "make test"}}
    failed = run_hook("PostToolUseFailure", {**base, "hook_event_name": "PostToolUseFailure",
                      "tool_name": "Bash", "error": "Exit code 2\nmake: *** [test] Error 2"},
                      env=env)  # fmt: skip
    passed = run_hook("PostToolUse", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                      "tool_response": {"stdout": "all good", "stderr": ""}}, env=env)  # fmt: skip
    for result in (failed, passed):
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    with Store.open(paths.store_path(str(project), env), readonly=True) as store:
        events = [(e.type, json.loads(e.data)) for e in store.session_events("real")]
        assert store.open_error_keys("real") == set()
    (error,) = [d for t, d in events if t == "tool_error"]
    (resolved,) = [d for t, d in events if t == "error_resolved"]
    assert resolved == {"tool": "Bash", "key": error["key"]}
    # And the snapshot lists no unresolved error.
    pre = {"session_id": "real", "cwd": str(project), "hook_event_name": "PreCompact"}
    assert run_hook("PreCompact", {**pre, "trigger": "auto"}, env=env).returncode == 0
    start = {"session_id": "real", "cwd": str(project), "hook_event_name": "SessionStart"}
    out = run_hook("SessionStart", {**start, "source": "compact"}, env=env).stdout
    snapshot = ET.fromstring(json.loads(out)["hookSpecificOutput"]["additionalContext"])
    assert snapshot.find("errors") is None


# -- configuration ----------------------------------------------------------------------


def test_exclude_paths_applies_to_file_and_rule_events(tmp_path: Path) -> None:
    p = Project(tmp_path, {"exclude_paths": ["secret/*", "*.env", "private/**"]})
    d = p.dir
    p.read("s", str(d / "secret" / "keys.py"))  # file_read
    p.write("s", "prod.env")  # file_write
    p.read("s", str(d / "private" / "docs" / ".claude" / "rules" / "style.md"))  # rule_read
    p.write("s", "private/.claude/rules/x.md")  # rule_edit
    p.read("s", str(d / "src" / "app.py"))  # kept
    p.read("s", str(d / ".claude" / "rules" / "kept.md"))  # kept (a rule)
    # Not a file event: excluded paths apply to file and rule events only.
    p.bash_failed("s", "python secret/keys.py", "Exit code 1\nboom")
    stored = p.events("s")
    paths_seen = sorted((t, d["path"]) for t, d in stored if "path" in d)
    assert paths_seen == [
        ("file_read", ".claude/rules/kept.md"),
        ("file_read", "src/app.py"),
        ("rule_read", ".claude/rules/kept.md"),
    ], stored
    assert [t for t, _ in stored if t == "tool_error"] == ["tool_error"]


def test_custom_redact_patterns_from_the_config_are_applied(tmp_path: Path) -> None:
    secret = "ACME-7F3K9Q2Z"
    p = Project(tmp_path, {"redact_patterns": [r"ACME-[0-9A-Z]{8}"]})
    p.hook("UserPromptSubmit", "s", prompt=f"Use the licence key {secret} for the build")
    p.bash_failed("s", f"deploy --key {secret}", f"Exit code 1\nbad key {secret}")
    p.write("s", "notes.md")
    stored = p.everything()
    assert secret not in stored
    assert "[REDACTED:custom]" in stored
    # Without the pattern the same text is kept (so the test proves the config did it).
    q = Project(tmp_path / "other")
    q.hook("UserPromptSubmit", "s", prompt=f"Use the licence key {secret} for the build")
    assert secret in q.everything()


# -- the snapshot -------------------------------------------------------------------------


def _stamp(i: int) -> str:
    return f"2026-05-01T10:{i // 60:02d}:{i % 60:02d}.000Z"


def test_at_a_small_budget_the_plan_is_kept_before_the_files_read() -> None:
    # A plan near its own cap and many files read: at 1 KB one of the two must go.
    plan = "# Plan: split invoice.py\n" + "\n".join(
        f"{k}. step {k}: move the totals of part {k} into its own module and test it"
        for k in range(1, 15)
    )
    events = [make("plan_exit", {"plan": plan, "path": "/home/dev/.claude/plans/p.md"})]
    events += [make("file_read", {"path": f"src/module_{i:03d}/very_long_name_{i}.py"})
               for i in range(120)]  # fmt: skip
    for i, event in enumerate(events):
        event.created_at = _stamp(i)
        event.id = i + 1
    small = build_snapshot(events, session_id="s", compact_seq=1, budget=1024)
    root = ET.fromstring(small)
    assert len(small.encode()) <= 1024
    assert root.find("plan") is not None and "split invoice.py" in small
    assert root.find("files_read") is None
    # With room for everything both are there: the budget, not the input, decided.
    large = ET.fromstring(build_snapshot(events, session_id="s", compact_seq=1, budget=9000))
    assert large.find("plan") is not None and large.find("files_read") is not None


HOSTILE = "q\"u'o<t>e&d \x01\x7f]]>"
CLEAN = "q\"u'o<t>e&d ]]>"  # control characters removed, nothing else changed


def test_attribute_values_are_escaped_for_fixed_hostile_input() -> None:
    events = [
        make("file_edit", {"path": f"src/{HOSTILE}.py", "summary": "x"}),
        make("git_commit", {"sha": "abc1234", "message": "m", "dir": f"/w/{HOSTILE}"}),
        make("plan_exit", {"plan": "# Plan\n1. do it", "path": f"/plans/{HOSTILE}.md"}),
    ]
    for i, event in enumerate(events):
        event.created_at = _stamp(i)
        event.id = i + 1
    xml = build_snapshot(events, session_id=f"sess-{HOSTILE}", compact_seq=1, budget=9000)
    root = ET.fromstring(xml)  # well-formed, whatever the input
    values = [v for el in root.iter() for v in el.attrib.values()]
    assert f"src/{CLEAN}.py" in values
    assert f"/plans/{CLEAN}.md" in values
    # Written as entities inside attributes (double-quoted), never raw.
    assert "q&quot;u&apos;o&lt;t&gt;e&amp;d" in xml
    assert "\x01" not in xml and "\x7f" not in xml
    from ctxmode.snapshot import provenance

    handed = ET.fromstring(provenance(xml, from_session=f"from-{HOSTILE}", kind="end", seq=1,
                                      taken_at=_stamp(9), reason="resume"))  # fmt: skip
    assert handed.attrib["from_session"] == f"from-{CLEAN}"


@pytest.mark.parametrize("budget", [1024, 2048, 4096])
def test_hostile_attributes_never_break_the_document_when_cut(budget: int) -> None:
    events = [make("file_edit", {"path": f"{HOSTILE * 30}/{k}.py", "summary": HOSTILE})
              for k in range(40)]  # fmt: skip
    for i, event in enumerate(events):
        event.created_at = _stamp(i)
        event.id = i + 1
    xml = build_snapshot(events, session_id=HOSTILE, compact_seq=1, budget=budget)
    assert len(xml.encode()) <= budget
    ET.fromstring(xml)


# -- found by the mutation pass (scripts/mutation.sh) -----------------------------------


def _save_compact_snapshot_aged(p: Project, session: str, age_seconds: float) -> None:
    """A compaction snapshot of ``session`` as if stored ``age_seconds`` ago."""
    from ctxmode.store import iso_utc

    xml = build_snapshot([], session_id=session, compact_seq=1)
    path = paths.store_path(str(p.dir), p.env)
    with Store.open(path) as store:
        store.save_resume(session, xml, 0, kind="compact", now=iso_utc(_NOW - age_seconds))


_NOW = 1_780_000_000.0  # the clock the store is given below (no real time is read)


@pytest.mark.parametrize(("age", "handed"), [(500.0, False), (700.0, True)])
def test_another_sessions_compaction_snapshot_waits_out_its_grace(
    age: float, handed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compaction snapshot belongs to its own session for 10 minutes (its SessionStart
    is due); only one unclaimed after that goes to a new session that resumes."""
    import time

    # The clock every module reads through ``time.time`` (whatever the store's layout).
    monkeypatch.setattr(time, "time", lambda: _NOW)
    p = Project(tmp_path)
    p.write("other", "other.py")  # the store exists
    _save_compact_snapshot_aged(p, "compacted", age)
    context = p.hook("SessionStart", "newcomer", source="resume")
    assert (context is not None) == handed
    (row,) = p.resumes("compacted")
    assert row["consumed"] == handed


@pytest.mark.parametrize("event", ["PostToolUse", "UserPromptSubmit", "SessionEnd", "PreCompact"])
def test_a_call_without_a_session_id_records_nothing(event: str, tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.write("s", "kept.py")
    path = str(p.dir / "lost.py")
    fields = {
        "PostToolUse": {"tool_name": "Write", "tool_input": {"file_path": path, "content": ""},
                        "tool_response": {"type": "create", "filePath": path}},
        "UserPromptSubmit": {"prompt": "remember lost.py"},
        "SessionEnd": {"reason": "other"},
        "PreCompact": {"trigger": "auto"},
    }[event]  # fmt: skip
    assert p.hook(event, "", **fields) is None
    with p.store() as store:
        assert [s["session_id"] for s in store.sessions()] == ["s"]
        assert store.resumes("") == []
    assert "lost.py" not in p.everything()


@pytest.mark.parametrize("demo", [False, True])
def test_lookups_name_the_data_root_only_for_the_demo(demo: bool, tmp_path: Path) -> None:
    """``ctxmode demo`` replays hooks in a throwaway data root, which the user's shell
    does not know: only then do the snapshot's lookups start with ``CTXMODE_HOME=...``."""
    p = Project(tmp_path)
    if demo:
        p.env["CTXMODE_LOOKUP_HOME"] = "1"
    p.write("s", "a.py")
    p.hook("PreCompact", "s", trigger="auto")
    context = p.hook("SessionStart", "s", source="compact")
    assert context is not None
    search = ET.fromstring(context).findtext("search") or ""
    prefix = f"CTXMODE_HOME={p.env['CTXMODE_HOME']} "
    assert search.startswith(prefix) == demo, search
    assert search.count("CTXMODE_HOME") == context.count("CTXMODE_HOME")  # written once


def test_a_hook_replaces_a_corrupt_store_and_records(tmp_path: Path) -> None:
    p = Project(tmp_path)
    path = Path(paths.store_path(str(p.dir), p.env))
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 300)
    p.write("s", "after.py")
    assert [d["path"] for _, d in p.events("s")] == ["after.py"]
    assert [n for n in path.parent.iterdir() if ".corrupt-" in n.name]


def test_every_lookup_is_a_command_the_shell_runs_as_written(tmp_path: Path) -> None:
    """The project path is quoted for the shell (here with a space and a quote in it);
    a path that needs no quoting is written as it is."""
    import shlex

    from ctxmode.handlers import search_command, shell_quote

    p = Project(tmp_path / "it's a dir")
    p.write("s", "a.py")
    p.hook("PreCompact", "s", trigger="auto")
    context = p.hook("SessionStart", "s", source="compact")
    assert context is not None
    root = ET.fromstring(context)
    lookups = [el.text or "" for el in root.iter("lookup")]
    assert lookups
    search = root.findtext("search") or ""
    for text in lookups:
        argv = shlex.split(f"{search} {text}")
        at = argv.index("search")
        assert Path(argv[at - 1]).name == "ctxmode", text
        assert argv[at + 1 : at + 5] == ["--project", str(p.dir), "--session", "s"], text
    assert shell_quote("/home/dev/proj-1_a.b") == "/home/dev/proj-1_a.b"
    assert shell_quote("") == "''"
    assert shlex.split(search_command("/x/it's"))[-2:] == ["--project", "/x/it's"]


def test_the_configured_snapshot_budget_is_used(tmp_path: Path) -> None:
    sizes = {}
    for budget in (1024, None):
        p = Project(tmp_path / str(budget), None if budget is None else {"snapshot_budget": budget})
        for k in range(60):
            p.write("s", f"src/module_{k:02d}/a_rather_long_file_name_{k}.py")
        p.hook("PreCompact", "s", trigger="auto")
        context = p.hook("SessionStart", "s", source="compact")
        assert context is not None
        sizes[budget] = len(context.encode())
    assert sizes[1024] <= 1024 < sizes[None] <= 4096


def test_an_empty_spool_is_cleared_too(tmp_path: Path) -> None:
    """A spool file with nothing to import (a torn write left only a newline) is taken
    and removed like any other, not left behind."""
    from ctxmode import spool

    p = Project(tmp_path)
    p.write("s", "first.py")  # the store exists
    root = p.env["CTXMODE_HOME"]
    live = Path(spool.spool_path(root, paths.store_path(str(p.dir), p.env)))
    live.parent.mkdir(parents=True, exist_ok=True)
    live.write_text("\n")
    p.write("s", "second.py")
    assert sorted(live.parent.iterdir()) == []
    assert [d["path"] for _, d in p.events("s")] == ["first.py", "second.py"]


def _spooled(p: Project) -> list[str]:
    """The paths of the file events waiting in the spool."""
    from ctxmode import spool

    live = Path(spool.spool_path(p.env["CTXMODE_HOME"], paths.store_path(str(p.dir), p.env)))
    if not live.exists():
        return []
    return [
        json.loads(event["data"])["path"]
        for line in live.read_text().splitlines()
        if line.strip()
        for event in json.loads(line)["events"]
    ]


def test_a_store_locked_at_open_spools_the_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxmode.store import StoreLocked

    p = Project(tmp_path)
    p.write("s", "first.py")

    def locked(*args: Any, **kwargs: Any) -> Store:
        raise StoreLocked("a migration holds the lock")

    with monkeypatch.context() as m:
        m.setattr(Store, "open", locked)
        p.write("s", "while_locked.py")
    assert _spooled(p) == ["while_locked.py"]
    log = (Path(p.env["CTXMODE_HOME"]) / "logs" / "ctxmode.log").read_text()
    assert "store locked; 1 event spooled" in log
    p.write("s", "after.py")  # the next hook imports it
    assert [d["path"] for _, d in p.events("s")] == ["first.py", "while_locked.py", "after.py"]
    assert _spooled(p) == []


def test_a_failed_spool_import_gives_the_spool_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import meets a locked store: what it had claimed goes back to the live spool
    (with this call's own events), whole, for the next hook."""
    from ctxmode.store import StoreLocked

    p = Project(tmp_path)
    p.write("s", "first.py")
    with monkeypatch.context() as m:
        m.setattr(Store, "open", lambda *a, **k: (_ for _ in ()).throw(StoreLocked("x")))
        p.write("s", "spooled.py")
    assert _spooled(p) == ["spooled.py"]

    def locked(self: Store, *args: Any, **kwargs: Any) -> int:
        raise StoreLocked("someone else holds the lock")

    with monkeypatch.context() as m:
        m.setattr(Store, "add_batches", locked)
        p.write("s", "during.py")
    assert sorted(_spooled(p)) == ["during.py", "spooled.py"]
    spool_dir = Path(p.env["CTXMODE_HOME"]) / "spool"
    assert [f.name for f in spool_dir.iterdir() if ".taking" in f.name] == []
    p.write("s", "after.py")
    assert sorted(d["path"] for _, d in p.events("s")) == [
        "after.py", "during.py", "first.py", "spooled.py",
    ]  # fmt: skip


def test_compaction_snapshots_are_numbered_per_session(tmp_path: Path) -> None:
    p = Project(tmp_path)
    for k in (1, 2):
        p.write("s", f"f{k}.py")
        p.hook("PreCompact", "s", trigger="auto")
        context = p.hook("SessionStart", "s", source="compact")
        assert context is not None
        assert ET.fromstring(context).attrib["compaction"] == str(k)
    assert [r["compact_seq"] for r in p.resumes("s")] == [1, 2]


@pytest.mark.parametrize(("source", "pruned"), [("startup", True), ("resume", False),
                                                 ("clear", False), (None, True)])  # fmt: skip
def test_idle_sessions_are_pruned_when_a_session_starts_up(
    source: str | None, pruned: bool, tmp_path: Path
) -> None:
    from ctxmode.store import iso_utc

    p = Project(tmp_path, {"retention_days": 7})
    p.write("current", "now.py")
    old = make("file_read", {"path": "old.py"})
    with Store.open(paths.store_path(str(p.dir), p.env)) as store:
        store.add_events("idle", [old], source_hook="PostToolUse", project_dir=str(p.dir),
                         now=iso_utc(_NOW - 30 * 86400))  # fmt: skip
    fields = {} if source is None else {"source": source}
    p.hook("SessionStart", "another", **fields)
    with p.store() as store:
        left = {s["session_id"] for s in store.sessions()}
    assert ("idle" not in left) == pruned
    assert "current" in left


def _log_text(p: Project) -> str:
    log = Path(p.env["CTXMODE_HOME"]) / "logs" / "ctxmode.log"
    return log.read_text() if log.exists() else ""


def test_without_precompact_the_snapshot_is_built_on_the_spot(tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.write("s", "only.py")  # one event, and PreCompact never ran (or failed)
    context = p.hook("SessionStart", "s", source="compact")
    assert context is not None and "only.py" in context
    (row,) = p.resumes("s")
    assert row["consumed"] and row["kind"] == "compact"
    # Delivered once: nothing happened since, so the next one prints nothing.
    assert p.hook("SessionStart", "s", source="compact") is None
    p.write("s", "later.py")
    again = p.hook("SessionStart", "s", source="compact")
    assert again is not None and "later.py" in again
    assert "ERROR" not in _log_text(p)


def test_a_compaction_of_a_session_without_events_prints_nothing(tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.write("other", "other.py")
    assert p.hook("SessionStart", "empty", source="compact") is None
    assert p.resumes("empty") == []
    assert "ERROR" not in _log_text(p)


def _ended(p: Project, session: str, name: str) -> None:
    p.write(session, name)
    p.hook("SessionEnd", session, reason="other")


@pytest.mark.parametrize(("config", "handed"), [({}, False), ({"inject_on_startup": True}, True)])
def test_startup_injection_is_opt_in(config: dict[str, Any], handed: bool, tmp_path: Path) -> None:
    p = Project(tmp_path, config)
    _ended(p, "earlier", "earlier.py")
    context = p.hook("SessionStart", "fresh", source="startup")
    assert (context is not None) == handed
    if context is not None:
        root = ET.fromstring(context)
        assert (root.attrib["from_session"], root.attrib["reason"]) == (
            "earlier", "inject_on_startup",
        )  # fmt: skip
        assert "earlier.py" in context
    else:
        with p.store() as store:  # the new session is registered (ctxmode sessions lists it)
            assert "fresh" in {s["session_id"] for s in store.sessions()}


@pytest.mark.parametrize(
    ("hours_old", "handed"),
    [(0.5, True), (3.0, False), (2 + 1 / 3600, False)],  # the last: 1 s past the limit
)
def test_startup_injection_takes_only_recent_snapshots(
    hours_old: float, handed: bool, tmp_path: Path
) -> None:
    import time

    from ctxmode.store import iso_utc

    p = Project(tmp_path, {"inject_on_startup": True, "startup_max_age_hours": 2})
    p.write("earlier", "earlier.py")
    xml = build_snapshot([], session_id="earlier", compact_seq=1, kind="end")
    with Store.open(paths.store_path(str(p.dir), p.env)) as store:
        # Stamped relative to the clock the hook reads: an age, not a measured time.
        store.save_resume(
            "earlier", xml, 1, kind="end", now=iso_utc(time.time() - hours_old * 3600)
        )
    assert (p.hook("SessionStart", "fresh", source="startup") is not None) == handed


@pytest.mark.parametrize(("config", "handed"), [({}, False), ({"inject_on_clear": True}, True)])
def test_clear_injection_is_opt_in(config: dict[str, Any], handed: bool, tmp_path: Path) -> None:
    p = Project(tmp_path, config)
    _ended(p, "earlier", "earlier.py")
    context = p.hook("SessionStart", "cleared", source="clear")
    assert (context is not None) == handed
    if context is not None:
        assert ET.fromstring(context).attrib["reason"] == "inject_on_clear"


def test_a_cleared_session_inherits_nothing_when_resumed(tmp_path: Path) -> None:
    p = Project(tmp_path)
    assert p.hook("SessionStart", "cleared", source="clear") is None
    _ended(p, "earlier", "earlier.py")  # an end snapshot another new session would get
    assert p.hook("SessionStart", "cleared", source="resume") is None
    (row,) = p.resumes("earlier")
    assert not row["consumed"]


def test_resuming_a_session_retires_its_own_end_snapshot(tmp_path: Path) -> None:
    """The session goes on: its end snapshot is stale and must not reach a new session."""
    p = Project(tmp_path)
    _ended(p, "s", "a.py")
    assert p.hook("SessionStart", "s", source="resume") is None
    assert p.hook("SessionStart", "newcomer", source="resume") is None
    (row,) = p.resumes("s")
    assert (row["consumed"], row["consumed_by"]) == (1, "resumed")


def test_a_session_ended_by_clear_leaves_nothing_behind(tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.write("s", "a.py")
    p.hook("PreCompact", "s", trigger="auto")  # an unclaimed compaction snapshot
    p.hook("SessionEnd", "s", reason="clear")
    (row,) = p.resumes("s")  # no end snapshot, and the compaction one retired
    assert (row["kind"], row["consumed"], row["consumed_by"]) == ("compact", 1, "clear")
    assert p.hook("SessionStart", "newcomer", source="resume") is None


def test_the_lookup_runs_the_cli_beside_the_hooks_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The installed CLI by its absolute path (no PATH needed), else ``ctxmode`` on PATH."""
    import sys

    from ctxmode.handlers import search_command

    bindir = tmp_path / "venv bin"
    bindir.mkdir()
    monkeypatch.setattr(sys, "executable", str(bindir / "python"))
    assert search_command("/p") == "ctxmode search --project /p"
    (bindir / "ctxmode").write_text("#!/bin/sh\n")
    assert search_command("/p") == f"'{bindir}/ctxmode' search --project /p"


# -- the claim code (ctxmode.store) --------------------------------------------------------


def test_of_snapshots_stamped_in_the_same_millisecond_the_last_saved_is_claimed(
    tmp_path: Path,
) -> None:
    with Store.open(str(tmp_path / "s.db")) as store:
        for session in ("first", "second", "third"):
            store.save_resume(session, f"<session_resume session='{session}'/>", 1,
                              kind="end", now="2026-05-01T10:00:00.000Z")  # fmt: skip
        taken = [store.claim_resume(claimed_by="x", kind="end") for _ in range(3)]
        ids = {row["session_id"]: row["id"] for s in ("first", "second", "third")
               for row in store.resumes(s)}  # fmt: skip
    assert [r.session_id for r in taken if r is not None] == ["third", "second", "first"]
    assert [r.id for r in taken if r is not None] == [ids["third"], ids["second"], ids["first"]]


def test_errors_without_a_key_are_not_open(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "s.db")) as store:
        store.add_events("s", [make("tool_error", {"tool": "Bash", "key": "", "error": "e1"}),
                               make("tool_error", {"tool": "Bash", "key": 5, "error": "e2"}),
                               make("tool_error", {"tool": "Bash", "key": "make", "error": "e3"})],
                         source_hook="PostToolUseFailure", project_dir="/p")  # fmt: skip
        assert store.open_error_keys("s") == {"make"}


def test_a_locked_store_with_nothing_to_record_is_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A success that could only have resolved an error, and the store is locked: the
    log says nothing was recorded (and nothing is spooled)."""
    from ctxmode.store import StoreLocked

    p = Project(tmp_path)
    # A tool ctxmode records nothing of, but its failure (a shell command's success is
    # recorded itself: shell_call).
    p.hook("PostToolUseFailure", "s", tool_name="LS", tool_input={"path": "build"}, error="no")

    def locked(*args: Any, **kwargs: Any) -> Store:
        raise StoreLocked("held")

    monkeypatch.setattr(Store, "open", locked)
    p.hook("PostToolUse", "s", tool_name="LS", tool_input={"path": "build"}, tool_response="a")
    assert "store locked; nothing to record" in _log_text(p)
    assert _spooled(p) == []


def test_the_latest_snapshot_of_a_session_is_the_last_saved(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "s.db")) as store:
        for seq in (1, 2, 3):
            store.save_resume("s", f"<session_resume compaction='{seq}'/>", 1,
                              kind="compact", now="2026-05-01T10:00:00.000Z")  # fmt: skip
        latest = store.latest_resume("s", kind="compact")
    assert latest is not None and latest["compact_seq"] == 3


def test_a_snapshot_built_on_the_spot_takes_the_next_compaction_number(tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.write("s", "a.py")
    p.hook("PreCompact", "s", trigger="auto")
    assert p.hook("SessionStart", "s", source="compact") is not None
    p.write("s", "b.py")  # the next compaction's PreCompact never ran
    context = p.hook("SessionStart", "s", source="compact")
    assert context is not None and ET.fromstring(context).attrib["compaction"] == "2"


def _prompts_snapshot(texts: list[str]) -> ET.Element:
    events = [make("user_prompt", {"text": text}) for text in texts]
    for i, event in enumerate(events):
        event.created_at = _stamp(i)
        event.id = i + 1
    return ET.fromstring(build_snapshot(events, session_id="s", compact_seq=1, budget=9000))


def test_the_goal_is_the_first_request_once_it_left_the_last_three() -> None:
    long_last = "finally: " + "y" * 600
    root = _prompts_snapshot(["build the invoice exporter", "b", "c", "d " + "x" * 300, long_last])
    requests = root.find("requests")
    assert requests is not None
    assert [el.tag for el in requests if el.tag != "lookup"] == [
        "goal",
        "prompt",
        "prompt",
        "prompt",
    ]
    assert requests.find("goal").text == "build the invoice exporter"  # type: ignore[union-attr]
    prompts = [el.text or "" for el in requests.iter("prompt")]
    assert prompts[-1] == long_last  # the last request whole (up to 700 characters)
    assert prompts[1].endswith("…") and len(prompts[1]) <= 241  # earlier ones shorter
    # Three requests or fewer: all shown, no separate goal.
    few = _prompts_snapshot(["build the invoice exporter", "b", "c"]).find("requests")
    assert few is not None and few.find("goal") is None
    # The first request repeated among the last three is not shown twice.
    again = _prompts_snapshot(["fix the bug", "b", "c", "fix the bug"]).find("requests")
    assert again is not None and again.find("goal") is None


@pytest.mark.parametrize("kind", ["end", "compact"])
def test_a_handed_over_snapshot_says_exactly_where_it_comes_from(kind: str) -> None:
    from ctxmode.snapshot import provenance

    events = [make("file_edit", {"path": f"{name}.py", "summary": "x"}) for name in "ab"]
    for i, event in enumerate(events):
        event.created_at = _stamp(i)
        event.id = i + 1
    xml = build_snapshot(events, session_id="old-s", compact_seq=2, kind=kind)
    taken = "2026-05-01T11:00:00.000Z"
    handed = provenance(xml, from_session="old-s", kind=kind, seq=2, taken_at=taken,
                        reason="resume")  # fmt: skip
    root = ET.fromstring(handed)
    number, stamp = ("end", "ended_at") if kind == "end" else ("compaction", "compacted_at")
    assert root.attrib == {
        "source": "previous-session", "from_session": "old-s", number: "2", stamp: taken,
        "reason": "resume", "events": "2", "from": _stamp(0), "to": _stamp(1),
    }  # fmt: skip
    preface = root.find("preface")
    assert preface is not None and preface.text is not None
    said = "ended" if kind == "end" else "compacted"
    assert f"(id old-s, {said} {taken}" in preface.text
    assert [el.tag for el in root][1:] == [el.tag for el in ET.fromstring(xml)][1:]


@pytest.mark.parametrize(
    "text",
    [
        '{"passcode": "Xk9#mQ2$vL7pW4zR"}',  # a secret key name no other pattern covers
        "passcode=Xk9#mQ2$vL7pW4zR and more",
    ],
)
def test_a_passcode_is_masked(text: str) -> None:
    from ctxmode.redact import mask

    assert "Xk9#mQ2$vL7pW4zR" not in mask(text)
