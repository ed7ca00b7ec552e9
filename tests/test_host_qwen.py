"""Qwen Code as a host (issue 31): its recorded payloads through the installed hooks.

Every hook runs as Qwen runs it: the command ``ctxmode install --host qwen`` registers,
through ``bash -c``, in the session's cwd, with Qwen's variables (QWEN_PROJECT_DIR and
CLAUDE_PROJECT_DIR = the folder qwen started in, QWEN_CODE_SESSION_ID), the payload on
stdin (tests/fixtures/qwen-code-0.24.4/, recorded by scripts/record_qwen_fixtures.py), with
the fixture's project moved into the test's own folder. The recorded session: a file
written and edited, a test run that fails, a commit, reads and searches, a deferred tool;
``qwen --continue "/compress"``; ``qwen --continue`` with a new prompt.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctxmode.hosts import qwen
from ctxmode.hosts.qwen import install as qwen_config
from ctxmode.hosts.qwen.outline import outline
from tests import replies as replies_corpus
from tests.helpers import cli
from tests.hooktools import REPO

FIXTURES = REPO / "tests" / "fixtures" / "qwen-code-0.24.4"
RECORDED_PROJECT = "/home/dev/project"
COMMANDS = {spec.event: spec.command for spec in qwen_config.hook_specs()}


def load(name: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return value


def moved(payload: dict[str, Any], project: Path) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(payload).replace(RECORDED_PROJECT, str(project)))
    return out


def qwen_env(project: Path, session: str) -> dict[str, str]:
    """The hook's environment as Qwen 0.24.4 sets it (fixtures/_hook_env.json)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QWEN", "CLAUDE"))}
    env.update(
        QWEN_PROJECT_DIR=str(project),
        CLAUDE_PROJECT_DIR=str(project),
        QWEN_CODE_SESSION_ID=session,
        QWEN_CODE_NO_RELAUNCH="true",
    )
    return env


