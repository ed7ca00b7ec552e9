"""The Codex CLI as a host (issue 18): its recorded payloads through the real hooks.

Every hook runs as Codex runs it: a fresh process, ``--host codex`` on its command line, the
payload on stdin (tests/fixtures/codex-0.169.0/, recorded by scripts/record_codex_fixtures.py),
with the fixture's project and rollout file moved into the test's own folder.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctxmode import hookrun
from ctxmode.hosts import codex
from ctxmode.hosts.codex import install as codex_config
from ctxmode.hosts.codex import proof as codex_proof
from ctxmode.hosts.codex import rollout as codex_rollout
from tests import replies as replies_corpus
from tests.helpers import cli
from tests.hooktools import REPO, hook_env, run_hook

CODEX_FIXTURES = REPO / "tests" / "fixtures" / "codex-0.169.0"
LATEST_STOP = REPO / "tests" / "fixtures" / "codex-0.171.0" / "Stop.json"
RECORDED_PROJECT = "/tmp/proj"
CODEX_EVENTS = [event for event, _, _ in codex.HOOKS]


def load(name: str) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((CODEX_FIXTURES / name).read_text())
    return {k: v for k, v in record.items() if not k.startswith("_")}


def moved(payload: dict[str, Any], project: Path, rollout: Path | None) -> dict[str, Any]:
    """The payload as if recorded in ``project``, its rollout file at ``rollout``."""
    text = json.dumps(payload).replace(RECORDED_PROJECT, str(project))
    out: dict[str, Any] = json.loads(text)
    out["transcript_path"] = str(rollout) if rollout is not None else None
    return out


def hook(event: str, payload: dict[str, Any] | bytes) -> bytes:
    """Run one Codex hook; assert the contract (exit 0, nothing on stderr); its stdout."""
    proc = run_hook(event, payload, host="codex")
    assert proc.returncode == 0
    assert proc.stderr == b""
    return proc.stdout


def events(project: Path) -> list[dict[str, Any]]:
    result = cli("dump", "--project", str(project), "--jsonl")
    return [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]


def of_type(rows: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [row["data"] for row in rows if row["type"] == kind]


@pytest.fixture
def rollout(tmp_path: Path, project: Path) -> Path:
    """The recorded rollout file of the ledger session, moved into the test's project."""
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        (CODEX_FIXTURES / "rollout.ledger.jsonl")
        .read_text()
        .replace(RECORDED_PROJECT, str(project))
    )
    return path


# -- input -----------------------------------------------------------------------------------


def test_tool_kinds() -> None:
    assert codex.tool_kind("Bash") == "shell"
    assert codex.tool_kind("apply_patch") == "file.patch"
    assert codex.tool_kind("update_plan") == "todo.write"
    assert codex.tool_kind("mcp__docs__lookup") == "mcp"
    assert codex.tool_kind("view_image") == ""


def test_shell_payload_becomes_the_shape_the_extractors_read() -> None:
    raw = load("PostToolUse.Bash.failing_command.json")
    inp = codex.parse(json.dumps(raw).encode(), "PostToolUse")
    assert inp.tool_kind == "shell"
    assert inp.tool_input == {"command": "python3 tests/test_reconcile.py"}
    assert inp.tool_response["stdout"].startswith("python3: can't open file")
    # PostToolUse fires for failed commands too: it proves no success on Codex.
    assert inp.outcome_known is False


def test_a_patch_is_keyed_by_its_first_file() -> None:
    raw = load("PostToolUse.apply_patch.add.json")
    inp = codex.parse(json.dumps(raw).encode(), "PostToolUse")
    assert inp.tool_kind == "file.patch"
    assert inp.tool_input["file_path"] == "src/ledger/reconcile.py"
    assert inp.tool_input["patch"].startswith("*** Begin Patch")


def test_plan_steps_become_todos() -> None:
    raw = {
        "session_id": "s",
        "cwd": "/p",
        "hook_event_name": "PostToolUse",
        "tool_name": "update_plan",
        "tool_input": {"plan": [{"step": "write it", "status": "in_progress"}]},
    }
    inp = codex.parse(json.dumps(raw).encode(), "PostToolUse")
    assert inp.tool_input == {"todos": [{"content": "write it", "status": "in_progress"}]}


def test_first_patch_file_skips_headers_inside_content() -> None:
    text = "*** Begin Patch\n*** Update File: a.py\n+x = '*** Add File: b'\n*** End Patch"
    assert codex_rollout.first_patch_file(text) == "a.py"
    assert codex_rollout.first_patch_file("no patch") == ""


def test_host_argument() -> None:
    assert hookrun.host_argument(["shim.py", "--host", "codex"]) == "codex"
    assert hookrun.host_argument(["shim.py", "--host=codex"]) == "codex"
    assert hookrun.host_argument(["shim.py"]) is None


