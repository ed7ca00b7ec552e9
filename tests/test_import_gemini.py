"""``ctxmode import`` of Gemini CLI's chat recordings, recorded from the real Gemini CLI.

The chats (``tests/fixtures/gemini-cli-0.61.0/history/``, made by ``scripts/record_history.py
gemini``) come with the payloads ctxmode's hooks got in the same runs and how many lines the
chat held when each fired (``hooks.jsonl``): replayed through the real hook processes, the
file cut to that many lines each time, they store what the hooks stored live, and the
import of the finished files must make exactly that.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxmode import importer
from ctxmode.hosts import gemini
from ctxmode.hosts.gemini import history as chats
from tests import secret_corpus
from tests.helpers import cli
from tests.hooktools import REPO, hook_env
from tests.test_privacy_corpus import leaks

SOURCE = REPO / "tests" / "fixtures" / "gemini-cli-0.61.0" / "history"
RECORDED_PROJECT = "/tmp/proj"
COLUMNS = "session_id, type, data, tool_use_id"


def session_ids() -> dict[str, str]:
    return dict(json.loads((SOURCE / "sessions.json").read_text())["sessions"])


def gemini_home(tmp_path: Path, project: Path) -> Path:
    """A HOME whose ``.gemini`` holds the recorded chats, moved into ``project``."""
    home = tmp_path / "home"
    for path in (SOURCE / "gemini").rglob("*"):
        if path.is_file():
            target = home / ".gemini" / path.relative_to(SOURCE / "gemini")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(path.read_text().replace(RECORDED_PROJECT, str(project)))
    return home


def chat_of(home: Path, session_id: str) -> Path:
    (found,) = home.rglob(f"session-*-{session_id[:8]}.jsonl")
    return found


def run_import(home: Path, *args: str) -> dict[str, Any]:
    result = cli("import", "--json", *args, env={"GEMINI_CLI_HOME": str(home)})
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.output))


def store_rows(root: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    (store,) = sorted((root / "sessions").glob("*.db"))
    with sqlite3.connect(store) as conn:
        return conn.execute(sql, params).fetchall()


def events(root: Path, session_id: str | None = None) -> list[tuple[Any, ...]]:
    where = "WHERE session_id = ?" if session_id else ""
    params = (session_id,) if session_id else ()
    return store_rows(root, f"SELECT {COLUMNS} FROM session_events {where} ORDER BY id", *params)


def data_of(root: Path, session_id: str, kind: str) -> list[dict[str, Any]]:
    return [json.loads(r[2]) for r in events(root, session_id) if r[1] == kind]


def run_recorded_hooks(home: Path, project: Path, root: Path, live: Path) -> None:
    """The recorded payloads through ctxmode's real hooks, as installed for Gemini, each
    with the chat as it was when the hook fired (its first ``lines`` lines)."""
    env = hook_env(CTXMODE_HOME=str(root))
    live.mkdir(parents=True, exist_ok=True)
    for line in (SOURCE / "hooks.jsonl").read_text().splitlines():
        record = json.loads(line.replace(RECORDED_PROJECT, str(project)))
        payload, event = record["payload"], record["event"]
        sid = payload["session_id"]
        text = chat_of(home, sid).read_text().splitlines(keepends=True)
        current = live / f"{sid}.jsonl"
        current.write_text("".join(text[: record["lines"] or 0]))
        payload["transcript_path"] = str(current)
        shim = REPO / "ctxmode" / "hooks" / f"{gemini.SHIMS[event]}.py"
        argv = [sys.executable, "-I", "-S", str(shim)]
        argv += [] if event == "BeforeModel" else ["--host", "gemini"]
        done = subprocess.run(
            argv, input=json.dumps(payload).encode(), capture_output=True, env=env, timeout=60
        )
        assert done.returncode == 0 and not done.stderr, done


def test_import_makes_the_events_the_hooks_made(tmp_path: Path, project: Path) -> None:
    home = gemini_home(tmp_path, project)
    hooked_root, imported_root = tmp_path / "hooked", tmp_path / "imported"
    run_recorded_hooks(home, project, hooked_root, tmp_path / "live")
    hooked = events(hooked_root)
    assert len(hooked) > 12, hooked

    result = cli(
        "import",
        "--json",
        "--all",
        env={"GEMINI_CLI_HOME": str(home), "CTXMODE_HOME": str(imported_root)},
    )
    summary = json.loads(result.output)
    assert sorted(events(imported_root)) == sorted(hooked)
    assert summary["events_added"] == len(hooked)
    assert (summary["skipped"], summary["unknown"], summary["truncated"]) == (0, 0, 0), summary
    assert (summary["files"], summary["compactions"], summary["replayed"]) == (2, 1, 1), summary
    columns = "session_id, compact_seq, trigger, summary"
    assert store_rows(imported_root, f"SELECT {columns} FROM compaction") == store_rows(
        hooked_root, f"SELECT {columns} FROM compaction"
    )


def test_events_the_hooks_captured_are_not_stored_twice(
    tmp_path: Path, project: Path, data_root: Path
) -> None:
    home = gemini_home(tmp_path, project)
    run_recorded_hooks(home, project, data_root, tmp_path / "live")
    before = events(data_root)
    summary = run_import(home, "--all")
    assert summary["events_added"] == 0, events(data_root)[len(before) :]
    assert events(data_root) == before


def test_the_calls_of_a_session(tmp_path: Path, project: Path, data_root: Path) -> None:
    home = gemini_home(tmp_path, project)
    run_import(home, "--all")
    sid = session_ids()["ledger"]
    prompts = [d["text"] for d in data_of(data_root, sid, "user_prompt")]
    assert prompts == ["please fix the ledger module", "add the missing test and run it again"]
    assert [d["path"] for d in data_of(data_root, sid, "file_write")] == [
        "src/ledger/reconcile.py",
        "tests/test_reconcile.py",
    ]
    assert [d["path"] for d in data_of(data_root, sid, "file_edit")] == ["src/ledger/reconcile.py"]
    calls = [(d["command"], d.get("exit")) for d in data_of(data_root, sid, "shell_call")]
    assert calls == [("python3 tests/test_reconcile.py", 2), ("python3 tests/test_reconcile.py", 0)]
    errors = data_of(data_root, sid, "tool_error")
    assert [e["key"] for e in errors] == ["python3 tests/test_reconcile.py"]
    assert [d["key"] for d in data_of(data_root, sid, "error_resolved")] == [
        "python3 tests/test_reconcile.py"
    ]
    tour = session_ids()["tour"]
    tour_errors = [(e["tool"], e["key"]) for e in data_of(data_root, tour, "tool_error")]
    assert ("run_shell_command", "echo tour-fail >&2; exit 3") in tour_errors, tour_errors
    assert any(key.endswith("missing/nowhere.py") for _, key in tour_errors), tour_errors
    meta = store_rows(
        data_root,
        "SELECT client, cwd, project_dir, compact_count FROM session_meta WHERE session_id = ?",
        sid,
    )
    assert meta == [("gemini", str(project), str(project), 1)]


def test_the_compression_gets_a_replayed_snapshot(
    tmp_path: Path, project: Path, data_root: Path
) -> None:
    home = gemini_home(tmp_path, project)
    run_import(home, "--all")
    ((seq, trigger, summary, origin, replayed),) = store_rows(
        data_root,
        "SELECT compact_seq, trigger, summary, origin, replayed FROM compaction "
        "WHERE session_id = ?",
        session_ids()["ledger"],
    )
    assert (seq, trigger, origin) == (1, "auto", "import")
    assert summary.startswith("<state_snapshot>") and "MOCK_SUMMARY" in summary
    assert replayed.startswith("<session_resume") and "src/ledger/reconcile.py" in replayed
    assert "python3 tests/test_reconcile.py" in replayed  # the error still open then


def test_a_resume_relisting_the_summary_is_no_new_compression(
    tmp_path: Path, project: Path, data_root: Path
) -> None:
    """A resume writes the header and the whole history again, the old summary in it."""
    home = gemini_home(tmp_path, project)
    path = chat_of(home, session_ids()["ledger"])
    lines = path.read_text().splitlines(keepends=True)
    header = lines[0]
    compressed = next(line for line in lines if chats.BOUNDARY_MARK.decode() in line)
    path.write_text("".join(lines) + header + compressed)
    assert chats.count_boundaries(path.read_bytes()) == 1
    summary = run_import(home, "--all")
    assert summary["compactions"] == 1


def test_a_second_run_adds_nothing(tmp_path: Path, project: Path, data_root: Path) -> None:
    home = gemini_home(tmp_path, project)
    first = run_import(home, "--all")
    before = events(data_root)
    second = run_import(home, "--all")
    assert first["events_added"] == len(before) > 0
    assert (second["events_added"], second["files"], second["unchanged"]) == (0, 0, 2)


@pytest.mark.parametrize("window", [256, 1500])
def test_small_windows_make_the_same_store(
    window: int, tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = gemini_home(tmp_path, project)
    env = {"GEMINI_CLI_HOME": str(home), "CTXMODE_HOME": str(tmp_path / "whole")}
    cli("import", "--all", env=env)
    monkeypatch.setattr(importer, "WINDOW", window)
    env["CTXMODE_HOME"] = str(tmp_path / "windowed")
    summary = json.loads(cli("import", "--all", "--json", env=env).output)
    assert summary["compactions"] == 1, summary
    assert sorted(events(tmp_path / "windowed")) == sorted(events(tmp_path / "whole"))
    columns = "session_id, compact_seq, summary, replayed"
    assert store_rows(tmp_path / "windowed", f"SELECT {columns} FROM compaction") == store_rows(
        tmp_path / "whole", f"SELECT {columns} FROM compaction"
    )


def test_a_grown_chat_is_read_on(tmp_path: Path, project: Path) -> None:
    whole = gemini_home(tmp_path / "a", project)
    cli(
        "import", "--all", env={"GEMINI_CLI_HOME": str(whole), "CTXMODE_HOME": str(tmp_path / "r1")}
    )
    expected = sorted(events(tmp_path / "r1"))
    home = gemini_home(tmp_path / "b", project)
    path = chat_of(home, session_ids()["ledger"])
    data = path.read_bytes()
    cut = data.index(b'"name":"run_shell_command"')  # a call with its result: the line's
    cut = data.rindex(b"\n", 0, cut) + 1  # start: cut before it
    path.write_bytes(data[:cut])
    env = {"GEMINI_CLI_HOME": str(home), "CTXMODE_HOME": str(tmp_path / "r2")}
    first = json.loads(cli("import", "--all", "--json", env=env).output)
    assert first["events_added"] > 0
    path.write_bytes(data)
    second = json.loads(cli("import", "--all", "--json", env=env).output)
    assert second["files"] == 1 and second["events_added"] > 0
    assert sorted(events(tmp_path / "r2")) == expected


def test_a_chat_is_claimed_by_gemini_not_by_claude_code(tmp_path: Path, project: Path) -> None:
    home = gemini_home(tmp_path, project)
    path = chat_of(home, session_ids()["tour"])
    assert importer.reader_for(str(path))[0] == "gemini"
    assert chats.head_cwd(str(path)) == (str(project), session_ids()["tour"])


def test_project_finds_its_chats(tmp_path: Path, project: Path) -> None:
    home = gemini_home(tmp_path, project)
    env = {"GEMINI_CLI_HOME": str(home), "CTXMODE_HOME": str(tmp_path / "root")}
    assert (
        json.loads(cli("import", "--json", "--project", str(tmp_path), env=env).output)["files"]
        == 0
    )
    mine = json.loads(cli("import", "--json", "--project", str(project), env=env).output)
    assert mine["files"] == 2
    none = json.loads(cli("import", "--json", "--all", "--client", "codex", env=env).output)
    assert none["files"] == 0


def _chat_of(calls: list[secret_corpus.Call]) -> str:
    """The corpus's calls as a chat records them: prompts, and every call as a
    run_shell_command whose command and output carry its texts; then a compression whose
    summary repeats the prompts."""

    def strings(node: Any) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, dict):
            return [s for v in node.values() for s in strings(v)]
        if isinstance(node, list):
            return [s for v in node for s in strings(v)]
        return []

    stamp = "2026-12-01T10:00:00.000Z"
    out: list[dict[str, Any]] = [
        {"sessionId": "corpus-1", "projectHash": "x", "startTime": stamp, "kind": "main"}
    ]
    for n, call in enumerate(calls):
        p = call.payload
        if call.event == "UserPromptSubmit":
            out.append({"id": f"u{n}", "timestamp": stamp, "type": "user",
                        "content": [{"text": p["prompt"]}]})  # fmt: skip
            continue
        result = p.get("error") if call.event == "PostToolUseFailure" else p.get("tool_response")
        code = "\nExit Code: 1" if call.event == "PostToolUseFailure" else ""
        output = "Output: " + "\n".join(strings(result)) + code
        tool_call = {
            "id": f"c{n}", "name": "run_shell_command", "status": "success",
            "args": {"command": "\n".join(strings(p.get("tool_input", {})))},
            "result": [{"functionResponse": {"id": f"c{n}", "name": "run_shell_command",
                                             "response": {"output": output}}}],
        }  # fmt: skip
        out.append({"id": f"g{n}", "timestamp": stamp, "type": "gemini", "content": "",
                    "toolCalls": [tool_call]})  # fmt: skip
    said = "\n".join(str(c.payload.get("prompt", "")) for c in calls)
    messages = [
        {"id": "ctx", "type": "user", "content": [{"text": "<session_context>x</session_context>"}]},
        {"id": "sum", "type": "user", "content": [{"text": f"<state_snapshot>{said}</state_snapshot>"}]},
        {"id": "ack", "type": "gemini", "content": [{"text": gemini.SUMMARY_ACK}]},
    ]  # fmt: skip
    out.append({"$set": {"messages": messages}})
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in out)


def test_secrets_in_a_chat_are_masked(tmp_path: Path, data_root: Path) -> None:
    calls = [
        c
        for c in secret_corpus.corpus(seed=16, per_class=2)
        if c.event in ("PostToolUse", "PostToolUseFailure", "UserPromptSubmit")
    ]
    assert sum(len(c.planted) for c in calls) > 50
    home = tmp_path / "home"
    folder = home / ".gemini" / "tmp" / "proj"
    (folder / "chats").mkdir(parents=True)
    (folder / ".project_root").write_text(secret_corpus.PROJECT)
    (folder / "chats" / "session-2026-12-01T10-00-corpus-1.jsonl").write_text(_chat_of(calls))
    summary = run_import(home, "--all")
    assert summary["events_added"] > 20 and summary["compactions"] == 1, summary
    blobs = {p.name: p.read_bytes() for p in (data_root / "sessions").iterdir() if p.is_file()}
    found = leaks(calls, blobs)
    assert not found, found[:10]
