"""``ctxmode import`` of Codex rollouts, recorded from the real Codex CLI.

The rollouts (``tests/fixtures/codex-0.169.0/history/``, made by
``scripts/record_history.py codex``) come with the payloads ctxmode's hooks got in the same
runs and how many lines the rollout held when each fired (``hooks.jsonl``): replayed through
the real hook processes, the file cut to that many lines each time, they store what the
hooks stored live. The import of the finished files must make the same events, but where
it knows more than a hook could: a command's exit code (Codex's PostToolUse has none; a
failure reaches the hooks late, as a second ``shell_call``).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ctxmode import importer
from ctxmode.hosts.codex import history as rollouts
from tests import secret_corpus
from tests.helpers import cli
from tests.hooktools import REPO, hook_env, run_hook
from tests.test_privacy_corpus import leaks

SOURCE = REPO / "tests" / "fixtures" / "codex-0.169.0" / "history"
RECORDED_PROJECT = "/tmp/proj"
COLUMNS = "session_id, type, data, tool_use_id"


def session_ids() -> dict[str, str]:
    return dict(json.loads((SOURCE / "sessions.json").read_text())["sessions"])


def codex_home(tmp_path: Path, project: Path) -> Path:
    """A CODEX_HOME holding the recorded rollouts, moved into ``project``."""
    home = tmp_path / "codex-home"
    for path in (SOURCE / "codex").rglob("*.jsonl"):
        target = home / path.relative_to(SOURCE / "codex")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text().replace(RECORDED_PROJECT, str(project)))
    return home


def rollout_of(home: Path, session_id: str) -> Path:
    (found,) = home.rglob(f"rollout-*-{session_id}.jsonl")
    return found


def run_import(home: Path, *args: str) -> dict[str, Any]:
    result = cli("import", "--json", *args, env={"CODEX_HOME": str(home)})
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
    """The recorded payloads through ctxmode's real hooks (``--host codex``), each with the
    rollout as it was when the hook fired (its first ``lines`` lines)."""
    env = hook_env(CTXMODE_HOME=str(root))
    live.mkdir(parents=True, exist_ok=True)
    for line in (SOURCE / "hooks.jsonl").read_text().splitlines():
        record = json.loads(line.replace(RECORDED_PROJECT, str(project)))
        payload = record["payload"]
        sid = payload["session_id"]
        text = rollout_of(home, sid).read_text().splitlines(keepends=True)
        current = live / f"{sid}.jsonl"
        current.write_text("".join(text[: record["lines"] or 0]))
        payload["transcript_path"] = str(current)
        done = run_hook(record["event"], payload, env=env, host="codex")
        assert done.returncode == 0 and not done.stderr, done


def _known_outcome(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A row as a hook would have stored it: a success's exit code is not known live."""
    sid, kind, data, tool_use_id = row
    if kind == "shell_call":
        value = json.loads(data)
        if value.get("exit") == 0:
            del value["exit"]
            data = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return (sid, kind, data, tool_use_id)


# -- what a rollout becomes ------------------------------------------------------------------


