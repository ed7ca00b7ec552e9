"""Every command: a bad value is a one-line usage error (exit 2), never a traceback;
the shared options mean the same everywhere; the output speaks one vocabulary.

Issue 13, items 6 and 12. The table below feeds each command of ``ctxmode`` the values
that used to end in a traceback, a silent empty answer or a wrong one: an unknown or
ambiguous session, unknown categories, malformed and far-away dates, zero, negative and
huge numbers. A store that cannot be read is a runtime error instead: exit 1, one line.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ctxmode import paths
from ctxmode.cli import commands, main
from ctxmode.cli.common import MAX_LIMIT, parse_since
from ctxmode.events import CATEGORIES, SessionEvent, make
from ctxmode.store import Store, iso_utc

HUGE = str(10**30)
NOW = time.time()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store with sessions abc-1, abc-2 (a shared prefix) and zzz-3; abc-1 is a day old."""
    path = tmp_path / "proj"
    (path / ".git").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    with Store.open(paths.store_path(str(path), os.environ)) as store:
        for sid, age in (("abc-1", 86400.0), ("abc-2", 60.0), ("zzz-3", 30.0)):
            store.add_events(
                sid,
                [
                    make("user_prompt", {"text": f"prompt of {sid}"}),
                    make("file_edit", {"path": f"src/{sid}.py"}),
                    make("git_commit", {"message": f"commit of {sid}"}),
                ],
                source_hook="PostToolUse",
                project_dir=str(path),
                now=iso_utc(NOW - age),
            )
        store.save_resume("zzz-3", "<session_resume/>", 3, kind="end")
    return path


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def assert_usage_error(result: Result, fragment: str) -> None:
    lines = result.output.splitlines()
    errors = [line for line in lines if line.startswith("Error:")]
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert len(errors) == 1, result.output
    assert fragment in errors[0], errors[0]


