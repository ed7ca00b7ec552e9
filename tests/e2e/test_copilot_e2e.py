"""End to end with the real GitHub Copilot CLI (pinned from npm) against a local Chat mock.

ctxmode is installed for Copilot the user's way (``ctxmode install --host copilot --verify``
of the venv install.sh built) into a HOME of the scenario's own: ``~/.copilot/settings.json``,
user scope, no trust step. Copilot runs offline (``COPILOT_OFFLINE``, a custom provider at the
mock: tests/e2e/copilot_cli.py). What these prove: Copilot runs ctxmode's handlers on its
native events; a session that creates, edits, fails a command and commits is recorded (the
failure known from the ``<shellId: N completed with exit code C>`` line only); after a manual
``/compact`` (preCompact, nothing after it) the next run's model gets the
``<session_resume>`` exactly once, in Copilot's flat ``additionalContext``, claimed once in
the store; under Copilot's default permissions (no ``--allow-all-tools``) the snapshot's own
``ctxmode search`` runs (ctxmode's permissionRequest hook) while another command is still
denied; and the repository's memory is shared with Claude Code both ways.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import chat_mock, copilot_cli
from tests.e2e.chat_mock import MockChat, Reply, Request, Steps, call, say
from tests.e2e.claude_cli import Unavailable
from tests.e2e.harness import Harness
from tests.e2e.mock_api import Steps as ClaudeSteps
from tests.e2e.mock_api import call as claude_call

pytestmark = pytest.mark.e2e
RESUME_RE = re.compile(r"<session_resume\b.*?</session_resume>", re.S)
SEARCH_RE = re.compile(r"<search>(.*?)</search>", re.S)
SUMMARY_ASK = "Please create a detailed summary of the conversation so far"
DENIED = "Permission denied"

FILE = "src/ledger/reconcile.py"
FAILING = "python3 tests/test_reconcile.py"
COMMIT = "Reconcile ledger totals"
CODE = "def reconcile(entries):\n    return round(sum(entries), 2)\n"


def is_compaction(req: Request) -> bool:
    return req.last_user_text().startswith(SUMMARY_ASK)


def ledger_steps(project: Path) -> Steps:
    path = str(project / FILE)
    return Steps(
        call("create", path=path, file_text=CODE),
        call("edit", path=path, old_str="2)", new_str="2) or 0.0"),
        call("bash", command=FAILING, description="run the tests"),
        call("bash", command=f"git add -A && git commit -qm '{COMMIT}'", description="commit"),
        final="The ledger is reconciled; its test file is missing.",
        is_compaction=is_compaction,
    )


class LookupSteps:
    """The run after the compaction: the model runs the snapshot's own search (``<search>``
    plus a word), then a command ctxmode does not allow, then answers."""

    def __init__(self) -> None:
        self.lookup = ""

    def __call__(self, req: Request) -> Reply:
        if is_compaction(req):
            return say(chat_mock.SUMMARY_TEXT)
        turn = req.tool_turns()
        if turn == 0:
            text = "\n".join(req.texts())
            found = SEARCH_RE.findall(text)
            if not found:
                return say("No snapshot.")
            self.lookup = html.unescape(found[0]) + " reconcile"
            return call("bash", command=self.lookup, description="look it up")
        if turn == 1:
            return call("bash", command="touch notes.txt", description="note")
        return say("Carried on.")


@pytest.fixture(scope="session")
def copilot() -> copilot_cli.CopilotInstall:
    try:
        return copilot_cli.ensure_copilot()
    except Unavailable as exc:
        pytest.skip(f"Copilot CLI unavailable: {exc}")


class CopilotWorld:
    """One scenario: the harness (data root, ctxmode's venv) and a HOME of its own whose
    ``~/.copilot/settings.json`` holds ctxmode's hooks."""

    def __init__(self, e2e: Harness, copilot: copilot_cli.CopilotInstall) -> None:
        self.e2e = e2e
        self.copilot = copilot
        self.home = (e2e.root / "copilot-home").resolve()
        self.home.mkdir()
        self.api: MockChat | None = None
        installed = self.ctxmode("install", "--host", "copilot", "--verify")
        assert "for Copilot CLI: 6 hooks" in installed.stdout, installed.stdout
        assert "; verified: 10 hook calls" in installed.stdout, installed.stdout

    def env(self) -> dict[str, str]:
        env = self.e2e.env()
        env = {k: v for k, v in env.items() if not k.startswith(("COPILOT", "GITHUB", "GH_"))}
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

    def serve(self, script: chat_mock.Script, log: str) -> MockChat:
        if self.api is None:
            self.api = MockChat(script, self.e2e.root / log).__enter__()
        self.api.script = script
        return self.api

    def run(
        self,
        prompt: str,
        cwd: Path,
        *,
        resume: str | None = None,
        flags: tuple[str, ...] = ("--allow-all-tools",),
        max_prompt_tokens: int | None = None,
    ) -> copilot_cli.Run:
        assert self.api is not None
        run = copilot_cli.run_copilot(
            self.copilot,
            self.api.base_url,
            prompt,
            cwd=cwd,
            env=self.env(),
            resume=resume,
            flags=flags,
            max_prompt_tokens=max_prompt_tokens,
        )
        assert run.returncode == 0, run.describe()
        return run

    def session_id(self) -> str:
        return copilot_cli.session_ids(self.home)[-1]

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
def world(e2e: Harness, copilot: copilot_cli.CopilotInstall) -> Iterator[CopilotWorld]:
    w = CopilotWorld(e2e, copilot)
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


def test_copilot_session_compacts_and_gets_its_snapshot_once_under_default_permissions(
    world: CopilotWorld,
) -> None:
    proj = world.e2e.project("ledger")
    (proj / "src" / "ledger").mkdir(parents=True)
    api = world.serve(ledger_steps(proj), "copilot-requests.jsonl")
    world.run("please fix the ledger module", proj)
    session = world.session_id()
    assert (proj / FILE).read_text() == CODE.replace("2)", "2) or 0.0")
    doc = world.dump(proj)
    sessions = _sessions(doc)
    assert [(s.get("client"), s.get("session_id")) for s in sessions] == [("copilot", session)]
    events = _events(doc)
    writes = [
        (e.get("type"), _data(e)["path"])
        for e in events
        if e.get("type") in ("file_write", "file_edit")
    ]
    assert writes == [("file_write", FILE), ("file_edit", FILE)], events
    errors = [_data(e) for e in events if e.get("type") == "tool_error"]
    assert [e["key"] for e in errors] == [FAILING], events
    assert str(errors[0]["error"]).startswith("Exit code 2"), errors
    assert COMMIT in json.dumps(events), events

    # A manual compaction: preCompact stores the snapshot; nothing hands it over yet.
    seen = len(api.requests)
    world.run("/compact", proj, resume=session)
    assert any(is_compaction(r) for r in api.requests[seen:])
    assert all(r.count("<session_resume") == 0 for r in api.requests[seen:])

    # The next run, under Copilot's default permissions: the snapshot reaches the model
    # once, and its lookup runs while another command is denied.
    seen = len(api.requests)
    steps = LookupSteps()
    api.script = steps
    world.run("carry on", proj, resume=session, flags=())
    later = api.requests[seen:]
    assert len(later) == 3, [r.last_user_text()[:80] for r in later]
    snapshots = RESUME_RE.findall("\n".join(later[0].texts()))
    assert len(snapshots) == 1, "\n".join(later[0].texts())[:4000]
    snapshot = snapshots[0]
    assert FILE in snapshot and FAILING in snapshot and COMMIT in snapshot, snapshot
    for req in later[1:]:  # the same message stays in the history: still once
        assert len(RESUME_RE.findall("\n".join(req.texts()))) == 1
    results = later[2].tool_results()
    assert len(results) == 2, results
    lookup, touch = results
    assert DENIED not in lookup and "reconcile" in lookup, (steps.lookup, lookup)
    assert DENIED in touch, touch
    assert not (proj / "notes.txt").exists()
    resumes = [r for s in _sessions(world.dump(proj)) for r in s.get("resumes") or []]  # type: ignore[union-attr]
    compact = [r for r in resumes if r.get("kind") == "compact"]
    assert len(compact) == 1 and compact[0].get("consumed") in (1, True), resumes
    assert world.log_errors() == []


def test_an_automatic_compaction_hands_over_one_snapshot(world: CopilotWorld) -> None:
    """A small context window (COPILOT_PROVIDER_MAX_PROMPT_TOKENS) and a long prompt: Copilot
    compacts on its own (preCompact, trigger auto); the next run's model gets the snapshot
    once."""
    proj = world.e2e.project("auto")
    (proj / "src" / "ledger").mkdir(parents=True)
    api = world.serve(ledger_steps(proj), "copilot-auto.jsonl")
    world.run("please fix the ledger module", proj)
    session = world.session_id()
    seen = len(api.requests)
    api.script = Steps(final="Read it.", is_compaction=is_compaction)
    # Varied words: a tokenizer packs a repeated letter into few tokens.
    # Sized so that the history crosses Copilot's threshold and the prompt alone still fits.
    long = " ".join(f"entry{i} amount{i * 7} account{i * 13}" for i in range(1200))
    world.run("Here is the ledger dump: " + long, proj, resume=session, max_prompt_tokens=24000)
    assert any(is_compaction(r) for r in api.requests[seen:]), "Copilot did not compact"
    resumes = [r for s in _sessions(world.dump(proj)) for r in s.get("resumes") or []]  # type: ignore[union-attr]
    compact = [r for r in resumes if r.get("kind") == "compact"]
    assert len(compact) == 1, resumes
    seen = len(api.requests)
    api.script = Steps(final="Carried on.", is_compaction=is_compaction)
    world.run("carry on", proj, resume=session)
    later = api.requests[seen:]
    found = RESUME_RE.findall("\n".join(later[0].texts()))
    assert len(found) == 1, "\n".join(later[0].texts())[:3000]
    assert FILE in found[0] and FAILING in found[0], found[0]
    resumes = [r for s in _sessions(world.dump(proj)) for r in s.get("resumes") or []]  # type: ignore[union-attr]
    compact = [r for r in resumes if r.get("kind") == "compact"]
    assert [r.get("consumed") in (1, True) for r in compact] == [True], resumes
    assert world.log_errors() == []


def test_the_repository_scope_runs_only_in_a_trusted_folder(world: CopilotWorld) -> None:
    """``install --project DIR`` writes .github/hooks/ctxmode.json: Copilot runs it only once
    the folder is trusted (here ``--trust-folder``, one prompt-mode run)."""
    world.ctxmode("uninstall", "--host", "copilot")  # the user scope's hooks: out of the way
    proj = world.e2e.project("repo-scope")
    out = world.ctxmode("install", "--host", "copilot", "--project", str(proj))
    assert "only in a folder it trusts" in out.stdout + out.stderr, out
    world.serve(Steps(final="Hi."), "copilot-repo.jsonl")
    world.run("hello", proj)
    untrusted = subprocess.run(
        [str(world.e2e.ctx.ctxmode), "dump", "--json", "--project", str(proj)],
        env=world.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "nothing has been recorded" in untrusted.stderr, untrusted  # no hook ran
    world.run("hello again", proj, flags=("--allow-all-tools", "--trust-folder"))
    prompts = [
        _data(e).get("text") for e in _events(world.dump(proj)) if e.get("type") == "user_prompt"
    ]
    assert prompts == ["hello again"], prompts
    assert world.log_errors() == []


def test_copilot_and_claude_code_share_the_repository_memory(world: CopilotWorld) -> None:
    """Claude Code's end snapshot reaches a new Copilot session (sessionStart's context, its
    own user message), and Copilot's end snapshot a new Claude Code session."""
    e2e = world.e2e
    proj = e2e.project("handover")
    target = proj / "notes" / "plan.md"
    e2e.serve(
        ClaudeSteps(claude_call("Write", file_path=str(target), content="# plan\n"), final="Ok.")
    )
    e2e.claude_p("Write the plan file.", proj)
    world.ctxmode("config", "set", "inject_on_startup", "true")
    api = world.serve(
        Steps(
            call("create", path=str(proj / "notes" / "copilot.md"), file_text="# c\n"), final="Ok."
        ),
        "copilot-handover.jsonl",
    )
    world.run("Continue where we left off.", proj)
    text = "\n".join(api.requests[0].texts())
    found = RESUME_RE.findall(text)
    assert len(found) == 1, text[:3000]  # Copilot passes < and > as they are
    assert 'source="previous-session"' in found[0] and "notes/plan.md" in found[0], found[0]
    # And back: Copilot's session ended (sessionEnd complete) with an end snapshot.
    e2e.serve(ClaudeSteps(final="I see."))
    e2e.claude_p("What did the last session do?", proj)
    assert e2e.api is not None
    bodies = json.dumps(e2e.api.requests[0].body) if e2e.api.requests else ""
    assert "notes/copilot.md" in bodies, bodies[:3000]
    clients = sorted(str(s.get("client") or "claude_code") for s in _sessions(world.dump(proj)))
    assert clients == ["claude_code", "claude_code", "copilot"], clients
    assert world.log_errors() == []
