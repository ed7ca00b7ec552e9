"""Files changed by any route (issue 18): the snapshot lists what the shell changed too.

``git status`` read at PreCompact reconciles the session's file events with the repository's
own view (ctxmode.worktree); tested through the real hooks, on a real git repository.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ctxmode import paths, worktree
from ctxmode.store import Store
from tests.hooktools import hook_command, hook_env, run_hook


def test_parse_status() -> None:
    text = " M a.py\0?? new/b.txt\0D  gone.txt\0R  moved.py\0old.py\0A  added.py\0"
    assert worktree.parse_status(text) == [
        ("M", "a.py"),
        ("A", "new/b.txt"),
        ("D", "gone.txt"),
        ("R", "moved.py"),
        ("A", "added.py"),
    ]


def test_reconcile_keeps_only_the_sessions_unnamed_changes() -> None:
    changed = [("M", "known.py"), ("M", "old.py"), ("M", "sed.py"), ("A", "gen.txt"), ("D", "x")]
    mtimes = {"known.py": 200.0, "old.py": 50.0, "sed.py": 150.0, "gen.txt": 120.0, "x": None}
    drafts = worktree.reconcile(changed, {"known.py"}, mtimes, since=100.0)
    assert [(t, d["path"]) for t, d in drafts] == [
        ("file_edit", "sed.py"),
        ("file_write", "gen.txt"),
        ("file_delete", "x"),
    ]


def _git(repo: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t")
    env.update(GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_NOSYSTEM="1", HOME=str(repo.parent))
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


@pytest.mark.parametrize("host", ["codex", None])
def test_a_snapshot_lists_the_files_the_shell_changed(tmp_path: Path, host: str | None) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "dirty-before.txt").write_text("a\n")
    (repo / "config.ini").write_text("x=1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "init")
    (repo / "dirty-before.txt").write_text("b\n")  # changed before the session: not its
    past = 1_000_000_000
    os.utime(repo / "dirty-before.txt", (past, past))
    base = {"session_id": "s-wt", "cwd": str(repo), "transcript_path": None}
    prompt = base | {"hook_event_name": "UserPromptSubmit", "prompt": "switch the flag"}
    assert run_hook("UserPromptSubmit", prompt, host=host).returncode == 0
    # the agent edits through the shell: no file tool ever names these files
    (repo / "config.ini").write_text("x=2\n")
    (repo / "out").mkdir()
    (repo / "out" / "report.txt").write_text("generated\n")
    call = base | {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "sed -i s/1/2/ config.ini && ./gen > out/report.txt"},
        "tool_response": "" if host else {"stdout": "", "stderr": ""},
        "tool_use_id": "c1",
    }
    assert run_hook("PostToolUse", call, host=host).returncode == 0
    compact = base | {"hook_event_name": "PreCompact", "trigger": "auto"}
    proc = run_hook("PreCompact", compact, host=host)
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""
    start = base | {"hook_event_name": "SessionStart", "source": "compact"}
    out = run_hook("SessionStart", start, host=host).stdout
    snapshot = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "config.ini" in snapshot and "out/report.txt" in snapshot
    assert "dirty-before.txt" not in snapshot


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "known.py").write_text("a = 1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "init")
    return repo


def _snapshot_after_compaction(base: dict[str, object]) -> str:
    compact = base | {"hook_event_name": "PreCompact", "trigger": "auto"}
    proc = run_hook("PreCompact", compact)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    start = base | {"hook_event_name": "SessionStart", "source": "compact"}
    out = run_hook("SessionStart", start).stdout
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def test_files_a_program_wrote_are_listed_once(tmp_path: Path) -> None:
    """A program changes files without naming them on its command line (a generator, a
    formatter): only git status sees them. The file tool's own edit is not listed twice,
    and a second compaction finds nothing new."""
    repo = _repo(tmp_path)
    base = {"session_id": "s-prog", "cwd": str(repo), "transcript_path": None}
    prompt = base | {"hook_event_name": "UserPromptSubmit", "prompt": "regenerate the schema"}
    assert run_hook("UserPromptSubmit", prompt).returncode == 0
    (repo / "known.py").write_text("a = 2\n")
    edit = base | {
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": str(repo / "known.py"), "old_string": "1", "new_string": "2"},
        "tool_response": {"filePath": str(repo / "known.py"), "structuredPatch": []},
        "tool_use_id": "e1",
    }
    assert run_hook("PostToolUse", edit).returncode == 0
    (repo / "schema").mkdir()
    (repo / "schema" / "generated.sql").write_text("create table t (x);\n")
    run = base | {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "python3 tools/regen.py"},
        "tool_response": {"stdout": "done", "stderr": ""},
        "tool_use_id": "b1",
    }
    assert run_hook("PostToolUse", run).returncode == 0
    assert "schema/generated.sql" in _snapshot_after_compaction(base)
    assert "schema/generated.sql" in _snapshot_after_compaction(base)
    with Store.open(paths.store_path(str(repo), hook_env()), readonly=True) as store:
        events = store.session_events("s-prog")
    via_git = [e.data for e in events if '"via":"git status"' in e.data]
    assert len(via_git) == 1 and "schema/generated.sql" in via_git[0]
    assert sum('"known.py"' in e.data for e in events if e.category == "file") == 1


def test_a_capture_stored_while_git_status_runs_is_in_the_snapshot(tmp_path: Path) -> None:
    """PreCompact reads the session once for git status and the snapshot; a capture that
    lands in between (here: while git runs) makes it read again, so the snapshot is never
    older than the store. A stand-in ``git`` stores that capture itself, then answers."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    base = {"session_id": "s-race", "cwd": str(project), "transcript_path": None}
    prompt = base | {"hook_event_name": "UserPromptSubmit", "prompt": "tidy the module"}
    assert run_hook("UserPromptSubmit", prompt).returncode == 0
    target = project / "landed_late.py"
    late = base | {
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(target), "content": "x = 1\n"},
        "tool_response": {"type": "create", "filePath": str(target)},
        "tool_use_id": "w1",
    }
    (tmp_path / "late.json").write_text(json.dumps(late))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    capture = " ".join(hook_command("PostToolUse"))
    fake = bin_dir / "git"
    fake.write_text(f"#!/bin/sh\n{capture} < '{tmp_path / 'late.json'}' >/dev/null 2>&1\nexit 0\n")
    fake.chmod(0o755)
    env = hook_env(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    compact = base | {"hook_event_name": "PreCompact", "trigger": "auto"}
    proc = run_hook("PreCompact", compact, env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    with Store.open(paths.store_path(str(project), env), readonly=True) as store:
        assert any("landed_late.py" in e.data for e in store.session_events("s-race"))
        resume = store.latest_resume("s-race", kind="compact")
    assert resume is not None and "landed_late.py" in str(resume["snapshot"])


def test_reading_git_status_loads_no_slow_module(tmp_path: Path) -> None:
    """The session's start is parsed without calendar/time.strptime, which would load re,
    enum, datetime and locale (~30 ms) into the hook."""
    repo = _repo(tmp_path)
    base = {"session_id": "s-imp", "cwd": str(repo), "transcript_path": None}
    prompt = base | {"hook_event_name": "UserPromptSubmit", "prompt": "go"}
    assert run_hook("UserPromptSubmit", prompt).returncode == 0
    (repo / "made_by_a_program.txt").write_text("x\n")
    command = hook_command("PreCompact")
    command[1:1] = ["-X", "importtime"]
    compact = base | {"hook_event_name": "PreCompact", "trigger": "auto"}
    result = subprocess.run(
        command, input=json.dumps(compact).encode(), capture_output=True, env=hook_env(), timeout=30
    )
    assert (result.returncode, result.stdout) == (0, b"")
    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert "ctxmode.worktree" in loaded
    assert not loaded & {"re", "calendar", "datetime", "locale", "enum", "_strptime"}
    with Store.open(paths.store_path(str(repo), hook_env()), readonly=True) as store:
        assert any("made_by_a_program.txt" in e.data for e in store.session_events("s-imp"))


def test_a_git_left_unread_is_ended_and_reaped() -> None:
    """PreCompact starts git status before it reads the store: on an error in between,
    or at the deadline, git is killed and reaped, never left running."""
    env = {"PATH": os.environ.get("PATH", "")}
    unread = worktree.start(["sleep", "600"], env, worktree.GIT_TIMEOUT)
    pid = unread.pid
    assert pid  # started beside the caller (posix_spawn), not run to its end
    unread.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped already: no child of that id is left
    late = worktree.start(["sleep", "600"], env, 0.05)
    pid = late.pid
    assert late.output() is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert worktree.start(["sh", "-c", "printf ok"], env, worktree.GIT_TIMEOUT).output() == b"ok"
    assert worktree.start(["sh", "-c", "exit 3"], env, worktree.GIT_TIMEOUT).output() is None
