"""``ctxmode search``: literal queries, filters, full output, JSON, the LIKE fallback, and
every ``<lookup>`` hint of a real snapshot run through ``sh -c`` as the model runs it."""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxmode import paths
from ctxmode.cli import main
from ctxmode.cli.search import (
    MAX_OUTPUT_BYTES,
    Block,
    data_fields,
    fold,
    parse_since,
    render,
    wrap_field,
)
from ctxmode.cli.search_lines import verdict_line
from ctxmode.cli.search_output import DETAILED_HITS
from ctxmode.events import SessionEvent, make
from ctxmode.store import SearchHit, Store, parse_iso
from tests.helpers import cli, hook_payload
from tests.hooktools import REPO, hook_env, run_hook, stream

T0 = "2026-12-02T14:00:00.000Z"


def at(minutes: int) -> str:
    """The store's time format, ``minutes`` after T0."""
    return f"2026-12-02T{14 + minutes // 60:02d}:{minutes % 60:02d}:00.000Z"


def project_store(project: Path) -> Store:
    return Store.open(paths.store_path(str(project), os.environ))


def add(store: Store, session: str, minute: int, *events: SessionEvent) -> None:
    store.add_events(
        session, list(events), source_hook="PostToolUse", project_dir="/p", now=at(minute)
    )


def masked(text: str) -> str:
    """Relative ages depend on the clock: mask them."""
    return re.sub(r"\((\d+[smhd] ago|just now)\)", "(AGE)", text)


SESSION_A = "aaaa1111-0000-4000-8000-000000000001"
SESSION_B = "bbbb2222-0000-4000-8000-000000000002"