def test_import_makes_the_events_the_hooks_made(tmp_path: Path, project: Path) -> None:
    """Same kinds, same data, call for call, as ctxmode's hooks stored from the same runs;
    the two differences are what the import knows and a hook cannot."""
    home = codex_home(tmp_path, project)
    hooked_root, imported_root = tmp_path / "hooked", tmp_path / "imported"
    run_recorded_hooks(home, project, hooked_root, tmp_path / "live")
    hooked = events(hooked_root)
    assert len(hooked) > 20, hooked

    result = cli(
        "import", "--json", "--all",
        env={"CODEX_HOME": str(home), "CTXMODE_HOME": str(imported_root)},
    )  # fmt: skip
    summary = json.loads(result.output)
    imported = events(imported_root)

    # 1. A success's exit code (0): the import reads it, Codex's PostToolUse carries none.
    successes = [r for r in imported if r[1] == "shell_call" and '"exit":0' in r[2]]
    assert len(successes) >= 3, imported
    # 2. A failed command is one shell_call with its exit code; live, the PostToolUse
    #    that Codex fires for failures too stored one more, without it.
    failed_ids = {r[3] for r in imported if r[1] == "shell_call" and '"exit":' in r[2]} - {
        r[3] for r in successes
    }
    assert len(failed_ids) == 2, imported
    live_only = [
        r for r in hooked if r[1] == "shell_call" and r[3] in failed_ids and '"exit"' not in r[2]
    ]
    assert len(live_only) == 2, hooked
    assert sorted(_known_outcome(r) for r in imported) == sorted(
        r for r in hooked if r not in live_only
    )
    assert summary["events_added"] == len(imported)
    assert (summary["skipped"], summary["unknown"], summary["truncated"]) == (0, 0, 0), summary
    assert (summary["files"], summary["compactions"], summary["replayed"]) == (2, 1, 1), summary
    origins = store_rows(imported_root, "SELECT DISTINCT source_hook FROM session_events")
    assert origins == [("import",)]
    hooked_summary = store_rows(hooked_root, "SELECT compact_seq, trigger, summary FROM compaction")
    imported_summary = store_rows(
        imported_root, "SELECT compact_seq, trigger, summary FROM compaction"
    )
    assert imported_summary == hooked_summary, (imported_summary, hooked_summary)


def test_events_the_hooks_captured_are_not_stored_twice(
    tmp_path: Path, project: Path, data_root: Path
) -> None:
    home = codex_home(tmp_path, project)
    run_recorded_hooks(home, project, data_root, tmp_path / "live")
    before = events(data_root)
    summary = run_import(home, "--all")
    assert summary["events_added"] == 0, events(data_root)[len(before) :]
    assert events(data_root) == before


def test_the_calls_of_a_session(tmp_path: Path, project: Path, data_root: Path) -> None:
    """Prompts, file changes from apply_patch, todos from update_plan, shell calls with
    their exit codes and output, a failure and its resolution, a failed patch."""
    home = codex_home(tmp_path, project)
    run_import(home, "--all")
    sid = session_ids()["ledger"]
    prompts = [d["text"] for d in data_of(data_root, sid, "user_prompt")]
    assert prompts == [
        "Work on the ledger module and run its tests.",
        "add the missing test and run it again",
    ]
    assert [(d["path"], d["kind"]) for d in data_of(data_root, sid, "file_write")] == [
        ("src/ledger/reconcile.py", "create"),
        ("tests/test_reconcile.py", "create"),
    ]
    assert [d["path"] for d in data_of(data_root, sid, "file_edit")] == ["src/ledger/reconcile.py"]
    plans = [
        [(t["content"], t["status"]) for t in d["todos"]]
        for d in data_of(data_root, sid, "todo_write")
    ]
    assert plans == [
        [("Add the reconcile helper", "in_progress"), ("Make its test pass", "pending")],
        [("Add the reconcile helper", "completed"), ("Make its test pass", "completed")],
    ], plans
    calls = [(d["command"], d.get("exit")) for d in data_of(data_root, sid, "shell_call")]
    assert calls == [
        ('git add -A && git commit -q -m "Reconcile ledger totals" && git log -1 --format=%s', 0),
        ("python3 tests/test_reconcile.py", 2),
        ("python3 tests/test_reconcile.py", 0),
    ]
    assert [d["message"] for d in data_of(data_root, sid, "git_commit")] == [
        "Reconcile ledger totals"
    ]
    errors = data_of(data_root, sid, "tool_error")
    assert [(e["tool"], e["key"]) for e in errors] == [
        ("Bash", "python3 tests/test_reconcile.py"),
        ("apply_patch", "missing/nowhere.py"),
    ]
    assert errors[0]["error"].startswith("Exit code 2\npython3: can't open file")
    assert [d["key"] for d in data_of(data_root, sid, "error_resolved")] == [
        "python3 tests/test_reconcile.py"
    ]
    meta = store_rows(
        data_root,
        "SELECT client, cwd, branch, project_dir, compact_count FROM session_meta "
        "WHERE session_id = ?",
        sid,
    )
    assert meta == [("codex", str(project), "main", str(project), 1)]