# (command, args, a fragment of the one Error line). {P} is the project option.
BAD: list[tuple[str, list[str], str]] = [
    ("dump", ["--session", "nope"], "Invalid value for '--session': no session 'nope' in "),
    ("dump", ["--session", "abc"], "'abc' is the start of 2 session ids (abc-2, abc-1)"),
    ("dump", ["--since", "yesterday"], "'yesterday' is neither a duration"),
    ("dump", ["--since", "2026-13-45"], "'2026-13-45' is neither a duration"),
    ("dump", ["--since", "-3d"], "'-3d' is neither a duration"),
    ("dump", ["--category", "files"], "'files' is not one of 'file', 'rule', 'cwd'"),
    ("dump", ["--limit", "0"], "0 is not in the range 1<=x<=1000000"),
    ("dump", ["--limit", "-5"], "-5 is not in the range 1<=x<=1000000"),
    ("dump", ["--limit", HUGE], f"{HUGE} is not in the range 1<=x<=1000000"),
    ("dump", ["--limit", "lots"], "'lots' is not a valid integer"),
    ("dump", ["--json", "--jsonl"], "choose one of --json and --jsonl"),
    ("search", ["x", "--session", "nope"], "no session 'nope' in "),
    ("search", ["x", "--session", "abc"], "'abc' is the start of 2 session ids"),
    ("search", ["x", "--since", "soon"], "'soon' is neither a duration"),
    ("search", ["x", "--limit", HUGE], "is not in the range 1<=x<=1000000"),
    ("search", ["x", "--limit", "0"], "0 is not in the range 1<=x<=1000000"),
    ("search", ["x", "--category", "nope"], "'nope' is not one of 'file'"),
    ("search", ["x", "--type", "nope"], "'nope' is not one of"),
    ("search", [], "give a QUERY"),
    ("stats", ["--session", "nope"], "Invalid value for '--session': no session 'nope' in "),
    ("stats", ["--session", "abc"], "'abc' is the start of 2 session ids"),
    ("sessions", ["--limit", "3"], "No such option '--limit'"),
    ("show-snapshot", ["nope"], "Invalid value for 'SESSION': no session 'nope' in "),
    ("show-snapshot", ["abc"], "'abc' is the start of 2 session ids"),
    ("show-snapshot", ["--seq", "0"], "0 is not in the range 1<=x<=1000000"),
    ("show-snapshot", ["--seq", HUGE], "is not in the range 1<=x<=1000000"),
    ("show-snapshot", ["--kind", "middle"], "'middle' is not one of 'compact', 'end'"),
    ("purge", ["--session", "nope"], "Invalid value for '--session': no session 'nope' in "),
    ("purge", ["--session", "abc"], "'abc' is the start of 2 session ids"),
    ("purge", ["--older-than", "-1"], "-1 is not a number of days >= 0"),
    ("purge", ["--older-than", "nan"], "nan is not a number of days >= 0"),
    ("purge", ["--older-than", "1e400"], "inf is not a number of days >= 0"),
    ("purge", ["--session", "abc-1", "--older-than", "3"], "choose one of --session"),
    ("bench", ["--runs", "0"], "0 is not in the range 1<=x<=10000"),
    ("bench", ["--runs", HUGE], "is not in the range 1<=x<=10000"),
    ("bench", ["--runs", "-1"], "-1 is not in the range 1<=x<=10000"),
    ("config", ["set", "snapshot_budget", HUGE], f"snapshot_budget must be 1024-9000, not {HUGE}"),
    ("config", ["set", "retention_days", "-5"], "retention_days must be at least 1, not -5"),
    ("config", ["set", "startup_max_age_hours", "nan"], "takes a whole number, not 'nan'"),
    ("config", ["set", "inject_on_startup", "maybe"], "takes true/false"),
    ("config", ["get", "nope"], "unknown option 'nope'"),
    ("config", ["unset", "nope"], "unknown option 'nope'"),
    ("doctor", ["--verbose"], "No such option '--verbose'"),
    ("install", ["--user", "--local", "/tmp"], "choose one scope, not --user and --local"),
    ("uninstall", ["--user", "--project", "/tmp"], "choose one scope, not --user and --project"),
    ("demo", ["--quiet", "--loud"], "No such option '--loud'"),
    ("view", ["--session", "nope"], "Invalid value for '--session': no session 'nope' in "),
    ("view", ["--session", "abc"], "'abc' is the start of 2 session ids"),
    ("statusline", ["--then"], "Option '--then' requires an argument"),
    ("import", ["--since", "soon"], "is neither a duration"),
    ("import", ["--since", "-3"], "'-3' is not a number of days >= 0"),
    ("import", ["--all", "--project", "/tmp"], "give --project DIR or --all, not both"),
    ("import", ["/nonexistent/x.jsonl"], "does not exist"),
]
# The commands that take --project DIR (for the store of this test's project).
WITH_PROJECT = {"dump", "search", "stats", "sessions", "show-snapshot", "purge", "doctor", "view"}


def test_the_table_covers_every_command() -> None:
    assert {command for command, _, _ in BAD} == set(commands.COMMANDS)


@pytest.mark.parametrize(("command", "args", "fragment"), BAD, ids=lambda v: str(v)[:40])
def test_bad_values_are_one_line_usage_errors(
    project: Path, command: str, args: list[str], fragment: str
) -> None:
    where = ["--project", str(project)] if command in WITH_PROJECT else []
    assert_usage_error(invoke(command, *args, *where), fragment)


# Extreme but valid: they must work, not crash.
EXTREME: list[list[str]] = [
    ["dump", "--since", "9" * 400 + "d"],  # longer ago than the clock: everything
    ["dump", "--since", "0001-01-01"],
    ["dump", "--since", "9999-12-31T23:59:59-14:00"],
    ["dump", "--limit", str(MAX_LIMIT)],
    ["search", "prompt", "--since", "99999999999999d"],
    ["search", "prompt", "--limit", str(MAX_LIMIT)],
    ["purge", "--older-than", "1e300", "--yes"],
]


