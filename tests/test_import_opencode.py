"""``ctxmode import`` of OpenCode's own history (its SQLite database, ``opencode.db``).

The database is the one the real OpenCode 1.18.33 wrote for the recorded session
(tests/fixtures/opencode-1.18.33/history/, scripts/record_opencode_fixtures.py), copied
under the test's HOME with its project moved into the test's. What an import must do:
record the calls and prompts as the plugin's hooks would have (the same conversion, the
same extractors and masking), the compaction with its summary and a replayed snapshot,
nothing twice (again, or after the hooks captured the same calls), and never write
OpenCode's database.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from ctxmode.history import Boundary, Call
from ctxmode.hosts.opencode import history
from tests.helpers import cli
from tests.test_host_opencode import FIXTURES, RECORDED_PROJECT, hook, load, moved

SESSION = "ses_db63342a3ffeVEiWPRp9fYoLHv"  # the recorded database's session
HOOKED = "ses_db68cd557ffe0FpHqGMv4S6fZg"  # the hook fixtures' (another recording)
SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def database(project: Path, secret: bool = False) -> Path:
    """The recorded database where OpenCode keeps it under this test's HOME, moved to
    ``project``."""
    folder = Path(history.folder(os.environ))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / history.DB_NAME
    shutil.copyfile(FIXTURES / "history" / history.DB_NAME, db)
    conn = sqlite3.connect(db)
    for table, column in (("session", "directory"), ("message", "data"), ("part", "data")):
        conn.execute(
            f"UPDATE {table} SET {column} = replace({column}, ?, ?)",
            (RECORDED_PROJECT, str(project)),
        )
    if secret:
        conn.execute(
            "UPDATE part SET data = replace(data, 'please fix the ledger module', ?)",
            (f"please fix it, token {SECRET}",),
        )
    conn.commit()
    conn.close()
    return db


def sessions(project: Path) -> dict[str, dict[str, Any]]:
    doc = json.loads(cli("dump", "--project", str(project), "--json").output)
    return {s["session_id"]: s for s in doc["sessions"]}


def types(session: dict[str, Any]) -> list[str]:
    return [e["type"] for e in session["events"]]


def test_the_database_is_imported_as_the_hooks_would_have_recorded_it(project: Path) -> None:
    db = database(project)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    result = json.loads(cli("import", "--project", str(project), "--json").output)
    assert result["files"] == 1 and result["compactions"] == 1 and result["unknown"] == 0
    ledger = sessions(project)[SESSION]
    assert ledger["client"] == "opencode"
    events = {e["type"]: e["data"] for e in ledger["events"]}
    assert events["file_write"]["path"] == "src/ledger/reconcile.py"
    assert events["file_edit"]["path"] == "src/ledger/reconcile.py"
    assert events["git_commit"]["message"] == "Reconcile ledger totals"
    errors = [e["data"] for e in ledger["events"] if e["type"] == "tool_error"]
    assert any(e["error"].startswith("Exit code 2") for e in errors)
    assert any("Could not find oldString" in e["error"] for e in errors)
    prompts = [e["data"]["text"] for e in ledger["events"] if e["type"] == "user_prompt"]
    assert prompts == ['"please fix the ledger module"', '"now the tour please"']
    (compaction,) = ledger["compactions"]
    assert compaction["trigger"] == "auto" and compaction["origin"] == "import"
    assert compaction["summary"] == (
        "Summary: the ledger module was written and committed; its test fails."
    )
    assert result["replayed"] == 1  # the snapshot of the past compaction, rebuilt
    # OpenCode's database is read, never written.
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    # Again: nothing new.
    again = json.loads(cli("import", "--project", str(project), "--json").output)
    assert again["events_added"] == 0 and again["unchanged"] == 1
    assert types(sessions(project)[SESSION]) == types(ledger)


def test_what_the_hooks_captured_is_not_imported_twice(project: Path) -> None:
    """The hooks record OpenCode's ``callID``, which the database keeps too."""
    for name in ("tool.execute.after.write.json", "tool.execute.after.edit.json"):
        payload = json.loads(json.dumps(moved(load(name), project)).replace(HOOKED, SESSION))
        hook("post_tool_use", payload, project)
    database(project)
    cli("import", "--project", str(project))
    ledger = sessions(project)[SESSION]
    assert types(ledger).count("file_write") == 1 and types(ledger).count("file_edit") == 1
    assert types(ledger).count("git_commit") == 1  # the rest came from the import


