"""End to end with the real Gemini CLI (pinned from npm) against a local mock of its API.

ctxmode is installed for Gemini the user's way (``ctxmode install --host gemini --verify`` of
the venv install.sh built) into a HOME of the scenario's own: ``~/.gemini/settings.json``,
user scope, no trust entry. What these prove: Gemini runs ctxmode's hooks; a session that
writes, edits and fails a command is recorded (the failure known from ``Exit Code: N`` in
the tool's text only); after a compression (900,000 prompt tokens reported on the resumed
turn's first reply) the first request after it carries the ``<session_resume>`` exactly
once, appended to the summary, and so does every later request of that history, with the
same text, claimed once in the store; and the repository's memory is shared with Claude
Code and Codex sessions (end snapshots handed over both ways, ``inject_on_startup``).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import codex_cli, gemini_cli, gemini_mock
from tests.e2e.claude_cli import Unavailable
from tests.e2e.codex_mock import MockResponses
from tests.e2e.codex_mock import Steps as CodexSteps
from tests.e2e.gemini_mock import COMPRESS_TOKENS, MockGemini, Steps, call, say
from tests.e2e.harness import Harness
from tests.e2e.mock_api import Steps as ClaudeSteps
from tests.e2e.mock_api import call as claude_call
from tests.e2e.test_codex_e2e import CodexWorld

pytestmark = pytest.mark.e2e
RESUME_RE = re.compile(r"<session_resume\b.*?</session_resume>", re.S)

FILE = "src/ledger/reconcile.py"
FAILING = "python3 tests/test_reconcile.py"
CODE = "def reconcile(entries):\n    total = 0\n    for e in entries:\n        total += e\n    return total\n"


def ledger_steps() -> Steps:
    """The first run: write the module, edit it, run its (missing) test, which fails."""
    return Steps(
        call("write_file", file_path=FILE, content=CODE),
        call(
            "replace",
            file_path=FILE,
            instruction="use floats and round the total",
            old_string="    total = 0\n",
            new_string="    total = 0.0\n",
        ),
        call("run_shell_command", command=FAILING, description="run the tests"),
        final="The module is written; its test file is missing.",
    )


def compressing_steps() -> Steps:
    """The resumed run: its first reply reports 900,000 prompt tokens, so the CLI compresses
    before the next request; two more tool calls make two more requests after it."""
    return Steps(
        call("read_file", prompt_tokens=COMPRESS_TOKENS, file_path="README.md"),
        call("run_shell_command", command="echo tour-ok"),
        call("glob", pattern="**/*.py"),
        final="Next: write tests/test_reconcile.py.",
    )


@pytest.fixture(scope="session")
def gemini() -> gemini_cli.GeminiInstall:
    try:
        return gemini_cli.ensure_gemini()
    except Unavailable as exc:
        pytest.skip(f"Gemini CLI unavailable: {exc}")


class GeminiWorld:
    """One scenario: the harness (data root, ctxmode's venv) and a HOME of its own, whose
    ``~/.gemini/settings.json`` holds the mock's auth settings and ctxmode's hooks."""

    def __init__(self, e2e: Harness, gemini: gemini_cli.GeminiInstall, *scope: str) -> None:
        self.e2e = e2e
        self.gemini = gemini
        self.home = (e2e.root / "gemini-home").resolve()
        self.home.mkdir()
        gemini_cli.prepare_home(self.home)
        self.api: MockGemini | None = None
        self.installed = self.ctxmode("install", "--host", "gemini", *scope, "--verify")
        assert "for Gemini CLI: 7 hooks" in self.installed.stdout, self.installed.stdout
        assert "; verified: 14 hook calls" in self.installed.stdout, self.installed.stdout

    def env(self) -> dict[str, str]:
        env = self.e2e.env()
        env = {k: v for k, v in env.items() if not k.startswith(("GEMINI", "GOOGLE"))}
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

    def serve(self, script: gemini_mock.Script, log: str) -> MockGemini:
        if self.api is None:
            self.api = MockGemini(script, self.e2e.root / log).__enter__()
        self.api.script = script
        return self.api

    def run(self, prompt: str, cwd: Path, **kwargs: object) -> gemini_cli.Run:
        assert self.api is not None
        run = gemini_cli.run_gemini(
            self.gemini,
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
        if not log.exists():
            return []
        return [line for line in log.read_text().splitlines() if "ERROR" in line]

    def dump(self, project: Path) -> dict[str, object]:
        out = self.ctxmode("dump", "--json", "--project", str(project))
        doc: dict[str, object] = json.loads(out.stdout)
        return doc

    def close(self) -> None:
        if self.api is not None:
            self.api.__exit__(None, None, None)
            self.api = None


@pytest.fixture
def world(e2e: Harness, gemini: gemini_cli.GeminiInstall) -> Iterator[GeminiWorld]:
    w = GeminiWorld(e2e, gemini)
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


def test_gemini_session_writes_edits_fails_compresses_and_gets_its_snapshot_once(
    world: GeminiWorld,
) -> None:
    proj = world.e2e.project("ledger")
    sub = proj / "app"
    sub.mkdir()
    api = world.serve(ledger_steps(), "gemini-requests.jsonl")
    # Started in a subfolder (Gemini keeps its sessions per folder: both runs start there):
    # GEMINI_PROJECT_DIR/GEMINI_CWD name it, the store and the paths are the repository's.
    first = world.run("please fix the ledger module", sub)
    assert (sub / FILE).read_text().startswith("def reconcile(entries):\n    total = 0.0\n")
    doc = world.dump(proj)
    sessions = _sessions(doc)
    assert [s.get("client") for s in sessions] == ["gemini"], sessions
    assert sessions[0].get("session_id") == first.session_id
    events = _events(doc)
    writes = [_data(e)["path"] for e in events if e.get("type") in ("file_write", "file_edit")]
    assert writes == [f"app/{FILE}", f"app/{FILE}"], events
    errors = [_data(e) for e in events if e.get("type") == "tool_error"]
    assert [(e["tool"], e["key"]) for e in errors] == [("run_shell_command", FAILING)], events
    assert str(errors[0]["error"]).startswith("Exit code 2"), errors
    prompts = [_data(e) for e in events if e.get("type") == "user_prompt"]
    assert [p.get("text") for p in prompts] == ["please fix the ledger module"], prompts
    # The turn's final text, from Gemini's AfterAgent hook (prompt_response).
    replies = [_data(e)["text"] for e in events if e.get("type") == "assistant_reply"]
    assert replies == ["The module is written; its test file is missing."], events

    # The resumed turn: compressed before its second request (no hook says so).
    seen = len(api.requests)
    api.script = compressing_steps()
    resumed = world.run("now the fixture tour please", sub, resume=first.session_id)
    assert resumed.session_id == first.session_id
    later = api.requests[seen:]
    compressions = [r for r in later if r.is_compression]
    assert len(compressions) == 2, [(r.rpc, r.system()[:60]) for r in later]
    turns = [r for r in later if r.is_agent_turn]
    assert len(turns) == 4, [r.text()[-200:] for r in turns]
    before, after = turns[0], turns[1:]
    assert before.count("<state_snapshot>") == 0 and before.count("<session_resume") == 0
    snapshots = []
    for turn in after:
        # The summary is in the history, and the snapshot right after it, once.
        assert turn.count("<state_snapshot>") == 1, turn.text()[:3000]
        found = RESUME_RE.findall(turn.text())
        assert len(found) == 1, turn.text()[:3000]
        summary_turn = turn.texts("user")[0]
        assert summary_turn.index("</state_snapshot>") < summary_turn.index("<session_resume")
        snapshots.append(found[0])
    assert len(set(snapshots)) == 1, "each request after the compression got another snapshot"
    snapshot = snapshots[0]
    assert f"app/{FILE}" in snapshot and FAILING in snapshot, snapshot
    assert "please fix the ledger module" in snapshot, snapshot
    assert 'compaction="1"' in snapshot, snapshot
    # Claimed once in the store: one compact snapshot, handed over.
    resumes = [r for s in _sessions(world.dump(proj)) for r in s.get("resumes") or []]  # type: ignore[union-attr]
    compact = [r for r in resumes if r.get("kind") == "compact"]
    assert len(compact) == 1 and compact[0].get("consumed") in (1, True), resumes
    assert world.log_errors() == []


def test_gemini_and_claude_code_share_the_repository_memory(world: GeminiWorld) -> None:
    """Claude Code's end snapshot reaches a new Gemini session (SessionStart's context, put
    before the prompt, its < and > escaped by the CLI), and Gemini's end snapshot a new
    Claude Code session."""
    e2e = world.e2e
    proj = e2e.project("handover")
    target = proj / "notes" / "plan.md"
    e2e.serve(
        ClaudeSteps(claude_call("Write", file_path=str(target), content="# plan\n"), final="Ok.")
    )
    e2e.claude_p("Write the plan file.", proj)
    world.ctxmode("config", "set", "inject_on_startup", "true")
    api = world.serve(
        Steps(call("write_file", file_path="notes/gemini.md", content="# g\n"), final="Ok."),
        "gemini-handover.jsonl",
    )
    world.run("Continue where we left off.", proj)
    first = next(r for r in api.requests if r.is_agent_turn)
    # Gemini 0.61.0 escapes < and > in every additionalContext (HookOutput
    # .getAdditionalContext): the model reads the snapshot as &lt;session_resume…&gt;.
    text = first.text()
    assert "&lt;session_resume" in text, text[:3000]
    found = RESUME_RE.findall(text.replace("&lt;", "<").replace("&gt;", ">"))
    assert len(found) == 1, first.text()[:3000]
    assert 'source="previous-session"' in found[0] and "notes/plan.md" in found[0], found[0]
    # And back: Gemini's session ended (SessionEnd exit) with an end snapshot.
    e2e.serve(ClaudeSteps(final="I see."))
    e2e.claude_p("What did the last session do?", proj)
    assert e2e.api is not None
    bodies = json.dumps(e2e.api.requests[0].body) if e2e.api.requests else ""
    assert "notes/gemini.md" in bodies, bodies[:3000]
    clients = sorted(str(s.get("client") or "claude_code") for s in _sessions(world.dump(proj)))
    assert clients == ["claude_code", "claude_code", "gemini"], clients
    assert world.log_errors() == []


def test_the_mock_speaks_the_gemini_api() -> None:
    """The mock's own contract (no CLI): the router gets a verdict, a compression call the
    summary, an agent turn its script's reply."""
    api = MockGemini(Steps(say("hi")))
    router = gemini_mock.Request(
        0, "generateContent", "m", {"generationConfig": {"responseJsonSchema": "complexity_score"}}
    )
    text = api.answer(router)["candidates"][0]["content"]["parts"][0]["text"]
    assert json.loads(text)["complexity_score"] == 50
    summary = gemini_mock.Request(
        1,
        "generateContent",
        "m",
        {"systemInstruction": {"parts": [{"text": "a <state_snapshot>"}]}},
    )
    assert (
        api.answer(summary)["candidates"][0]["content"]["parts"][0]["text"] == gemini_mock.SUMMARY
    )
    turn = gemini_mock.Request(2, "streamGenerateContent", "m", {"contents": []})
    assert api.answer(turn)["candidates"][0]["content"]["parts"] == [{"text": "hi"}]


def test_a_gemini_session_hands_its_end_snapshot_to_a_new_codex_session(
    world: GeminiWorld, codex: codex_cli.CodexInstall
) -> None:
    proj = world.e2e.project("to-codex")
    world.serve(
        Steps(call("write_file", file_path="notes/gemini.md", content="# g\n"), final="Ok."),
        "gemini-to-codex.jsonl",
    )
    world.run("Write the notes file.", proj)
    world.ctxmode("config", "set", "inject_on_startup", "true")
    other = CodexWorld(world.e2e, codex)
    try:
        other.api = MockResponses(
            CodexSteps(final="I see the notes."), world.e2e.root / "codex.jsonl"
        ).__enter__()
        other.run("Continue where we left off.", proj)
        first = other.api.requests[0]
        found = [m for text in first.texts("developer") for m in RESUME_RE.findall(text)]
        assert len(found) == 1, list(first.texts("developer"))
        assert 'source="previous-session"' in found[0] and "notes/gemini.md" in found[0]
        clients = sorted(str(s.get("client")) for s in _sessions(world.dump(proj)))
        assert clients == ["codex", "gemini"], clients
        assert world.log_errors() == []
    finally:
        if other.api is not None:
            other.api.__exit__(None, None, None)
