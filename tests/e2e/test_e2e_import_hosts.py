"""End to end: ``ctxmode import`` reads back Codex and Gemini CLI sessions the hooks never saw.

The real CLI (pinned from npm) works against its local mock with ctxmode installed for it
but switched off (``CTXMODE_DISABLE=1``: a user who had the hooks off), and is compacted;
the store knows nothing of it. Then ``ctxmode import --project --client`` reads the history
the client itself wrote (Codex's rollout, Gemini's chat recording) into that fresh store,
and ``ctxmode dump --json`` shows the session under its own id: the prompts, the file
written, the failing command with its exit code and error, the compaction with the
client's summary and the snapshot ctxmode would have handed over then. A second import adds
nothing.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import codex_cli, gemini_cli
from tests.e2e.claude_cli import Unavailable
from tests.e2e.codex_mock import MockResponses, Reply, Steps, patch, shell
from tests.e2e.gemini_mock import COMPRESS_TOKENS, call
from tests.e2e.gemini_mock import Steps as GeminiSteps
from tests.e2e.harness import Harness
from tests.e2e.test_codex_e2e import ADD, COMMIT, FAILING, CodexWorld
from tests.e2e.test_gemini_e2e import FILE, GeminiWorld, ledger_steps

pytestmark = pytest.mark.e2e

OFF = {"CTXMODE_DISABLE": "1"}


@pytest.fixture(scope="module")
def gemini() -> gemini_cli.GeminiInstall:
    try:
        return gemini_cli.ensure_gemini()
    except Unavailable as exc:
        pytest.skip(f"Gemini CLI unavailable: {exc}")


def run_import(ctxmode: Path, env: dict[str, str], project: Path, client: str) -> dict[str, Any]:
    out = subprocess.run(
        [str(ctxmode), "import", "--json", "--project", str(project), "--client", client],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0 and not out.stderr, f"ctxmode import failed:\n{out.stderr}"
    return dict(json.loads(out.stdout))


def dump(ctxmode: Path, env: dict[str, str], project: Path) -> dict[str, Any]:
    out = subprocess.run(
        [str(ctxmode), "dump", "--json", "--project", str(project)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return dict(json.loads(out.stdout))


def no_sessions(ctxmode: Path, env: dict[str, str], project: Path) -> bool:
    """The hooks were off: the project has no store, or one without sessions."""
    out = subprocess.run(
        [str(ctxmode), "dump", "--json", "--project", str(project)],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    return out.returncode != 0 or not json.loads(out.stdout)["sessions"]


def of_type(session: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e["data"] for e in session["events"] if e["type"] == kind]


def replayed(data_root: Path, session_id: str) -> list[tuple[int, str, str]]:
    """``(compact_seq, summary, replayed snapshot)`` of the session's compactions."""
    (store,) = sorted((data_root / "sessions").glob("*.db"))
    with sqlite3.connect(store) as conn:
        rows = conn.execute(
            "SELECT compact_seq, summary, replayed FROM compaction WHERE session_id = ? "
            "ORDER BY compact_seq",
            (session_id,),
        ).fetchall()
    return [(int(a), str(b), str(c)) for a, b, c in rows]


