"""The hook scripts run as Claude Code runs them: separate processes, stdin, exit 0.

These are the acceptance checks of the core loop (issue 2): real payload shapes in,
store filled, snapshot out exactly once, and nothing but the contract on stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.hooktools import SHIMS, hook_command, hook_env, run_hook, start_hook, stream

PROJECT = "/home/dev/proj"  # the project of the fixtures


def _dump(project: str, env: dict[str, str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "ctxmode", "dump", "--json", "--project", project],
        capture_output=True,
        env=env,
        check=True,
        timeout=60,
    )
    return json.loads(out.stdout)


def _log_text(root: Path) -> str:
    log = root / "logs" / "ctxmode.log"
    return log.read_text() if log.exists() else ""


def _env(root: Path, project: str = PROJECT) -> dict[str, str]:
    return hook_env(CTXMODE_HOME=str(root), CLAUDE_PROJECT_DIR=project)


BAD_INPUTS = {
    "empty": b"",
    "whitespace": b"  \n\t ",
    "invalid-json": b"{not json",
    "binary": bytes(range(256)) * 4,
    "json-array": b"[1,2,3]",
    "json-string": b'"PostToolUse"',
    "nulls": json.dumps(
        {
            k: None
            for k in (
                "session_id",
                "cwd",
                "tool_name",
                "tool_input",
                "tool_response",
                "hook_event_name",
                "prompt",
                "source",
                "reason",
            )
        }
    ).encode(),
    "missing-fields": b'{"hook_event_name": "PostToolUse"}',
    "wrong-types": json.dumps(
        {
            "session_id": 5,
            "cwd": [],
            "tool_name": {},
            "tool_input": "x",
            "tool_response": 7,
            "prompt": {"a": 1},
            "source": 3,
        }
    ).encode(),
    "deep-nesting": b"[" * 100_000,
}


@pytest.mark.parametrize("event", sorted(SHIMS))
@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_exits_0_silently(event: str, name: str, data_root: Path) -> None:
    result = run_hook(event, BAD_INPUTS[name], env=_env(data_root))  # a hang times out
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_huge_payload_is_salvaged_not_parsed(data_root: Path) -> None:
    """20 MB on stdin: exit 0, silent, and the written file is still recorded."""
    payload = {
        "session_id": "big-1",
        "cwd": PROJECT,
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": f"{PROJECT}/huge.txt", "content": "x" * 20_000_000},
        "tool_response": {"type": "create", "filePath": f"{PROJECT}/huge.txt"},
    }
    result = run_hook("PostToolUse", payload, env=_env(data_root))
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    events = _dump(PROJECT, _env(data_root))["sessions"][0]["events"]
    assert [(e["type"], e["data"]["path"]) for e in events] == [("file_write", "huge.txt")]


@pytest.mark.parametrize("kind", ["read-only", "under-a-file"])
def test_unwritable_data_root(kind: str, tmp_path: Path) -> None:
    """No store can be made: every hook still exits 0 silently (and prints no snapshot)."""
    if kind == "read-only":
        if os.geteuid() == 0:
            pytest.skip("root ignores directory permissions")
        parent = tmp_path / "ro"
        parent.mkdir()
        parent.chmod(0o500)
        root = parent / "sub"
    else:
        blocker = tmp_path / "a-file"
        blocker.write_text("not a directory")
        root = blocker / "sub"
    try:
        for event in SHIMS:
            payload = {
                "session_id": "s",
                "cwd": PROJECT,
                "hook_event_name": event,
                "prompt": "hello",
                "source": "compact",
                "tool_name": "Write",
                "tool_input": {"file_path": f"{PROJECT}/a.py"},
            }
            result = run_hook(event, payload, env=_env(root))
            assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    finally:
        if kind == "read-only":
            (tmp_path / "ro").chmod(0o700)


def test_disable_switch_and_ignore_file(tmp_path: Path, data_root: Path) -> None:
    payload = {
        "session_id": "s",
        "cwd": str(tmp_path),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "hello",
    }
    env = hook_env(CTXMODE_HOME=str(data_root), CTXMODE_DISABLE="1")
    assert run_hook("UserPromptSubmit", payload, env=env).returncode == 0
    (tmp_path / ".ctxmode-ignore").touch()
    env = hook_env(CTXMODE_HOME=str(data_root))
    assert run_hook("UserPromptSubmit", payload, env=env).returncode == 0
    assert not (data_root / "sessions").exists() or not any((data_root / "sessions").iterdir())


def _replay(lines: list[dict], env: dict[str, str]) -> list[tuple[str, bytes]]:
    """Feed each recorded hook call through `sh -c`, as Claude Code does."""
    outputs = []
    for line in lines:
        event = line["event"]
        if event not in SHIMS:
            continue
        command = " ".join(f"'{part}'" for part in hook_command(event))
        result = subprocess.run(
            ["sh", "-c", command],
            input=json.dumps(line["payload"]).encode(),
            capture_output=True,
            env=env,
            timeout=30,
            check=False,
        )
        assert (result.returncode, result.stderr) == (0, b""), (event, result.stderr)
        outputs.append((event, result.stdout))
    return outputs


def test_fixture_stream_fills_the_store(fixtures_dir: Path, data_root: Path) -> None:
    env = _env(data_root)
    outputs = _replay(stream(fixtures_dir / "stream.print-mode.jsonl"), env)
    for event, out in outputs:
        if out:
            assert event in ("SessionStart", "UserPromptSubmit")
            document = json.loads(out)
            assert list(document) == ["hookSpecificOutput"]
            assert document["hookSpecificOutput"]["hookEventName"] == event
            ET.fromstring(document["hookSpecificOutput"]["additionalContext"])
    sessions = _dump(PROJECT, env)["sessions"]
    events = [e for s in sessions for e in s["events"]]
    by_type: dict[str, list[dict]] = {}
    for e in events:
        by_type.setdefault(e["type"], []).append(e["data"])
    assert any(d["path"] == "hello.py" for d in by_type["file_write"])
    assert any(d["path"] == "hello.py" for d in by_type["file_edit"])
    assert any(d["message"] == "init" for d in by_type["git_commit"])
    assert any(d["subject"] == "Create hello.py and commit it" for d in by_type["task_create"])
    assert any("nonexistent-mock-dir" in d["error"] for d in by_type["tool_error"])
    prompts = [d["text"] for d in by_type["user_prompt"]]
    assert "create hello.py and commit it" in prompts
    assert "ERROR" not in _log_text(data_root)


def _session_payloads(session: str, cwd: str = PROJECT) -> list[tuple[str, dict]]:
    base = {"session_id": session, "cwd": cwd, "transcript_path": f"/tmp/{session}.jsonl"}
    return [
        ("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
        (
            "UserPromptSubmit",
            {**base, "hook_event_name": "UserPromptSubmit", "prompt": "add a parser and commit it"},
        ),
        (
            "PostToolUse",
            {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Write",
                "tool_input": {"file_path": f"{cwd}/parser.py", "content": "x=1\n"},
                "tool_response": {"type": "create", "filePath": f"{cwd}/parser.py"},
            },
        ),
        (
            "PostToolUse",
            {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "git add -A && git commit -m 'Add parser'"},
                "tool_response": {"stdout": "[main 1a2b3c4] Add parser", "stderr": ""},
            },
        ),
    ]


def test_compact_resume_is_claimed_exactly_once(data_root: Path) -> None:
    env = _env(data_root)
    for event, payload in _session_payloads("sess-a"):
        assert run_hook(event, payload, env=env).stdout == b""
    base = {"session_id": "sess-a", "cwd": PROJECT}
    result = run_hook(
        "PreCompact",
        {**base, "hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": None},
        env=env,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    start = {**base, "hook_event_name": "SessionStart", "source": "compact"}
    first = run_hook("SessionStart", start, env=env)
    document = json.loads(first.stdout)
    context = document["hookSpecificOutput"]["additionalContext"]
    assert document["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    root = ET.fromstring(context)
    assert root.tag == "session_resume"
    assert "parser.py" in context and "Add parser" in context
    second = run_hook("SessionStart", start, env=env)
    assert (second.returncode, second.stdout, second.stderr) == (0, b"", b"")
    session = _dump(PROJECT, env)["sessions"][0]
    assert session["compact_count"] == 1
    assert [(r["compact_seq"], r["consumed"]) for r in session["resumes"]] == [(1, True)]


def test_racing_new_sessions_get_the_snapshot_once(data_root: Path) -> None:
    env = _env(data_root)
    for event, payload in _session_payloads("sess-old"):
        run_hook(event, payload, env=env)
    run_hook(
        "SessionEnd",
        {
            "session_id": "sess-old",
            "cwd": PROJECT,
            "hook_event_name": "SessionEnd",
            "reason": "other",
        },
        env=env,
    )
    procs = [
        start_hook(
            "SessionStart",
            json.dumps(
                {
                    "session_id": f"new-{i}",
                    "cwd": PROJECT,
                    "hook_event_name": "SessionStart",
                    "source": "resume",
                }
            ).encode(),
            env,
        )
        for i in range(8)
    ]
    results = [(p.wait(30), p.stdout.read(), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    assert all(code == 0 and err == b"" for code, _, err in results)
    printed = [out for _, out, _ in results if out]
    assert len(printed) == 1
    assert "parser.py" in json.loads(printed[0])["hookSpecificOutput"]["additionalContext"]


def test_32_parallel_writers_lose_nothing(data_root: Path) -> None:
    env = _env(data_root)
    procs = [
        start_hook(
            "PostToolUse",
            json.dumps(
                {
                    "session_id": "par",
                    "cwd": PROJECT,
                    "hook_event_name": "PostToolUse",
                    "tool_name": "Write",
                    "tool_input": {"file_path": f"{PROJECT}/f{i}.py", "content": ""},
                    "tool_response": {"type": "create", "filePath": f"{PROJECT}/f{i}.py"},
                }
            ).encode(),
            env,
        )
        for i in range(32)
    ]
    results = [(p.wait(60), p.stdout.read(), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    assert all(r == (0, b"", b"") for r in results)
    events = _dump(PROJECT, env)["sessions"][0]["events"]
    paths = sorted(e["data"]["path"] for e in events if e["type"] == "file_write")
    assert paths == sorted(f"f{i}.py" for i in range(32))
    assert _log_text(data_root) == ""


def test_a_store_from_a_newer_version_is_left_alone_and_reported(data_root: Path) -> None:
    """A newer schema: nothing written, one WARN line (no traceback) for doctor to show."""
    env = _env(data_root)
    _, payload = _session_payloads("newer")[2]
    assert run_hook("PostToolUse", payload, env=env).returncode == 0
    store = next((data_root / "sessions").glob("*.db"))
    import sqlite3

    conn = sqlite3.connect(store)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    before = store.read_bytes()
    result = run_hook("PostToolUse", payload, env=env)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert store.read_bytes() == before
    log = _log_text(data_root)
    assert "\tWARN\tPostToolUse\tstore written by a newer ctxmode" in log
    assert "ERROR" not in log and "Traceback" not in log


def test_huge_ids_and_names_are_stored_bounded_and_kept_apart(tmp_path: Path) -> None:
    """Issue 29: a 1 MB ``session_id`` was stored as it came. Ids and names are bounded at
    the parse (head + digest of the whole): the same id always maps to the same session,
    and two ids that share a long head stay two sessions."""
    env = _env(tmp_path)
    head = "s" * 1_000_000
    huge = [head + "-one", head + "-two"]
    for n, session in enumerate([*huge, huge[0]]):
        payload = {
            "session_id": session,
            "cwd": PROJECT,
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "mcp__" + "t" * 500_000,
            "tool_input": {"q": n},
            "tool_use_id": "toolu_" + "u" * 300_000 + str(n),
            "agent_id": "a" * 200_000,
            "agent_type": "x" * 100_000,
            "error": f"boom {n}",
            "is_interrupt": False,
        }
        done = run_hook("PostToolUseFailure", payload, env=env)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    sessions = _dump(PROJECT, env)["sessions"]
    assert len(sessions) == 2, [s["session_id"][-30:] for s in sessions]
    assert all(len(s["session_id"]) <= 128 for s in sessions)
    counts = sorted(len(s["events"]) for s in sessions)
    assert counts == [1, 2]  # the third call went to the first session again
    store = next((tmp_path / "sessions").glob("*.db"))
    assert store.stat().st_size < 200_000
    # The digest is the whole id's: what the two shared (the head) tells them apart.
    from ctxmode import payload as payload_mod

    assert payload_mod.bounded(huge[0], 128) != payload_mod.bounded(huge[1], 128)
    assert payload_mod.bounded(huge[0], 128) == payload_mod.bounded(huge[0], 128)
    assert payload_mod.bounded("short", 128) == "short"
