"""GitHub Copilot CLI as a host (issue 31): its recorded payloads through the installed hooks.

Every hook runs as Copilot runs it: the command ``ctxmode install --host copilot`` registers,
through ``bash -c``, in the session's cwd, with Copilot's variables (COPILOT_CLI,
COPILOT_PROJECT_DIR/CLAUDE_PROJECT_DIR = the folder copilot started in), the payload on stdin
(tests/fixtures/copilot-cli-1.0.102/stream.jsonl, recorded by
scripts/record_copilot_fixtures.py), with the fixture's project moved into the test's own
folder. Only the events ctxmode registers are replayed.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctxmode.handlers import shell_quote
from ctxmode.hosts import copilot
from ctxmode.hosts.copilot import install as copilot_config
from ctxmode.hosts.copilot import lookups
from tests.helpers import cli
from tests.hooktools import REPO

FIXTURES = REPO / "tests" / "fixtures" / "copilot-cli-1.0.102"
RECORDED_PROJECT = "/home/dev/project"
COMMANDS = {spec.event: spec for spec in copilot_config.hook_specs()}
FILE = "src/ledger/reconcile.py"
FAILING = "python3 tests/test_reconcile.py"


def records() -> list[dict[str, Any]]:
    lines = (FIXTURES / "stream.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def moved(value: Any, project: Path) -> Any:
    return json.loads(json.dumps(value).replace(RECORDED_PROJECT, str(project)))


def copilot_env(project: Path) -> dict[str, str]:
    """The hook's environment as Copilot 1.0.102 sets it (the recorder saw these names)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COPILOT", "CLAUDE"))}
    env.update(
        COPILOT_CLI="1",
        COPILOT_PROJECT_DIR=str(project),
        CLAUDE_PROJECT_DIR=str(project),
        COPILOT_MODEL="gpt-4.1",
    )
    return env