def _fill(folder: Path) -> None:
    """The events of the ``project`` fixture, into an existing store."""
    store = project_store(folder)
    add(
        store,
        SESSION_A,
        0,
        make("user_prompt", {"text": "Fix the rounding of half cents in invoices."}),
    )
    add(store, SESSION_A, 1, make("file_read", {"path": "src/invoice/rounding.py"}))
    add(
        store,
        SESSION_A,
        2,
        make(
            "file_edit",
            {"path": "src/invoice/rounding.py", "summary": "use Decimal.quantize(ROUND_HALF_UP)"},
        ),
    )
    add(
        store,
        SESSION_A,
        3,
        make(
            "tool_error",
            {
                "tool": "Bash",
                "key": "pytest -q tests/test_rounding.py",
                "error": "AssertionError: 0.125 != 0.13\n1 failed, 4 passed",
            },
        ),
    )
    add(
        store,
        SESSION_A,
        4,
        make(
            "git_commit",
            {"message": "fix(rounding): half-up AND cents? -- closes #3", "sha": "1a2b3c4"},
        ),
    )
    add(store, SESSION_B, 60, make("file_read", {"path": "C:\\work\\legacy\\rates.csv"}))
    add(
        store,
        SESSION_B,
        61,
        make("web_search", {"query": "sqlite fts5 trigram: prefix OR substring?"}),
    )
    add(
        store,
        SESSION_B,
        62,
        make(
            "todo_write",
            {
                "todos": [
                    {"content": "Write rounding tests", "status": "in_progress"},
                    {"content": "Update CHANGELOG", "status": "pending"},
                ]
            },
        ),
    )
    add(
        store,
        SESSION_B,
        63,
        make(
            "decision",
            {"text": "Use NEAR(a b) literally: it's text; col:value is not a column filter"},
        ),
    )
    store.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with two sessions of realistic events (ids 1-9, in this order)."""
    folder = tmp_path / "proj"
    folder.mkdir()
    _fill(folder)
    return folder


def ids(result: Any) -> list[int]:
    assert result.exit_code == 0, result.output
    return [hit["id"] for hit in json.loads(result.stdout)]


# ------------------------------------------------------------------ human output


def test_full_output_of_one_match(project: Path) -> None:
    result = cli("search", "--project", str(project), "--full", "quantize")
    assert result.exit_code == 0
    assert masked(result.stdout) == (
        "[1] 2026-12-02 14:02:00 UTC (AGE) · session aaaa1111 · file/file_edit · priority 2 (high)\n"
        "    path: src/invoice/rounding.py\n"
        "    summary: use Decimal.quantize(ROUND_HALF_UP)\n"
        "\n"
        "1 match for 'quantize', best first.\n"
    )


def test_full_shows_multi_line_and_list_data_whole(project: Path) -> None:
    result = cli("search", "--project", str(project), "--full", "--limit", "6", "rounding")
    assert masked(result.stdout) == (
        "[1] 2026-12-02 14:02:00 UTC (AGE) · session aaaa1111 · file/file_edit · priority 2 (high)\n"
        "    path: src/invoice/rounding.py\n"
        "    summary: use Decimal.quantize(ROUND_HALF_UP)\n"
        "\n"
        "[2] 2026-12-02 14:01:00 UTC (AGE) · session aaaa1111 · file/file_read · priority 4 (low)\n"
        "    path: src/invoice/rounding.py\n"
        "\n"
        "[3] 2026-12-02 14:00:00 UTC (AGE) · session aaaa1111 · prompt/user_prompt · priority 1 (critical)\n"
        "    text: Fix the rounding of half cents in invoices.\n"
        "\n"
        "[4] 2026-12-02 14:04:00 UTC (AGE) · session aaaa1111 · git/git_commit · priority 1 (critical)\n"
        "    message: fix(rounding): half-up AND cents? -- closes #3\n"
        "    sha: 1a2b3c4\n"
        "\n"
        "[5] 2026-12-02 15:02:00 UTC (AGE) · session bbbb2222 · task/todo_write · priority 1 (critical)\n"
        "    todos: - content: Write rounding tests, status: in_progress\n"
        "           - content: Update CHANGELOG, status: pending\n"
        "\n"
        "[6] 2026-12-02 14:03:00 UTC (AGE) · session aaaa1111 · error/tool_error · priority 1 (critical)\n"
        "    tool: Bash\n"
        "    key: pytest -q tests/test_rounding.py\n"
        "    error: AssertionError: 0.125 != 0.13\n"
        "           1 failed, 4 passed\n"
        "\n"
        "6 matches for 'rounding', best first.\n"
    )


def test_compact_output_flags_the_matching_lines(project: Path) -> None:
    """The default: when, which session, what kind, and the lines that matched (their
    words in any of their forms), flagged with » in the indent, the text as stored; a long
    value shows its matching line."""
    result = cli("search", "--project", str(project), "--limit", "6", "rounding")
    assert masked(result.stdout) == (
        "[1] 2026-12-02 14:02 · session aaaa1111 · file_edit\n"
        "  » path: src/invoice/rounding.py\n"
        "  » summary: use Decimal.quantize(ROUND_HALF_UP)\n"
        "\n"
        "[2] 2026-12-02 14:01 · session aaaa1111 · file_read\n"
        "  » path: src/invoice/rounding.py\n"
        "\n"
        "[3] 2026-12-02 14:00 · session aaaa1111 · user_prompt\n"
        "  » text: Fix the rounding of half cents in invoices.\n"
        "\n"
        "[4] 2026-12-02 14:04 · session aaaa1111 · git_commit\n"
        "  » message: fix(rounding): half-up AND cents? -- closes #3\n"
        "    sha: 1a2b3c4\n"
        "\n"
        "[5] 2026-12-02 15:02 · session bbbb2222 · todo_write\n"
        "  » todos: - content: Write rounding tests, status: in_progress …\n"
        "\n"
        "[6] 2026-12-02 14:03 · session aaaa1111 · tool_error\n"
        "    tool: Bash\n"
        "  » key: pytest -q tests/test_rounding.py\n"
        "    error: AssertionError: 0.125 != 0.13 … (2 lines)\n"
        "\n"
        "6 matches, best first. Every field: --full.\n"
    )


def one_call(project: Path, command: str, lines: list[str]) -> None:
    """A store for ``project`` holding one successful shell call that printed ``lines``."""
    store = project_store(project)
    output = "\n".join(lines)
    add(store, SESSION_A, 0, make("shell_call", {"command": command, "exit": 0, "output": output}))
    store.close()


def test_compact_output_cuts_long_values_around_the_match(tmp_path: Path) -> None:
    lines = [f"line {n}: nothing to see" for n in range(60)]
    lines[40] = "  ➜  Local:   http://localhost:5173/ " + "x" * 300
    one_call(tmp_path, "npm run dev", lines)
    out = cli("search", "--project", str(tmp_path), "which port is localhost on").stdout
    assert "    command: npm run dev\n" in out
    assert "  » output: …   ➜  Local:   http://localhost:5173/ xxx" in out
    assert "line 7" not in out  # the lines that did not match are left out
    assert len(out.encode()) < 700
    full = cli("search", "--project", str(tmp_path), "--full", "localhost").stdout
    assert "line 7: nothing to see" in full and "»" not in full


def test_compact_output_shows_the_lines_holding_most_of_the_query(tmp_path: Path) -> None:
    """A long value shows the lines that hold the most words of the question (the rarer
    at equal count), not the first that hold one: in a test run's output the answer is
    the total, past lines that each name one word of it."""
    lines = [f"step {n}: loss {n}.5 computed" for n in range(8)]
    lines += ["=== combined ===", "Total loss: 636.5634", "done"]
    one_call(tmp_path, "python run.py", lines)
    out = cli("search", "--project", str(tmp_path), "what total loss did the run print").stdout
    assert "  »         … Total loss: 636.5634" in out
    # Two lines of one word each are shown beside it, in their order in the output.
    assert out.count("»") == 4  # command, and three lines of the output
    assert out.index("step 0") < out.index("Total loss")
    assert "(+6 more; --full)" in out


def test_no_matches_is_a_message_not_an_error(project: Path) -> None:
    result = cli("search", "--project", str(project), "no-such-thing")
    assert (result.exit_code, result.stdout) == (
        0,
        "No event shares a word with 'no-such-thing'. Try other or fewer words: a file or "
        "function name, a command, an error.\n",
    )
    result = cli("search", "--project", str(project), "--category", "git", "invoices", "tests")
    assert (result.exit_code, result.stdout) == (
        0,
        "No event shares a word with 'invoices tests' (category git). Try other or fewer "
        "words: a file or function name, a command, an error. Or drop a filter.\n",
    )


def test_no_store_is_an_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["search", "--project", str(tmp_path), "x"])
    assert result.exit_code == 1
    assert "no ctxmode store for" in result.output
    assert not Path(paths.store_path(str(tmp_path), os.environ)).exists()


def test_bad_options_are_usage_errors(project: Path) -> None:
    runner = CliRunner()
    for args, message in [
        (["search", "--project", str(project)], "give a QUERY"),
        (
            ["search", "--project", str(project), "--since", "yesterday", "x"],
            "'yesterday' is neither",
        ),
        (
            ["search", "--project", str(project), "--category", "files", "x"],
            "'files' is not one of",
        ),
        (
            ["search", "--project", str(project), "--type", "file_edit,nope", "x"],
            "'nope' is not one of",
        ),
        (
            ["search", "--project", str(project), "--limit", "0", "x"],
            "0 is not in the range 1<=x<=1000000",
        ),
        (
            ["search", "--project", str(project), "--offset", "-1", "x"],
            "-1 is not in the range x>=0",
        ),
        (
            ["search", "--project", str(project), "--session", "nobody", "x"],
            "Invalid value for '--session': no session 'nobody' in ",
        ),
    ]:
        result = runner.invoke(main, args)
        assert result.exit_code == 2, args
        assert message in result.output, result.output


def test_identical_events_fold_into_one_block(tmp_path: Path) -> None:
    """Twelve reads of one file (one per session) crowd the top: they show as one block,
    and the edit ranked after all of them is still found (a wider fetch)."""
    store = project_store(tmp_path)
    for n in range(12):
        add(store, f"s-{n:02d}", n, make("file_read", {"path": "src/app.py"}))
    add(store, SESSION_A, 30, make("file_edit", {"path": "src/app.py", "summary": "rename total"}))
    store.close()
    result = cli("search", "--project", str(tmp_path), "--limit", "2", "--full", "app.py")
    assert masked(result.stdout) == (
        "[1] 2026-12-02 14:11:00 UTC (AGE) · session s-11 · file/file_read · priority 4 (low)\n"
        "    path: src/app.py\n"
        "    (12 identical events in 12 sessions, first 2026-12-02 14:00:00 UTC)\n"
        "\n"
        "[2] 2026-12-02 14:30:00 UTC (AGE) · session aaaa1111 · file/file_edit · priority 2 (high)\n"
        "    path: src/app.py\n"
        "    summary: rename total\n"
        "\n"
        "2 matches for 'app.py' (13 events, identical ones folded), best first.\n"
    )
    result = cli("search", "--project", str(tmp_path), "--limit", "2", "app.py")
    assert "    (12 events in 12 sessions, first 2026-12-02 14:00)\n" in result.stdout


def test_footer_says_when_more_exist(project: Path) -> None:
    result = cli("search", "--project", str(project), "--limit", "2", "rounding")
    assert result.stdout.splitlines()[-1] == (
        "1-2 of 6 matches, best first; more: --offset 2; narrow with "
        "--session ID, --type T or --since 24h; every field: --full."
    )
    assert result.stdout.count("\n[") == 1  # blocks [1] and [2]
    page = cli("search", "--project", str(project), "--limit", "2", "--offset", "4", "rounding")
    assert re.findall(r"^\[(\d+)\]", page.stdout, re.MULTILINE) == ["5", "6"]
    assert page.stdout.splitlines()[-1] == ("5-6 of 6 matches, best first. Every field: --full.")


def test_a_huge_limit_prints_a_bounded_output(tmp_path: Path) -> None:
    """An agent's --limit 1000000 gets a bounded output that says how to go on."""
    store = project_store(tmp_path)
    events = [make("decision", {"text": f"needle {n} " + "padding " * 40}) for n in range(400)]
    store.add_events(
        SESSION_A, events, source_hook="PostToolUse", project_dir="/p", now=at(0), max_events=0
    )
    store.close()
    for args in (["--limit", "1000000"], ["--limit", "1000000", "--full"]):
        out = cli("search", "--project", str(tmp_path), *args, "needle").stdout
        assert len(out.encode()) < MAX_OUTPUT_BYTES + 4096
        last = out.splitlines()[-1]
        assert re.match(r"1-\d+ of 400 matches( for 'needle')?, best first; output stopped at 32 KB; "
                        r"more: --offset \d+;", last), last  # fmt: skip
    result = cli("search", "--project", str(tmp_path), "--json", "--limit", "1000000", "needle")
    assert len(json.loads(result.stdout)) == 400  # --json: a script's, under its own bound


