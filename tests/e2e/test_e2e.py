"""End to end: the real Claude Code CLI, ctxmode installed by install.sh, a scripted mock model.

What these prove that unit tests cannot: Claude Code really runs ctxmode's hooks, really
hands the ``<session_resume>`` snapshot to the model after a compaction (manual and
automatic), the model can run a snapshot's lookup command as written, nothing leaks
across /clear, projects or worktrees, and a long session loses no tool call.

Every assertion is on one of three records: the store (``ctxmode dump --json``), the hooks'
log (no ERROR), and the request bodies the mock received (what the model was sent).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import claude_cli
from tests.e2e.harness import Harness
from tests.e2e.mock_api import (
    SUBAGENT_MARK,
    MockAPI,
    Reply,
    Request,
    Step,
    Steps,
    ToolCall,
    call,
    calls,
    load_tools,
    say,
)

pytestmark = pytest.mark.e2e

RESUME_RE = re.compile(r"<session_resume\b[^>]*/>|<session_resume\b.*?</session_resume>", re.S)
HUGE_USAGE = 150_000  # input tokens reported to trip auto-compaction
AUTO_COMPACT_ENV = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"}

# A failing command whose message only the store holds in full: the snapshot shows the
# command and the first lines of its stderr, the traceback's last line is the detail.
ERROR_DETAIL = "VAT_RATE_DE missing from rates.toml"
ERROR_LINE = f"KeyError: '{ERROR_DETAIL}'"


# -- helpers ---------------------------------------------------------------------------------


def snapshots_in(req: Request) -> list[str]:
    return req.find_all(RESUME_RE)


def first_after(api: MockAPI, seq: int) -> Request:
    later = [r for r in api.requests if r.seq > seq]
    assert later, f"the mock received no request after #{seq}:\n{api.dump()}"
    return later[0]


def requests_of(api: MockAPI, run_start: int) -> list[Request]:
    return [r for r in api.requests if r.seq >= run_start]


def parse(snapshot: str) -> ET.Element:
    try:
        return ET.fromstring(snapshot)
    except ET.ParseError as exc:
        raise AssertionError(
            f"the snapshot the model received is not well-formed XML: {exc}\n{snapshot}"
        ) from exc


def events_of(session: dict[str, Any], type_: str) -> list[dict[str, Any]]:
    out = []
    for event in session["events"]:
        if event["type"] == type_:
            out.append(event)
    return out


def compact_resumes(session: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in session["resumes"] if r.get("kind", "compact") == "compact"]


def work_steps(proj: Path, name: str = "pricing") -> list[Step]:
    """A realistic stretch of work: write, edit, commit, tasks, a failure, a subagent."""
    module = proj / "src" / f"{name}.py"
    failing = "python3 -c \"raise KeyError('" + ERROR_DETAIL + "')\""
    return [
        call("Write", file_path=str(module), content="def price(cents):\n    return cents\n"),
        call(
            "Edit",
            file_path=str(module),
            old_string="    return cents\n",
            new_string="    return round(cents * 1.19)\n",
        ),
        call(
            "Bash",
            command=f"git add src/{name}.py && git commit -q -m 'Add VAT to {name}'",
            description="Commit the change",
        ),
        load_tools("TaskCreate", "TaskUpdate"),
        call(
            "TaskCreate",
            subject=f"Document the VAT rate of {name} in the README",
            description="The README must say which rate applies.",
            activeForm="Documenting the VAT rate",
        ),
        call(
            "TaskCreate",
            subject=f"Add tests for {name}",
            description="Cover rounding.",
            activeForm="Adding tests",
        ),
        call("TaskUpdate", taskId="2", status="completed"),
        call("Bash", command=failing, description="Load the German VAT rate"),
        call(
            "Agent",
            description="Review the pricing change",
            prompt=f"{SUBAGENT_MARK} Review src/{name}.py for rounding problems.",
            subagent_type="general-purpose",
        ),
    ]


def assert_snapshot_names_work(snapshot: str, name: str, *, request: str, what: str) -> ET.Element:
    """The facts of ``work_steps`` that the model must get back after a compaction."""
    root = parse(snapshot)
    expected = {
        "the user's request": request,
        "the changed file": f"src/{name}.py",
        "the commit": f"Add VAT to {name}",
        "the open task": f"Document the VAT rate of {name} in the README",
        "the unresolved error": ERROR_DETAIL.split(" ")[0],
    }
    missing = {label: text for label, text in expected.items() if text not in snapshot}
    assert not missing, f"{what}: the <session_resume> lacks {missing}:\n{snapshot}"
    # Client-generated turns (a background agent's <task-notification>) are not requests of
    # the user; shown as one, they would displace the user's real last request.
    assert "task-notification" not in snapshot, (
        f"{what}: the <session_resume> shows a client <task-notification> as a user request:\n"
        f"{snapshot}"
    )
    open_tasks = [t.text or "" for t in root.iter("task")]
    assert f"Add tests for {name}" not in open_tasks, (
        f"{what}: a completed task is shown as open: {open_tasks}"
    )
    return root


def assert_summary_kept(h: Harness, proj: Path, sid: str, what: str) -> dict[str, Any]:
    """PostCompact stored the client's summary of compaction 1 (masked, without its
    <analysis>) beside its snapshot; stats says what the snapshot restored beyond it."""
    rows = h.session(proj, sid).get("compactions", [])
    assert [r["compact_seq"] for r in rows] == [1], f"{what}: compaction rows {rows}"
    summary = rows[0]["summary"]
    assert summary and "MOCK_SUMMARY" in summary, (
        f"{what}: PostCompact did not store the client's summary: {rows[0]}"
    )
    assert "<analysis>" not in summary and "<summary>" not in summary, summary
    (found,) = h.stats(proj, sid)["compaction_coverage"]
    assert found["summary_recorded"] and found["snapshot"] == "full", found
    # The mock's summary names none of the work: every key item came from the snapshot.
    assert found["key_items"] >= 4 and found["summary_kept"] == 0, found
    print(
        f"\ne2e {what}: the summary kept {found['summary_kept']} of {found['key_items']} key "
        f"items; the snapshot restored: {', '.join(found['restored'])}"
    )
    return found


def no_resume_msg(req: Request, what: str, h: Harness) -> str:
    """Say what the model did not get, what it got instead, and what ctxmode logged."""
    errors = [p.split("\n", 1)[0].split("\t", 1)[-1] for p in h.log_problems()]
    return (
        f"{what} did not contain <session_resume>: ctxmode's snapshot never reached the model.\n"
        f"The conversation the model was sent (request #{req.seq}):\n{req.outline()}\n"
        f"ctxmode log errors ({len(errors)}): {errors[:5]}\n"
        f"All requests:\n{h.mock_digest()}"
    )


# -- the infrastructure itself (no ctxmode) --------------------------------------------------


def test_mock_and_client_infrastructure(claude: claude_cli.ClaudeInstall, tmp_path: Path) -> None:
    """The mock drives the real client, its hooks fire, and our failure detectors detect.

    A recording hook of our own (not ctxmode) proves the harness, so a failure of the
    scenarios below points at ctxmode, not at the mock. A deliberately failing hook is
    the negative control of the "no hook errors" checks.
    """
    home, proj = tmp_path / "home", tmp_path / "proj"
    (home / ".claude").mkdir(parents=True)
    proj.mkdir()
    record = tmp_path / "hooks.jsonl"
    recorder = f"cat >> '{record}'; echo >> '{record}'"
    context = (
        'cat >/dev/null; printf \'%s\' \'{"hookSpecificOutput":{"hookEventName":'
        '"SessionStart","additionalContext":"INFRA_MARKER_42"}}\''
    )
    failing = "cat >/dev/null; echo infra-boom >&2; exit 1"
    hooks: dict[str, Any] = {
        event: [{"hooks": [{"type": "command", "command": recorder, "timeout": 10}]}]
        for event in ("PostToolUse", "PreCompact", "SessionEnd", "UserPromptSubmit")
    }
    hooks["SessionStart"] = [{"hooks": [{"type": "command", "command": context, "timeout": 10}]}]
    hooks["PostToolUseFailure"] = [
        {"hooks": [{"type": "command", "command": failing, "timeout": 10}]}
    ]
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    subprocess.run(["git", "init", "-q", str(proj)], check=True)

    target = proj / "notes.txt"
    steps = Steps(
        call("Write", file_path=str(target), content="hello\n"),
        call("Bash", command="ls /nonexistent-e2e-dir", description="fail on purpose"),
        say("All done."),
    )
    with MockAPI(steps, log_path=tmp_path / "requests.jsonl", max_requests=20) as api:
        env = claude_cli.hermetic_env(
            {"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "dummy"}, home=home
        )
        run = claude_cli.run_claude(claude, ["-p", "write notes"], cwd=proj, env=env)
        assert run.returncode == 0, run.describe()
        sid = run.session_id
        compact = claude_cli.run_claude(
            claude, ["-p", "/compact", "--resume", sid], cwd=proj, env=env
        )
        assert compact.returncode == 0, compact.describe()

    assert target.read_text() == "hello\n"
    assert run.result is not None and run.result["result"] == "All done."
    recorded = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    seen = [(r["hook_event_name"], r.get("tool_name") or r.get("trigger") or "") for r in recorded]
    assert ("PostToolUse", "Write") in seen and ("PreCompact", "manual") in seen, seen
    assert all(r["session_id"] == sid for r in recorded), {r["session_id"] for r in recorded}
    # Requests: 3 main-loop turns, then one summarisation; SessionStart output reached all.
    assert steps.main_requests == [0, 1, 2] and steps.compactions == [3], api.dump()
    assert all(r.contains("INFRA_MARKER_42") for r in api.requests), api.dump()
    # The tool_result of the Write reached the model in the next request.
    assert "notes.txt" in (
        api.requests[1].tool_result_text(api.requests[1].tool_results()[0]["tool_use_id"]) or ""
    )
    # Negative control: the failing PostToolUseFailure hook is visible to our detector.
    problems = claude_cli.transcript_hook_problems(home, run.session_ids())
    assert any("PostToolUseFailure" in p and "infra-boom" in p for p in problems), problems


# -- scenario 1: /compact ------------------------------------------------------------------


def test_manual_compact_hands_the_snapshot_to_the_model(e2e: Harness) -> None:
    manual_compact_scenario(e2e)


def test_a_broken_snapshot_builder_fails_scenario_1_saying_what_was_missing(
    e2e: Harness,
) -> None:
    """Negative control: scenario 1 against a ctxmode whose snapshot builder raises.

    The hooks stay installed the user's way, but run from a copy of the package whose
    ``build_snapshot`` raises: the hooks fail open, so the client carries on, and only
    scenario 1's check on what the model received can notice. It must, and say so.
    """
    e2e.use_broken_copy(
        "snapshot/__init__.py",
        "\n\ndef build_snapshot(*args, **kwargs):\n"
        "    raise RuntimeError('e2e: snapshot builder broken on purpose')\n",
    )
    with pytest.raises(AssertionError) as failure:
        manual_compact_scenario(e2e)
    message = str(failure.value)
    assert message.startswith(
        "the first request after /compact did not contain <session_resume>"
    ), message
    # The log names the failure (its type; the message is withheld because an exception's
    # text may quote a payload, while its frames locate it in the snapshot builder).
    assert "PreCompact\\tRuntimeError" in message, message  # a repr'd log record


def manual_compact_scenario(h: Harness) -> None:
    """Scenario 1: work, ``claude -p /compact --resume SID``, then the next prompt."""
    proj = h.project("shop")
    # The Agent call is not the run's last: `claude -p` ends by stopping the background
    # captures still running, and one whose interpreter has not yet started (a loaded
    # machine) never reads its call; the subagent asserted below must not hang on that
    # race, which docs/privacy-reliability.md names as a limit of print mode.
    steps = Steps(
        *work_steps(proj),
        call("Read", file_path=str(proj / "src" / "pricing.py")),
        say("Pricing has VAT now; the README task is still open."),
    )
    api = h.serve(steps)

    request = "Add VAT to the pricing module and commit it"
    work = h.claude_p(request, proj)
    sid = work.session_id
    compact = h.claude_p("/compact", proj, resume=sid)
    assert compact.session_id == sid
    assert len(steps.compactions) == 1, f"/compact sent no summarisation request:\n{api.dump()}"

    after = h.claude_p("What is left to do?", proj, resume=sid)
    assert after.session_id == sid
    first = first_after(api, steps.compactions[0])
    received = snapshots_in(first)
    assert received, no_resume_msg(first, "the first request after /compact", h)
    assert len(received) == 1, (
        f"the first request after /compact carries the snapshot {len(received)} times "
        f"(it must be consumed once):\n{received}"
    )
    root = assert_snapshot_names_work(
        received[0], "pricing", request=request, what="after /compact"
    )
    assert root.get("session") in (None, sid), root.attrib

    # The store: the events of the work, one compaction, its snapshot consumed exactly once,
    # and the snapshot stored is byte for byte the one the model got.
    session = h.session(proj, sid)
    writes = [e["data"]["path"] for e in events_of(session, "file_write")]
    edits = [e["data"]["path"] for e in events_of(session, "file_edit")]
    commits = [e["data"]["message"] for e in events_of(session, "git_commit")]
    subjects = [e["data"]["subject"] for e in events_of(session, "task_create")]
    assert writes == ["src/pricing.py"] and edits == ["src/pricing.py"], (writes, edits)
    assert commits == ["Add VAT to pricing"], commits
    assert subjects == [
        "Document the VAT rate of pricing in the README",
        "Add tests for pricing",
    ], subjects
    errors = events_of(session, "tool_error")
    assert len(errors) == 1 and ERROR_LINE in errors[0]["data"]["error"], errors
    assert events_of(session, "subagent"), [e["type"] for e in session["events"]]
    assert session["compact_count"] == 1, session["compact_count"]
    resumes = compact_resumes(session)
    assert [(r["compact_seq"], r["consumed"]) for r in resumes] == [(1, True)], resumes
    assert resumes[0].get("consumed_by", sid) == sid, resumes[0]
    assert resumes[0]["snapshot"].strip() == received[0].strip(), (
        "the model received a different snapshot than the one stored:\n"
        f"stored:\n{resumes[0]['snapshot']}\nreceived:\n{received[0]}"
    )
    found = assert_summary_kept(h, proj, sid, "/compact")
    assert "file src/pricing.py" in found["restored"], found

    # Consumed once: a later resume of the session is not handed the snapshot again
    # (the one copy left is the transcript's own).
    mark = len(api.requests)
    h.claude_p("And now?", proj, resume=sid)
    later = requests_of(api, mark)[0]
    assert len(snapshots_in(later)) == 1, (
        f"the snapshot was injected again on a later --resume: {len(snapshots_in(later))} copies"
    )
    h.assert_clean()


# -- scenario 2: auto-compaction in the middle of a turn -------------------------------------


def test_auto_compaction_mid_turn_gets_the_snapshot(e2e: Harness) -> None:
    h = e2e
    proj = h.project("shop-auto")
    followup = proj / "docs" / "VAT.md"
    steps = Steps(
        *work_steps(proj, "billing"),
        call("Bash", command="git status --short", description="Check", input_tokens=HUGE_USAGE),
        # After the compaction, in the same turn: more work, recorded in the same session.
        call("Write", file_path=str(followup), content="VAT is 19%.\n"),
        say("Documented."),
    )
    api = h.serve(steps)
    request = "Add VAT to billing and document it"
    run = h.claude_p(request, proj, env=AUTO_COMPACT_ENV)
    sid = run.session_id
    assert len(steps.compactions) == 1, f"no auto-compaction happened:\n{api.dump()}"
    assert any(
        m.get("subtype") == "compact_boundary" and m["compact_metadata"]["trigger"] == "auto"
        for m in run.messages
    ), "the CLI reported no auto compact_boundary"

    first = first_after(api, steps.compactions[0])
    received = snapshots_in(first)
    assert received, no_resume_msg(first, "the first request after auto-compaction", h)
    assert len(received) == 1, received
    assert_snapshot_names_work(
        received[0], "billing", request=request, what="after auto-compaction"
    )
    assert followup.read_text() == "VAT is 19%.\n"

    session = h.session(proj, sid)
    assert session["compact_count"] == 1
    resumes = compact_resumes(session)
    assert [(r["compact_seq"], r["consumed"]) for r in resumes] == [(1, True)], resumes
    assert resumes[0]["snapshot"].strip() == received[0].strip()
    writes = [e["data"]["path"] for e in events_of(session, "file_write")]
    assert writes == ["src/billing.py", "docs/VAT.md"], writes
    found = assert_summary_kept(h, proj, sid, "auto-compaction")
    assert found["trigger"] == "auto", found
    h.assert_clean()


# -- scenario 3: the model runs a search hint ------------------------------------------------


def test_model_runs_a_snapshot_lookup_and_gets_the_detail(e2e: Harness) -> None:
    h = e2e
    proj = h.project("shop-hint")
    ran: dict[str, Any] = {}

    def run_error_lookup(req: Request) -> Reply:
        received = snapshots_in(req)
        assert received, "no snapshot in the first request after compaction"
        root = parse(received[-1])
        section = root.find("errors")
        lookup = section.find("lookup") if section is not None else None
        assert lookup is not None and lookup.text, f"no lookup in <errors>:\n{received[-1]}"
        # As the preface says: the search command, then the section's lookup.
        ran["command"] = f"{root.findtext('search')} {lookup.text}"
        ran["call"] = ToolCall("Bash", {"command": ran["command"], "description": "Look it up"})
        return calls(ran["call"])

    def read_result(req: Request) -> Reply:
        ran["result"] = req.tool_result_text(ran["call"].id)
        ran["is_error"] = any(
            b.get("is_error") for b in req.tool_results() if b.get("tool_use_id") == ran["call"].id
        )
        return say("Found it.")

    steps = Steps(
        *work_steps(proj, "rates"),
        call("Bash", command="git log --oneline -1", description="Check", input_tokens=HUGE_USAGE),
        run_error_lookup,
        read_result,
    )
    api = h.serve(steps)
    run = h.claude_p("Find out why the German rate fails", proj, env=AUTO_COMPACT_ENV)
    assert steps.compactions, f"no compaction:\n{api.dump()}"
    assert "command" in ran, no_resume_msg(
        first_after(api, steps.compactions[0]), "the first request after compaction", h
    )
    # Run exactly as written: the tool_use the client executed carries the lookup verbatim.
    executed = [u["input"]["command"] for u in api.requests[-1].tool_uses() if u["name"] == "Bash"]
    assert executed[-1] == ran["command"]
    result = ran.get("result")
    assert result is not None, f"the lookup's tool_result never reached the model:\n{api.dump()}"
    assert not ran["is_error"], f"the lookup `{ran['command']}` failed:\n{result}"
    assert ERROR_LINE in result, (
        f"the lookup `{ran['command']}` did not return the detail {ERROR_LINE!r}:\n{result}"
    )
    resumes = compact_resumes(h.session(proj, run.session_id))
    assert [(r["compact_seq"], r["consumed"]) for r in resumes] == [(1, True)], resumes
    h.assert_clean()


# -- scenario 4: /clear and --resume ---------------------------------------------------------


def test_clear_and_resume_receive_no_snapshot(e2e: Harness) -> None:
    h = e2e
    proj = h.project("shop-clear")
    api = h.serve(Steps(*work_steps(proj, "clearing"), say("Done.")))
    first = h.claude_p("Add VAT to clearing", proj)
    old = first.session_id
    assert not snapshots_in(api.requests[0]), "a fresh session (startup) received a snapshot"

    cleared = h.claude_p("/clear", proj, resume=old)
    new = cleared.session_id
    assert new != old, "/clear kept the session id"
    mark = len(api.requests)
    h.claude_p("What should we do next?", proj, resume=new)
    after_clear = requests_of(api, mark)
    assert after_clear, api.dump()
    leaked = [snapshots_in(r) for r in after_clear if snapshots_in(r)]
    assert not leaked, f"the session after /clear received a snapshot:\n{leaked[0]}"
    assert not any(r.contains("src/clearing.py") for r in after_clear), (
        "the session after /clear was told about the cleared session's files"
    )

    # A session with events of its own, resumed: its transcript is intact, no snapshot.
    api.script = Steps(call("Write", file_path=str(proj / "notes.md"), content="n\n"), say("ok"))
    own = h.claude_p("Write some notes", proj).session_id
    mark = len(api.requests)
    api.script = Steps(say("Resumed."))
    h.claude_p("Carry on", proj, resume=own)
    resumed = requests_of(api, mark)
    leaked = [snapshots_in(r) for r in resumed if snapshots_in(r)]
    assert not leaked, (
        f"--resume of a session with its own events received a snapshot:\n{leaked[0]}"
    )

    doc = h.dump(proj)
    claimed = [
        (s["session_id"], r["consumed_by"])
        for s in doc["sessions"]
        for r in s["resumes"]
        if r.get("consumed_by") in (new, own)
    ]
    assert not claimed, f"snapshots were claimed after /clear or by a plain resume: {claimed}"
    h.assert_clean()


# -- scenario 5: projects and worktrees ------------------------------------------------------


def test_no_snapshot_or_event_crosses_projects_or_worktrees(e2e: Harness) -> None:
    """Snapshots never cross sessions or repositories; a linked worktree shares its
    repository's store (one memory per repository, since 0.3)."""
    h = e2e
    alpha = h.project("alpha")
    beta = h.project("beta")
    gamma = h.project("gamma")
    h.git(gamma, "worktree", "add", "-q", "-b", "feature", str(h.root / "gamma-wt"))
    gamma_wt = h.root / "gamma-wt"
    places = {"alpha": alpha, "beta": beta, "gammamain": gamma, "gammafeature": gamma_wt}
    api = h.serve(Steps())
    sessions: dict[str, str] = {}
    for name, place in places.items():
        steps = Steps(
            call("Write", file_path=str(place / f"{name}_mod.py"), content=f"NAME = '{name}'\n"),
            call(
                "Bash",
                command=f"git add {name}_mod.py && git commit -q -m 'Add {name} module'",
                description="Commit",
            ),
            load_tools("TaskCreate"),
            call("TaskCreate", subject=f"Ship {name}", description="-", activeForm="Shipping"),
            call("Bash", command="git status --short", description="s", input_tokens=HUGE_USAGE),
            say(f"{name} done."),
        )
        api.script = steps
        run = h.claude_p(f"Build the {name} module", place, env=AUTO_COMPACT_ENV)
        sessions[name] = run.session_id
        assert steps.compactions, f"{name}: no compaction\n{api.dump()}"
        first = first_after(api, steps.compactions[0])
        received = snapshots_in(first)
        assert received, no_resume_msg(first, f"{name}: the first request after compaction", h)
        others = [o for o in places if o != name and f"{o}_mod" in received[0]]
        assert f"{name}_mod.py" in received[0] and not others, (
            f"{name}: the snapshot names {others or 'not its own file'}:\n{received[0]}"
        )

    # One store per repository: gamma's worktrees share one (and each session records
    # its worktree and branch); no session's events mention another place.
    repository = {"alpha": "alpha", "beta": "beta", "gammamain": "gamma", "gammafeature": "gamma"}
    for name, place in places.items():
        doc = h.dump(place)
        ids = sorted(s["session_id"] for s in doc["sessions"])
        mates = sorted(sessions[o] for o in places if repository[o] == repository[name])
        assert ids == mates, f"{name}: the store of {place} holds sessions {ids}"
        (own,) = [s for s in doc["sessions"] if s["session_id"] == sessions[name]]
        assert own["worktree"] == os.path.realpath(place), own["worktree"]
        assert own["branch"] == ("feature" if name == "gammafeature" else "main"), own["branch"]
        blob = json.dumps(own)
        others = [o for o in places if o != name and f"{o}_mod" in blob]
        assert not others, f"{name}: the session in {place} mentions {others}"

    # Back in each place, a resumed session is handed nothing new: the one snapshot in its
    # first request is its own transcript's copy, naming only its own work.
    for name, place in places.items():
        api.script = Steps(say("Resumed."))
        mark = len(api.requests)
        h.claude_p("Status?", place, resume=sessions[name])
        got = snapshots_in(requests_of(api, mark)[0])
        foreign = [o for o in places if o != name and any(f"{o}_mod" in g for g in got)]
        assert len(got) == 1 and not foreign, (
            f"{name}: after --resume the model holds {len(got)} snapshots, foreign: {foreign}"
        )
    h.assert_clean()