def hook(event: str, payload: dict[str, Any] | bytes, project: Path) -> bytes:
    """Run ctxmode's installed command for ``event`` as Copilot does; assert the contract
    (exit 0, nothing on stderr); its stdout."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    proc = subprocess.run(
        ["bash", "-c", COMMANDS[event].command],
        input=data,
        capture_output=True,
        cwd=project,
        env=copilot_env(project),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc
    assert proc.stderr == b"", proc.stderr
    return proc.stdout


def replay(project: Path, skip: tuple[tuple[str, str], ...] = ()) -> list[tuple[str, str, bytes]]:
    """The recorded session through the installed hooks: (run, event, stdout)."""
    out = []
    for record in records():
        if record["event"] not in COMMANDS or (record["run"], record["event"]) in skip:
            continue
        payload = moved(record["payload"], project)
        out.append((record["run"], record["event"], hook(record["event"], payload, project)))
    return out


def dump(project: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(cli("dump", "--project", str(project), "--json").output)
    return doc


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    return folder


def contexts(outputs: list[tuple[str, str, bytes]]) -> list[tuple[str, str, str]]:
    """(run, event, additionalContext) of every hook that handed the model something."""
    found = []
    for run, event, stdout in outputs:
        if not stdout:
            continue
        document = json.loads(stdout)
        assert set(document) == {"additionalContext"}, document  # the flat shape only
        found.append((run, event, document["additionalContext"]))
    return found


def test_the_recorded_session_is_stored(project: Path) -> None:
    replay(project)
    (session,) = dump(project)["sessions"]
    kinds = [(e["type"], json.dumps(e["data"])) for e in session["events"]]
    data = json.dumps(session["events"])
    assert FILE in data
    assert any(t == "file_write" and FILE in d for t, d in kinds), kinds
    assert any(t == "file_edit" and FILE in d for t, d in kinds), kinds
    errors = [d for t, d in kinds if t.endswith("error")]
    assert any(FAILING in d and "2" in d for d in errors), errors
    assert "Reconcile ledger totals" in data
    assert session["compact_count"] == 1


def test_the_snapshot_after_compact_reaches_the_model_once(project: Path) -> None:
    found = contexts(replay(project))
    assert len(found) == 1, found
    run, event, text = found[0]
    assert run == "after" and event == "sessionStart"  # `--resume`: its own user message
    assert text.startswith("<session_resume") and FILE in text and FAILING in text
    (session,) = dump(project)["sessions"]
    compact = [r for r in session["resumes"] if r["kind"] == "compact"]
    assert [bool(r["consumed"]) for r in compact] == [True]


def test_without_session_start_the_next_prompt_carries_it(project: Path) -> None:
    # Interactive, or an auto compaction: no sessionStart after preCompact, only prompts.
    found = contexts(replay(project, skip=(("after", "sessionStart"),)))
    assert [(run, event) for run, event, _ in found] == [("after", "userPromptSubmitted")]
    assert FAILING in found[0][2]
    # A second prompt gets nothing: the snapshot was claimed.
    again = {"sessionId": records()[0]["payload"]["sessionId"], "cwd": str(project)}
    assert hook("userPromptSubmitted", {**again, "prompt": "more", "timestamp": 1}, project) == b""


def test_a_failed_command_is_known_from_its_trailer() -> None:
    raw = {
        "sessionId": "s",
        "cwd": "/p",
        "toolName": "bash",
        "toolArgs": {"command": "false"},
        "toolResult": {
            "resultType": "success",
            "textResultForLlm": "boom\n<shellId: 4 completed with exit code 3>",
        },
    }
    inp = copilot.parse(json.dumps(raw).encode(), "postToolUse")
    assert inp.event == "PostToolUseFailure" and inp.error == "Exit code 3\nboom"
    assert inp.tool_kind == "shell" and inp.tool_response == {"stdout": "boom", "stderr": ""}
    ok = dict(
        raw,
        toolResult={
            "resultType": "success",
            "textResultForLlm": "<shellId: 0 completed with exit code 0>",
        },
    )
    assert copilot.parse(json.dumps(ok).encode(), "postToolUse").event == "PostToolUse"
    denied = dict(raw, toolResult={"resultType": "denied", "textResultForLlm": "no"})
    assert copilot.parse(json.dumps(denied).encode(), "postToolUse").event == "PostToolUseFailure"


def test_every_recorded_tool_is_classified() -> None:
    offered = json.loads((FIXTURES / "tools.print.json").read_text())
    assert offered, "no tools recorded"
    unknown = [t for t in offered if t not in copilot.TOOL_KINDS and t not in copilot.NOT_RECORDED]
    assert unknown == []
    stale = [t for t in (*copilot.TOOL_KINDS, *copilot.NOT_RECORDED) if t not in offered]
    assert stale == []


@pytest.mark.parametrize("data", [b"", b"garbage", b"[]", b'{"sessionId": 5}', b"\xff\xfe"])
@pytest.mark.parametrize("event", sorted(COMMANDS))
def test_any_input_exits_0_silently(project: Path, event: str, data: bytes) -> None:
    assert hook(event, data, project) == b""


def lookup_request(command: str) -> dict[str, Any]:
    (request,) = [
        r["payload"] for r in records() if r["event"] == "permissionRequest" and r["run"] == "after"
    ]
    return dict(request, toolInput={"command": command})


def test_permission_request_allows_ctxmode_search_only(project: Path) -> None:
    program = shell_quote(lookups.program())
    where = shell_quote(str(project))
    allowed = [
        f"{program} search --project {where} ledger",
        f"{program} search --project {where} 'ledger totals' --session abc --type file_edit",
        f'CTXMODE_HOME=/tmp/x {program} search --project {where} "exit code"',
    ]
    refused = [
        "touch notes.txt",
        f"{program} search --project {where} x && rm -rf y",
        f"{program} search --project {where} x; touch y",
        f"{program} search --project {where} x | sh",
        f"{program} search --project {where} $(touch y)",
        f'{program} search --project {where} "$(touch y)"',
        f"{program} search --project {where} x > out.txt",
        f"{program} search --project {where} x\ntouch y",
        f"{program} searchx --project {where}",
        f"{program} dump --project {where}",
        f"ctxmode search --project {where} x",
        f"/elsewhere/ctxmode search --project {where} x",
    ]
    for command in allowed:
        assert hook("permissionRequest", lookup_request(command), project) == lookups.ALLOW, command
    for command in refused:
        assert hook("permissionRequest", lookup_request(command), project) == b"", command
    other = dict(lookup_request(allowed[0]), toolName="edit")
    assert hook("permissionRequest", other, project) == b""


def test_disabled_permission_hook_allows_nothing(project: Path) -> None:
    request = lookup_request(f"{shell_quote(lookups.program())} search --project x y")
    env = dict(copilot_env(project), CTXMODE_DISABLE="1")
    proc = subprocess.run(
        ["bash", "-c", COMMANDS["permissionRequest"].command],
        input=json.dumps(request).encode(),
        capture_output=True,
        cwd=project,
        env=env,
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_an_oversized_create_still_records_its_file(project: Path) -> None:
    """A payload past the parse limit: its head still names the session and the file."""
    from ctxmode import payload as payload_mod

    (record,) = [
        r["payload"]
        for r in records()
        if r["event"] == "postToolUse" and r["payload"]["toolName"] == "create"
    ]
    big = moved(record, project)
    big["toolArgs"] = {
        "path": big["toolArgs"]["path"],
        "file_text": "x" * payload_mod.MAX_PARSE_BYTES,
    }
    assert hook("postToolUse", big, project) == b""
    (session,) = dump(project)["sessions"]
    writes = [e for e in session["events"] if e["type"] == "file_write"]
    assert [w["data"]["path"] for w in writes] == [FILE], session["events"]
