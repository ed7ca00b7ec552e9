"""The Gemini CLI as a host (issue 24): its recorded payloads through the installed hooks.

Every hook runs as Gemini runs it: the command ``ctxmode install --host gemini`` registers,
through ``bash -c``, in the session's cwd, with Gemini's variables (GEMINI_SESSION_ID,
GEMINI_PROJECT_DIR/GEMINI_CWD/CLAUDE_PROJECT_DIR = the folder gemini started in), the payload
on stdin (tests/fixtures/gemini-cli-0.61.0/, recorded by scripts/record_gemini_fixtures.py),
with the fixture's project moved into the test's own folder. Only the calls Gemini would make
to ctxmode's handlers are replayed: PreCompress is registered for "manual" (exact string).
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctxmode.hosts import gemini
from ctxmode.hosts.gemini import install as gemini_config
from tests import replies as replies_corpus
from tests.helpers import cli
from tests.hooktools import REPO

FIXTURES = REPO / "tests" / "fixtures" / "gemini-cli-0.61.0"
RECORDED_PROJECT = "/tmp/proj"
RESUME_RE = re.compile(r"<session_resume\b.*?</session_resume>", re.S)
COMMANDS = {spec.event: spec for spec in gemini_config.hook_specs()}
# What list_directory "." showed in the recorded tour: README.md, src/, tests/.
LISTED = 3


def load(name: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return value


def moved(payload: dict[str, Any], project: Path) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(payload).replace(RECORDED_PROJECT, str(project)))
    return out


def gemini_env(project: Path, session: str, started: Path | None = None) -> dict[str, str]:
    """The hook's environment as Gemini 0.61.0 sets it (fixtures/_hook_env.json)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "CLAUDE"))}
    folder = str(started or project)
    env.update(
        GEMINI_SESSION_ID=session,
        GEMINI_PROJECT_DIR=folder,
        GEMINI_CWD=folder,
        CLAUDE_PROJECT_DIR=folder,
        GEMINI_CLI_NO_RELAUNCH="true",
        GEMINI_API_KEY="offline-dummy-key",
    )
    return env


def fires(event: str, payload: dict[str, Any]) -> bool:
    """Whether Gemini runs ctxmode's handler of ``event`` for ``payload`` (its matchers)."""
    spec = COMMANDS.get(event)
    if spec is None:
        return False
    if event in ("SessionStart", "SessionEnd", "PreCompress") and spec.matcher:
        key = {"SessionStart": "source", "SessionEnd": "reason", "PreCompress": "trigger"}[event]
        return payload.get(key) == spec.matcher
    return True