def test_the_compaction_gets_a_replayed_snapshot(
    tmp_path: Path, project: Path, data_root: Path
) -> None:
    """What the hooks would have restored at the compaction, from the events before it."""
    home = codex_home(tmp_path, project)
    run_import(home, "--all")
    sid = session_ids()["ledger"]
    ((seq, trigger, summary, origin, replayed),) = store_rows(
        data_root,
        "SELECT compact_seq, trigger, summary, origin, replayed FROM compaction "
        "WHERE session_id = ?",
        sid,
    )
    assert (seq, trigger, origin) == (1, "auto", "import")
    assert summary == "Summary: the ledger helper was added and committed; its test still fails."
    assert replayed.startswith("<session_resume") and 'compaction="1"' in replayed
    assert "src/ledger/reconcile.py" in replayed and "Reconcile ledger totals" in replayed
    assert "python3 tests/test_reconcile.py" in replayed  # the error still open then
    assert '<file path="tests/test_reconcile.py"' not in replayed  # written after it


def test_ctxmodes_own_snapshot_is_not_imported(
    tmp_path: Path, project: Path, data_root: Path
) -> None:
    """The rollout holds the snapshot ctxmode handed over after the compaction (a
    developer message): nothing of it becomes an event or a prompt."""
    home = codex_home(tmp_path, project)
    assert "<session_resume" in rollout_of(home, session_ids()["ledger"]).read_text()
    run_import(home, "--all")
    stored = [r[2] for r in events(data_root)]
    assert stored and not [d for d in stored if "session_resume" in d or "Facts recorded" in d]


# -- runs after runs -------------------------------------------------------------------------


def test_a_second_run_adds_nothing_and_opens_nothing(
    tmp_path: Path, project: Path, data_root: Path
) -> None:
    home = codex_home(tmp_path, project)
    first = run_import(home, "--all")
    before = events(data_root)
    second = run_import(home, "--all")
    assert first["events_added"] == len(before) > 0
    assert (second["events_added"], second["files"], second["unchanged"]) == (0, 0, 2)
    assert events(data_root) == before


def test_a_grown_rollout_is_read_on_and_a_split_call_still_pairs(
    tmp_path: Path, project: Path
) -> None:
    """Cut right after a call (its output not written yet), import, append the rest: the
    pair completes on the second run, and the store equals one import of the whole."""
    whole = codex_home(tmp_path / "whole", project)
    env = {"CODEX_HOME": str(whole), "CTXMODE_HOME": str(tmp_path / "root1")}
    cli("import", "--all", env=env)
    expected = sorted(events(tmp_path / "root1"))

    home = codex_home(tmp_path / "split", project)
    path = rollout_of(home, session_ids()["ledger"])
    lines = path.read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if b'"name":"exec_command"' in line) + 1
    path.write_bytes(b"".join(lines[:cut]))
    env = {"CODEX_HOME": str(home), "CTXMODE_HOME": str(tmp_path / "root2")}
    first = json.loads(cli("import", "--all", "--json", env=env).output)
    offset = store_rows(
        tmp_path / "root2", "SELECT offset FROM import_progress WHERE path = ?", str(path)
    )[0][0]
    assert offset == len(b"".join(lines[: cut - 1])), "the offset passed a call without output"
    assert first["events_added"] > 0
    with path.open("ab") as fh:
        fh.write(b"".join(lines[cut:]))
    second = json.loads(cli("import", "--all", "--json", env=env).output)
    assert second["files"] == 1 and second["events_added"] > 0
    assert sorted(events(tmp_path / "root2")) == expected


