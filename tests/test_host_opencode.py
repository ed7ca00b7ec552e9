"""OpenCode as a host (issue 31): what ctxmode's plugin hands the hook scripts, recorded from
the real CLI (tests/fixtures/opencode-1.18.33/, by scripts/record_opencode_fixtures.py), run
through the commands the installed plugin spawns: this interpreter on the shims with
``--host opencode``, no shell, in OpenCode's environment, the payload on stdin, with the
fixture's project moved into the test's own folder. The plugin itself runs in the e2e test
(tests/e2e/test_opencode_e2e.py).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctxmode.hosts import opencode
from ctxmode.hosts.opencode import install as opencode_install
from tests.helpers import cli
from tests.hooktools import REPO

FIXTURES = REPO / "tests" / "fixtures" / "opencode-1.18.33"
RECORDED_PROJECT = "/home/dev/project"
RESUME_RE = re.compile(r"<session_resume\b.*?</session_resume>", re.S)
SPECS = {spec.event: spec for spec in opencode_install.hook_specs()}
FILE = "src/ledger/reconcile.py"
FAILING = "python3 tests/test_reconcile.py"


def load(name: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((FIXTURES / name).read_text())["payload"]
    return value


def moved(payload: dict[str, Any], project: Path) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(payload).replace(RECORDED_PROJECT, str(project)))
    return out


def opencode_env() -> dict[str, str]:
    """The hook's environment: OpenCode's own (the plugin passes it on), no CLAUDE_*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "OPENCODE"))}
    env.update(OPENCODE="1")
    return env