# -- scenario 6: a long session --------------------------------------------------------------


def test_three_hundred_tool_calls_all_recorded(e2e: Harness) -> None:
    h = e2e
    proj = h.project("bulk")
    total, batch = 304, 16
    paths = [f"gen/file_{i:03d}.txt" for i in range(total)]
    rounds = [
        calls(
            *(
                ToolCall("Write", {"file_path": str(proj / p), "content": f"{p}\n"})
                for p in paths[start : start + batch]
            )
        )
        for start in range(0, total, batch)
    ]
    api = h.serve(Steps(*rounds, say("All files written.")), max_requests=60)
    run = h.claude_p("Generate the fixture files", proj, timeout=240)
    assert run.result is not None and run.result.get("result") == "All files written."
    assert all((proj / p).exists() for p in paths)

    session = h.session(proj, run.session_id)
    recorded = sorted(e["data"]["path"] for e in events_of(session, "file_write"))
    lost = sorted(set(paths) - set(recorded))
    assert not lost, f"{len(lost)} of {total} writes were not recorded, e.g. {lost[:5]}"
    assert recorded == paths, f"duplicates or strays: {len(recorded)} file_write events"
    # The Stop hook kept the text the turn ended with, though `claude -p` ends right after.
    replies = [e["data"]["text"] for e in events_of(session, "assistant_reply")]
    assert replies == ["All files written."], replies
    assert len(api.requests) == total // batch + 1
    h.assert_clean()
