"""End to end: ``ctxmode import`` reads back a session the hooks never saw.

The real CLI works with ctxmode's hooks switched off (``CTXMODE_DISABLE=1``, as a user who
had them off, or before the install), is compacted, and the store knows nothing of it. Then
``ctxmode import --project`` reads the transcript the client wrote, and ``ctxmode dump
--json`` shows the session's files, commit, tasks, failure and subagent, under the
transcript's own session id; a second import adds nothing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Harness
from tests.e2e.mock_api import Steps, say
from tests.e2e.test_e2e import ERROR_LINE, events_of, work_steps

pytestmark = pytest.mark.e2e

OFF = {"CTXMODE_DISABLE": "1"}


def run_import(h: Harness, project: Path, *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [str(h.ctx.ctxmode), "import", "--json", "--project", str(project), *args],
        env=h.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and not out.stderr, f"ctxmode import failed:\n{out.stderr}"
    return dict(json.loads(out.stdout))


def test_import_reads_back_a_session_the_hooks_never_saw(e2e: Harness) -> None:
    h = e2e
    proj = h.project("history")
    steps = Steps(*work_steps(proj, "ledger"), say("Ledger has VAT; the README task is open."))
    h.serve(steps)
    request = "Add VAT to the ledger module and commit it"
    sid = h.claude_p(request, proj, env=OFF).session_id
    h.claude_p("/compact", proj, resume=sid, env=OFF)
    assert len(steps.compactions) == 1
    assert not (h.data_root / "sessions").exists() or not h.dump(proj)["sessions"], (
        "the hooks were meant to be off, yet the store has sessions"
    )

    first = run_import(h, proj)
    assert first["files"] == 2, first  # the session and its subagent
    assert first["events_added"] > 8 and first["compactions"] == 1, first
    assert first["skipped"] == 0 and first["truncated"] == 0, first

    session = h.session(proj, sid)
    assert {e["source_hook"] for e in session["events"]} == {"import"}
    writes = [e["data"]["path"] for e in events_of(session, "file_write")]
    edits = [e["data"]["path"] for e in events_of(session, "file_edit")]
    commits = [e["data"]["message"] for e in events_of(session, "git_commit")]
    created = [e["data"]["subject"] for e in events_of(session, "task_create")]
    updated = [(e["data"]["id"], e["data"]["status"]) for e in events_of(session, "task_update")]
    prompts = [e["data"]["text"] for e in events_of(session, "user_prompt")]
    assert writes == ["src/ledger.py"] and edits == ["src/ledger.py"], (writes, edits)
    assert commits == ["Add VAT to ledger"], commits
    assert created == [
        "Document the VAT rate of ledger in the README",
        "Add tests for ledger",
    ], created
    assert updated == [("2", "completed")], updated
    assert prompts == [request], prompts
    errors = events_of(session, "tool_error")
    assert len(errors) == 1 and ERROR_LINE in errors[0]["data"]["error"], errors
    assert events_of(session, "subagent"), [e["type"] for e in session["events"]]
    assert session["compact_count"] == 1, session

    again = run_import(h, proj)
    assert (again["events_added"], again["files"], again["unchanged"]) == (0, 0, 2), again
    assert len(h.session(proj, sid)["events"]) == len(session["events"])
