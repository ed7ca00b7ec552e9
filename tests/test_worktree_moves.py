"""A session that moves to another worktree of its repository: the store follows it and the
snapshot says where it now works.

The payloads are Claude Code 2.1.332's (``tests/fixtures/claude-code-2.1.332/tools/``,
recorded by ``scripts/record_tools.py --payloads``): EnterWorktree creating
``.claude/worktrees/fix-login``, ExitWorktree, EnterWorktree into the existing sibling
worktree ``proj-hotfix``, then a ``cd .claude/worktrees/docs`` (a third worktree) and a
``cd`` back to the project. They are replayed through the installed hook command, as the
client runs it, into a real repository with those worktrees (``git worktree add``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxmode import paths
from ctxmode.store import Store
from tests.hooktools import hook_env, run_hook
from tests.test_identity import git, make_repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

STREAM = Path(__file__).parent / "fixtures" / "claude-code-2.1.332" / "tools" / "stream.jsonl"
SID = "moves"


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, Path]:
    home = tmp_path.resolve()
    proj = make_repo(home / "proj")
    git("worktree", "add", "-q", "-b", "hotfix/login", str(home / "proj-hotfix"), cwd=proj)
    docs = proj / ".claude" / "worktrees" / "docs"
    git("worktree", "add", "-q", "-b", "docs/update", str(docs), cwd=proj)
    # What EnterWorktree {"name": "fix-login"} made in the recorded session.
    login = proj / ".claude" / "worktrees" / "fix-login"
    git("worktree", "add", "-q", "-b", "worktree-fix-login", str(login), cwd=proj)
    return {
        "home": home,
        "proj": proj,
        "hotfix": home / "proj-hotfix",
        "docs": docs,
        "login": login,
    }


def _calls(home: Path) -> list[dict[str, Any]]:
    """The recorded session's PostToolUse payloads, its paths moved under ``home``."""
    calls = []
    for line in STREAM.read_text().splitlines():
        record = json.loads(line.replace("/home/dev", str(home)))
        if record["event"] == "PostToolUse":
            payload = record["payload"]
            payload["session_id"] = SID
            calls.append(payload)
    return calls


def _meta(proj: Path) -> dict[str, Any]:
    with Store.open(paths.store_path(str(proj), os.environ), readonly=True) as store:
        return next(m for m in store.sessions() if m["session_id"] == SID)


def _run(payload: dict[str, Any], proj: Path) -> None:
    # CLAUDE_PROJECT_DIR stays where the session started, whatever its cwd (2.1.332).
    done = run_hook("PostToolUse", payload, env=hook_env(CLAUDE_PROJECT_DIR=str(proj)))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def _snapshot(proj: Path, n: int) -> str:
    env = hook_env(CLAUDE_PROJECT_DIR=str(proj))
    base = {"session_id": SID, "cwd": str(proj), "transcript_path": ""}
    done = run_hook(
        "PreCompact", {**base, "hook_event_name": "PreCompact", "trigger": "manual"}, env=env
    )
    assert (done.returncode, done.stderr) == (0, b"")
    done = run_hook(
        "SessionStart", {**base, "hook_event_name": "SessionStart", "source": "compact"}, env=env
    )
    assert done.returncode == 0 and done.stderr == b"", done
    text: str = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return text


def test_the_session_worktree_follows_each_move(repo: dict[str, Path], data_root: Path) -> None:
    proj = repo["proj"]
    want = {
        # tool call label → (worktree, branch) of the session after it
        "named": (repo["login"], "worktree-fix-login"),
        "in_worktree": (repo["login"], "worktree-fix-login"),
        "keep": (proj, "main"),
        "path": (repo["hotfix"], "hotfix/login"),
        "in_path": (repo["hotfix"], "hotfix/login"),
        "exit_path": (proj, "main"),
        "cd_inner": (repo["docs"], "docs/update"),
        "after_cd": (repo["docs"], "docs/update"),
        "cd_back": (proj, "main"),
    }
    seen = set()
    for payload in _calls(repo["home"]):
        _run(payload, proj)
        label = str(payload["tool_use_id"]).split("_", 3)[-1]
        if label in want:
            worktree, branch = want[label]
            meta = _meta(proj)
            assert (meta["worktree"], meta["branch"]) == (str(worktree), branch), label
            seen.add(label)
    assert seen == set(want)


def test_the_snapshot_says_where_the_session_now_works(
    repo: dict[str, Path], data_root: Path
) -> None:
    proj = repo["proj"]
    calls = _calls(repo["home"])
    labels = [str(c["tool_use_id"]).split("_", 3)[-1] for c in calls]
    # In the worktree EnterWorktree made.
    for payload in calls[: labels.index("in_worktree") + 1]:
        _run(payload, proj)
    snap = _snapshot(proj, 1)
    assert f'worktree="{repo["login"]}"' in snap, snap
    assert 'worktree_branch="worktree-fix-login"' in snap, snap
    # After a cd into the docs worktree (no tool said "worktree": the cd did).
    for payload in calls[labels.index("in_worktree") + 1 : labels.index("after_cd") + 1]:
        _run(payload, proj)
    snap = _snapshot(proj, 2)
    assert f'worktree="{repo["docs"]}"' in snap, snap
    assert 'worktree_branch="docs/update"' in snap, snap
