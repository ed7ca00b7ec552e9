"""End to end with the real Codex CLI (pinned from npm) against a local mock of its API.

ctxmode is installed for Codex the user's way (``ctxmode install --host codex`` of the venv
that install.sh built): hooks.json and the trust entries, no trust bypass. What these prove:
Codex runs ctxmode's hooks; a session that edits, commits and fails a command is recorded
(the failure from the rollout file, the only place with its exit code); after an automatic
compaction the resumed turn's first request carries the ``<session_resume>`` with the file
and the commit, once; and a Claude Code session's end snapshot is handed to a new Codex
session in the same repository (opt-in, ``inject_on_startup``).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from tests.e2e import codex_cli, codex_mock
from tests.e2e.codex_mock import MockResponses, Steps, patch, say, shell
from tests.e2e.fswatch import EntryWatch
from tests.e2e.harness import Harness
from tests.e2e.mock_api import Reply, call
from tests.e2e.mock_api import Steps as ClaudeSteps
from tests.e2e.mock_api import say as claude_says

pytestmark = pytest.mark.e2e
RESUME_RE = re.compile(r"<session_resume\b.*?</session_resume>", re.S)

ADD = (
    "*** Begin Patch\n*** Add File: src/ledger/reconcile.py\n+def reconcile(entries):\n"
    "+    return sum(entries)\n*** End Patch"
)
COMMIT = 'git add -A && git commit -q -m "Reconcile ledger totals" && git log -1 --format=%s'
FAILING = "python3 tests/test_reconcile.py"


class CodexWorld:
    """One scenario: the harness (HOME, data root, ctxmode's venv), a CODEX_HOME of its own."""

    def __init__(
        self,
        e2e: Harness,
        codex: codex_cli.CodexInstall,
        *scope: str,
        codex_home: Path | None = None,
    ) -> None:
        self.e2e = e2e
        self.codex = codex
        # Codex makes its sandbox helpers' links in CODEX_HOME, never under /tmp: a test
        # that runs Codex's sandbox gives a folder elsewhere.
        self.codex_home = (codex_home or e2e.root / "codex-home").resolve()
        self.codex_home.mkdir()
        self.api: MockResponses | None = None
        # With the proof run: the installed commands fed a Codex session as Codex runs them.
        self.installed = self.ctxmode("install", "--host", "codex", *scope, "--verify")
        assert "for Codex: 6 hooks" in self.installed.stdout, self.installed.stdout
        assert "; verified: 11 hook calls" in self.installed.stdout, self.installed.stdout

    def ctxmode(self, *args: str) -> subprocess.CompletedProcess[str]:
        out = subprocess.run(
            [str(self.e2e.ctx.ctxmode), *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert out.returncode == 0, out.stdout + out.stderr
        return out

    def env(self) -> dict[str, str]:
        env = self.e2e.env()
        env["CODEX_HOME"] = str(self.codex_home)
        for key in [k for k in env if k.startswith(("OPENAI",))]:
            del env[key]
        env.update(MOCK_KEY="offline", NO_PROXY="127.0.0.1,localhost")
        return env

    def run(self, prompt: str, cwd: Path, **kwargs: object) -> codex_cli.Run:
        assert self.api is not None
        run = codex_cli.run_codex(
            self.codex,
            self.api.base_url,
            prompt,
            cwd=cwd,
            env=self.env(),
            **kwargs,  # type: ignore[arg-type]
        )
        assert run.returncode == 0, run.describe()
        assert run.hook_problems() == [], run.describe()
        return run

    def log_errors(self) -> list[str]:
        log = self.e2e.data_root / "logs" / "ctxmode.log"
        return (
            [line for line in log.read_text().splitlines() if "ERROR" in line]
            if log.exists()
            else []
        )


@pytest.fixture
def world(e2e: Harness, codex: codex_cli.CodexInstall) -> Iterator[CodexWorld]:
    w = CodexWorld(e2e, codex)
    try:
        yield w
    finally:
        if w.api is not None:
            w.api.__exit__(None, None, None)


def _dump(world: CodexWorld, project: Path) -> dict[str, object]:
    out = subprocess.run(
        [str(world.e2e.ctx.ctxmode), "dump", "--json", "--project", str(project)],
        env=world.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    doc: dict[str, object] = json.loads(out.stdout)
    return doc


def _events(doc: dict[str, object]) -> list[dict[str, object]]:
    sessions = doc.get("sessions")
    assert isinstance(sessions, list)
    return [event for session in sessions for event in session.get("events", [])]


def test_codex_session_edits_commits_fails_compacts_and_resumes(world: CodexWorld) -> None:
    proj = world.e2e.project("ledger")
    world.api = MockResponses(
        Steps(patch(ADD), shell(COMMIT), shell(FAILING), final="Committed; its test is missing."),
        world.e2e.root / "codex-requests.jsonl",
    ).__enter__()
    first = world.run("Add the totals helper, commit it and run its tests.", proj)
    assert any(line == "hook: PostToolUse Completed" for line in first.hook_lines()), (
        first.describe()
    )
    assert world.e2e.git(proj, "log", "-1", "--format=%s").strip() == "Reconcile ledger totals"
    events = _events(_dump(world, proj))
    types = [e.get("type") for e in events]
    assert "file_write" in types and "git_commit" in types, events
    errors = [cast(dict[str, Any], e["data"]) for e in events if e.get("type") == "tool_error"]
    # The exit code (2) lives in the rollout file only: read at SessionEnd.
    assert [e["key"] for e in errors] == [FAILING], events
    # The turn's final text, from Codex's Stop hook (last_assistant_message).
    replies = [
        cast(dict[str, Any], e["data"])["text"]
        for e in events
        if e.get("type") == "assistant_reply"
    ]
    assert replies == ["Committed; its test is missing."], events
    # The resumed turn, compacted before it runs (Codex: PreCompact, PostCompact, then
    # SessionStart resume and compact, both of whose outputs reach the model).
    world.api.script = Steps(final="Next: write tests/test_reconcile.py.")
    seen = len(world.api.requests)
    resumed = world.run(
        "what next?",
        proj,
        resume=first.session_id,
        config=("model_auto_compact_token_limit=50",),
    )
    assert resumed.session_id == first.session_id
    lines = resumed.hook_lines()
    assert "hook: PreCompact" in lines and lines.count("hook: SessionStart") == 2, lines
    later = world.api.requests[seen:]
    assert any(r.is_compaction for r in later), [r.last_user_text()[:80] for r in later]
    turn = next(r for r in later if not r.is_compaction)
    snapshots = [m for text in turn.texts("developer") for m in RESUME_RE.findall(text)]
    assert len(snapshots) == 1, [t[:200] for t in turn.texts("developer")]
    snapshot = snapshots[0]
    assert "src/ledger/reconcile.py" in snapshot
    assert "Reconcile ledger totals" in snapshot
    assert FAILING in snapshot
    assert world.log_errors() == []


def test_a_project_scope_install_runs_once_codex_trusts_the_project(
    e2e: Harness, codex: codex_cli.CodexInstall
) -> None:
    """``install --host codex --project DIR``: Codex runs DIR/.codex/hooks.json only in a
    project it trusts (its own gate, which ctxmode leaves to the user); once trusted, the
    trust entries ctxmode wrote for that file are honoured, and Codex's own trust entry
    survives ctxmode's uninstall and install."""
    proj = e2e.project("scoped")
    world = CodexWorld(e2e, codex, "--project", str(proj))
    try:
        assert "Codex will not run these hooks yet" in world.installed.stderr
        world.api = MockResponses(
            Steps(shell("echo scoped > out.txt"), final="Wrote it."),
            e2e.root / "codex-project.jsonl",
        ).__enter__()
        untrusted = world.run("Write out.txt.", proj)
        assert untrusted.hook_lines() == [], untrusted.describe()
        assert "Untrusted project-local configuration is disabled" in untrusted.stderr
        # The user trusts the project the way Codex offers (`codex exec --trust`).
        world.api.script = Steps(shell("echo scoped > out2.txt"), final="Wrote it.")
        trusted = world.run("Write out2.txt.", proj, flags=("--trust",))
        assert "hook: PostToolUse Completed" in trusted.hook_lines(), trusted.describe()
        paths = [json.dumps(e.get("data")) for e in _events(_dump(world, proj))]
        assert any("out2.txt" in data for data in paths), paths
        # Codex wrote its trust into ctxmode's block: uninstall and install keep it.
        world.ctxmode("uninstall", "--host", "codex", "--project", str(proj))
        again = world.ctxmode("install", "--host", "codex", "--project", str(proj))
        assert "will not run" not in again.stderr, again.stderr
        world.api.script = Steps(shell("echo scoped > out3.txt"), final="Wrote it.")
        later = world.run("Write out3.txt.", proj)
        assert "hook: PostToolUse Completed" in later.hook_lines(), later.describe()
        paths = [json.dumps(e.get("data")) for e in _events(_dump(world, proj))]
        assert any("out3.txt" in data for data in paths), paths
        assert world.log_errors() == []
    finally:
        if world.api is not None:
            world.api.__exit__(None, None, None)


def test_claude_code_hands_its_end_snapshot_to_a_new_codex_session(world: CodexWorld) -> None:
    e2e = world.e2e
    # Captures in the background, as install.sh registers them: the Write's capture is
    # often still running when the mock's final answer ends `claude -p`, and Claude Code
    # 2.1.197 then runs no SessionEnd hook. The capture takes the end snapshot itself when
    # the client's SIGTERM reaches it (handlers.on_client_ending); when it was done just
    # before the signal came, there is none at the client's exit, and the Codex session's
    # SessionStart builds it from the events (handlers._end_unended). Codex gets it either
    # way; which way it went varies run to run, most under load (issue 30).
    proj = e2e.project("handover")
    target = proj / "notes" / "plan.md"
    inflight = e2e.data_root / "inflight"
    inflight.mkdir(mode=0o700)

    def final_once_the_capture_runs(req: object) -> Reply:
        # A model's answer takes longer than a capture's start; the mock's comes at once,
        # and the SIGTERM could then reach the capture before its first line (no handler
        # yet: killed, its call unrecorded). Its in-flight marker says it has started.
        # (Watched from before the client started: a capture already done was seen too.)
        watch.wait(lambda name: "-" in name, bound=60)
        return claude_says("Wrote the plan.")

    e2e.serve(
        ClaudeSteps(call("Write", file_path=str(target), content="# plan\n"),
                    final_once_the_capture_runs)
    )  # fmt: skip
    with EntryWatch(inflight) as watch:
        claude = e2e.claude_p("Write the plan file.", proj)
    subprocess.run(
        [str(e2e.ctx.ctxmode), "config", "set", "inject_on_startup", "true"],
        env=world.env(),
        check=True,
        capture_output=True,
        timeout=60,
    )
    world.api = MockResponses(Steps(final="I see the plan."), e2e.root / "codex.jsonl").__enter__()
    world.run("Continue where we left off.", proj)
    first = world.api.requests[0]
    snapshots = [m for text in first.texts("developer") for m in RESUME_RE.findall(text)]
    if len(snapshots) != 1:
        # What happened to Claude Code's end snapshot: the sessions' snapshots and the log.
        doc = _dump(world, proj)
        sessions = doc.get("sessions") or []
        resumes = [
            {k: r.get(k) for k in ("kind", "session_id", "consumed", "consumed_by", "created_at")}
            for s in sessions if isinstance(s, dict) for r in s.get("resumes") or []
        ]  # fmt: skip
        metas = [
            {k: s.get(k) for k in ("session_id", "client", "worktree", "event_count", "last_hook")}
            for s in sessions if isinstance(s, dict)
        ]  # fmt: skip
        log = world.e2e.data_root / "logs" / "ctxmode.log"
        pytest.fail(
            f"no <session_resume> reached Codex; sessions {metas}; snapshots {resumes}; "
            f"log: {log.read_text()[-3000:] if log.exists() else '(none)'}"
        )
    assert 'source="previous-session"' in snapshots[0]
    assert "notes/plan.md" in snapshots[0]
    # The Claude Code session's one end snapshot, however it was made, went to Codex.
    (ended,) = [s for s in _dump(world, proj)["sessions"] if s["session_id"] == claude.session_id]
    kept = [r for r in ended["resumes"] if r["kind"] == "end" and r["state"] != "retired"]
    assert [(r["state"], r["consumed_by"] != claude.session_id) for r in kept] == [
        ("claimed", True)
    ], ended["resumes"]
    assert world.log_errors() == []


def test_the_mock_speaks_the_responses_api() -> None:
    """The mock's own contract (no CLI): a compaction request gets the summary."""
    steps = Steps(say("x"))
    req = codex_mock.Request(
        0, {"input": [{"type": "message", "role": "user", "content": codex_mock.COMPACTION_ASK}]}
    )
    assert steps(req).text == codex_mock.SUMMARY_TEXT