@pytest.mark.parametrize("args", EXTREME, ids=lambda v: " ".join(v)[:40])
def test_extreme_values_work(project: Path, args: list[str]) -> None:
    result = invoke(*args, "--project", str(project))
    assert result.exit_code == 0, result.output
    assert result.exception is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("9" * 400 + "d", "1970-01-01T00:00:00.000Z"),
        ("100000000000000000d", "1970-01-01T00:00:00.000Z"),
        ("0001-01-01", "1970-01-01T00:00:00.000Z"),
        ("9999-12-31T23:59:59-14:00", "9999-12-31T23:59:59.000Z"),
    ],
)
def test_since_stays_inside_the_stored_time_format(text: str, expected: str) -> None:
    assert parse_since(text, now=NOW) == expected


# ---------------------------------------------------------------- runtime errors: exit 1


@pytest.mark.parametrize(
    "args",
    [
        ["dump"],
        ["dump", "--json"],
        ["search", "x"],
        ["stats"],
        ["sessions"],
        ["show-snapshot"],
        ["purge", "--session", "abc-1"],
    ],
)
def test_a_corrupt_store_is_one_line_and_exit_1(project: Path, args: list[str]) -> None:
    store = paths.store_path(str(project), os.environ)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(store + suffix):
            os.unlink(store + suffix)
    with open(store, "r+b") as handle:  # a valid header, garbage pages
        handle.seek(100)
        handle.write(os.urandom(8000))
    result = invoke(*args, "--project", str(project))
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output


@pytest.mark.parametrize("args", [["dump"], ["search", "x"], ["stats"], ["show-snapshot"]])
def test_a_missing_store_is_one_line_and_exit_1(tmp_path: Path, args: list[str]) -> None:
    result = invoke(*args, "--project", str(tmp_path))
    assert result.exit_code == 1
    assert result.output.startswith("Error: no ctxmode store for ")
    assert len(result.output.splitlines()) == 1


# ---------------------------------------------------------------- dump's options


def _dump(project: Path, *args: str) -> dict[str, Any]:
    result = invoke("dump", "--json", "--project", str(project), *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def test_dump_session_takes_a_unique_prefix(project: Path) -> None:
    document = _dump(project, "--session", "zzz")
    assert [s["session_id"] for s in document["sessions"]] == ["zzz-3"]


def test_dump_since_takes_the_forms_search_takes(project: Path) -> None:
    recent = _dump(project, "--since", "2h")
    counts = {s["session_id"]: len(s["events"]) for s in recent["sessions"]}
    assert counts == {"abc-1": 0, "abc-2": 3, "zzz-3": 3}
    # An ISO time with an offset is converted to UTC, not compared as text.
    hour_ago = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(NOW - 3600))
    assert _dump(project, "--since", hour_ago) == recent


def test_dump_category_and_limit(project: Path) -> None:
    document = _dump(project, "--category", "git", "--limit", "1")
    for session in document["sessions"]:
        assert [e["type"] for e in session["events"]] == ["git_commit"]
    newest = _dump(project, "--session", "abc-2", "--limit", "2")["sessions"][0]["events"]
    assert [e["type"] for e in newest] == ["file_edit", "git_commit"]
    assert set(CATEGORIES) >= {"git", "file"}


def test_dump_resumes_carry_their_state(project: Path) -> None:
    [resume] = _dump(project, "--session", "zzz-3")["sessions"][0]["resumes"]
    assert (resume["state"], resume["consumed"]) == ("unclaimed", False)


