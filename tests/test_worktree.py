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

from ctxmode import worktree
from tests.hooktools import run_hook


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