def test_a_secret_in_the_database_is_masked_before_it_is_stored(project: Path) -> None:
    database(project, secret=True)
    cli("import", "--project", str(project))
    text = json.dumps(sessions(project))
    assert SECRET not in text
    assert "[REDACTED:github-token]" in text


def test_a_session_of_another_folder_is_not_this_project_s(project: Path, tmp_path: Path) -> None:
    db = database(project)
    where = str(db.parent)
    (path,) = history.project_files(where, str(project))
    assert history.claims(path) and history.head_cwd(path) == (str(project), SESSION)
    assert history.project_files(where, str(tmp_path / "elsewhere")) == []
    assert not history.claims(str(db)) and not history.claims(str(FIXTURES / "stream.jsonl"))


def test_the_reader_leaves_a_running_tool_and_an_unwritten_summary_for_later() -> None:
    db = str(FIXTURES / "history" / history.DB_NAME)
    data = history.export(db, SESSION)
    lines = data.splitlines(keepends=True)
    # A tool still running: its message is read again next time.
    at = next(i for i, line in enumerate(lines) if b"call_000003" in line)
    running = lines[at].replace(b'"status":"completed"', b'"status":"running"')
    head = b"".join(lines[:at]) + running
    chunk = history.read(head)
    assert chunk.offset == len(b"".join(lines[:at]))
    rest = history.read(data, chunk.offset, boundaries_before=chunk.boundaries)
    first = rest.items[0]
    assert isinstance(first, Call) and first.inp.tool_use_id == "call_000003"
    # A compaction whose summary is not written yet: neither it nor its offset is taken.
    at = next(i for i, line in enumerate(lines) if history.BOUNDARY_MARK in line)
    head = b"".join(lines[: at + 1])
    chunk = history.read(head)
    assert chunk.offset == len(b"".join(lines[:at])) and chunk.boundaries == 0
    assert not any(isinstance(item, Boundary) for item in chunk.items)
    whole = history.read(data)
    (boundary,) = [item for item in whole.items if isinstance(item, Boundary)]
    assert boundary.summary and whole.offset == len(data) and whole.boundaries == 1


def test_a_tool_or_a_summary_that_never_ended_does_not_hold_the_session_back() -> None:
    """OpenCode stopped mid-tool or mid-summary, and the session went on: the tool has no
    end (no hook fired), the compaction no summary; what follows is read."""
    db = str(FIXTURES / "history" / history.DB_NAME)
    lines = history.export(db, SESSION).splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b"call_000003" in line)
    lines[at] = lines[at].replace(b'"status":"completed"', b'"status":"running"')
    summary = next(i for i, line in enumerate(lines) if b'"summary":true' in line)
    del lines[summary]
    data = b"".join(lines)
    chunk = history.read(data)
    assert chunk.offset == len(data)
    ids = [i.inp.tool_use_id for i in chunk.items if isinstance(i, Call)]
    assert "call_000003" not in ids and "call_000005" in ids and "call_000025" in ids
    (boundary,) = [item for item in chunk.items if isinstance(item, Boundary)]
    assert boundary.summary is None and chunk.boundaries == 1


def test_a_missing_or_foreign_database_has_no_sessions(tmp_path: Path) -> None:
    assert history.files(str(tmp_path)) == []
    (tmp_path / history.DB_NAME).write_bytes(b"not a database")
    assert history.files(str(tmp_path)) == []
    assert history.head_cwd(str(tmp_path / history.DB_NAME) + "#ses_x") == ("", "")


def _transcript_check(project: Path) -> dict[str, Any]:
    checks = json.loads(cli("doctor", "--json", "--project", str(project)).output)["checks"]
    (found,) = [c for c in checks if c["name"] == "transcripts"]
    return dict(found)