def test_codex_history_is_imported_as_the_hooks_would_have_recorded_it(
    e2e: Harness, codex: codex_cli.CodexInstall
) -> None:
    world = CodexWorld(e2e, codex)
    proj = e2e.project("ledger")
    env = {**world.env(), **OFF}
    try:
        world.api = MockResponses(
            Steps(
                patch(ADD),
                shell(COMMIT),
                shell(FAILING),
                Reply(text="Committed; its test is missing.", input_tokens=5000),
            ),
            e2e.root / "codex-import.jsonl",
        ).__enter__()
        request = "Add the totals helper, commit it and run its tests."
        first = codex_cli.run_codex(codex, world.api.base_url, request, cwd=proj, env=env)
        assert first.returncode == 0, first.describe()
        world.api.script = Steps(final="Next: write tests/test_reconcile.py.")
        seen = len(world.api.requests)
        resumed = codex_cli.run_codex(
            codex, world.api.base_url, "what next?", cwd=proj, env=env,
            resume=first.session_id, config=("model_auto_compact_token_limit=1000",),
        )  # fmt: skip
        assert resumed.returncode == 0, resumed.describe()
        assert any(r.is_compaction for r in world.api.requests[seen:])
    finally:
        world.api.__exit__(None, None, None)
    assert no_sessions(e2e.ctx.ctxmode, world.env(), proj), "the hooks were meant off"

    summary = run_import(e2e.ctx.ctxmode, world.env(), proj, "codex")
    assert summary["files"] == 1 and summary["compactions"] == 1, summary
    assert (summary["skipped"], summary["truncated"], summary["replayed"]) == (0, 0, 1), summary
    (session,) = dump(e2e.ctx.ctxmode, world.env(), proj)["sessions"]
    assert session["session_id"] == first.session_id
    assert {e["source_hook"] for e in session["events"]} == {"import"}
    assert [d["text"] for d in of_type(session, "user_prompt")] == [request, "what next?"]
    assert [d["path"] for d in of_type(session, "file_write")] == ["src/ledger/reconcile.py"]
    assert [d["message"] for d in of_type(session, "git_commit")] == ["Reconcile ledger totals"]
    calls = [(d["command"], d.get("exit")) for d in of_type(session, "shell_call")]
    assert calls == [(COMMIT, 0), (FAILING, 2)], calls
    errors = of_type(session, "tool_error")
    assert [e["key"] for e in errors] == [FAILING] and "Exit code 2" in errors[0]["error"]
    assert session["compact_count"] == 1
    ((seq, said, snapshot),) = replayed(e2e.data_root, first.session_id)
    assert seq == 1 and said.startswith("Summary:"), said
    assert snapshot.startswith("<session_resume") and 'compaction="1"' in snapshot
    for fact in ("src/ledger/reconcile.py", "Reconcile ledger totals", FAILING):
        assert fact in snapshot, snapshot

    again = run_import(e2e.ctx.ctxmode, world.env(), proj, "codex")
    assert (again["events_added"], again["unchanged"]) == (0, 1), again


def test_gemini_history_is_imported_as_the_hooks_would_have_recorded_it(
    e2e: Harness, gemini: gemini_cli.GeminiInstall
) -> None:
    world = GeminiWorld(e2e, gemini)
    proj = e2e.project("ledger")
    env = {**world.env(), **OFF}
    try:
        api = world.serve(ledger_steps(), "gemini-import.jsonl")
        request = "please fix the ledger module"
        first = gemini_cli.run_gemini(gemini, api.base_url, request, cwd=proj, env=env)
        assert first.returncode == 0, first.describe()
        api.script = GeminiSteps(
            call("write_file", prompt_tokens=COMPRESS_TOKENS, file_path="notes.md", content="x\n"),
            call("run_shell_command", command="echo tour-ok"),
            final="Next: write tests/test_reconcile.py.",
        )
        second = gemini_cli.run_gemini(
            gemini, api.base_url, "now the notes", cwd=proj, env=env, resume=first.session_id
        )
        assert second.returncode == 0, second.describe()
        assert any("<state_snapshot>" in r.text() for r in api.requests if r.is_agent_turn)
    finally:
        world.close()
    assert no_sessions(e2e.ctx.ctxmode, world.env(), proj), "the hooks were meant off"

    summary = run_import(e2e.ctx.ctxmode, world.env(), proj, "gemini")
    # A resumed run that starts in a later minute than the first also writes a stub chat
    # file of its own (session-<that minute>-<id>.jsonl: a header and the session context);
    # its turns go on in the first file. Both are the session's: one or two files.
    assert summary["files"] in (1, 2) and summary["compactions"] == 1, summary
    assert (summary["skipped"], summary["truncated"], summary["replayed"]) == (0, 0, 1), summary
    (session,) = dump(e2e.ctx.ctxmode, world.env(), proj)["sessions"]
    assert session["session_id"] == first.session_id
    assert {e["source_hook"] for e in session["events"]} == {"import"}
    assert [d["text"] for d in of_type(session, "user_prompt")] == [request, "now the notes"]
    assert [d["path"] for d in of_type(session, "file_write")] == [FILE, "notes.md"]
    assert [d["path"] for d in of_type(session, "file_edit")] == [FILE]
    calls = [(d["command"], d.get("exit")) for d in of_type(session, "shell_call")]
    assert calls == [(FAILING, 2), ("echo tour-ok", 0)], calls
    assert [e["key"] for e in of_type(session, "tool_error")] == [FAILING]
    assert session["compact_count"] == 1
    ((seq, said, snapshot),) = replayed(e2e.data_root, first.session_id)
    assert seq == 1 and said.startswith("<state_snapshot>"), said
    assert snapshot.startswith("<session_resume") and FILE in snapshot and FAILING in snapshot
    # The reply that reported the huge usage wrote notes.md: the compression came after.
    assert "notes.md" in snapshot

    again = run_import(e2e.ctx.ctxmode, world.env(), proj, "gemini")
    # Every file read the first time (one or two, see above) is unchanged now.
    assert (again["events_added"], again["unchanged"]) == (0, summary["files"]), again