def test_invalid_utf8_in_a_query_is_no_error(project: Path) -> None:
    """Bytes that are not UTF-8 reach Python as lone surrogates: shown as escapes."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctxmode",
            "search",
            "--project",
            str(project),
            "--full",
            b"caf\xe9 rounding",
        ],
        capture_output=True,
        env=hook_env(CTXMODE_HOME=os.environ["CTXMODE_HOME"], PYTHONIOENCODING="utf-8"),
        check=False,
        timeout=60,
    )
    assert (out.returncode, out.stderr) == (0, b"")
    assert b"for 'caf\\udce9 rounding'" in out.stdout
    assert b"    path: src/invoice/rounding.py" in out.stdout
    for args in (["--json"], ["--full"]):
        again = subprocess.run(
            [sys.executable, "-m", "ctxmode", "search", "--project", str(project), *args,
             b"\xff\xfe"],
            capture_output=True,
            env=hook_env(CTXMODE_HOME=os.environ["CTXMODE_HOME"]),
            check=False,
            timeout=60,
        )  # fmt: skip
        assert (again.returncode, again.stderr) == (0, b"")


# ------------------------------------------------------------------ filters


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # Best first: the edit holds the word twice (rounding, ROUND), then the shortest.
        (["rounding"], [3, 2, 1, 5, 8, 4]),
        (["--session", SESSION_A, "rounding"], [3, 2, 1, 5, 4]),
        (["--session", "bbbb", "rounding"], [8]),  # a unique prefix, as shown in the output
        (["--category", "file", "rounding"], [3, 2]),
        (["--category", "file,prompt", "rounding"], [3, 2, 1]),
        (["--category", "file", "--category", "prompt", "rounding"], [3, 2, 1]),
        (["--type", "file_read,git_commit", "rounding"], [2, 5]),
        (["--type", "file_edit", "rounding"], [3]),
        (["--since", "2026-12-02T14:02:00Z", "--category", "file", "rounding"], [3]),
        (["--since", "2026-12-02T15:00", "rounding"], [8]),
        (["--since", "2026-12-02T16:00:00+01:00", "rounding"], [8]),  # = 15:00 UTC
        (["--since", "2026-12-03", "rounding"], []),
        (["--category", "error"], [4]),  # a filter alone: the newest events
        (["--session", SESSION_B, "--limit", "2"], [9, 8]),
        (["--limit", "1", "rounding"], [3]),
        (["--limit", "2", "--offset", "1", "rounding"], [2, 1]),
    ],
)
def test_filters(project: Path, args: list[str], expected: list[int]) -> None:
    assert ids(cli("search", "--project", str(project), "--json", *args)) == expected


def test_ambiguous_session_prefix_is_refused(tmp_path: Path) -> None:
    store = project_store(tmp_path)
    for sid in ("abc-1", "abc-2"):
        add(store, sid, 0, make("file_read", {"path": "x.py"}))
    store.close()
    result = CliRunner().invoke(
        main, ["search", "--project", str(tmp_path), "--session", "abc", "x"]
    )
    assert result.exit_code == 2
    assert "'abc' is the start of 2 session ids (abc-1, abc-2): give more of it" in result.output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30m", "2026-12-02T13:30:00.000Z"),
        ("24h", "2026-12-01T14:00:00.000Z"),
        ("7d", "2026-11-25T14:00:00.000Z"),
        ("2w", "2026-11-18T14:00:00.000Z"),
        ("1.5h", "2026-12-02T12:30:00.000Z"),
        ("2026-12-01", "2026-12-01T00:00:00.000Z"),
        ("2026-12-01T10:20", "2026-12-01T10:20:00.000Z"),
        ("2026-12-01T10:20:30.250Z", "2026-12-01T10:20:30.250Z"),
        ("2026-12-01 10:20:30+02:00", "2026-12-01T08:20:30.000Z"),
    ],
)
def test_parse_since(text: str, expected: str) -> None:
    assert parse_since(text, now=parse_iso(T0)) == expected


@pytest.mark.parametrize("text", ["yesterday", "7 days", "-3d", "2026-13-01", ""])
def test_parse_since_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="neither a duration"):
        parse_since(text, now=0.0)


# ------------------------------------------------------------------ literal queries, both engines


# Best first. Both engines (the indexes, and LIKE without FTS5) give the same list.
LITERAL_QUERIES = [
    ("half-up AND cents?", [5, 1, 3]),  # the exact text first, then events sharing words
    ("AND", [5]),  # a query of stop words only searches them
    ("OR", [7]),  # the word, not the letters inside AssertionError
    ("prefix OR substring?", [7]),
    ("trigram:", [7]),
    ("col:value", [9]),
    ("NEAR(a b)", [9]),
    ("-- closes #3", [5]),
    ("Decimal.quantize(ROUND_HALF_UP)", [3, 5, 1, 2, 8, 4]),  # then its words: round, half
    ("0.125 != 0.13", [4]),
    ("C:\\work\\legacy", [6]),  # stored JSON-escaped as C:\\work\\legacy
    ("legacy\\rates.csv", [6]),
    ("it's", [9]),
    ('"half cents"', [1, 5, 3]),
    ('"half cents', [1, 5, 3]),  # an unbalanced quote: the rest is one phrase
    ("*", []),
    ("^Fix", [1, 5]),  # the caret is literal; the word Fix is shared
    ("rou", [3, 2, 1, 5, 8, 4]),  # a part of a longer word
    ("ro", [8, 3, 2, 4, 1, 5]),  # shorter than a trigram: LIKE (AssertionError has "ro")
]


@pytest.mark.parametrize("fts", [True, False], ids=["fts5", "like"])
@pytest.mark.parametrize(("query", "expected"), LITERAL_QUERIES)
def test_literal_queries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fts: bool, query: str, expected: list[int]
) -> None:
    if not fts:
        monkeypatch.setenv("CTXMODE_NO_FTS", "1")  # the store is then built without FTS5
    folder = tmp_path / "proj"
    folder.mkdir()
    store = project_store(folder)
    assert store.fts_enabled() is fts
    store.close()
    _fill(folder)
    # "--" ends the options, so that a query may start with "-".
    got = ids(cli("search", "--project", str(folder), "--json", "--", query))
    assert got == expected


# ------------------------------------------------------------------ JSON


def test_json_shape(project: Path) -> None:
    result = cli("search", "--project", str(project), "--json", "C:\\work")
    assert result.exit_code == 0
    (hit,) = json.loads(result.stdout)
    assert isinstance(hit.pop("rank"), float)
    assert hit == {
        "id": 6,
        "session_id": SESSION_B,
        "created_at": "2026-12-02T15:00:00.000Z",
        "category": "file",
        "type": "file_read",
        "priority": 4,
        "data": '{"path":"C:\\\\work\\\\legacy\\\\rates.csv"}',
        "source_hook": "PostToolUse",
        "agent_id": None,
        "agent_type": None,
        "tool_use_id": None,
        "bytes_avoided": 0,
        # The snippet shows the values as they read: no key, one backslash each.
        "snippet": "**C:\\work**\\legacy\\rates.csv",
        # The events beside it in its session's calls' order (its first: none before).
        "context": [
            {
                "offset": 1,
                "id": 7,
                "created_at": "2026-12-02T15:01:00.000Z",
                "type": "web_search",
                "data": '{"query":"sqlite fts5 trigram: prefix OR substring?"}',
            },
        ],
    }
    assert cli("search", "--project", str(project), "--json", "nothing-like-it").stdout == "[]\n"


# ------------------------------------------------------------------ rendering pieces


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            '{"path":"a.py","offset":10,"limit":null}',
            [("path", "a.py"), ("offset", "10"), ("limit", "null")],
        ),
        (
            '{"todos":[{"content":"x","status":"pending"},{"content":"y","status":"completed"}]}',
            [("todos", "- content: x, status: pending\n- content: y, status: completed")],
        ),
        (
            '{"server":"db","tool":"query","args":["sql","limit"]}',
            [("server", "db"), ("tool", "query"), ("args", "sql, limit")],
        ),
        ('{"tasks":[]}', [("tasks", "")]),
        ('{"replace_all":true,"edits":2}', [("replace_all", "true"), ("edits", "2")]),
        ('{"nested":{"a":[1,2]}}', [("nested", '{"a":[1,2]}')]),
        ("plain text, not JSON", [("", "plain text, not JSON")]),
        (
            '{"text":"cut off by the 4000-char ceil',
            [("", '{"text":"cut off by the 4000-char ceil')],
        ),
        ("[1,2]", [("", "[1,2]")]),
    ],
)
def test_data_fields(data: str, expected: list[tuple[str, str]]) -> None:
    assert data_fields(data) == expected


@pytest.mark.parametrize(
    ("key", "text", "width", "expected"),
    [
        ("path", "src/app.py", 100, ["    path: src/app.py"]),
        (
            "text",
            "one two three four five six",
            30,
            ["    text: one two three four", "          five six"],
        ),
        # a word longer than the line is kept whole: wrapped, never cut
        ("path", "a/" * 20 + "x.py", 30, ["    path: " + "a/" * 20 + "x.py"]),
        ("plan", "# Plan\n\n1. step", 100, ["    plan: # Plan", "", "          1. step"]),
        ("", "raw data", 100, ["    raw data"]),
        ("tasks", "", 100, ["    tasks:"]),
    ],
)
def test_wrap_field(key: str, text: str, width: int, expected: list[str]) -> None:
    assert wrap_field(key, text, width) == expected


def _hit(data: str, **fields: Any) -> SearchHit:
    event = SessionEvent(
        "file_edit",
        "file",
        2,
        data,
        session_id=SESSION_A,
        created_at="2026-12-02T14:02:00.000Z",
        id=3,
        **fields,
    )
    return SearchHit(event, 1.0, "")


def test_render_highlights_terms_only_in_color() -> None:
    block = Block(
        _hit(
            '{"path":"src/Rounding.py","summary":"round half-up"}',
            agent_type="reviewer",
            agent_id="a1",
        )
    )
    now = parse_iso("2026-12-02T14:05:00.000Z")
    header = (
        "[1] 2026-12-02 14:02:00 UTC (3m ago) · session aaaa1111 · file/file_edit · "
        "priority 2 (high) · subagent reviewer"
    )
    footer = "1 match for 'round', best first."
    plain = render(
        "round", [block], total=1, capped=False, limit=10, filters="", color=False, now=now
    )
    assert plain == (
        f"{header}\n    path: src/Rounding.py\n    summary: round half-up\n\n{footer}\n"
    )
    colored = render(
        "round", [block], total=1, capped=False, limit=10, filters="", color=True, now=now
    )
    hl = "\x1b[33m\x1b[1m{}\x1b[0m".format
    assert colored == (
        f"\x1b[1m{header}\x1b[0m\n"
        f"    path: src/{hl('Round')}ing.py\n"
        f"    summary: {hl('round')} half-up\n\n{footer}\n"
    )


def test_compact_render_flags_lines_or_colours_words() -> None:
    block = Block(_hit('{"path":"src/Rounding.py","summary":"rounded half-up","kind":"edit"}'))
    now = parse_iso("2026-12-02T14:05:00.000Z")
    header = "[1] 2026-12-02 14:02 · session aaaa1111 · file_edit"
    footer = "1 match, best first. Every field: --full."
    kwargs: dict[str, Any] = {"total": 1, "capped": False, "limit": 10, "filters": ""}
    plain = render("rounding", [block], **kwargs, color=False, now=now, full=False)
    assert plain == (
        f"{header}\n  » path: src/Rounding.py\n  » summary: rounded half-up\n"
        f"    kind: edit\n\n{footer}\n"
    )
    colored = render("rounding", [block], **kwargs, color=True, now=now, full=False)
    hl = "\x1b[33m\x1b[1m{}\x1b[0m".format
    assert colored == (
        f"\x1b[1m{header}\x1b[0m\n  » path: src/{hl('Rounding')}.py\n"
        f"  » summary: {hl('rounded')} half-up\n    kind: edit\n\n{footer}\n"
    )


def test_fold_keeps_rank_order_and_counts() -> None:
    hits = [_hit('{"path":"a.py"}'), _hit('{"path":"b.py"}'), _hit('{"path":"a.py"}')]
    hits[2].session_id, hits[2].created_at = SESSION_B, "2026-12-01T09:00:00.000Z"
    blocks = fold(hits)
    assert [(b.hit.data, b.count, b.first_at, sorted(b.sessions)) for b in blocks] == [
        ('{"path":"a.py"}', 2, "2026-12-01T09:00:00.000Z", [SESSION_A, SESSION_B]),
        ('{"path":"b.py"}', 1, "2026-12-02T14:02:00.000Z", [SESSION_A]),
    ]


# ------------------------------------------------------------------ bytes_returned of searches


def _tallies(folder: Path) -> dict[str, tuple[int, int]]:
    store = project_store(folder)
    try:
        return store.search_tallies()
    finally:
        store.close()


def test_searches_run_by_a_claude_code_session_are_counted(project: Path) -> None:
    inside = {"CLAUDE_CODE_SESSION_ID": SESSION_A, "CLAUDECODE": "1"}
    first = cli("search", "--project", str(project), "rounding", env=inside)
    second = cli("search", "--project", str(project), "--json", "quantize", env=inside)
    empty = cli("search", "--project", str(project), "no-such-thing", env=inside)
    assert _tallies(project) == {
        SESSION_A: (3, len(first.stdout_bytes) + len(second.stdout_bytes) + len(empty.stdout_bytes))
    }
    assert empty.stdout.startswith("No event shares a word with 'no-such-thing'.")


def test_searches_outside_claude_code_are_not_counted(project: Path) -> None:
    cli("search", "--project", str(project), "rounding")
    assert _tallies(project) == {}
    # Claude Code without a session id in the environment: counted, for no session.
    result = cli("search", "--project", str(project), "cents", env={"CLAUDECODE": "1"})
    assert _tallies(project) == {"": (1, len(result.stdout_bytes))}


def test_record_search_store_method(tmp_path: Path) -> None:
    store = Store.open(str(tmp_path / "s.db"))
    store.record_search("s1", 100)
    store.record_search("s1", 23)
    store.record_search("s2", 7)
    store.record_search("s2", -5)  # nothing negative is ever added
    store.set_meta("searches:s3", "garbage")  # a damaged tally starts again
    store.record_search("s3", 9)
    store.set_meta("searches;not-a-tally", "1 1")
    store.set_meta("searches", "1 1")
    assert store.search_tallies() == {"s1": (2, 123), "s2": (2, 7), "s3": (1, 9)}
    store.close()


# ------------------------------------------------------------------ a real process


def test_subprocess_run(project: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ctxmode", "search", "--project", str(project), "quantize"],
        capture_output=True,
        text=True,
        env=hook_env(CTXMODE_HOME=os.environ["CTXMODE_HOME"]),
        check=False,
        timeout=60,
    )
    assert (out.returncode, out.stderr) == (0, "")
    assert masked(out.stdout) == (
        "[1] 2026-12-02 14:02 · session aaaa1111 · file_edit\n"
        "    ↑ file_read: path: src/invoice/rounding.py\n"
        "    path: src/invoice/rounding.py\n"
        "  » summary: use Decimal.quantize(ROUND_HALF_UP)\n"
        "    ↓ tool_error: tool: Bash · key: pytest -q tests/test_rounding.py · error: "
        "AssertionError: 0.125 !=…\n"
        "\n"
        "1 match, best first. Every field: --full.\n"
    )


# ------------------------------------------------------------------ every snapshot hint works

HINT_PROJECT = "/home/dev/proj"  # the project of the fixtures
HINT_SESSION = "5e551011-0000-4000-8000-00000000h1n7"
LONG_PATH = "src/billing/adapters/legacy/european_union/value_added_tax/rounding_rules_v2.py"
LAST_PROMPT = (
    "Why does 'make test' fail on CI: is it the -j flag AND the cache OR something else? "
    "Check tests/test_cache.py and report back."
)


def _call(event: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return event, hook_payload(event, session_id=HINT_SESSION, cwd=HINT_PROJECT, **fields)


def _tool(
    name: str, tool_input: dict[str, Any], response: Any, uid: str
) -> tuple[str, dict[str, Any]]:
    return _call(
        "PostToolUse",
        tool_name=name,
        tool_input=tool_input,
        tool_response=response,
        tool_use_id=uid,
    )


def _bash(command: str, stdout: str, uid: str) -> tuple[str, dict[str, Any]]:
    response = {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False}
    return _tool("Bash", {"command": command, "description": "run it"}, response, uid)


def _edit(path: str, uid: str) -> tuple[str, dict[str, Any]]:
    full = f"{HINT_PROJECT}/{path}"
    return _tool(
        "Edit",
        {"file_path": full, "old_string": "0.2", "new_string": "0.21"},
        {
            "filePath": full,
            "oldString": "0.2",
            "newString": "0.21",
            "structuredPatch": [],
            "userModified": False,
            "replaceAll": False,
        },
        uid,
    )


QUESTION = "Keep C:\\legacy\\rates.csv as the OR-source?"
# Items whose text is full of what a query parser could take for syntax: quotes, colons,
# question marks, dashes, AND/OR, backslashes, brackets, a prompt longer than a query.
TRICKY_CALLS = [
    _call("UserPromptSubmit", prompt="Refactor the rounding helpers; keep the public API stable."),
    _tool(
        "Read",
        {"file_path": f"{HINT_PROJECT}/src/app.py"},
        {
            "type": "text",
            "file": {
                "filePath": f"{HINT_PROJECT}/src/app.py",
                "content": "x = 1\n",
                "numLines": 1,
                "startLine": 1,
                "totalLines": 1,
            },
        },
        "t-read",
    ),
    _tool(
        "TaskCreate",
        {
            "subject": "Fix O'Brien's CSV-export: quotes AND commas?",
            "description": "Names with quotes break the export.",
            "activeForm": "Fixing",
        },
        {"task": {"id": "3", "subject": "Fix O'Brien's CSV-export: quotes AND commas?"}},
        "t-task",
    ),
    _tool(
        "TaskUpdate",
        {"taskId": "3", "status": "in_progress"},
        {
            "success": True,
            "taskId": "3",
            "updatedFields": ["status"],
            "statusChange": {"from": "pending", "to": "in_progress"},
        },
        "t-task-up",
    ),
    _tool(
        "Write",
        {"file_path": f"{HINT_PROJECT}/{LONG_PATH}", "content": "RATE = 0.2\n"},
        {"type": "create", "filePath": f"{HINT_PROJECT}/{LONG_PATH}"},
        "t-write",
    ),
    _edit("src/app.py", "t-edit1"),
    _edit(LONG_PATH, "t-edit2"),
    _call(
        "PostToolUseFailure",
        tool_name="Bash",
        tool_use_id="t-fail",
        is_interrupt=False,
        tool_input={
            "command": 'grep -rn "round_half\\|ROUND_UP" src/billing',
            "description": "find",
        },
        error="Exit code 2\ngrep: src/billing: No such file or directory",
    ),
    _tool(
        "AskUserQuestion",
        {
            "questions": [
                {
                    "question": QUESTION,
                    "header": "Rates",
                    "multiSelect": False,
                    "options": [{"label": "Yes - for now", "description": ""}],
                }
            ],
            "answers": {QUESTION: "Yes - for now"},
        },
        {"answers": {QUESTION: "Yes - for now"}},
        "t-ask",
    ),
    _bash("git checkout -b fix/rounding-v2", "Switched to a new branch 'fix/rounding-v2'", "t-co"),
    _bash(
        'git commit -am "fix(rounding): half-up AND banker\'s? -- see #42"',
        "[fix/rounding-v2 1a2b3c4] fix(rounding): half-up AND banker's? -- see #42\n"
        " 1 file changed, 1 insertion(+)",
        "t-commit",
    ),
    _bash(
        "source .venv/bin/activate && pip install -e '.[test]'", "Successfully installed", "t-pip"
    ),
    _tool(
        "Agent",
        {
            "description": "Audit the OR/AND query: parser",
            "prompt": "Audit it.",
            "subagent_type": "reviewer",
        },
        {
            "status": "completed",
            "agentType": "reviewer",
            "content": [{"type": "text", "text": "No problem found."}],
        },
        "t-agent",
    ),
    _tool(
        "WebSearch",
        {"query": "sqlite fts5 trigram: prefix OR substring?"},
        {"query": "sqlite fts5 trigram: prefix OR substring?", "results": []},
        "t-web",
    ),
    _call("UserPromptSubmit", prompt=LAST_PROMPT),
]

# For each snapshot: section -> texts its hint's output must show (whitespace-normalised):
# the full item the hint stands for, not only the words of the query.
FIXTURE_ITEMS = {
    "requests": ["[scn:ask] Ask me how to round."],
    "tasks": ["subject: Write rounding and CSV tests"],
    "files_changed": ["path: /home/dev/.claude/plans/sparkling-drifting-snowflake.md"],
    "files_read": ["path: /home/dev/proj/README.md"],  # as the session wrote it
    "errors": ["error: lookup failed: no entry named 'missing'"],
    "decisions": ["text: Which rounding mode should invoices use? → Half-up"],
    "plan": [
        "# Plan: invoice rounding 1. Round totals half-up in src/app.py 2. Add tests for .005 cases"
    ],
    "git": ["message: Subject line Body", "sha: ef4c5ca"],
    "environment": ["detail: python3 -m venv .venv"],
    "subagents": ["description: Review app.py", "agent_type: reviewer"],
    "mcp": ["server: mockdir", "tool: lookup"],
    "references": ["query: apierror search request test"],
}
TRICKY_ITEMS = {
    **FIXTURE_ITEMS,
    "requests": [f"text: {LAST_PROMPT}"],
    "tasks": [
        "subject: Fix O'Brien's CSV-export: quotes AND commas?",
        "description: Names with quotes break the export.",
    ],
    "files_changed": [f"path: /home/dev/proj/{LONG_PATH}"],
    "errors": [
        'key: grep -rn "round_half\\|ROUND_UP" src/billing',
        "error: Exit code 2 grep: src/billing: No such file or directory",
    ],
    "decisions": ["text: Keep C:\\legacy\\rates.csv as the OR-source? → Yes - for now"],
    "git": ["message: fix(rounding): half-up AND banker's? -- see #42", "sha: 1a2b3c4"],
    "environment": ["detail: pip install -e '.[test]'"],
    "subagents": ["description: Audit the OR/AND query: parser", "summary: No problem found."],
    "references": ["query: sqlite fts5 trigram: prefix OR substring?"],
}


def _squash(text: str) -> str:
    return " ".join(text.split())


def _compact(env: dict[str, str]) -> str:
    """PreCompact, then SessionStart compact: the snapshot the model receives."""
    event, payload = _call("PreCompact", trigger="auto", custom_instructions=None)
    assert run_hook(event, payload, env=env).stdout == b""
    event, payload = _call("SessionStart", source="compact")
    out = run_hook(event, payload, env=env)
    return str(json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"])


def _run_lookups(xml: str, env: dict[str, str]) -> dict[str, tuple[str, str, int]]:
    """Run every <lookup> through ``sh -c`` as the preface says: the search command, then
    the lookup, exactly as written; all at once."""
    root = ET.fromstring(xml)
    search = root.findtext("search")
    assert search, xml
    commands = {
        section.tag: f"{search} {section.findtext('lookup')}"
        for section in root
        if section.findtext("lookup")
    }
    procs = {
        tag: subprocess.Popen(
            ["sh", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        for tag, command in commands.items()
        if command
    }
    results = {}
    for tag, proc in procs.items():
        out, err = proc.communicate(timeout=60)
        results[tag] = (str(commands[tag]), out.decode(), proc.returncode)
        assert err == b"", (tag, err)
    return results


def _check(results: dict[str, tuple[str, str, int]], expected: dict[str, list[str]]) -> None:
    assert sorted(results) == sorted(expected), " ".join(sorted(results))
    for tag, (command, output, code) in results.items():
        assert code == 0, (tag, command, output)
        shown = _squash(output).lower()
        for item in expected[tag]:
            assert _squash(item).lower() in shown, (tag, command, item, output)


def test_every_snapshot_hint_returns_its_item(
    fixtures_dir: Path, data_root: Path, tmp_path: Path
) -> None:
    env = hook_env(CTXMODE_HOME=str(data_root), CLAUDE_PROJECT_DIR=HINT_PROJECT)
    # The fixture runs (every tool of Claude Code 2.1.197), replayed as one session.
    for line in stream(fixtures_dir / "more" / "stream.jsonl"):
        if line["event"] in ("PostToolUse", "PostToolUseFailure", "UserPromptSubmit"):
            result = run_hook(
                line["event"], {**line["payload"], "session_id": HINT_SESSION}, env=env
            )
            assert (result.returncode, result.stderr) == (0, b"")
    # The hints name the ctxmode next to the interpreter, else the one on PATH.
    bindir = Path(sys.executable).parent
    search_env = {**env, "CLAUDE_CODE_SESSION_ID": HINT_SESSION}
    if not (bindir / "ctxmode").exists():
        wrapper = tmp_path / "bin" / "ctxmode"
        wrapper.parent.mkdir()
        wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ctxmode "$@"\n')
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
        search_env["PATH"] = f"{wrapper.parent}{os.pathsep}{env.get('PATH', '')}"
        search_env["PYTHONPATH"] = str(REPO)

    first = _compact(env)
    results = _run_lookups(first, search_env)
    prefix = f" search --project /home/dev/proj --session {HINT_SESSION[:8]} --"
    assert all(prefix in r[0] for r in results.values())
    _check(results, FIXTURE_ITEMS)

    for event, payload in TRICKY_CALLS:
        result = run_hook(event, payload, env=env)
        assert (result.returncode, result.stderr) == (0, b""), (event, result.stderr)
    # The largest budget, so that no section of the longer session is left out.
    (data_root / "config.json").write_text('{"snapshot_budget": 9000}')
    second = _compact(env)
    assert ET.fromstring(second).get("compaction") == "2"
    later = _run_lookups(second, search_env)
    _check(later, TRICKY_ITEMS)

    # Each search the model ran put its output into the context: counted once, exactly.
    printed = sum(len(out.encode()) for _, out, _ in [*results.values(), *later.values()])
    store = Store.open(paths.store_path(HINT_PROJECT, {"CTXMODE_HOME": str(data_root)}))
    try:
        assert store.search_tallies() == {HINT_SESSION: (len(results) + len(later), printed)}
    finally:
        store.close()


def test_footer_when_not_every_match_was_ranked(tmp_path: Path) -> None:
    store = project_store(tmp_path)
    events = [make("file_read", {"path": f"src/needle_{n}.py"}) for n in range(1005)]
    store.add_events(
        SESSION_A, events, source_hook="PostToolUse", project_dir="/p", now=at(0), max_events=0
    )
    store.close()
    result = cli("search", "--project", str(tmp_path), "--limit", "3", "needle")
    # The word index gave its newest 1000 matches: the count of the others is estimated.
    assert result.stdout.splitlines()[-1] == (
        "1-3 of about 1005 matches, best first; more: --offset 3; narrow with "
        "--session ID, --type T or --since 24h; every field: --full."
    )
    # One word each: the shorter text ranks first (BM25), the newer among equals.
    assert re.findall(r"^  » path: (\S+)", result.stdout, re.M) == [
        "src/needle_999.py",
        "src/needle_998.py",
        "src/needle_997.py",
    ]


def test_footer_when_identical_events_fill_the_candidates(tmp_path: Path) -> None:
    store = project_store(tmp_path)
    events = []
    for n in range(1003):  # five other events between two reads: none is a duplicate
        events.append(make("file_read", {"path": "src/hot.py"}))
        events.extend(make("git_query", {"op": "status", "args": f"-s {n}.{k}"}) for k in range(5))
    store.add_events(
        SESSION_A, events, source_hook="PostToolUse", project_dir="/p", now=at(0), max_events=0
    )
    store.close()
    result = cli("search", "--project", str(tmp_path), "hot.py")
    assert result.stdout.splitlines()[-1] == (
        "1-1 of about 1003 matches (50 events, identical ones folded), best "
        "first; more: --offset 1; narrow with --session ID, --type T or --since 24h; "
        "every field: --full."
    )


# ------------------------------------------------------------------ lookups find what was left out


def _crowded_session() -> tuple[list[SessionEvent], dict[str, list[str]]]:
    """A session with more of everything than a snapshot shows, and per section the texts
    of all its items (what the section stands for)."""
    out: list[SessionEvent] = []
    items: dict[str, list[str]] = {}

    def add(section: str, text: str, type_: str, data: dict[str, Any]) -> None:
        out.append(make(type_, data))
        items.setdefault(section, []).append(text)

    for n in range(14):
        add("requests", f"request number {n}: rename the totals", "user_prompt",
            {"text": f"request number {n}: rename the totals"})  # fmt: skip
    for n in range(15):
        add(
            "tasks",
            f"task subject {n}",
            "task_create",
            {"id": str(n), "subject": f"task subject {n}"},
        )
    for n in range(16):
        add("files_changed", f"src/changed_{n}.py", "file_edit", {"path": f"src/changed_{n}.py"})
    for n in range(9):
        add("files_read", f"docs/read_{n}.md", "file_read", {"path": f"docs/read_{n}.md"})
    for n in range(7):
        add("errors", f"make target_{n}", "tool_error",
            {"tool": "Bash", "key": f"make target_{n}", "error": f"Error {n}"})  # fmt: skip
    for n in range(9):
        add(
            "decisions",
            f"Decided rule {n} for money",
            "decision",
            {"text": f"Decided rule {n} for money"},
        )
    for n in range(8):
        add("rules", f"rules/r_{n}.md", "rule_read", {"path": f"rules/r_{n}.md"})
    for n in range(8):
        add(
            "git",
            f"Commit message {n}",
            "git_commit",
            {"message": f"Commit message {n}", "sha": f"{n:07x}"},
        )
    for n in range(7):
        add("environment", f"pip install package_{n}", "env_setup",
            {"kind": "install", "tool": "pip", "detail": f"pip install package_{n}"})  # fmt: skip
    for n in range(6):
        add(
            "subagents",
            f"Review part {n}",
            "subagent",
            {"agent_type": "reviewer", "description": f"Review part {n}"},
        )
    for n in range(7):
        add("mcp", f"tool_{n}", "mcp_call", {"server": "svc", "tool": f"tool_{n}", "args": []})
    for n in range(7):
        add(
            "references",
            f"https://example.com/page_{n}",
            "url_ref",
            {"url": f"https://example.com/page_{n}"},
        )
    return out, items


@pytest.mark.parametrize("budget", [4096, 9000])
def test_each_lookup_lists_what_its_section_left_out(tmp_path: Path, budget: int) -> None:
    """Build a snapshot whose sections leave items out, run each lookup through the real
    search (the command of <search>, then the lookup), and find every omitted item."""
    from ctxmode.snapshot import build_snapshot

    store = project_store(tmp_path)
    events, items = _crowded_session()
    for n, event in enumerate(events):  # one call each, a minute apart, in order
        add(store, SESSION_A, n, event)
    add(store, SESSION_B, 500, make("file_edit", {"path": "src/changed_0.py"}))  # elsewhere
    stored = store.session_events(SESSION_A)
    store.close()
    xml = build_snapshot(
        stored,
        session_id=SESSION_A,
        compact_seq=1,
        budget=budget,
        search_command=f"ctxmode search --project {tmp_path}",
    )
    root = ET.fromstring(xml)
    assert root.findtext("search") == f"ctxmode search --project {tmp_path}"
    checked = 0
    for sec in root:
        if sec.tag in ("preface", "search", "omitted_sections"):
            continue
        shown_text = ET.tostring(sec, encoding="unicode")
        left_out = [text for text in items[sec.tag] if text not in shown_text]
        assert int(sec.get("omitted", "0")) >= len(left_out) > 0, sec.tag
        args = shlex.split(sec.findtext("lookup") or "")
        output = cli("search", "--project", str(tmp_path), *args).stdout
        for text in left_out:
            assert text in output, (sec.tag, text, args, output)
        assert "session bbbb2222" not in output  # this session's events only
        checked += 1
    assert checked >= (8 if budget == 4096 else 12)


def test_default_output_stays_compact(tmp_path: Path) -> None:
    """The default shows 8 hits, the best three with up to three matching lines of a
    value, the others one: a long session's search prints a few KB, not tens."""
    store = project_store(tmp_path)
    output = "\n".join(f"line {n}: deploy step {n} done in {n} ms" for n in range(60))
    events = [
        make("shell_call", {"command": f"make deploy-{n}", "exit": 0, "output": output})
        for n in range(30)
    ]
    store.add_events(
        SESSION_A, events, source_hook="PostToolUse", project_dir="/p", now=at(0), max_events=0
    )
    store.close()
    out = cli("search", "--project", str(tmp_path), "deploy step done").stdout
    hits = out.split("\n\n")[:-1]
    assert len(hits) == 8
    assert [hit.count("\n  »         line") for hit in hits] == [2, 2, 2, 0, 0, 0, 0, 0]
    assert len(out.encode()) < 3 * 1024