def hook(event: str, payload: dict[str, Any] | bytes, project: Path, **env: str) -> bytes:
    """Run ctxmode's installed command for ``event`` as Gemini does; assert the contract
    (exit 0, nothing on stderr); its stdout."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    session = env.pop("session", "") or (
        payload.get("session_id", "") if isinstance(payload, dict) else ""
    )
    run_env = gemini_env(project, str(session))
    run_env.update(env)
    proc = subprocess.run(
        ["bash", "-c", COMMANDS[event].command],
        input=data,
        capture_output=True,
        cwd=project,
        env=run_env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc
    assert proc.stderr == b"", proc.stderr
    return proc.stdout


def replay(project: Path, until: int | None = None) -> list[tuple[dict[str, Any], bytes]]:
    """The recorded session (both runs) through the installed hooks: (payload, stdout)."""
    out = []
    lines = (FIXTURES / "stream.jsonl").read_text().splitlines()
    for line in lines[:until]:
        record = json.loads(line)
        payload = moved(record["payload"], project)
        if fires(record["event"], payload):
            out.append((payload, hook(record["event"], payload, project)))
    return out


def events(project: Path) -> list[dict[str, Any]]:
    result = cli("dump", "--project", str(project), "--jsonl")
    return [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]


def of_type(rows: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [row["data"] for row in rows if row["type"] == kind]


def dump(project: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(cli("dump", "--project", str(project), "--json").output)
    return doc


# -- the tool table ------------------------------------------------------------------------


def test_every_tool_gemini_offers_is_classified() -> None:
    """The recorded tool list of 0.61.0: each tool is recorded as a kind or named as one
    ctxmode records nothing of, with the reason; a new tool fails this test."""
    offered = json.loads((FIXTURES / "tools_offered.json").read_text())
    unclassified = [
        name
        for name in offered
        if name not in gemini.TOOL_KINDS and name not in gemini.NOT_RECORDED
    ]
    assert unclassified == []
    assert not set(gemini.TOOL_KINDS) & set(gemini.NOT_RECORDED)
    assert gemini.tool_kind("mcp_docs_lookup") == "mcp"
    assert gemini.tool_kind("invoke_agent") == ""


# -- payloads → neutral inputs ---------------------------------------------------------------


def test_a_failed_shell_command_is_a_failure_with_its_exit_code() -> None:
    data = (FIXTURES / "AfterTool.run_shell_command.exit3.json").read_bytes()
    inp = gemini.parse(data, "PostToolUse")
    assert inp.event == "PostToolUseFailure"
    assert inp.error == "Exit code 3\ntour-fail"
    assert inp.tool_input == {"command": "echo tour-fail >&2; exit 3"}
    ok = gemini.parse((FIXTURES / "AfterTool.run_shell_command.json").read_bytes(), "PostToolUse")
    assert ok.event == "PostToolUse" and ok.tool_response == {"stdout": "tour-ok", "stderr": ""}


def test_a_tool_error_is_a_failure_with_its_message() -> None:
    inp = gemini.parse((FIXTURES / "AfterTool.read_file.missing.json").read_bytes())
    assert inp.event == "PostToolUseFailure"
    assert inp.error is not None and inp.error.startswith("File not found: ")
    edit = gemini.parse((FIXTURES / "AfterTool.replace.no_match.json").read_bytes())
    assert edit.event == "PostToolUseFailure" and "exact match" in (edit.error or "")


def test_the_prompt_loses_the_context_the_cli_put_around_it() -> None:
    raw = load("BeforeAgent.json")
    raw["prompt"] = "<hook_context>snapshot</hook_context>\n\nfix it<hook_context>x</hook_context>"
    inp = gemini.parse(json.dumps(raw).encode())
    assert inp.event == "UserPromptSubmit" and inp.prompt == "fix it"
    assert inp.raw["prompt"] == "fix it"  # what masking rebuilds the input from


def test_after_agent_is_the_turns_reply() -> None:
    """AfterAgent's ``prompt_response`` is Claude Code's Stop ``last_assistant_message``;
    the prompt it repeats (BeforeAgent recorded it) is not read again."""
    data = (FIXTURES / "AfterAgent.json").read_bytes()
    for event in ("Stop", None):  # the shim names it; the payload names it AfterAgent
        inp = gemini.parse(data, event)
        assert inp.event == "Stop"
        assert inp.last_assistant_message == "The module is written; its test file is missing."
        assert not inp.prompt and "prompt_response" not in inp.raw


def test_shell_result_reads_the_trailer_lines() -> None:
    text = "<untrusted_context>\nOutput: a\nb\nExit Code: 2\nProcess Group PGID: 9\n</untrusted_context>"
    assert gemini.shell_result(text) == ("a\nb", 2, "")
    assert gemini.shell_result("Output: (empty)\nSignal: 9") == ("", None, "9")


def test_mcp_tools_are_named_as_the_extractors_read_them() -> None:
    raw = {
        "session_id": "s",
        "cwd": "/tmp",
        "hook_event_name": "AfterTool",
        "tool_name": "mcp_docs_lookup",
        "tool_input": {"query": "q"},
        "tool_response": {"llmContent": "x", "returnDisplay": "x"},
    }
    inp = gemini.parse(json.dumps(raw).encode())
    assert inp.tool_name == "mcp__docs__lookup" and inp.tool_kind == "mcp"


# -- the recorded session through the installed hooks ---------------------------------------


def test_the_recorded_session_is_recorded_as_the_repository_s(project: Path) -> None:
    replay(project)
    rows = events(project)
    changed = [(d["path"], d.get("kind")) for d in of_type(rows, "file_write")]
    assert changed == [("src/ledger/reconcile.py", "create")]
    edits = of_type(rows, "file_edit")
    assert [(d["path"], d.get("summary")) for d in edits] == [("src/ledger/reconcile.py", "+2 -2")]
    errors = [(d["tool"], d["key"], d["error"].split("\n")[0]) for d in of_type(rows, "tool_error")]
    assert ("run_shell_command", "python3 tests/test_reconcile.py", "Exit code 2") in errors
    assert ("run_shell_command", "echo tour-fail >&2; exit 3", "Exit code 3") in errors
    assert ("read_file", "missing/nowhere.py", "File not found: " + str(project)) in [
        (t, k, e.split("/missing")[0]) for t, k, e in errors
    ]
    assert any(t == "replace" and k == "README.md" for t, k, _ in errors)
    prompts = [d["text"] for d in of_type(rows, "user_prompt")]
    assert prompts == ["please fix the ledger module", "now the fixture tour please"]
    searches = [(d["tool"], d["pattern"], d.get("matches")) for d in of_type(rows, "file_search")]
    assert ("glob", "**/*.md", 1) in searches and ("grep_search", "tour", 1) in searches
    assert [s for s in searches if s[0] == "list_directory"] == [("list_directory", "*", LISTED)]
    # Each turn's reply (AfterAgent's prompt_response), as Claude Code's Stop keeps it.
    assert [d["text"] for d in of_type(rows, "assistant_reply")] == [
        "The module is written; its test file is missing.",
        "Tour finished.",
    ]
    sessions = dump(project)["sessions"]
    assert [s.get("client") for s in sessions] == ["gemini"]


def test_the_turns_reply_is_kept_as_claude_codes(project: Path, tmp_path: Path) -> None:
    """The recorded AfterAgent through the installed command: the reply masked and bounded
    exactly as Claude Code's Stop stores the same text; nothing printed (a decision there
    would make Gemini retry the turn)."""
    payload = moved(load("AfterAgent.json"), project) | {"prompt_response": replies_corpus.REPLY}
    assert hook("AfterAgent", payload, project) == b""
    replies_corpus.assert_kept_like_claude_codes(project, tmp_path)


def test_the_snapshot_reaches_every_request_after_the_compression_once(project: Path) -> None:
    calls = replay(project)
    model = [(p, out) for p, out in calls if p["hook_event_name"] == "BeforeModel"]
    summary_at = next(i for i, (p, _) in enumerate(model) if gemini.SUMMARY_OPEN in json.dumps(p))
    assert all(out == b"" for _, out in model[:summary_at])  # nothing to add before it
    served = []
    for payload, out in model[summary_at:]:
        document = json.loads(out)
        messages = document["hookSpecificOutput"]["llm_request"]["messages"]
        assert set(document) == {"hookSpecificOutput"}
        # Only the messages up to the summary's come back (later ones stay as they are).
        index = gemini.find_summary(payload["llm_request"])
        assert index is not None and len(messages) == index[0] + 1
        text = messages[-1]["content"]
        assert text.startswith(payload["llm_request"]["messages"][index[0]]["content"])
        found = RESUME_RE.findall(text)
        assert len(found) == 1
        served.append(found[0])
    assert len(served) == 8 and len(set(served)) == 1  # the same snapshot, every request
    snapshot = served[0]
    assert "src/ledger/reconcile.py" in snapshot
    assert "python3 tests/test_reconcile.py" in snapshot
    assert "please fix the ledger module" in snapshot
    resumes = [r for s in dump(project)["sessions"] for r in s.get("resumes") or []]
    compact = [r for r in resumes if r["kind"] == "compact"]
    assert len(compact) == 1 and compact[0]["consumed"]  # claimed once
    summaries = [c for s in dump(project)["sessions"] for c in s.get("compactions") or []]
    assert any("MOCK_SUMMARY" in str(c) for c in summaries), summaries


def test_a_state_snapshot_typed_into_a_prompt_is_no_compression(
    project: Path, data_root: Path
) -> None:
    """Issue 29: the user types ``<state_snapshot>…</state_snapshot>`` as the first prompt,
    with no compression. The first request then looks like a compressed history's first
    turn (the context part, then the tag), but no acknowledgement of the CLI follows it:
    no compaction is recorded, and no request gets a ``<session_resume>``."""
    typed = "<state_snapshot>\nthe plan: ship it, no tests\n</state_snapshot>"
    prompt = moved(load("BeforeAgent.json"), project)
    prompt["prompt"] = typed
    hook("BeforeAgent", prompt, project)
    first = moved(load("BeforeModel.json"), project)
    assert first["session_id"] == prompt["session_id"]
    messages = first["llm_request"]["messages"]
    head = messages[0]["content"]
    messages[0]["content"] = head[: head.index("</session_context>") + 18] + typed
    later = json.loads(json.dumps(first))
    later["llm_request"]["messages"] += [
        {"role": "model", "content": "I will look at the plan."},
        {"role": "user", "content": "and the tests?"},
    ]
    for request in (first, later):
        assert gemini.find_summary(request["llm_request"]) is None
        assert hook("BeforeModel", request, project) == b""
    sessions = dump(project)["sessions"]
    assert all(not s.get("compactions") and not s.get("resumes") for s in sessions), sessions
    assert not (data_root / "resumes").exists() or not list((data_root / "resumes").glob("*.xml"))
    # The CLI's own summary turn, acknowledged, still is one.
    real = moved(load("BeforeModel.after_compress.json"), project)
    assert gemini.find_summary(real["llm_request"]) is not None


def test_the_cache_is_private(project: Path, data_root: Path) -> None:
    replay(project)
    folder = data_root / "resumes"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = [p for p in folder.iterdir() if p.suffix == ".xml"]
    assert len(files) == 1
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in folder.iterdir())


def test_a_request_without_a_summary_costs_no_store(project: Path, data_root: Path) -> None:
    """The common case (every request before a compression): nothing printed, nothing made
    under the data root — the entry stops before importing ctxmode."""
    payload = moved(load("BeforeModel.json"), project)
    assert hook("BeforeModel", payload, project) == b""
    assert list(data_root.iterdir()) == []
    for junk in (b"", b"\xff\xfe", b"<state_snapshot>", b'{"llm_request": 3}'):
        assert hook("BeforeModel", junk, project, session="s") == b""


def test_never_twice_in_one_request(project: Path) -> None:
    replay(project, until=None)
    payload = moved(load("BeforeModel.after_compress.json"), project)
    first = hook("BeforeModel", payload, project)
    assert first
    served = json.loads(first)["hookSpecificOutput"]["llm_request"]["messages"]
    again = json.loads(json.dumps(payload))
    again["llm_request"]["messages"][: len(served)] = served  # already carries it
    assert hook("BeforeModel", again, project) == b""


def test_a_new_summary_gets_a_new_snapshot_a_known_one_the_same(project: Path) -> None:
    calls = replay(project)
    payload = moved(load("BeforeModel.after_compress.json"), project)
    known = hook("BeforeModel", payload, project)
    assert known == next(out for p, out in calls if gemini.SUMMARY_OPEN in json.dumps(p))
    # A later compression: another summary, after more work.
    tool = moved(load("AfterTool.write_file.json"), project)
    tool["session_id"] = payload["session_id"]
    tool["tool_input"]["file_path"] = "src/ledger/later.py"
    hook("AfterTool", tool, project)
    later = json.loads(json.dumps(payload))
    content = later["llm_request"]["messages"][0]["content"]
    later["llm_request"]["messages"][0]["content"] = content.replace("MOCK_SUMMARY", "SECOND")
    second = hook("BeforeModel", later, project)
    snapshot = RESUME_RE.findall(
        json.loads(second)["hookSpecificOutput"]["llm_request"]["messages"][-1]["content"]
    )
    assert len(snapshot) == 1 and "src/ledger/later.py" in snapshot[0]
    assert 'compaction="2"' in snapshot[0]


def test_the_project_is_the_repository_not_the_folder_gemini_started_in(project: Path) -> None:
    """GEMINI_PROJECT_DIR/GEMINI_CWD/CLAUDE_PROJECT_DIR name the subfolder gemini started
    in; the paths recorded are the repository's."""
    sub = project / "app"
    sub.mkdir()
    payload = moved(load("AfterTool.write_file.json"), project)
    payload["cwd"] = str(sub)
    env = {"GEMINI_PROJECT_DIR": str(sub), "GEMINI_CWD": str(sub), "CLAUDE_PROJECT_DIR": str(sub)}
    proc = subprocess.run(
        ["bash", "-c", COMMANDS["AfterTool"].command],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=sub,
        env={**gemini_env(project, payload["session_id"], sub), **env},
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0 and proc.stderr == b""
    assert [d["path"] for d in of_type(events(project), "file_write")] == [
        "app/src/ledger/reconcile.py"
    ]


@pytest.mark.parametrize(
    "name",
    sorted(
        p.name
        for p in FIXTURES.glob("*.json")
        if p.name.split(".")[0] in COMMANDS and not p.name.startswith(("_", "request", "tools"))
    ),
)
def test_every_recorded_payload_keeps_the_contract(name: str, project: Path) -> None:
    payload = moved(load(name), project)
    out = hook(payload["hook_event_name"], payload, project)
    if out:
        document = json.loads(out)
        assert set(document) == {"hookSpecificOutput"}


def test_the_before_model_entry_imports_nothing_of_ctxmode_without_a_summary(
    project: Path,
) -> None:
    """Its cost per request is one interpreter start: no module of ctxmode (nor json) is
    loaded when the request holds no summary; with one, the hook's usual lean path."""
    command = COMMANDS["BeforeModel"].command.replace(" -I -S ", " -X importtime -I -S ", 1)
    plain = json.dumps(moved(load("BeforeModel.json"), project)).encode()
    proc = subprocess.run(
        ["bash", "-c", command],
        input=plain,
        capture_output=True,
        cwd=project,
        env=gemini_env(project, "s"),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout == b""
    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert not {m for m in loaded if m.startswith(("ctxmode", "json", "encodings.idna"))}, loaded


def test_a_snapshot_built_ahead_by_compress_is_handed_over_by_before_model_only(
    project: Path,
) -> None:
    """/compress: PreCompress(manual) builds the snapshot ahead; the next prompt (BeforeAgent)
    must not hand it over too (its context would stay in the history: twice); BeforeModel
    hands over one snapshot, with the prompt recorded since."""
    replay(project, until=15)  # the ledger run
    manual = (
        moved(load("PreCompress.manual.json"), project)
        if (FIXTURES / "PreCompress.manual.json").exists()
        else {**moved(load("PreCompress.auto.json"), project), "trigger": "manual"}
    )
    session = moved(load("BeforeModel.after_compress.json"), project)["session_id"]
    manual["session_id"] = session
    assert hook("PreCompress", manual, project) == b""
    prompt = moved(load("BeforeAgent.json"), project)
    prompt["session_id"] = session
    prompt["prompt"] = "now the fixture tour please"
    assert hook("BeforeAgent", prompt, project) == b""
    out = hook("BeforeModel", moved(load("BeforeModel.after_compress.json"), project), project)
    found = RESUME_RE.findall(out.decode())
    assert len(found) == 1 and "now the fixture tour please" in found[0]
    resumes = [r for s in dump(project)["sessions"] for r in s.get("resumes") or []]
    handed = [r for r in resumes if r["kind"] == "compact" and r["consumed_by"] == session]
    assert len(handed) == 1, resumes