def hook(event: str, payload: dict[str, Any] | bytes, project: Path) -> bytes:
    """Run ctxmode's installed command for ``event`` as Qwen does; assert the contract
    (exit 0, nothing on stderr); its stdout."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    session = payload.get("session_id", "") if isinstance(payload, dict) else ""
    proc = subprocess.run(
        ["bash", "-c", COMMANDS[event]],
        input=data,
        capture_output=True,
        cwd=project,
        env=qwen_env(project, str(session)),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc
    assert proc.stderr == b"", proc.stderr
    return proc.stdout


def replay(project: Path, runs: tuple[str, ...] = ()) -> list[tuple[str, dict[str, Any], bytes]]:
    """The recorded session through the installed hooks: (run, payload, stdout) of each
    call Qwen would make to ctxmode (the events it registers)."""
    out = []
    for line in (FIXTURES / "stream.jsonl").read_text().splitlines():
        record = json.loads(line)
        if runs and record["run"] not in runs:
            continue
        if record["event"] in COMMANDS:
            payload = moved(record["payload"], project)
            out.append((record["run"], payload, hook(record["event"], payload, project)))
    return out


def rows(project: Path) -> list[dict[str, Any]]:
    result = cli("dump", "--project", str(project), "--jsonl")
    return [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]


def of_type(found: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [row["data"] for row in found if row["type"] == kind]


def dump(project: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(cli("dump", "--project", str(project), "--json").output)
    return doc


def context_of(stdout: bytes, event: str) -> str:
    document = json.loads(stdout)
    assert document == {
        "hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": document["hookSpecificOutput"]["additionalContext"],
        }
    }
    text: str = document["hookSpecificOutput"]["additionalContext"]
    return text


# -- the tool table ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["yolo", "default"])
def test_every_tool_qwen_offers_is_classified(mode: str) -> None:
    """The tools 0.24.4 declared and deferred in each approval mode, recorded from the real
    CLI: each is recorded as a kind or named as one ctxmode records nothing of."""
    offered = json.loads((FIXTURES / f"tools.{mode}.json").read_text())
    names = offered["declared"] + offered["deferred"]
    assert "read_file" in names and "cron_list" in names
    unclassified = [n for n in names if n not in qwen.TOOL_KINDS and n not in qwen.NOT_RECORDED]
    assert unclassified == []
    assert not set(qwen.TOOL_KINDS) & set(qwen.NOT_RECORDED)
    assert qwen.tool_kind("mcp__docs__lookup") == "mcp"
    assert qwen.tool_kind("tool_call") == ""


# -- payloads → neutral inputs ---------------------------------------------------------------


def test_a_failed_shell_command_is_a_failure_with_its_exit_code() -> None:
    data = (FIXTURES / "PostToolUseFailure.run_shell_command.failing_command.json").read_bytes()
    inp = qwen.parse(data, "PostToolUseFailure")
    assert inp.event == "PostToolUseFailure"
    assert inp.error is not None and inp.error.startswith("Exit code 2\n")
    assert "can't open file" in inp.error and "Command:" not in inp.error
    assert inp.tool_kind == "shell" and inp.tool_input["command"].startswith("python3 tests")
    ok = qwen.parse((FIXTURES / "PostToolUse.run_shell_command.commit.json").read_bytes())
    assert ok.event == "PostToolUse" and ok.tool_response == {"stdout": "", "stderr": ""}


def test_shell_result_reads_qwen_s_text() -> None:
    text = (
        "Command: x\nDirectory: (root)\nOutput: a\nb\nError: (none)\nExit Code: 3\nSignal: (none)"
    )
    assert qwen.shell_result(text) == ("a\nb", 3, "")
    assert qwen.shell_result("Output: (empty)\nSignal: 9") == ("", None, "9")


def test_file_tools_take_claude_code_s_shapes() -> None:
    write = qwen.parse((FIXTURES / "PostToolUse.write_file.json").read_bytes())
    assert write.tool_kind == "file.write" and write.tool_response["type"] == "create"
    edit = qwen.parse((FIXTURES / "PostToolUse.edit.json").read_bytes())
    assert edit.tool_kind == "file.edit"
    assert edit.tool_response["structuredPatch"][0]["lines"] == [
        "-    total = 0",
        "+    total = 0.0",
        "-        total += e",
        "+        total += float(e)",
    ]
    glob = qwen.parse((FIXTURES / "PostToolUse.glob.json").read_bytes())
    assert glob.tool_response == {"numFiles": 1}


def test_qwen_names_no_compaction_delivery_at_session_start() -> None:
    inp = qwen.parse((FIXTURES / "SessionStart.compact.json").read_bytes())
    assert inp.source == "compact" and inp.start_claims_compact is False
    assert inp.prompt_claims_compact is True


# -- the outline: what survives Qwen's escaping -----------------------------------------------


def test_the_outline_has_the_snapshot_s_facts_and_no_markup() -> None:
    xml = (REPO / "tests" / "golden" / "snapshot_fixture_compact1.xml").read_text()
    text = outline(xml)
    assert "<" not in text and ">" not in text
    assert text.startswith("session_resume session=54a54534-123d-48d0-8d54-13291b1891fa ")
    assert "    - file path=hello.py change=create,edit count=2\n" in text
    assert "  files_changed (lookup: --session 54a54534 --type file_edit,file_write" in text
    assert "    - prompt intent=implement: create hello.py and commit it\n" in text
    assert len(text) < len(xml)


def test_the_outline_keeps_the_characters_the_session_held() -> None:
    xml = (
        '<session_resume session="s"><errors><error tool="Bash" key="a &gt; b">'
        "x &lt;stdin&gt; &amp; y</error></errors></session_resume>"
    )
    text = outline(xml)
    assert '- error tool=Bash key="a > b": x <stdin> & y' in text
    # What Qwen does to it: only the characters of the facts are escaped.
    escaped = text.replace("<", "&lt;").replace(">", "&gt;")
    assert escaped.count("&lt;") == 1 and escaped.count("&gt;") == 2


@pytest.mark.parametrize("text", ["plain words", "<not closed", "<a>x</b>", "<a/><b/>", ""])
def test_anything_but_a_snapshot_passes_unchanged(text: str) -> None:
    assert outline(text) == text


# -- the recorded session through the installed hooks ---------------------------------------


def test_the_recorded_session_is_recorded_as_the_repository_s(project: Path) -> None:
    replay(project)
    found = rows(project)
    assert [(d["path"], d.get("kind")) for d in of_type(found, "file_write")] == [
        ("src/ledger/reconcile.py", "create")
    ]
    assert [d["path"] for d in of_type(found, "file_edit")] == ["src/ledger/reconcile.py"]
    errors = [
        (d["tool"], d["key"], d["error"].split("\n")[0]) for d in of_type(found, "tool_error")
    ]
    assert ("run_shell_command", "python3 tests/test_reconcile.py", "Exit code 2") in errors
    commits = [d.get("message") for d in of_type(found, "git_commit")]
    assert commits == ["Reconcile ledger totals"]
    prompts = sorted(d["text"] for d in of_type(found, "user_prompt"))
    # The empty prompts Qwen sends after each tool batch are no prompts.
    assert prompts == [
        "please fix the ledger module",
        "say hello in the default mode",
        "what is left to do?",
    ]
    # Each turn's reply (Stop's last_assistant_message), as Claude Code's Stop keeps it.
    assert sorted(d["text"] for d in of_type(found, "assistant_reply")) == [
        "Carrying on.",
        "Default mode done.",
        "The module is written and committed; its test file is missing.",
    ]
    sessions = dump(project)["sessions"]
    assert [s.get("client") for s in sessions] == ["qwen", "qwen"]  # ledger, default mode


def test_the_turns_reply_is_kept_as_claude_codes(project: Path, tmp_path: Path) -> None:
    """The recorded Stop through the installed command: the reply masked and bounded
    exactly as Claude Code's Stop stores the same text; nothing printed (a decision there
    would keep the turn going)."""
    payload = moved(load("Stop.json"), project) | {"last_assistant_message": replies_corpus.REPLY}
    assert hook("Stop", payload, project) == b""
    replies_corpus.assert_kept_like_claude_codes(project, tmp_path)


def test_the_snapshot_rides_the_next_prompt_once_as_an_outline(project: Path) -> None:
    """`/compress` runs PreCompact, PostCompact and SessionStart(compact) in a process that
    then ends: nothing printed there would reach a request. The next run's SessionStart
    (resume) prints nothing either; its first prompt carries the snapshot, once."""
    calls = replay(project)
    compress = [(p, out) for run, p, out in calls if run == "compress"]
    assert [p["hook_event_name"] for p, _ in compress] == [
        "SessionStart",
        "PreCompact",
        "PostCompact",
        "SessionStart",
    ]
    assert all(out == b"" for _, out in compress)
    after = [(p, out) for run, p, out in calls if run == "after"]
    assert after[0][0]["source"] == "resume" and after[0][1] == b""
    printed = [(p, out) for p, out in after if out]
    assert len(printed) == 1 and printed[0][0]["hook_event_name"] == "UserPromptSubmit"
    text = context_of(printed[0][1], "UserPromptSubmit")
    assert text.startswith("session_resume session=")
    assert "<" not in text and ">" not in text
    for fact in ("src/ledger/reconcile.py", "python3 tests/test_reconcile.py", "Reconcile ledger"):
        assert fact in text
    resumes = [r for s in dump(project)["sessions"] for r in s.get("resumes") or []]
    compact = [r for r in resumes if r["kind"] == "compact"]
    assert len(compact) == 1 and compact[0]["consumed"]  # claimed once
    assert compact[0]["snapshot"].startswith("<session_resume")  # stored as XML
    summaries = [c for s in dump(project)["sessions"] for c in s.get("compactions") or []]
    assert summaries and all(c.get("trigger") == "manual" for c in summaries)


def test_a_compaction_without_precompact_still_reaches_the_next_prompt(project: Path) -> None:
    """SessionStart(compact) builds the snapshot when PreCompact never ran (and prints
    nothing): the next prompt hands it over."""
    replay(project, runs=("ledger",))
    start = moved(load("SessionStart.compact.json"), project)
    assert hook("SessionStart", start, project) == b""
    prompt = moved(load("UserPromptSubmit.json"), project)
    prompt["prompt"] = "go on"
    text = context_of(hook("UserPromptSubmit", prompt, project), "UserPromptSubmit")
    assert "src/ledger/reconcile.py" in text
    assert hook("UserPromptSubmit", prompt, project) == b""  # once


@pytest.mark.parametrize(
    "data", [b"", b"\xff\xfe", b"[]", b"{", b'{"hook_event_name": "PostToolUse"}', b"null"]
)
@pytest.mark.parametrize("event", ["PostToolUse", "UserPromptSubmit", "SessionStart"])
def test_garbage_in_nothing_out(project: Path, event: str, data: bytes) -> None:
    assert hook(event, data, project) == b""
