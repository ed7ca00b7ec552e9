"""``ctxmode import`` of Copilot CLI's own history (``~/.copilot/session-state/<id>/events.jsonl``).

The file is the one the real Copilot CLI 1.0.102 kept for the recorded session
(tests/fixtures/copilot-cli-1.0.102/events.jsonl, scripts/record_copilot_fixtures.py), moved
into the test's project: a file created and edited, a failed command (exit 2), a commit, a
``/compact``, and a command Copilot denied (never run: not imported). Imported as the hooks
would have recorded it, once however often it runs, its compaction replayed as a snapshot.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ctxmode.hosts.copilot import history
from tests.helpers import cli
from tests.hooktools import REPO

FIXTURE = REPO / "tests" / "fixtures" / "copilot-cli-1.0.102" / "events.jsonl"
RECORDED_PROJECT = "/home/dev/project"
FILE = "src/ledger/reconcile.py"
FAILING = "python3 tests/test_reconcile.py"


def session_id() -> str:
    first = json.loads(FIXTURE.read_text().splitlines()[0])
    value: str = first["data"]["sessionId"]
    return value


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    home = Path(os.environ["COPILOT_HOME"]) / "session-state" / session_id()
    home.mkdir(parents=True)
    text = FIXTURE.read_text().replace(RECORDED_PROJECT, str(folder))
    (home / "events.jsonl").write_text(text)
    return folder


def dump(project: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(cli("dump", "--project", str(project), "--json").output)
    return doc


def test_copilot_history_is_imported_as_the_hooks_would_have_seen_it(project: Path) -> None:
    result = cli("import", "--project", str(project), "--json")
    assert result.exit_code == 0, result.output
    (session,) = dump(project)["sessions"]
    assert session["session_id"] == session_id()
    assert session.get("client") == "copilot"
    events = session["events"]
    kinds = [(e["type"], json.dumps(e["data"])) for e in events]
    assert any(t == "file_write" and FILE in d for t, d in kinds), kinds
    assert any(t == "file_edit" and FILE in d for t, d in kinds), kinds
    errors = [d for t, d in kinds if t == "tool_error"]
    assert len(errors) == 1 and FAILING in errors[0] and "Exit code 2" in errors[0], errors
    assert "Reconcile ledger totals" in json.dumps(events)
    prompts = [json.loads(d).get("text") for t, d in kinds if t == "user_prompt"]
    assert prompts == ["please fix the ledger module", "carry on"], prompts
    assert "touch notes.txt" not in json.dumps(events)  # denied: it never ran
    totals = json.loads(result.output)
    # The /compact: one compaction, given the snapshot the hooks would have built then.
    assert (totals["compactions"], totals.get("replayed")) == (1, 1), totals


def test_a_second_import_adds_nothing(project: Path) -> None:
    cli("import", "--project", str(project))
    before = dump(project)
    again = json.loads(cli("import", "--project", str(project), "--json").output)
    assert again.get("events", 0) == 0, again
    assert dump(project) == before


def test_the_reader_claims_copilot_files_only(project: Path, tmp_path: Path) -> None:
    path = Path(os.environ["COPILOT_HOME"]) / "session-state" / session_id() / "events.jsonl"
    assert history.claims(str(path))
    assert history.head_cwd(str(path)) == (str(project), session_id())
    other = tmp_path / "claude.jsonl"
    other.write_text(json.dumps({"type": "user", "sessionId": "x", "cwd": "/p"}) + "\n")
    assert not history.claims(str(other))
    assert history.files(str(path.parent.parent)) == [str(path)]


def test_a_window_cut_inside_a_call_is_read_again(project: Path) -> None:
    path = Path(os.environ["COPILOT_HOME"]) / "session-state" / session_id() / "events.jsonl"
    data = path.read_bytes()
    cut = data.index(b'"tool.execution_complete"')
    cut = data.rindex(b"\n", 0, cut) + 1  # the line start of the first result
    chunk = history.read(data[:cut], path=str(path))
    assert chunk.offset < cut  # not past the call still waiting for its result
    assert chunk.offset == data.rindex(b"\n", 0, data.index(b'"tool.execution_start"')) + 1
    rest = history.read(data[chunk.offset :], path=str(path))
    names = [c.inp.tool_name for c in rest.items if hasattr(c, "inp")]
    assert names[:1] == ["create"], names