# -- the hooks, end to end -----------------------------------------------------------------


def test_ledger_session_through_the_hooks(project: Path, rollout: Path) -> None:
    for name in (
        "SessionStart.startup.json",
        "UserPromptSubmit.json",
        "PostToolUse.apply_patch.add.json",
        "PostToolUse.apply_patch.update.json",
        "PostToolUse.Bash.git_commit.json",
        "PostToolUse.Bash.failing_command.json",
        "Stop.json",
        "SessionEnd.json",
    ):
        raw = load(name)
        assert hook(raw["hook_event_name"], moved(raw, project, rollout)) == b""
    rows = events(project)
    # The text the turn ended with (Stop's last_assistant_message), as Claude Code's.
    assert [d["text"] for d in of_type(rows, "assistant_reply")] == [
        "Done: reconcile.py written and committed; the test file is still missing."
    ]
    assert {
        "path": "src/ledger/reconcile.py",
        "kind": "create",
        "excerpt": "def reconcile(entries):\n    total = 0\n    for e in entries:\n"
        "        total += e\n    return total",
    } in of_type(rows, "file_write")
    assert [d["path"] for d in of_type(rows, "file_edit")] == ["src/ledger/reconcile.py"]
    assert [d["message"] for d in of_type(rows, "git_commit")] == ["Reconcile ledger totals"]
    # The failure only the rollout knows (exit 2), under the key a rerun would resolve.
    errors = of_type(rows, "tool_error")
    assert [(e["tool"], e["key"]) for e in errors] == [("Bash", "python3 tests/test_reconcile.py")]
    assert errors[0]["error"].startswith("Exit code 2\npython3: can't open file")
    assert of_type(rows, "user_prompt")