@pytest.mark.parametrize("window", [300, 2048])
def test_small_windows_make_the_same_store(
    window: int, tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bounded memory: read a window at a time (every call/output pair and the compaction
    falling across a window's end somewhere), the store is that of one read."""
    home = codex_home(tmp_path, project)
    env = {"CODEX_HOME": str(home), "CTXMODE_HOME": str(tmp_path / "whole")}
    cli("import", "--all", env=env)
    monkeypatch.setattr(importer, "WINDOW", window)
    env["CTXMODE_HOME"] = str(tmp_path / "windowed")
    summary = json.loads(cli("import", "--all", "--json", env=env).output)
    assert summary["compactions"] == 1 and summary["replayed"] == 1, summary
    assert sorted(events(tmp_path / "windowed")) == sorted(events(tmp_path / "whole"))
    columns = "session_id, compact_seq, trigger, summary, replayed"
    assert store_rows(tmp_path / "windowed", f"SELECT {columns} FROM compaction") == store_rows(
        tmp_path / "whole", f"SELECT {columns} FROM compaction"
    )


def test_reader_offsets_stay_at_line_ends(tmp_path: Path, project: Path) -> None:
    data = rollout_of(codex_home(tmp_path, project), session_ids()["ledger"]).read_bytes()
    for cut in range(0, len(data), 211):
        chunk = rollouts.read(data[:cut])
        assert chunk.offset == 0 or data[chunk.offset - 1 : chunk.offset] == b"\n"
        rest = rollouts.read(data, chunk.offset)
        assert rest.offset == len(data)


# -- the command -----------------------------------------------------------------------------


def test_client_chooses_the_hosts_read(tmp_path: Path, project: Path, data_root: Path) -> None:
    home = codex_home(tmp_path, project)
    empty_claude = tmp_path / "claude"
    env = {"CODEX_HOME": str(home), "CLAUDE_CONFIG_DIR": str(empty_claude)}
    none = json.loads(cli("import", "--json", "--all", "--client", "claude", env=env).output)
    assert none["files"] == 0
    some = json.loads(cli("import", "--json", "--all", "--client", "codex", env=env).output)
    assert some["files"] == 2 and some["events_added"] > 0
    bad = cli("import", "--all", "--client", "nosuch", env=env)
    assert bad.exit_code == 2 and "nosuch" in bad.output


def test_a_rollout_named_on_the_command_line_is_read_as_codexs(
    tmp_path: Path, project: Path, data_root: Path
) -> None:
    home = codex_home(tmp_path, project)
    path = rollout_of(home, session_ids()["tour"])
    copy = tmp_path / "elsewhere.jsonl"
    shutil.copy(path, copy)
    assert importer.reader_for(str(copy))[0] == "codex"
    result = cli("import", str(copy))
    assert result.exit_code == 0 and "1 file," in result.output, result.output
    sid = session_ids()["tour"]
    calls = [(d["command"], d.get("exit")) for d in data_of(data_root, sid, "shell_call")]
    assert calls == [("echo tour-ok", 0), ("echo tour-fail >&2; exit 3", 3)]
    assert store_rows(data_root, "SELECT client FROM session_meta") == [("codex",)]


def test_project_finds_its_rollouts(tmp_path: Path, project: Path) -> None:
    home = codex_home(tmp_path, project)
    env = {"CODEX_HOME": str(home), "CTXMODE_HOME": str(tmp_path / "root")}
    other = json.loads(cli("import", "--json", "--project", str(tmp_path), env=env).output)
    assert other["files"] == 0
    mine = json.loads(cli("import", "--json", "--project", str(project), env=env).output)
    assert mine["files"] == 2


# -- privacy ---------------------------------------------------------------------------------


def _strings(node: Any) -> list[str]:
    """Every string in a JSON value, in order (a call's texts, as a command would carry
    them: with their own newlines, not JSON's escapes)."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for value in node.values() for s in _strings(value)]
    if isinstance(node, list):
        return [s for value in node for s in _strings(value)]
    return []


def _rollout_of(calls: list[secret_corpus.Call], cwd: str) -> str:
    """The corpus's hook calls as the records a rollout holds for them: prompts as user
    messages, every call as an exec_command whose command and output carry its texts,
    and a compaction whose summary repeats the prompts."""
    stamp = "2026-12-01T10:00:00.000Z"

    def record(kind: str, item: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": stamp, "type": kind, "payload": item}

    out = [record("session_meta", {"id": "corpus-1", "cwd": cwd})]
    for n, call in enumerate(calls):
        p = call.payload
        if call.event == "UserPromptSubmit":
            text = {"type": "input_text", "text": p["prompt"]}
            out.append(record("response_item", {"type": "message", "role": "user",
                                                "content": [text]}))  # fmt: skip
            continue
        command = "\n".join(_strings(p.get("tool_input", {})))
        result = p.get("error") if call.event == "PostToolUseFailure" else p.get("tool_response")
        code = 1 if call.event == "PostToolUseFailure" else 0
        output = f"Process exited with code {code}\nOutput:\n" + "\n".join(_strings(result))
        args = json.dumps({"cmd": command})
        out.append(record("response_item", {"type": "function_call", "name": "exec_command",
                                            "arguments": args, "call_id": f"c{n}"}))  # fmt: skip
        out.append(record("response_item", {"type": "function_call_output", "call_id": f"c{n}",
                                            "output": output}))  # fmt: skip
    said = "\n".join(str(c.payload.get("prompt", "")) for c in calls)
    out.append(record("compacted", {"message": f"Here is the summary produced by x:\n{said}"}))
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in out)


def test_secrets_in_a_rollout_are_masked(tmp_path: Path, data_root: Path) -> None:
    calls = [
        c
        for c in secret_corpus.corpus(seed=15, per_class=2)
        if c.event in ("PostToolUse", "PostToolUseFailure", "UserPromptSubmit")
    ]
    assert sum(len(c.planted) for c in calls) > 50
    folder = tmp_path / "codex" / "sessions" / "2026" / "12" / "01"
    folder.mkdir(parents=True)
    (folder / "rollout-2026-12-01T10-00-00-corpus-1.jsonl").write_text(
        _rollout_of(calls, secret_corpus.PROJECT)
    )
    summary = run_import(tmp_path / "codex", "--all")
    assert summary["events_added"] > 20 and summary["compactions"] == 1, summary
    blobs = {p.name: p.read_bytes() for p in (data_root / "sessions").iterdir() if p.is_file()}
    found = leaks(calls, blobs)
    assert not found, found[:10]


def test_the_reader_needs_no_codex_home(tmp_path: Path) -> None:
    """The folder comes from CODEX_HOME, else HOME's .codex."""
    assert rollouts.folder({"CODEX_HOME": "/x/c"}) == os.path.join("/x/c", "sessions")
    assert rollouts.folder({"HOME": "/h"}) == os.path.join("/h", ".codex", "sessions")


def test_the_command_as_a_process_reads_every_clients_history(
    tmp_path: Path, project: Path, data_root: Path
) -> None:
    """``ctxmode import --all`` run as a process: Codex's rollouts and Gemini's chats (the
    recorded ones, moved into one project) land in that project's one store."""
    import subprocess
    import sys

    from tests import test_import_gemini

    codex = codex_home(tmp_path, project)
    gemini = test_import_gemini.gemini_home(tmp_path / "g", project)
    env = {
        **os.environ,
        "CODEX_HOME": str(codex),
        "GEMINI_CLI_HOME": str(gemini),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "no-claude"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "ctxmode", "import", "--all", "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    summary = json.loads(done.stdout)
    assert (summary["files"], summary["sessions"], summary["stores"]) == (4, 4, 1), summary
    clients = store_rows(data_root, "SELECT client, COUNT(*) FROM session_meta GROUP BY 1")
    assert clients == [("codex", 2), ("gemini", 2)]
