"""End to end with the real Qwen Code CLI (pinned from npm) against a local Chat Completions mock.

ctxmode is installed for Qwen the user's way (``ctxmode install --host qwen --verify`` of the
venv install.sh built) into a HOME of the scenario's own: ``~/.qwen/settings.json``, user
scope, with its allow rule for the lookups. What these prove: Qwen runs ctxmode's hooks; a
session that writes, edits, fails a command and commits is recorded; after
``qwen --continue "/compress"`` (the mock reports 60,000 prompt tokens, below which Qwen finds
compressing "not beneficial") the next run's first request carries the snapshot exactly once,
as an outline inside Qwen's ``<qwen:user-prompt-submit-context>`` part with no escaped
markup, and so does every later request, claimed once in the store; in Qwen's *default*
approval mode the snapshot's lookup runs as written (the allow rule); and the repository's
memory is shared with Claude Code both ways.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import qwen_cli
from tests.e2e.chat_mock import MockChat, Reply, Request, Steps, call, say
from tests.e2e.claude_cli import Unavailable
from tests.e2e.harness import Harness
from tests.e2e.mock_api import Steps as ClaudeSteps
from tests.e2e.mock_api import call as claude_call

pytestmark = pytest.mark.e2e

FILE = "src/ledger/reconcile.py"
FAILING = "python3 tests/test_reconcile.py"
COMMIT = "git add -A && git commit -q -m 'Reconcile ledger totals'"
CODE = "def reconcile(entries):\n    total = 0\n    for e in entries:\n        total += e\n    return total\n"
COMPRESS_TOKENS = 60_000
ROOT = "session_resume session="  # the outline's first line
CONTEXT_OPEN = "<qwen:user-prompt-submit-context>"
SEARCH_RE = re.compile(r"^\s*search: (.+)$", re.M)


def is_compaction(req: Request) -> bool:
    """Qwen's summary request asks for a ``<state_snapshot>``."""
    return "<state_snapshot>" in req.last_user_text() or any(
        "summarizes a conversation" in t for t in req.texts("user")
    )


class Scripted:
    """A mock script the test can swap between runs."""

    def __init__(self, steps: Steps) -> None:
        self.steps = steps

    def __call__(self, req: Request) -> Reply:
        reply = self.steps(req)
        reply.prompt_tokens = COMPRESS_TOKENS
        return reply


@pytest.fixture(scope="session")
def qwen() -> qwen_cli.QwenInstall:
    try:
        return qwen_cli.ensure_qwen()
    except Unavailable as exc:
        pytest.skip(f"Qwen Code unavailable: {exc}")