def hook(shim: str, payload: dict[str, Any] | bytes, project: Path) -> bytes:
    """Spawn what the plugin spawns for ``shim`` (argv, no shell); assert the contract (exit
    0, nothing on stderr); its stdout."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    spec = next(s for s in SPECS.values() if f"/{shim}.py" in s.command)
    proc = subprocess.run(
        shlex.split(spec.command),
        input=data,
        capture_output=True,
        cwd=project,
        env=opencode_env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc
    assert proc.stderr == b"", proc.stderr
    return proc.stdout


def replay(project: Path, until: str | None = None) -> list[tuple[dict[str, Any], bytes]]:
    """The recorded session (both runs) through the shims, up to the first call of the hook
    ``until`` (all of it: None): (payload, stdout)."""
    out = []
    for line in (FIXTURES / "stream.jsonl").read_text().splitlines():
        record = json.loads(line)
        payload = moved(record["payload"], project)
        out.append((payload, hook(record["shim"], payload, project)))
        if payload["hook"] == until:
            break
    return out


def rows(project: Path) -> list[dict[str, Any]]:
    result = cli("dump", "--project", str(project), "--jsonl")
    return [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]


def of_type(found: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [row["data"] for row in found if row["type"] == kind]


def context(stdout: bytes) -> str:
    if not stdout.strip():
        return ""
    text: str = json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
    return text


# -- the tool table ------------------------------------------------------------------------


def test_every_tool_opencode_offers_is_classified() -> None:
    """The tools 1.18.33 offered the build agent in the recorded runs: each is recorded as
    a kind or named as one ctxmode records nothing of; a new tool fails this test."""
    offered = json.loads((FIXTURES / "tools.run.json").read_text())
    assert "bash" in offered and "edit" in offered
    unclassified = [
        n for n in offered if n not in opencode.TOOL_KINDS and n not in opencode.NOT_RECORDED
    ]
    assert unclassified == []
    assert not set(opencode.TOOL_KINDS) & set(opencode.NOT_RECORDED)
    assert opencode.tool_kind("docs_lookup") == "mcp"
    assert opencode.tool_kind("skill") == "" and opencode.tool_kind("bash") == "shell"


# -- payloads → neutral inputs ---------------------------------------------------------------


def test_a_command_that_exited_non_zero_is_a_failure_with_its_exit_code() -> None:
    inp = opencode.parse(json.dumps(load("tool.execute.after.bash.exit2.json")).encode())
    assert inp.event == "PostToolUseFailure"
    assert inp.error is not None and inp.error.startswith("Exit code 2")
    assert inp.tool_input["command"] == FAILING and inp.tool_kind == "shell"
    ok = opencode.parse(json.dumps(load("tool.execute.after.bash.json")).encode())
    assert ok.event == "PostToolUse" and ok.error is None
    assert ok.tool_response["stdout"] == "committed\n"


def test_a_tool_that_threw_is_a_failure_from_its_part_event() -> None:
    inp = opencode.parse(json.dumps(load("tool.error.edit.json")).encode())
    assert inp.event == "PostToolUseFailure" and inp.tool_name == "edit"
    assert inp.error is not None and "Could not find oldString" in inp.error
    assert inp.tool_input["file_path"].endswith(FILE) and inp.session_id.startswith("ses_")


def test_the_arguments_take_the_names_the_extractors_read() -> None:
    edit = opencode.parse(json.dumps(load("tool.execute.after.edit.json")).encode())
    assert edit.event == "PostToolUse" and edit.tool_kind == "file.edit"
    assert set(edit.tool_input) == {"file_path", "old_string", "new_string"}
    write = opencode.parse(json.dumps(load("tool.execute.after.write.json")).encode())
    assert write.tool_kind == "file.write" and write.tool_input["content"].startswith("def ")
    todos = opencode.parse(json.dumps(load("tool.execute.after.todowrite.json")).encode())
    assert todos.tool_input["todos"][0] == {"content": "fix the ledger", "status": "in_progress"}


def test_each_event_becomes_its_neutral_one() -> None:
    expected = {
        "chat.message.json": ("UserPromptSubmit", None),
        "experimental.session.compacting.json": ("PreCompact", None),
        "session.created.json": ("SessionStart", "startup"),
        "session.compacted.json": ("SessionStart", "compact"),
        "session.start.json": ("SessionStart", "resume"),
        "session.idle.json": ("SessionEnd", None),
    }
    for name, (event, source) in expected.items():
        inp = opencode.parse(json.dumps(load(name)).encode())
        assert (inp.event, inp.source) == (event, source), name
        assert inp.session_id.startswith("ses_") and inp.cwd == RECORDED_PROJECT, name
        assert inp.prompt_claims_compact is False
    prompt = opencode.parse(json.dumps(load("chat.message.json")).encode())
    assert prompt.prompt == '"please fix the ledger module"'  # as `opencode run` sends it


def test_unusable_input_is_refused_not_raised() -> None:
    from ctxmode.payload import PayloadError

    for data in (b"", b"[]", b'{"hook": "nosuch"}', b"\xff"):
        with pytest.raises(PayloadError):
            opencode.parse(data, "PostToolUse")


def test_an_oversized_call_keeps_its_envelope() -> None:
    payload = load("tool.execute.after.bash.json")
    payload["output"]["output"] = "x" * 100
    head = json.dumps(payload).encode()[:400]
    inp = opencode.salvage(head, "PostToolUse")
    assert inp.event == "PostToolUse" and inp.tool_name == "bash"
    assert inp.tool_input["command"].startswith("git add") and inp.session_id.startswith("ses_")


def test_only_session_start_speaks() -> None:
    assert opencode.output("SessionStart", "<x/>").startswith(b'{"hookSpecificOutput"')
    for event in ("PostToolUse", "UserPromptSubmit", "PreCompact", "SessionEnd"):
        assert opencode.output(event, "<x/>") == b""


# -- the recorded session through the shims ------------------------------------------------


def test_the_recorded_session_is_recorded_and_its_snapshot_handed_over_once(
    project: Path,
) -> None:
    calls = replay(project)
    found = rows(project)
    assert [(d["path"], d.get("kind")) for d in of_type(found, "file_write")] == [(FILE, "create")]
    assert [d["path"] for d in of_type(found, "file_edit")] == [FILE]
    errors = [
        (d["tool"], d["key"], d["error"].split("\n")[0]) for d in of_type(found, "tool_error")
    ]
    assert ("bash", FAILING, "Exit code 2") in errors
    assert any(tool == "edit" and "Could not find oldString" in err for tool, _k, err in errors)
    assert [d["message"] for d in of_type(found, "git_commit")] == ["Reconcile ledger totals"]
    prompts = [d["text"] for d in of_type(found, "user_prompt")]
    assert prompts == ['"please fix the ledger module"', '"now the tour please"']
    # Only the SessionStart after the compaction printed, once: the snapshot.
    spoken = [(p["hook"], context(out)) for p, out in calls if out.strip()]
    assert [hook for hook, _ in spoken] == ["session.compacted"], spoken
    snapshot = RESUME_RE.findall(spoken[0][1])
    assert len(snapshot) == 1 and FILE in snapshot[0] and FAILING in snapshot[0]
    assert 'compaction="1"' in snapshot[0]
    doc = json.loads(cli("dump", "--project", str(project), "--json").output)
    (session,) = doc["sessions"]
    assert session["client"] == "opencode"
    compact = [r for r in session["resumes"] if r["kind"] == "compact"]
    assert len(compact) == 1 and compact[0]["consumed"] in (1, True)


def test_a_second_session_start_of_a_compaction_hands_over_nothing(project: Path) -> None:
    """Told twice of one compaction (nothing done in between), the second SessionStart finds
    the snapshot claimed, and nothing new to build: the claim is once."""
    calls = replay(project, until="session.compacted")
    assert RESUME_RE.search(context(calls[-1][1]))
    again = moved(load("session.compacted.json"), project)
    assert hook("session_start", again, project) == b""


def test_garbage_is_swallowed_by_every_shim(project: Path) -> None:
    for shim in (
        "post_tool_use",
        "user_prompt_submit",
        "pre_compact",
        "session_start",
        "session_end",
    ):
        for data in (b"", b"not json", b'{"hook": "tool.execute.after", "input": 3}'):
            assert hook(shim, data, project) == b""