def test_dump_json_data_is_an_object_once_decoded(project: Path) -> None:
    """Format 2: an event's ``data`` is its JSON object, decoded with the document (no
    second ``json.loads``); data that holds no object stays the stored text."""
    plain = SessionEvent("user_prompt", "prompt", 1, "plain text, not JSON")
    cut = SessionEvent("tool_error", "error", 2, '{"error": "cut sh')  # a broken object
    with Store.open(paths.store_path(str(project), os.environ)) as store:
        store.add_events(
            "zzz-3",
            [plain, cut],
            source_hook="PostToolUse",
            project_dir=str(project),
            now=iso_utc(NOW),
        )
    document = _dump(project, "--session", "zzz-3")
    assert document["format"] == 2
    data = [e["data"] for e in document["sessions"][0]["events"]]
    assert data == [
        {"text": "prompt of zzz-3"},
        {"path": "src/zzz-3.py"},
        {"message": "commit of zzz-3"},
        "plain text, not JSON",
        '{"error": "cut sh',
    ]
    lines = invoke("dump", "--jsonl", "--project", str(project), "--session", "zzz-3")
    rows = [json.loads(line) for line in lines.output.splitlines()]
    assert [(row["format"], row["session_id"], row["data"]) for row in rows] == [
        (2, "zzz-3", value) for value in data
    ]
    # The text listing shows the data as stored.
    text = invoke("dump", "--project", str(project), "--session", "zzz-3").output
    assert '{"path":"src/zzz-3.py"}' in text and "plain text, not JSON" in text


# ---------------------------------------------------------------- one vocabulary (item 12)


def _store(project: Path) -> Store:
    return Store.open(paths.store_path(str(project), os.environ))


def test_one_event_one_snapshot_one_word_each(project: Path) -> None:
    """One session with one event; a claimed, a retired and an unclaimed snapshot: the
    human output of every command counts in the singular and names each state alike."""
    with _store(project) as store:
        store.add_events(
            "one-4",
            [make("file_read", {"path": "a.py"})],
            source_hook="PostToolUse",
            project_dir=str(project),
        )
        store.save_resume("one-4", "<session_resume/>", 1, kind="compact")
        store.claim_resume(claimed_by="abc-2", session_id="one-4", kind="compact")
        store.save_resume("one-4", "<session_resume/>", 1, kind="end")
        store.discard_unclaimed("one-4", reason="superseded", kind="end")
        store.save_resume("one-4", "<session_resume/>", 1, kind="end")
    outputs = {
        " ".join(args): invoke(*args, "--project", str(project)).output
        for args in (
            ["dump"],
            ["dump", "--session", "one"],
            ["sessions"],
            ["stats"],
            ["stats", "--session", "one"],
            ["show-snapshot", "one", "--kind", "compact"],
            ["show-snapshot", "one", "--kind", "end", "--seq", "1"],
            ["show-snapshot", "one", "--kind", "end", "--seq", "2"],
            ["doctor"],
        )
    }
    everything = "\n".join(outputs.values())
    for wrong in (
        "1 events",
        "1 snapshots",
        "1 sessions",
        "1 compactions",
        "1 bytes",
        "(s)",
        "consumed",
        "discarded",
        "claimed by superseded",
        "claimed by clear",
    ):
        assert wrong not in everything, (wrong, everything)
    dump = outputs["dump --session one"]
    assert "1 event, 1 compaction\n" in dump
    assert "snapshot #1 (compact, 17 bytes, 1 event): claimed by session abc-2" in dump
    assert "snapshot #1 (end, 17 bytes, 1 event): retired (superseded)" in dump
    assert "snapshot #2 (end, 17 bytes, 1 event): unclaimed" in dump
    assert "; claimed by session abc-2 " in outputs["show-snapshot one --kind compact"]
    assert "; retired (superseded) " in outputs["show-snapshot one --kind end --seq 1"]
    assert "; unclaimed: a later session" in outputs["show-snapshot one --kind end --seq 2"]
    stats = outputs["stats --session one"]
    assert "snapshots 3 stored, 1 claimed, 1 retired unread" in stats
    assert "overall (1 session)" in stats
    assert "1 event in 1 session" not in outputs["stats"]  # four sessions, ten events
    assert ", 10 events in 4 sessions" in outputs["stats"]
    stats_json = json.loads(invoke("stats", "--json", "--project", str(project)).output)
    one = next(s for s in stats_json["sessions"] if s["session_id"] == "one-4")
    assert (one["snapshots_claimed"], one["snapshots_retired"]) == (1, 1)
    assert "snapshots_discarded" not in one