class QwenWorld:
    """One scenario: the harness (data root, ctxmode's venv) and a HOME of its own, whose
    ``~/.qwen/settings.json`` holds the mock's auth settings and ctxmode's hooks."""

    def __init__(self, e2e: Harness, qwen: qwen_cli.QwenInstall) -> None:
        self.e2e = e2e
        self.qwen = qwen
        self.home = (e2e.root / "qwen-home").resolve()
        self.home.mkdir()
        qwen_cli.prepare_home(self.home)
        self.script = Scripted(Steps(final="Ok.", is_compaction=is_compaction))
        self.api = MockChat(self.script, e2e.root / "qwen-requests.jsonl").__enter__()
        self.installed = self.ctxmode("install", "--host", "qwen", "--verify")
        assert "for Qwen Code: 8 hooks" in self.installed.stdout, self.installed.stdout
        assert "lookups are allowed" in self.installed.stdout, self.installed.stdout
        assert "; verified: 16 hook calls" in self.installed.stdout, self.installed.stdout

    def env(self) -> dict[str, str]:
        env = self.e2e.env()
        env = {k: v for k, v in env.items() if not k.startswith(("QWEN", "OPENAI"))}
        env.update(HOME=str(self.home), NO_PROXY="127.0.0.1,localhost")
        return env

    def ctxmode(self, *args: str) -> subprocess.CompletedProcess[str]:
        out = subprocess.run(
            [str(self.e2e.ctx.ctxmode), *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert out.returncode == 0, out.stdout + out.stderr
        return out

    def run(self, prompt: str, cwd: Path, *flags: str) -> qwen_cli.Run:
        run = qwen_cli.run_qwen(
            self.qwen, self.api.base_url, prompt, cwd=cwd, env=self.env(), flags=flags
        )
        assert run.returncode == 0, run.describe()
        assert "hook" not in run.stderr.lower() or "failed" not in run.stderr.lower(), (
            run.describe()
        )
        return run

    def stream(self, prompt: str, cwd: Path, *flags: str) -> qwen_cli.StreamRun:
        """A run in Qwen's default approval mode (see qwen_cli.run_qwen_stream)."""
        return qwen_cli.run_qwen_stream(
            self.qwen, self.api.base_url, prompt, cwd=cwd, env=self.env(), flags=flags, timeout=60
        )

    def log_errors(self) -> list[str]:
        log = self.e2e.data_root / "logs" / "ctxmode.log"
        if not log.exists():
            return []
        return [line for line in log.read_text().splitlines() if "ERROR" in line]

    def dump(self, project: Path) -> dict[str, object]:
        out = self.ctxmode("dump", "--json", "--project", str(project))
        doc: dict[str, object] = json.loads(out.stdout)
        return doc

    def close(self) -> None:
        self.api.__exit__(None, None, None)


@pytest.fixture
def world(e2e: Harness, qwen: qwen_cli.QwenInstall) -> Iterator[QwenWorld]:
    w = QwenWorld(e2e, qwen)
    try:
        yield w
    finally:
        w.close()


def _sessions(doc: dict[str, object]) -> list[dict[str, object]]:
    sessions = doc.get("sessions")
    assert isinstance(sessions, list)
    return [s for s in sessions if isinstance(s, dict)]


def _events(doc: dict[str, object]) -> list[dict[str, object]]:
    return [e for s in _sessions(doc) for e in s.get("events", []) or []]  # type: ignore[union-attr]


def _data(event: dict[str, object]) -> dict[str, object]:
    value = event["data"]
    assert isinstance(value, dict)
    return value


def _snapshots(req: Request) -> list[str]:
    """The snapshot outlines in a request's user messages (each from its first line)."""
    found = []
    for text in req.texts("user"):
        at = text.find(ROOT)
        while at != -1:
            found.append(text[at:])
            at = text.find(ROOT, at + 1)
    return found


def test_qwen_session_is_recorded_and_its_snapshot_rides_the_next_prompt_once(
    world: QwenWorld,
) -> None:
    proj = world.e2e.project("ledger")
    api = world.api
    world.script.steps = Steps(
        call("write_file", file_path=str(proj / FILE), content=CODE),
        call(
            "edit",
            file_path=str(proj / FILE),
            old_string="    total = 0\n",
            new_string="    total = 0.0\n",
        ),
        call("run_shell_command", command=FAILING, description="run the tests"),
        call("run_shell_command", command=COMMIT, description="commit"),
        final="The module is written and committed; its test file is missing.",
        is_compaction=is_compaction,
    )
    world.run("please fix the ledger module", proj, "--yolo")
    assert (proj / FILE).read_text().startswith("def reconcile(entries):\n    total = 0.0\n")
    doc = world.dump(proj)
    assert [s.get("client") for s in _sessions(doc)] == ["qwen"]
    events = _events(doc)
    writes = [_data(e)["path"] for e in events if e.get("type") in ("file_write", "file_edit")]
    assert writes == [FILE, FILE], events
    errors = [_data(e) for e in events if e.get("type") == "tool_error"]
    assert [(e["tool"], e["key"]) for e in errors] == [("run_shell_command", FAILING)], errors
    assert str(errors[0]["error"]).startswith("Exit code 2"), errors
    commits = [_data(e).get("message") for e in events if e.get("type") == "git_commit"]
    assert commits == ["Reconcile ledger totals"], events
    # The turn's final text, from Qwen's Stop hook (last_assistant_message).
    replies = [_data(e)["text"] for e in events if e.get("type") == "assistant_reply"]
    assert replies == ["The module is written and committed; its test file is missing."], events

    # /compress in a run of its own: PreCompact, PostCompact, SessionStart(compact), then
    # the process ends; nothing of it reaches a request.
    world.script.steps = Steps(final="Carrying on.", is_compaction=is_compaction)
    seen = len(api.requests)
    world.run("/compress", proj, "--yolo", "--continue")
    summaries = [r for r in api.requests[seen:] if is_compaction(r)]
    assert summaries, "Qwen sent no summary request: it did not compress"
    assert not any(_snapshots(r) for r in api.requests[seen:])

    # The next run: its first request carries the snapshot once, in the prompt's part.
    seen = len(api.requests)
    world.script.steps = Steps(
        call("read_file", file_path=str(proj / FILE)),
        final="Next: write tests/test_reconcile.py.",
        is_compaction=is_compaction,
    )
    world.run("what is left to do?", proj, "--yolo", "--continue")
    after = [r for r in api.requests[seen:] if not is_compaction(r)]
    assert len(after) >= 2, [r.last_user_text()[:80] for r in after]
    served = []
    for req in after:
        found = _snapshots(req)
        assert len(found) == 1, [t[:200] for t in req.texts("user")]
        served.append(found[0])
    first = after[0]
    part = next(t for t in first.texts("user") if ROOT in t)
    assert part.startswith(CONTEXT_OPEN), part[:300]
    snapshot = part[part.index(ROOT) :]
    # What the model reads: the outline, no escaped markup of ours.
    assert "&lt;session_resume" not in snapshot and "&lt;/" not in snapshot, snapshot
    for fact in (FILE, FAILING, "Reconcile ledger totals", "please fix the ledger module"):
        assert fact in snapshot, snapshot
    assert "compaction=1" in snapshot, snapshot
    assert first.count(ROOT) == 1 and first.count("<session_resume") == 0
    # Claimed once in the store.
    resumes = [r for s in _sessions(world.dump(proj)) for r in s.get("resumes") or []]  # type: ignore[union-attr]
    compact = [r for r in resumes if r.get("kind") == "compact"]
    assert len(compact) == 1 and compact[0].get("consumed") in (1, True), resumes
    assert world.log_errors() == []

    # Qwen's default approval mode (no --yolo). Headless `qwen PROMPT` offers no shell
    # there at all; with stream-json input Qwen offers its tools as the TUI does and waits
    # for an answer on what no rule allows. The snapshot's lookup runs as written, at once.
    search = SEARCH_RE.search(snapshot)
    assert search is not None, snapshot
    lookup = search.group(1).strip() + " reconcile"
    seen = len(api.requests)
    world.script.steps = Steps(
        call("run_shell_command", command=lookup, description="look it up"),
        final="Found it.",
        is_compaction=is_compaction,
    )
    run = world.stream("what did we do to the ledger? look it up", proj, "--continue")
    assert run.returncode == 0, run.describe()
    later = api.requests[seen:]
    assert "run_shell_command" in later[0].tool_names, later[0].tool_names
    results = [t for r in later for t in r.tool_results()]
    assert any(FILE in t and "Exit Code: 0" in t for t in results), results
    assert world.log_errors() == []


def test_qwen_and_claude_code_share_the_repository_memory(world: QwenWorld) -> None:
    """Claude Code's end snapshot reaches a new Qwen session (SessionStart's context, in its
    system prompt, as an outline), and Qwen's session a new Claude Code session."""
    e2e = world.e2e
    proj = e2e.project("handover")
    target = proj / "notes" / "plan.md"
    e2e.serve(
        ClaudeSteps(claude_call("Write", file_path=str(target), content="# plan\n"), final="Ok.")
    )
    e2e.claude_p("Write the plan file.", proj)
    world.ctxmode("config", "set", "inject_on_startup", "true")
    seen = len(world.api.requests)
    world.script.steps = Steps(
        call("write_file", file_path=str(proj / "notes" / "qwen.md"), content="# q\n"),
        final="Ok.",
        is_compaction=is_compaction,
    )
    world.run("Continue where we left off.", proj, "--yolo")
    first = world.api.requests[seen]
    system = "".join(first.texts("system"))
    assert system.count("session_resume ") == 1, system[-3000:]
    handed = system[system.index("session_resume ") :]
    assert "source=previous-session" in handed and "notes/plan.md" in handed, handed[:2000]
    assert "&lt;session_resume" not in system
    # And back: the Qwen session's work reaches a new Claude Code session.
    e2e.serve(ClaudeSteps(final="I see."))
    e2e.claude_p("What did the last session do?", proj)
    assert e2e.api is not None
    bodies = json.dumps(e2e.api.requests[0].body) if e2e.api.requests else ""
    assert "notes/qwen.md" in bodies, bodies[:3000]
    clients = sorted(str(s.get("client") or "claude_code") for s in _sessions(world.dump(proj)))
    assert clients == ["claude_code", "claude_code", "qwen"], clients
    assert world.log_errors() == []


def test_the_mock_answers_qwen_s_summary_request() -> None:
    """The script's own contract (no CLI): a summary request gets the summary."""
    steps = Steps(say("hi"), is_compaction=is_compaction)
    summary = Request(
        0,
        "/v1/chat/completions",
        {"messages": [{"role": "user", "content": "produce the <state_snapshot> XML."}]},
    )
    assert steps(summary).text.startswith("Summary:")
    turn = Request(1, "/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}]})
    assert steps(turn).text == "hi"