def test_doctor_counts_a_session_not_imported_yet(project: Path) -> None:
    db = database(project)
    first = _transcript_check(project)
    assert first["status"] == "warn", first
    assert first["summary"].startswith("1 transcript of this project not imported")
    cli("import", "--project", str(project))
    done = _transcript_check(project)
    assert (done["status"], done["summary"]) == ("ok", "all 1 transcript of this project imported")
    # The session goes on: a new prompt makes it not all imported again, then imported.
    conn = sqlite3.connect(db)
    conn.execute(
        "INSERT INTO message (id, session_id, time_created, time_updated, data)"
        " VALUES ('msg_zz', ?, 1896534495999, 1896534495999, '{\"role\":\"user\"}')",
        (SESSION,),
    )
    conn.execute(
        "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)"
        " VALUES ('prt_zz', 'msg_zz', ?, 1896534495999, 1896534495999,"
        ' \'{"type":"text","text":"one more thing"}\')',
        (SESSION,),
    )
    conn.execute("UPDATE session SET time_updated = 1896534495999")
    conn.commit()
    conn.close()
    grown = _transcript_check(project)
    assert grown["summary"].startswith("1 transcript of this project not imported"), grown
    result = json.loads(cli("import", "--project", str(project), "--json").output)
    assert result["events_added"] == 1
    prompts = [e for e in sessions(project)[SESSION]["events"] if e["type"] == "user_prompt"]
    assert prompts[-1]["data"]["text"] == "one more thing" and len(prompts) == 3


def test_a_byte_that_is_no_utf8_spoils_a_character_not_the_session(project: Path) -> None:
    db = database(project)
    conn = sqlite3.connect(db)
    conn.text_factory = bytes
    ((pid, data),) = conn.execute(
        "SELECT id, data FROM part WHERE data LIKE '%please fix the ledger%'"
    ).fetchall()
    bad = data.replace(b"ledger module", b"ledger \xff module")
    conn.execute("UPDATE part SET data = CAST(? AS TEXT) WHERE id = ?", (bad, pid.decode()))
    conn.commit()
    conn.close()
    cli("import", "--project", str(project))
    ledger = sessions(project)[SESSION]
    prompts = [e["data"]["text"] for e in ledger["events"] if e["type"] == "user_prompt"]
    assert prompts[0] == '"please fix the ledger \ufffd module"'
    assert types(ledger).count("git_commit") == 1


def test_each_project_imports_its_own_sessions_of_the_one_database(
    project: Path, tmp_path: Path
) -> None:
    db = database(project)
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    conn = sqlite3.connect(db)
    for table, ids in (
        ("session", "id = 'ses_other', directory = :dir"),
        ("message", "id = 'o' || id, session_id = 'ses_other'"),
        ("part", "id = 'o' || id, message_id = 'o' || message_id, session_id = 'ses_other'"),
    ):
        conn.execute(f"CREATE TEMP TABLE copy AS SELECT * FROM {table}")
        conn.execute(f"UPDATE copy SET {ids}", {"dir": str(other)})
        conn.execute(f"INSERT INTO {table} SELECT * FROM copy")
        conn.execute("DROP TABLE copy")
    conn.commit()
    conn.close()
    mine = json.loads(cli("import", "--project", str(project), "--json").output)
    assert mine["files"] == 1 and list(sessions(project)) == [SESSION]
    theirs = json.loads(cli("import", "--project", str(other), "--json").output)
    assert theirs["files"] == 1 and list(sessions(other)) == ["ses_other"]
    assert types(sessions(other)["ses_other"]) == types(sessions(project)[SESSION])


def test_a_session_named_on_the_command_line_is_imported(project: Path) -> None:
    db = database(project)
    result = cli("import", "--json", f"{db}#{SESSION}")
    assert json.loads(result.output)["files"] == 1
    assert types(sessions(project)[SESSION]).count("git_commit") == 1
    missing = cli("import", f"{db}#ses_nosuch")
    assert missing.exit_code != 0 and "no such OpenCode session" in missing.output