def test_session_start_output_follows_codexs_contract(project: Path, rollout: Path) -> None:
    raw = moved(load("PostToolUse.apply_patch.add.json"), project, rollout)
    hook("PostToolUse", raw)
    hook("PreCompact", moved(load("PreCompact.auto.json"), project, rollout))
    out = hook("SessionStart", moved(load("SessionStart.compact.json"), project, rollout))
    doc = json.loads(out)
    assert set(doc) == {"hookSpecificOutput"}  # Codex refuses unknown keys
    assert doc["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert doc["hookSpecificOutput"]["additionalContext"].startswith("<session_resume")


def test_after_compaction_resume_and_compact_hand_the_snapshot_once(
    project: Path, rollout: Path
) -> None:
    """Codex fires SessionStart resume, then compact, after an automatic compaction; both
    outputs reach the model: exactly one of them carries the snapshot."""
    stream = [
        json.loads(line) for line in (CODEX_FIXTURES / "stream.jsonl").read_text().splitlines()
    ]
    ledger = stream[0]["payload"]["session_id"]
    outputs: list[tuple[str, str | None, bytes]] = []
    for entry in stream:
        payload = entry["payload"]
        event = entry["event"]
        if payload.get("session_id") != ledger or event not in CODEX_EVENTS:
            continue
        payload = {k: v for k, v in payload.items() if not k.startswith("_")}
        out = hook(event, moved(payload, project, rollout))
        if entry["run"] == "resume-compact":
            outputs.append((event, payload.get("source"), out))
    starts = [(source, out) for event, source, out in outputs if event == "SessionStart"]
    assert [source for source, _ in starts] == ["resume", "compact"]
    carrying = [source for source, out in starts if b"<session_resume" in out]
    assert len(carrying) == 1
    text = b"".join(out for _, out in starts).decode()
    assert "src/ledger/reconcile.py" in text and "Reconcile ledger totals" in text
    assert "python3 tests/test_reconcile.py" in text  # the failure, from the rollout
    # and the turn's prompt gets nothing more
    assert all(out == b"" for event, _, out in outputs if event == "UserPromptSubmit")


def test_the_turns_reply_is_kept_as_claude_codes_through_the_installed_command(
    project: Path, tmp_path: Path
) -> None:
    """Codex 0.171.0's recorded Stop, run as Codex runs the command install registers
    (``bash -c``, in the session's cwd): its reply stored masked and bounded, exactly as
    Claude Code's Stop stores the same text, and nothing printed (a Stop hook's decision
    would make Codex go on with the turn)."""
    (spec,) = [s for s in codex_config.hook_specs() if s.event == "Stop"]
    raw = {k: v for k, v in json.loads(LATEST_STOP.read_text()).items() if not k.startswith("_")}
    payload = moved(raw, project, None) | {"last_assistant_message": replies_corpus.REPLY}
    proc = subprocess.run(
        [*codex_proof.shell(), spec.command],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=project,
        env=hook_env(),
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    replies_corpus.assert_kept_like_claude_codes(project, tmp_path)


@pytest.mark.parametrize("event", CODEX_EVENTS)
@pytest.mark.parametrize(
    "stdin",
    [b"", b"garbage{", b"[]", b'{"hook_event_name": 3}', b"{" + b"x" * (9 * 1024 * 1024)],
    ids=["empty", "garbage", "list", "bad-type", "huge"],
)
def test_any_stdin_exits_0_silently(event: str, stdin: bytes) -> None:
    assert hook(event, stdin) == b""


def test_a_huge_patch_still_records_its_file(project: Path) -> None:
    raw = moved(load("PostToolUse.apply_patch.add.json"), project, None)
    body = "".join(f"+line {i}\n" for i in range(1_000_000))
    raw["tool_input"]["command"] = (
        "*** Begin Patch\n*** Add File: big/file.txt\n" + body + "*** End Patch"
    )
    hook("PostToolUse", raw)
    (written,) = of_type(events(project), "file_write")
    assert (written["path"], written["kind"]) == ("big/file.txt", "create")
    assert written["excerpt"].startswith("line 0\nline 1\n") and len(written["excerpt"]) <= 420


# -- outcomes from the rollout file ------------------------------------------------------------


def _call(call_id: str, cmd: str) -> str:
    item = {
        "type": "function_call",
        "name": "exec_command",
        "arguments": json.dumps({"cmd": cmd}),
        "call_id": call_id,
    }
    return json.dumps({"timestamp": "t", "type": "response_item", "payload": item}) + "\n"


def _output(call_id: str, code: int, text: str) -> str:
    out = f"Chunk ID: x\nWall time: 0.0 seconds\nProcess exited with code {code}\nOutput:\n{text}"
    item = {"type": "function_call_output", "call_id": call_id, "output": out}
    return json.dumps({"timestamp": "t", "type": "response_item", "payload": item}) + "\n"


def _post(project: Path, rollout: Path, cmd: str, call_id: str) -> None:
    raw = moved(load("PostToolUse.Bash.json"), project, rollout)
    raw["tool_input"] = {"command": cmd}
    raw["tool_response"] = "output\n"
    raw["tool_use_id"] = call_id
    hook("PostToolUse", raw)


def test_outcomes_are_read_incrementally_each_once(
    project: Path, tmp_path: Path, data_root: Path
) -> None:
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(_call("c1", "make test") + _output("c1", 2, "2 tests failed"))
    _post(project, rollout, "make lint", "c2")
    # the next call sees the earlier outcome only once, and a half-written line waits
    with rollout.open("a") as fh:
        fh.write(_call("c2", "make lint") + _output("c2", 0, "ok") + '{"timestamp": "t", "ty')
    _post(project, rollout, "make test", "c3")
    rows = events(project)
    assert [e["key"] for e in of_type(rows, "tool_error")] == ["make test"]
    assert of_type(rows, "error_resolved") == []
    # the rerun succeeds: its outcome (read later) resolves the error, as on Claude Code
    with rollout.open("a") as fh:
        fh.write('pe": "event_msg"}\n' + _call("c3", "make test") + _output("c3", 0, "all ok"))
    session = load("PostToolUse.Bash.json")["session_id"]
    hook(
        "PreCompact",
        moved(load("PreCompact.auto.json"), project, rollout) | {"session_id": session},
    )
    rows = events(project)
    assert [e["key"] for e in of_type(rows, "tool_error")] == ["make test"]
    assert [e["key"] for e in of_type(rows, "error_resolved")] == ["make test"]
    # the position is kept privately under the data root
    state = Path(codex_rollout.state_path(str(data_root), session))
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert stat.S_IMODE(state.parent.stat().st_mode) == 0o700
    assert json.loads(state.read_text())["offset"] == rollout.stat().st_size


def test_a_post_tool_use_alone_resolves_nothing_on_codex(project: Path, tmp_path: Path) -> None:
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(_call("c1", "make test") + _output("c1", 1, "boom"))
    _post(project, rollout, "make other", "c2")
    # the same command again, its outcome not yet in the rollout: it may have failed again
    _post(project, rollout, "make test", "c3")
    assert of_type(events(project), "error_resolved") == []


def test_the_state_file_keeps_no_secret(project: Path, tmp_path: Path, data_root: Path) -> None:
    secret = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(_call("c1", f"curl -H 'Authorization: Bearer {secret}' https://x.test"))
    _post(project, rollout, "true", "c0")
    session = load("PostToolUse.Bash.json")["session_id"]
    state = Path(codex_rollout.state_path(str(data_root), session)).read_text()
    assert "c1" in state and secret not in state and secret[:20] not in state


@pytest.mark.parametrize(
    ("tool", "output", "expected"),
    [
        ("Bash", "Chunk ID: a\nProcess exited with code 3\nOutput:\nno\n", (3, "no\n")),
        ("Bash", "Chunk ID: a\nProcess exited with code 0\nOutput:\n", (0, "")),
        ("Bash", "Process running with session ID 7\nOutput:\n...", (None, "...")),
        ("apply_patch", "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.", (0, "Success.")),
        (
            "apply_patch",
            "apply_patch verification failed: nope",
            (1, "apply_patch verification failed: nope"),
        ),
        ("Bash", '{"output": "x", "metadata": {"exit_code": 4}}', (4, "x")),
    ],
)
def test_outcome_of_an_output(tool: str, output: str, expected: tuple[int | None, str]) -> None:
    assert codex_rollout.outcome(tool, output) == expected


def test_a_line_longer_than_a_read_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"x" * (codex_rollout.MAX_READ + 10) + b"\n" + b'{"a": 1}\n')
    lines, offset = codex_rollout._read_lines(str(path), 0)
    assert lines == [] and offset == codex_rollout.MAX_READ + 11
    lines, offset = codex_rollout._read_lines(str(path), offset)
    assert lines == [b'{"a": 1}'] and offset == os.path.getsize(path)


def test_a_commit_whose_call_failed_is_not_in_the_snapshot(project: Path, tmp_path: Path) -> None:
    """Codex records a `git commit` call before its exit code comes: a failed one (no sha
    in its output) must not be shown as made, as on Claude Code (no PostToolUse there)."""
    rollout = tmp_path / "rollout.jsonl"
    commit = 'git commit -q -m "Half-made change"'
    rollout.write_text("")
    _post(project, rollout, commit, "c1")
    with rollout.open("a") as fh:
        fh.write(_call("c1", commit) + _output("c1", 128, "Author identity unknown"))
    session = load("PostToolUse.Bash.json")["session_id"]
    pre = moved(load("PreCompact.auto.json"), project, rollout) | {"session_id": session}
    hook("PreCompact", pre)
    start = moved(load("SessionStart.compact.json"), project, rollout) | {"session_id": session}
    snapshot = json.loads(hook("SessionStart", start))["hookSpecificOutput"]["additionalContext"]
    assert "Author identity unknown" in snapshot  # the failure is there
    assert "<commit>" not in snapshot  # the commit is not


# -- one memory across clients -----------------------------------------------------------------


def test_sessions_and_dump_show_and_filter_the_client(project: Path, rollout: Path) -> None:
    """A Codex session and a Claude Code session in one repository share the store; each
    is tagged with its client, which sessions and dump show and filter by."""
    raw = moved(load("UserPromptSubmit.json"), project, rollout)
    hook("UserPromptSubmit", raw)
    claude = {
        "session_id": "claude-session-1",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "From Claude Code",
    }
    assert run_hook("UserPromptSubmit", claude).returncode == 0
    listed = json.loads(cli("sessions", "--project", str(project), "--json").output)
    clients = {row["session_id"]: row["client"] for row in listed["sessions"]}
    assert clients == {raw["session_id"]: "codex", "claude-session-1": "claude_code"}
    text = cli("sessions", "--project", str(project)).output
    assert "CLIENT" in text and "codex" in text
    only = json.loads(
        cli("sessions", "--project", str(project), "--client", "codex", "--json").output
    )
    assert [row["session_id"] for row in only["sessions"]] == [raw["session_id"]]
    dumped = json.loads(
        cli("dump", "--project", str(project), "--client", "claude", "--json").output
    )
    assert [s["session_id"] for s in dumped["sessions"]] == ["claude-session-1"]
    assert "client codex" in cli("dump", "--project", str(project)).output
    found = json.loads(cli("search", "From", "--project", str(project), "--json").output)
    assert {hit["session_id"] for hit in found} == {"claude-session-1"}
    found = json.loads(
        cli("search", "From", "--project", str(project), "--client", "codex", "--json").output
    )
    assert found == []
    found = json.loads(
        cli("search", "ledger", "--project", str(project), "--client", "codex", "--json").output
    )
    assert {hit["session_id"] for hit in found} == {raw["session_id"]}


def test_codexs_compaction_summary_is_kept_from_the_rollout(project: Path, rollout: Path) -> None:
    """Codex's PostCompact carries no summary; its rollout's ``compacted`` record does: it
    is kept beside the compaction, masked and without Codex's preamble."""
    for name in ("UserPromptSubmit.json", "PreCompact.auto.json"):
        raw = load(name)
        hook(raw["hook_event_name"], moved(raw, project, rollout))
    doc = json.loads(cli("dump", "--project", str(project), "--json").output)
    (compaction,) = doc["sessions"][0]["compactions"]
    assert compaction["summary"] == (
        "Summary: the ledger helper was added and committed; its test still fails."
    )