def test_a_line_with_the_rarer_word_is_shown_at_equal_count() -> None:
    """Lines holding as many words of the query are ordered by the words' rarity (the
    IDF the search measured), then by place; the whole query as a phrase beats any count."""
    from ctxmode.cli.search_lines import best_lines
    from ctxmode.store.query import Term

    common, rare = Term("build", "word"), Term("webpack", "word")
    common.idf, rare.idf = 0.2, 6.0
    lines = ["build started", "webpack 5.1 ready", "build ok"]
    assert best_lines(lines, [0, 1, 2], [common, rare], 1) == ([1], 1)
    assert best_lines(lines, [0, 1, 2], [common, rare], 2) == ([0, 1], 1)
    rare.idf = 0.1  # now the rarer word is "build": its first line wins, then place
    assert best_lines(lines, [0, 1, 2], [common, rare], 1) == ([0], 0)
    phrase = Term("build ok", "exact", weight=0.0, tiered=True)
    assert best_lines(lines, [0, 1, 2], [phrase, common, rare], 1) == ([2], 2)


def test_the_best_line_is_followed_by_the_lines_below_it(tmp_path: Path) -> None:
    """A detailed hit's best line comes with the next two lines that hold a letter or a
    digit, unflagged (``grep -A2``): the question's words find a heading, the answer is
    below it. A command's description is left out when the command matched too."""
    store = project_store(tmp_path)
    install = "\n".join(
        [
            "Resolved 4 packages in 5ms",
            "Installed 4 packages in 6ms",
            " + flake8==7.3.0",
            " + mccabe==0.7.0",
            " + pycodestyle==2.14.0",
            "src/app.py:1:1: F401 'os' imported but unused",
        ]
    )
    trace = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "check.py", line 1, in <module>',
            "    import sqlalchemy",
            "    ^^^^^^^^^^^^^^^^^",
            "ModuleNotFoundError: No module named 'sqlalchemy'",
        ]
    )
    add(
        store,
        SESSION_A,
        0,
        make(
            "shell_call",
            {
                "command": "uv pip install flake8",
                "description": "Install the checker",
                "exit": 0,
                "output": install,
            },
        ),
    )
    add(
        store,
        SESSION_B,
        1,
        make("shell_call", {"command": "python check.py", "exit": 1, "output": trace}),
    )
    store.close()
    out = cli(
        "search",
        "--project",
        str(tmp_path),
        "--session",
        SESSION_A[:8],
        "which checker version was installed",  # ("linter" would find flake8, its synonym)
    ).stdout
    assert (
        "  » output: … Installed 4 packages in 6ms\n"
        "             + flake8==7.3.0\n"
        "             + mccabe==0.7.0\n"
        "            … src/app.py:1:1: F401 'os' imported but unused\n"  # how it ended
    ) in out, out
    assert "description" not in out  # the command matched: its gloss is not needed
    out = cli(
        "search", "--project", str(tmp_path), "--session", SESSION_B[:8], "why did the import break"
    ).stdout
    assert (
        "  » output: …     import sqlalchemy\n"
        "            … ModuleNotFoundError: No module named 'sqlalchemy'\n"
    ) in out, out  # the caret line between them holds no letter: left out, a gap said


