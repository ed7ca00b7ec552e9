"""``ctxmode sessions``, ``show-snapshot`` and ``purge`` on stores built through the Store API."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxmode import paths
from ctxmode.cli import main
from ctxmode.cli.sessions import pretty_xml, title
from ctxmode.events import make
from ctxmode.store import Store, iso_utc
from tests.helpers import cli

REPO = Path(__file__).resolve().parents[1]
NOW = time.time()
OLD = "aaaa1111-0000-4000-8000-000000000001"
NEW = "bbbb2222-0000-4000-8000-000000000002"
TWIN = "bbbb3333-0000-4000-8000-000000000003"
SNAPSHOT = (
    '<session_resume session="bbbb2222" compaction="1" events="3">\n'
    "<requests>\n"
    '<prompt intent="fix">Fix the flaky login test &amp; add retries</prompt>\n'
    "</requests>\n"
    "<files_changed>\n"
    '<file path="tests/test_login.py" change="edit" count="2"/>\n'
    "</files_changed>\n"
    "</session_resume>\n"
)


def mask(text: str, *, keep_width: bool = False) -> str:
    """Relative ages change with the clock: replace them (padded, to keep columns aligned)."""
    return re.sub(
        r"\b(\d+[smhd] ago|just now)",
        lambda m: "<age>".ljust(len(m.group(0))) if keep_width else "<age>",
        text,
    )


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.setenv("COLUMNS", "120")


def store_path(project: Path) -> str:
    return paths.store_path(str(project), os.environ)


def add(store: Store, sid: str, project: Path, events: list[Any], at: float) -> None:
    store.add_events(
        sid, events, source_hook="PostToolUse", project_dir=str(project), now=iso_utc(at)
    )


@pytest.fixture
def populated(project: Path) -> str:
    """Three sessions: OLD (ten days idle, claimed snapshot), NEW and TWIN (recent)."""
    path = store_path(project)
    with Store.open(path) as store:
        add(
            store,
            OLD,
            project,
            [
                make("user_prompt", {"text": "Rename the billing module\nand update imports"}),
                make("file_edit", {"path": "billing/core.py"}),
            ],
            NOW - 10 * 86400,
        )
        store.save_resume(
            OLD, "<session_resume/>", 2, kind="compact", now=iso_utc(NOW - 10 * 86400)
        )
        store.claim_resume(claimed_by=OLD, session_id=OLD, kind="compact")
        add(
            store,
            NEW,
            project,
            [
                make(
                    "user_prompt",
                    {
                        "text": "Fix the flaky   login test & add retries; it fails "
                        "about once in twenty runs on CI since the upgrade"
                    },
                ),
                make("file_edit", {"path": "tests/test_login.py"}),
                make("file_edit", {"path": "tests/test_login.py", "summary": "retry twice"}),
            ],
            NOW - 3600,
        )
        store.save_resume(NEW, SNAPSHOT, 3, kind="compact", now=iso_utc(NOW - 1800))
        add(store, TWIN, project, [make("git_query", {"op": "status", "args": ""})], NOW - 7200)
    return path


# --------------------------------------------------------------------------- sessions


def test_sessions_lists_one_line_per_session(populated: str, project: Path) -> None:
    result = cli("sessions", "--project", str(project))
    assert result.exit_code == 0
    started_new = time.strftime("%Y-%m-%d %H:%M", time.gmtime(NOW - 3600))
    started_twin = time.strftime("%Y-%m-%d %H:%M", time.gmtime(NOW - 7200))
    started_old = time.strftime("%Y-%m-%d %H:%M", time.gmtime(NOW - 10 * 86400))
    assert mask(result.output, keep_width=True) == (
        "STARTED           LAST ACTIVE  EVENTS  COMPACT  SESSION   TITLE\n"
        f"{started_new}  <age>             3        1  bbbb2222  "
        "Fix the flaky login test & add retries; it fails about once…\n"
        f"{started_twin}  <age>             1        0  bbbb3333  (no prompt recorded)\n"
        f"{started_old}  <age>             2        1  aaaa1111  "
        "Rename the billing module and update imports\n"
    )
    assert "1h ago" in result.output and "10d ago" in result.output


def test_sessions_json(populated: str, project: Path) -> None:
    document = json.loads(cli("sessions", "--project", str(project), "--json").output)
    assert document["store"] == populated
    assert [
        (
            s["session_id"],
            s["event_count"],
            s["compact_count"],
            s["snapshots"],
            s["unclaimed_snapshots"],
            s["title"],
        )
        for s in document["sessions"]
    ] == [
        (
            NEW,
            3,
            1,
            1,
            1,
            "Fix the flaky   login test & add retries; it fails about once in "
            "twenty runs on CI since the upgrade",
        ),
        (TWIN, 1, 0, 0, 0, None),
        (OLD, 2, 1, 1, 0, "Rename the billing module\nand update imports"),
    ]


def test_sessions_without_a_store(project: Path) -> None:
    result = cli("sessions", "--project", str(project))
    assert result.output == f"No sessions recorded for {project} yet.\n"
    assert not os.path.exists(store_path(project))  # listing never creates a store


@pytest.mark.parametrize(
    ("client", "name"), [("codex", "Codex"), ("gemini", "Gemini CLI"), ("claude", "Claude Code")]
)
def test_no_sessions_of_the_client_asked_for_names_it(
    populated: str, project: Path, client: str, name: str
) -> None:
    # The store holds Claude Code sessions only: an empty answer for --client says which
    # sessions there are none of, not that nothing was recorded.
    if client == "claude":
        with Store.open(populated) as store:
            store.conn.execute("UPDATE session_meta SET client = 'codex'")
    listed = cli("sessions", "--project", str(project), "--client", client)
    assert listed.output == f"No {name} sessions recorded for {project}.\n"
    dumped = cli("dump", "--project", str(project), "--client", client)
    assert dumped.output == f"No {name} sessions recorded in {populated}.\n"


def test_no_store_with_a_client_names_it(project: Path) -> None:
    result = cli("sessions", "--project", str(project), "--client", "codex")
    assert result.output == f"No Codex sessions recorded for {project} yet.\n"


@pytest.mark.parametrize(
    ("text", "width", "expected"),
    [
        ("short", 20, "short"),
        ("  two\n\nlines  ", 20, "two lines"),
        ("abcdefghij", 10, "abcdefghij"),
        ("abcdefghijk", 10, "abcdefghi…"),
        ("word word word", 11, "word word…"),
        (None, 10, "(no prompt recorded)"),
    ],
)
def test_title(text: str | None, width: int, expected: str) -> None:
    assert title(text, width) == expected


# --------------------------------------------------------------------------- show-snapshot


def test_show_snapshot_newest_of_newest_session(populated: str, project: Path) -> None:
    result = cli("show-snapshot", "--project", str(project))
    assert result.exit_code == 0
    assert mask(result.output) == (
        f"snapshot #1 (compact) of session {NEW}: 268 bytes, 3 events, taken <age>; "
        "unclaimed: this session's next SessionStart (compact) or prompt injects it\n"
        "compaction 1: no summary recorded; the snapshot restored 2 key items: request Fix "
        "the flaky login test & add retries, file tests/test_login.py\n"
        '<session_resume session="bbbb2222" compaction="1" events="3">\n'
        "  <requests>\n"
        '    <prompt intent="fix">Fix the flaky login test &amp; add retries</prompt>\n'
        "  </requests>\n"
        "  <files_changed>\n"
        '    <file path="tests/test_login.py" change="edit" count="2" />\n'
        "  </files_changed>\n"
        "</session_resume>\n"
    )
    assert len(SNAPSHOT.encode()) == 268


def test_show_snapshot_raw_is_exact(populated: str, project: Path) -> None:
    result = cli("show-snapshot", "bbbb2", "--raw", "--project", str(project))
    assert result.output.split("\n", 1)[1] == SNAPSHOT


def test_show_snapshot_by_prefix_and_seq(populated: str, project: Path) -> None:
    result = cli("show-snapshot", "aaaa", "--seq", "1", "--project", str(project))
    assert mask(result.output) == (
        f"snapshot #1 (compact) of session {OLD}: 17 bytes, 2 events, taken <age>; "
        f"claimed by session {OLD} <age>\n"
        "compaction 1: no summary recorded; the snapshot restored 0 key items\n"
        "<session_resume />\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bbbb3"], "Error: no snapshot found in {path}\n"),
        (["bbbb2", "--seq", "2"], "Error: no snapshot (kind compact, #2) found in {path}\n"),
        (["bbbb2", "--kind", "end"], "Error: no snapshot (kind end) found in {path}\n"),
    ],
)
def test_show_snapshot_errors(populated: str, project: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["show-snapshot", *args, "--project", str(project)])
    assert result.exit_code == 1
    assert result.output == message.format(path=populated)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["bbbb"],
            f"Error: Invalid value for 'SESSION': 'bbbb' is the start of 2 session ids "
            f"({NEW}, {TWIN}): give more of it\n",
        ),
        (
            ["zzzz"],
            "Error: Invalid value for 'SESSION': no session 'zzzz' in {path} "
            "(see `ctxmode sessions`)\n",
        ),
    ],
)
def test_show_snapshot_unknown_session_is_a_usage_error(
    populated: str, project: Path, args: list[str], message: str
) -> None:
    result = CliRunner().invoke(main, ["show-snapshot", *args, "--project", str(project)])
    assert result.exit_code == 2
    assert result.output.endswith("\n\n" + message.format(path=populated))


def test_pretty_xml_leaves_unparsable_text_alone() -> None:
    assert pretty_xml("<a><b>unclosed</a>") == "<a><b>unclosed</a>"


# --------------------------------------------------------------------------- purge


def _count(path: str, sql: str, *params: object) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(sql, params).fetchone()[0])
    finally:
        conn.close()


def test_purge_session_removes_rows_fts_and_space(populated: str, project: Path) -> None:
    marker = "zebracrossing-7f3a"
    with Store.open(populated) as store:
        # Bulk, so that giving the space back is measurable.
        store.add_events(
            NEW,
            [make("file_read", {"path": f"{marker}/{i:04d}/" + "x" * 900}) for i in range(400)],
            source_hook="PostToolUse",
            project_dir=str(project),
        )
    before = (
        os.path.getsize(populated) + os.path.getsize(populated + "-wal")
        if os.path.exists(populated + "-wal")
        else os.path.getsize(populated)
    )
    assert (
        _count(populated, "SELECT count(*) FROM events_fts WHERE events_fts MATCH ?", f'"{marker}"')
        == 400
    )

    result = cli("purge", "--session", "bbbb2", "--project", str(project))
    assert result.exit_code == 0
    assert re.fullmatch(
        rf"session {NEW}: 403 events and 1 snapshot removed; "
        r"store \S+ [KM]B -> \S+ KB; \S+ [KM]?B freed\n",
        result.output,
    ), result.output

    assert _count(populated, "SELECT count(*) FROM session_events WHERE session_id = ?", NEW) == 0
    assert _count(populated, "SELECT count(*) FROM session_meta WHERE session_id = ?", NEW) == 0
    assert _count(populated, "SELECT count(*) FROM session_resume WHERE session_id = ?", NEW) == 0
    assert (
        _count(populated, "SELECT count(*) FROM events_fts WHERE events_fts MATCH ?", f'"{marker}"')
        == 0
    )
    assert (
        _count(populated, "SELECT count(*) FROM events_fts WHERE events_fts MATCH ?", '"flaky"')
        == 0
    )
    # The other sessions are intact; the file shrank and no trace of the text is left.
    assert _count(populated, "SELECT count(*) FROM session_events") == 3
    data = Path(populated).read_bytes()
    assert marker.encode() not in data
    assert b"flaky" not in data
    assert len(data) < before / 3
    assert not os.path.exists(populated + "-wal") or os.path.getsize(populated + "-wal") == 0


def test_purge_older_than(populated: str, project: Path) -> None:
    result = cli("purge", "--older-than", "7", "--project", str(project))
    assert re.fullmatch(
        r"1 session idle for more than 7 days: 2 events and 1 snapshot removed; "
        r"store \S+ \S+ -> \S+ \S+; \S+ [KM]?B freed\n",
        result.output,
    ), result.output
    assert _count(populated, "SELECT count(*) FROM session_meta WHERE session_id = ?", OLD) == 0
    assert _count(populated, "SELECT count(*) FROM session_events WHERE session_id = ?", OLD) == 0
    assert _count(populated, "SELECT count(*) FROM session_meta") == 2


def test_purge_project_asks_then_deletes_the_store(
    populated: str, project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    with Store.open(store_path(other)) as store:
        add(store, "cccc", other, [make("user_prompt", {"text": "keep me"})], NOW)
    Path(populated + ".corrupt-20261201T000000Z").write_bytes(b"junk")

    refused = CliRunner().invoke(main, ["purge", "--project", str(project)], input="n\n")
    assert refused.exit_code == 1
    assert refused.output.endswith("Aborted!\n")
    assert os.path.exists(populated)

    result = cli("purge", "--project", str(project), input="y\n")
    assert result.exit_code == 0
    assert re.search(rf"Removed the store of {re.escape(str(project))}: 2 files, ", result.output)
    assert not os.path.exists(populated)
    assert not os.path.exists(populated + ".corrupt-20261201T000000Z")
    assert os.path.exists(store_path(other))  # another project's store is not touched


def test_purge_current_project_with_bare_flag(
    populated: str, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    result = cli("purge", "--project", "--yes")
    assert result.exit_code == 0
    assert not os.path.exists(populated)


def test_purge_all(populated: str, data_root: Path) -> None:
    (data_root / "logs").mkdir()
    (data_root / "logs" / "ctxmode.log").write_text("x\n")
    (data_root / "config.json").write_text('{"retention_days": 5}')
    refused = CliRunner().invoke(main, ["purge", "--all"], input="\n")
    assert refused.exit_code == 1
    assert os.path.exists(populated)
    result = cli("purge", "--all", "--yes")
    assert re.fullmatch(
        rf"Removed 3 files \(\S+ \S+\) under {re.escape(str(data_root))}\.\n", result.output
    ), result.output
    assert sorted(p.name for p in (data_root / "sessions").iterdir()) == []
    assert not (data_root / "logs" / "ctxmode.log").exists()
    assert (data_root / "config.json").exists()  # settings are not recorded data
    assert cli("purge", "--all", "--yes").output == f"Nothing recorded under {data_root}.\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "say what to purge: --session ID, --older-than DAYS, --project [DIR] or --all"),
        (
            ["--session", "a", "--all"],
            "choose one of --session, --older-than, --all (not --session and --all)",
        ),
        (["--all", "--project"], "--all removes every project's data: leave out --project"),
        (
            ["--older-than", "-1"],
            "Invalid value for '--older-than': -1 is not a number of days >= 0",
        ),
        (
            ["--older-than", "nan"],
            "Invalid value for '--older-than': nan is not a number of days >= 0",
        ),
    ],
)
def test_purge_usage_errors(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["purge", *args])
    assert result.exit_code == 2
    assert result.output.endswith(f"Error: {message}\n")


def test_purge_nothing_recorded(project: Path) -> None:
    assert cli("purge", "--project", str(project), "--yes").output == (
        f"Nothing recorded for {project}.\n"
    )
    # A session that cannot be there is a usage error, as anywhere else.
    result = CliRunner().invoke(main, ["purge", "--session", "x", "--project", str(project)])
    assert result.exit_code == 2
    assert result.output.endswith(
        f"Error: Invalid value for '--session': no session 'x': nothing is recorded for {project}\n"
    )


# --------------------------------------------------------------------------- real processes


def test_subprocess_sessions_show_and_purge(populated: str, project: Path) -> None:
    env = {**os.environ, "TZ": "UTC"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ctxmode", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    listed = cli("sessions", "--project", str(project))
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[6] for line in listed.stdout.splitlines()[1:]] == [
        "bbbb2222",
        "bbbb3333",
        "aaaa1111",
    ]
    shown = cli("show-snapshot", "--raw", "--project", str(project))
    assert shown.stdout.split("\n", 1)[1] == SNAPSHOT
    purged = cli("purge", "--session", OLD, "--project", str(project))
    assert purged.returncode == 0, purged.stderr
    assert cli("sessions", "--project", str(project)).stdout.count("\n") == 3
