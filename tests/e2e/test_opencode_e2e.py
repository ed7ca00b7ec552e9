"""End to end with the real OpenCode (``opencode-ai`` pinned from npm) against a local mock.

ctxmode is installed for OpenCode the user's way (``ctxmode install --host opencode --verify``
of the venv install.sh built) into a HOME of the scenario's own: the plugin in
``~/.config/opencode/plugin/``, the mock as the only provider in ``opencode.json``. Every
run is ``opencode run`` with OpenCode's default permissions (no ``--auto``). What these
prove: OpenCode loads the plugin and the plugin hands its events to ctxmode; a session that
writes, edits, fails a command and commits is recorded; OpenCode compacts on its own (the
mock reports a full window), the summary request carries no snapshot, and every request
after the compaction carries the same ``<session_resume>`` exactly once, claimed once in the
store, and its lookup command runs through OpenCode's ``bash`` under the default permissions;
and the repository's memory is shared with Claude Code both ways.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.e2e import chat_mock, opencode_cli
from tests.e2e.chat_mock import Call, MockChat, Reply, Request, say
from tests.e2e.claude_cli import Unavailable
from tests.e2e.harness import Harness
from tests.e2e.mock_api import Steps as ClaudeSteps
from tests.e2e.mock_api import call as claude_call

pytestmark = pytest.mark.e2e
RESUME_RE = re.compile(r"<session_resume\b.*?</session_resume>", re.S)

FILE = "src/ledger/reconcile.py"
FAILING = "python3 tests/test_reconcile.py"
CODE = "def reconcile(entries):\n    total = 0\n    for e in entries:\n        total += e\n    return total\n"
SUMMARY = "Summary: the ledger module was written and committed; its test still fails."


@pytest.fixture(scope="session")
def opencode() -> opencode_cli.OpencodeInstall:
    try:
        return opencode_cli.ensure_opencode()
    except Unavailable as exc:
        pytest.skip(f"OpenCode unavailable: {exc}")


def system(req: Request) -> str:
    return "\n".join(req.texts("system"))


def is_summary(req: Request) -> bool:
    return not req.tool_names and "summarization" in system(req)


def is_agent(req: Request) -> bool:
    return bool(req.tool_names)


class OpencodeWorld:
    """One scenario: the harness (data root, ctxmode's venv) and a HOME of its own, whose
    ``~/.config/opencode/`` holds the mock provider and ctxmode's plugin."""

    def __init__(self, e2e: Harness, opencode: opencode_cli.OpencodeInstall) -> None:
        self.e2e = e2e
        self.opencode = opencode
        self.home = (e2e.root / "opencode-home").resolve()
        self.home.mkdir()
        self.api: MockChat | None = None
        installed = self.ctxmode("install", "--host", "opencode", "--verify")
        assert "installed for OpenCode: a plugin in" in installed.stdout, installed.stdout
        assert "; verified: 7 hook calls" in installed.stdout, installed.stdout

    def env(self) -> dict[str, str]:
        return opencode_cli.hermetic_env(self.home, {"CTXMODE_HOME": str(self.e2e.data_root)})

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
            opencode_cli.prepare_home(self.home, self.api.base_url)
        self.api.script = script
        return self.api

    def run(self, prompt: str, cwd: Path, session: str | None = None) -> opencode_cli.Run:
        run = opencode_cli.run_opencode(
            self.opencode, prompt, cwd=cwd, env=self.env(), session=session
        )
        assert run.returncode == 0, run.describe()
        return run

    def dump(self, project: Path) -> dict[str, object]:
        doc: dict[str, object] = json.loads(
            self.ctxmode("dump", "--json", "--project", str(project)).stdout
        )
        return doc

    def log_errors(self) -> list[str]:
        log = self.e2e.data_root / "logs" / "ctxmode.log"
        if not log.exists():
            return []
        return [line for line in log.read_text().splitlines() if "ERROR" in line]

    def close(self) -> None:
        if self.api is not None:
            self.api.__exit__(None, None, None)
            self.api = None


@pytest.fixture
def world(e2e: Harness, opencode: opencode_cli.OpencodeInstall) -> Iterator[OpencodeWorld]:
    w = OpencodeWorld(e2e, opencode)
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


def ledger_script(project: Path) -> chat_mock.Script:
    """Write, edit, a failing test run, a commit (its reply reports a full window: OpenCode
    compacts before the next request), then two more requests after the compaction."""
    steps = iter(
        [
            chat_mock.call("write", filePath=str(project / FILE), content=CODE),
            chat_mock.call(
                "edit",
                filePath=str(project / FILE),
                oldString="    total = 0\n",
                newString="    total = 0.0\n",
            ),
            chat_mock.call("bash", command=FAILING, description="run the tests"),
            Reply(
                calls=[
                    Call(
                        "bash",
                        {
                            "command": f"git add {FILE} && git commit -qm 'Reconcile ledger totals'",
                            "description": "commit",
                        },
                    )
                ],
                prompt_tokens=opencode_cli.COMPACT_TOKENS,
            ),
            lookup_call,  # the snapshot's own lookup, as the model would run it
        ]
    )

    def script(req: Request) -> Reply:
        if is_summary(req):
            return say(SUMMARY)
        if not is_agent(req):
            return say("Ledger fix")  # the title
        step = next(steps, None)
        if step is None:
            return say("Next: write tests/test_reconcile.py.")
        return step(req) if callable(step) else step

    return script


def lookup_of(snapshot: str) -> str:
    """The command the snapshot's <errors> section gives for what it leaves out."""
    root = ElementTree.fromstring(snapshot)
    section = root.find("errors")
    lookup = section.find("lookup") if section is not None else None
    assert lookup is not None and lookup.text, snapshot
    return f"{root.findtext('search')} {lookup.text}"


def lookup_call(req: Request) -> Reply:
    found = RESUME_RE.findall(system(req))
    assert found, "no snapshot in the request after the compaction"
    return chat_mock.call("bash", command=lookup_of(found[0]), description="look it up")


def test_opencode_session_is_recorded_compacts_and_gets_its_snapshot_once(
    world: OpencodeWorld,
) -> None:
    proj = world.e2e.project("ledger")
    api = world.serve(ledger_script(proj), "opencode-requests.jsonl")
    run = world.run("please fix the ledger module", proj)
    assert (proj / FILE).read_text().startswith("def reconcile(entries):\n    total = 0.0\n")
    doc = world.dump(proj)
    sessions = _sessions(doc)
    assert [s.get("client") for s in sessions] == ["opencode"], sessions
    assert sessions[0].get("session_id") == run.session_id
    events = _events(doc)
    writes = [_data(e)["path"] for e in events if e.get("type") in ("file_write", "file_edit")]
    assert writes == [FILE, FILE], events
    errors = [_data(e) for e in events if e.get("type") == "tool_error"]
    assert [(e["tool"], e["key"]) for e in errors] == [("bash", FAILING)], events
    assert str(errors[0]["error"]).startswith("Exit code 2"), errors
    commits = [_data(e)["message"] for e in events if e.get("type") == "git_commit"]
    assert commits == ["Reconcile ledger totals"], events

    # What the model received: nothing before the compaction, none in the summary request,
    # then the same snapshot once in every request after it.
    summaries = [r for r in api.requests if is_summary(r)]
    assert len(summaries) == 1, [system(r)[:60] for r in api.requests]
    at = summaries[0].seq
    assert summaries[0].count("<session_resume") == 0
    before = [r for r in api.requests if is_agent(r) and r.seq < at]
    after = [r for r in api.requests if is_agent(r) and r.seq > at]
    assert len(before) == 4 and len(after) == 2, [(r.seq, r.tool_names[:1]) for r in api.requests]
    assert all(r.count("<session_resume") == 0 for r in before)
    found = [RESUME_RE.findall(system(r)) for r in after]
    assert all(len(f) == 1 for f in found), [system(r)[-3000:] for r in after]
    assert len({f[0] for f in found}) == 1, "another snapshot in a later request"
    snapshot = found[0][0]
    assert FILE in snapshot and FAILING in snapshot, snapshot
    assert "Reconcile ledger totals" in snapshot and "please fix the ledger module" in snapshot
    assert 'compaction="1"' in snapshot, snapshot
    assert SUMMARY in json.dumps(after[0].body), "the summary is in the history"
    # The snapshot's lookup ran through OpenCode's bash tool, under its default permissions,
    # and found what the snapshot left out: the failed command's output.
    results = after[1].tool_results()
    assert any(FAILING in r and "Exit code 2" in r for r in results), results[-1:]
    # Claimed once in the store.
    resumes = [r for s in _sessions(world.dump(proj)) for r in s.get("resumes") or []]  # type: ignore[union-attr]
    compact = [r for r in resumes if r.get("kind") == "compact"]
    assert len(compact) == 1 and compact[0].get("consumed") in (1, True), resumes
    assert world.log_errors() == []


def test_opencode_and_claude_code_share_the_repository_memory(world: OpencodeWorld) -> None:
    """Claude Code's end snapshot reaches a new OpenCode session (``inject_on_startup``: the
    plugin adds it to the system prompt), and OpenCode's end snapshot (``session.idle``) a
    new Claude Code session."""
    e2e = world.e2e
    proj = e2e.project("handover")
    target = proj / "notes" / "plan.md"
    e2e.serve(
        ClaudeSteps(claude_call("Write", file_path=str(target), content="# plan\n"), final="Ok.")
    )
    e2e.claude_p("Write the plan file.", proj)
    world.ctxmode("config", "set", "inject_on_startup", "true")

    def script(req: Request) -> Reply:
        if not is_agent(req):
            return say("Handover")
        if req.tool_turns() == 0:
            return chat_mock.call(
                "write", filePath=str(proj / "notes" / "opencode.md"), content="# o\n"
            )
        return say("Ok.")

    api = world.serve(script, "opencode-handover.jsonl")
    world.run("Continue where we left off.", proj)
    first = next(r for r in api.requests if is_agent(r))
    found = RESUME_RE.findall(system(first))
    assert len(found) == 1, system(first)[-3000:]
    assert 'source="previous-session"' in found[0] and "notes/plan.md" in found[0], found[0]
    # And back: OpenCode's session went idle (SessionEnd) with an end snapshot.
    e2e.serve(ClaudeSteps(final="I see."))
    e2e.claude_p("What did the last session do?", proj)
    assert e2e.api is not None
    bodies = json.dumps(e2e.api.requests[0].body) if e2e.api.requests else ""
    assert "notes/opencode.md" in bodies, bodies[:3000]
    clients = sorted(str(s.get("client") or "claude_code") for s in _sessions(world.dump(proj)))
    assert clients == ["claude_code", "claude_code", "opencode"], clients
    assert world.log_errors() == []


def test_opencode_history_is_imported_as_the_hooks_would_have_recorded_it(
    world: OpencodeWorld,
) -> None:
    """With the hooks off (``CTXMODE_DISABLE=1``: the plugin is loaded, ctxmode does
    nothing), a session that writes, fails a command, commits and is compacted leaves the
    store empty; ``ctxmode import --client opencode`` then reads it back from OpenCode's own
    database, read-only, and a second import adds nothing."""
    proj = world.e2e.project("history")
    steps = iter(
        [
            chat_mock.call("write", filePath=str(proj / FILE), content=CODE),
            chat_mock.call("bash", command=FAILING, description="run the tests"),
            Reply(
                calls=[Call("bash", {"command": f"git add {FILE} && git commit -qm 'Reconcile'"})],
                prompt_tokens=opencode_cli.COMPACT_TOKENS,
            ),
        ]
    )

    def script(req: Request) -> Reply:
        if is_summary(req):
            return say(SUMMARY)
        if not is_agent(req):
            return say("Ledger fix")
        step = next(steps, None)
        return step if step is not None else say("Next: write tests/test_reconcile.py.")

    world.serve(script, "opencode-history.jsonl")
    env = dict(world.env(), CTXMODE_DISABLE="1")
    run = opencode_cli.run_opencode(
        world.opencode, "please fix the ledger module", cwd=proj, env=env
    )
    assert run.returncode == 0, run.describe()
    nothing = subprocess.run(
        [str(world.e2e.ctx.ctxmode), "dump", "--json", "--project", str(proj)],
        env=world.env(), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert nothing.returncode != 0 or not json.loads(nothing.stdout)["sessions"], nothing.stdout
    share = world.home / ".local" / "share" / "opencode"
    # The database and its WAL stay as OpenCode left them (the -shm is SQLite's shared
    # index of readers, which any reader marks).
    files = ("opencode.db", "opencode.db-wal")
    before = {n: (share / n).read_bytes() for n in files if (share / n).exists()}
    first = json.loads(
        world.ctxmode("import", "--json", "--project", str(proj), "--client", "opencode").stdout
    )
    assert (first["files"], first["compactions"], first["replayed"]) == (1, 1, 1), first
    assert {n: (share / n).read_bytes() for n in files if (share / n).exists()} == before
    (session,) = _sessions(world.dump(proj))
    assert session.get("session_id") == run.session_id and session.get("client") == "opencode"
    events = _events(world.dump(proj))
    assert [_data(e)["path"] for e in events if e.get("type") == "file_write"] == [FILE]
    errors = [_data(e) for e in events if e.get("type") == "tool_error"]
    assert [(e["key"], str(e["error"])[:11]) for e in errors] == [(FAILING, "Exit code 2")]
    assert [_data(e)["message"] for e in events if e.get("type") == "git_commit"] == ["Reconcile"]
    prompts = [_data(e)["text"] for e in events if e.get("type") == "user_prompt"]
    assert prompts and "please fix the ledger module" in str(prompts[0]), prompts
    compactions = session.get("compactions")
    assert isinstance(compactions, list) and len(compactions) == 1, compactions
    assert compactions[0]["summary"] == SUMMARY and compactions[0]["origin"] == "import"
    again = json.loads(
        world.ctxmode("import", "--json", "--project", str(proj), "--client", "opencode").stdout
    )
    assert again["events_added"] == 0, again