def test_verdict_line_is_why_a_failed_command_failed_else_its_last_line() -> None:
    """Of a failed command, the last line naming the error, above a mere exit notice and a
    count of failures; of a successful one, or a failed one that names nothing, its last
    line that holds a letter or a digit."""
    build = [
        "> app@1.0.0 build",
        "src/api.ts(3,9): error TS2304: Cannot find name 'client'.",
        "src/ui.ts(8,1): error TS2322: Type 'string' is not assignable to type 'number'.",
        "Build failed.",
        "1 failed, 3 passed",
        "make: *** [all] Error 2",
        "^^^^",
        "",
    ]
    assert verdict_line(build, failing=True) == 2
    assert verdict_line(build, failing=False) == 5
    assert verdict_line(["FAILED", "tests: 1 failed", "done"], failing=True) == 1
    assert verdict_line(["Exit code 2", "see the log"], failing=True) == 0
    assert verdict_line(["compiling", "stopped"], failing=True) == 1  # names nothing
    assert verdict_line(["", "---", "  "], failing=True) is None


def verdict_store(project: Path, calls: list[tuple[str, int, list[str]]]) -> None:
    """Shell calls (command, exit code, output lines), a minute apart, the last newest."""
    store = project_store(project)
    for minute, (command, code, lines) in enumerate(calls):
        data = {"command": command, "exit": code, "output": "\n".join(lines)}
        add(store, SESSION_A, minute, make("shell_call", data))
    store.close()


