"""``ctxmode import`` of a transcript recorded on another system (Windows) and read here.

Its records' ``cwd`` (``C:\\Users\\x\\proj``) names no folder on Linux: taken as a relative
path it would be resolved against the folder the import runs in and file the sessions into
whatever repository that is. They go to a store of their own instead, keyed as ctxmode on
Windows keys that path.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from ctxmode import importer
from tests.helpers import cli
from tests.test_import import copy_transcripts, session_file, session_ids

WINDOWS_CWD = "C:\\Users\\x\\proj"


@pytest.mark.skipif(os.sep == "\\", reason="a Windows path is no foreign path on Windows")
def test_a_windows_transcript_gets_a_store_of_its_own(
    tmp_path: Path, project: Path, data_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = copy_transcripts(tmp_path)
    plain = session_file(claude, "plain")
    plain.write_text(plain.read_text().replace('"/home/dev/proj"', json.dumps(WINDOWS_CWD)))
    monkeypatch.chdir(project)  # a repository: the import must not file the session here
    result = cli("import", "--json", str(plain), env={"CLAUDE_CONFIG_DIR": str(claude)})
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["events_added"] > 3 and summary["stores"] == 1, summary

    key, store = importer.locate(WINDOWS_CWD, os.environ)
    assert key == "c:/users/x/proj"
    assert store == importer.locate("c:/Users/X/proj/", os.environ)[1]  # one project
    assert store != importer.locate(str(project), os.environ)[1]
    assert [p.name for p in (data_root / "sessions").glob("*.db")] == [os.path.basename(store)]
    with sqlite3.connect(store) as conn:
        meta = conn.execute("SELECT session_id, project_dir, cwd, worktree FROM session_meta")
        assert meta.fetchall() == [(session_ids()["plain"], key, WINDOWS_CWD, None)]
        (count,) = conn.execute("SELECT COUNT(*) FROM session_events").fetchone()
    assert count == summary["events_added"]
    again = json.loads(cli("import", "--json", str(plain)).output)
    assert again["events_added"] == 0 and again["unchanged"] == 1


@pytest.mark.skipif(os.sep == "\\", reason="a Windows path is no foreign path on Windows")
@pytest.mark.parametrize("named", [WINDOWS_CWD, "c:/users/X/proj/"])
def test_the_cli_reads_a_windows_transcripts_store_by_its_path(
    tmp_path: Path, project: Path, data_root: Path, monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    """``--project C:\\…`` names the store the import gave that path, not a folder of that
    name under the working directory (where nothing was ever recorded)."""
    claude = copy_transcripts(tmp_path)
    plain = session_file(claude, "plain")
    plain.write_text(plain.read_text().replace('"/home/dev/proj"', json.dumps(WINDOWS_CWD)))
    monkeypatch.chdir(project)
    assert (
        cli("import", "--json", str(plain), env={"CLAUDE_CONFIG_DIR": str(claude)}).exit_code == 0
    )
    sessions = cli("sessions", "--json", "--project", named)
    assert sessions.exit_code == 0, sessions.output
    assert session_ids()["plain"] in sessions.output
    found = cli("search", "--project", named, "--json", "--session", session_ids()["plain"])
    assert found.exit_code == 0, found.output
    assert json.loads(found.output), found.output


def test_a_cwd_that_is_no_absolute_path_is_no_project(tmp_path: Path, data_root: Path) -> None:
    claude = copy_transcripts(tmp_path)
    plain = session_file(claude, "plain")
    plain.write_text(plain.read_text().replace('"/home/dev/proj"', '"proj"'))
    assert importer.locate("proj", os.environ) == ("", "")
    result = cli("import", "--json", str(plain), env={"CLAUDE_CONFIG_DIR": str(claude)})
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["events_added"] == 0
    assert not list(data_root.glob("sessions/*.db"))


@pytest.mark.parametrize(
    ("cwd", "foreign"),
    [
        ("C:\\Users\\x\\proj", True),
        ("c:/Users/x/proj", True),
        ("\\\\server\\share\\proj", True),
        ("/home/x/proj", False),
        ("C:", False),
        ("proj", False),
    ],
)
def test_foreign_cwd(cwd: str, foreign: bool) -> None:
    if os.sep == "\\":
        pytest.skip("a Windows path is no foreign path on Windows")
    assert (importer.foreign_cwd(cwd) is not None) == foreign