def test_a_failed_commands_reason_is_shown_though_no_query_word_is_on_it(
    tmp_path: Path,
) -> None:
    """The question names the step ("duplicate check"), the answer is why it failed: the
    error under the traceback, shown (unflagged) below the lines that matched; and when
    no line of the output matched, in place of its first line."""
    trace = [
        "running the duplicate finder on 40 submissions",
        "Traceback (most recent call last):",
        '  File "dup.py", line 58, in scan',
        "    when = row['date_sent']",
        "KeyError: 'date_sent'",
    ]
    verdict_store(tmp_path, [("python dup.py", 1, trace)])
    out = cli("search", "--project", str(tmp_path), "duplicate finder submissions").stdout
    assert "  » output: running the duplicate finder on 40 submissions\n" in out, out
    assert "\n            … KeyError: 'date_sent'\n" in out, out
    verdict_store(tmp_path, [("python sync.py", 1, ["reading", "ValueError: bad row 7", "x"])])
    out = cli("search", "--project", str(tmp_path), "sync.py").stdout
    assert "    output: … ValueError: bad row 7 (3 lines)\n" in out, out
    verdict_store(tmp_path, [("python halt.py", 1, ["reading", "", "OSError: disk full"])])
    out = cli("search", "--project", str(tmp_path), "halt.py").stdout
    assert "    output: … OSError: disk full\n" in out, out  # the last line: no count
    # The reason matched as well: shown once, flagged.
    out = cli("search", "--project", str(tmp_path), "date_sent").stdout
    assert out.count("KeyError: 'date_sent'") == 1, out
    assert "  »         KeyError: 'date_sent'\n" in out, out


def test_only_the_detailed_hits_show_how_a_successful_command_ended(tmp_path: Path) -> None:
    """The last line of a successful command's output ("29 passed") comes with the best
    hits (:data:`DETAILED_HITS`), a failed command's reason with every hit: the room of
    the compact output goes where it answers most."""
    runs = [
        (f"npm run e2e -- --shard {n}", 0, [f"e2e shard {n} of 5 started", "", f"{20 + n} passed"])
        for n in range(1, 5)
    ]
    runs.append(
        (
            "npm run e2e -- --shard 5",
            1,
            ["e2e shard 5 of 5 started", "retrying", "Error: timeout", "x"],
        )
    )
    verdict_store(tmp_path, runs)
    out = cli("search", "--project", str(tmp_path), "--limit", "5", "e2e shard started").stdout
    blocks = out.split("\n\n")[:5]
    for place, block in enumerate(blocks, start=1):
        shard = int(block.split("--shard ")[1][0])
        ending = "… Error: timeout" if shard == 5 else f"… {20 + shard} passed"
        assert (ending in block) == (shard == 5 or place <= DETAILED_HITS), out


def test_a_description_is_shown_when_it_alone_matched(tmp_path: Path) -> None:
    store = project_store(tmp_path)
    add(
        store,
        SESSION_A,
        0,
        make(
            "shell_call",
            {
                "command": "make -j8",
                "description": "Rebuild the docs site",
                "exit": 0,
                "output": "ok",
            },
        ),
    )
    store.close()
    out = cli("search", "--project", str(tmp_path), "rebuild the docs").stdout
    assert "  » description: Rebuild the docs site\n" in out, out
    assert "    command: make -j8\n" in out


def test_a_path_is_shown_as_the_session_wrote_it(tmp_path: Path) -> None:
    """A file event keeps the path as the call gave it (``given``) beside its stored,
    project-relative form; the compact output shows that one, under ``path``, once."""
    store = project_store(tmp_path)
    given = "C:\\Users\\me\\proj\\src\\Billing.cs"
    add(store, SESSION_A, 0, make("file_read", {"path": "src/Billing.cs", "given": given}))
    store.close()
    out = cli("search", "--project", str(tmp_path), "billing").stdout
    assert f"  » path: {given}\n" in out, out
    assert "given" not in out and "src/Billing.cs" not in out
    full = cli("search", "--project", str(tmp_path), "--full", "billing").stdout
    assert "path: src/Billing.cs" in full and f"given: {given}" in full
