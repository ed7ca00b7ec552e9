"""What a compaction summary kept of the snapshot's key items (ctxmode.snapshot.coverage).

Table-driven over realistic summaries: Claude Code's own structure (numbered sections, the
user's messages quoted), terse ones, and paraphrases, which count when they carry the
item's words and not when they only allude to it.
"""

from __future__ import annotations

import pytest

from ctxmode.snapshot import build_snapshot
from ctxmode.snapshot.coverage import KeyItem, Summary, carried, coverage, key_items
from tests.snapshot_sessions import ev, stamp


def _session() -> list[object]:
    rows = [
        ("user_prompt", {"text": "Invoice totals are off by a cent; fix the rounding."}),
        ("role", {"text": "You are a careful reviewer of money code."}),
        ("decision", {"text": "Always use Decimal for money, never float."}),
        ("task_create", {"id": "1", "subject": "Round totals half-up", "status": "completed"}),
        ("task_create", {"id": "2", "subject": "Add tests for the .005 cases"}),
        ("file_edit", {"path": "src/invoice/rounding.py"}),
        ("file_write", {"path": "tests/test_rounding.py", "kind": "create"}),
        ("git_commit", {"message": "Round invoice totals half-up with Decimal", "sha": "3f9c2ab"}),
        (
            "tool_error",
            {
                "tool": "Bash",
                "key": "pytest tests/test_export.py -q",
                "error": "AssertionError: CSV total column shows 10.004",
            },
        ),
        ("user_prompt", {"text": "Now check the CSV export total column as well."}),
    ]
    return [ev(t, d, at=stamp(i * 1000), id=i + 1) for i, (t, d) in enumerate(rows)]


SNAPSHOT = build_snapshot(_session(), session_id="s", compact_seq=1)  # type: ignore[arg-type]

CLAUDE_STYLE = """This session is being continued from a previous conversation.
1. Primary Request and Intent: The user reported invoice totals off by a cent and asked to
   fix the rounding; then to check the CSV export total column as well.
2. Key Technical Concepts: Decimal arithmetic, half-up rounding.
3. Files and Code Sections:
   - src/invoice/rounding.py: totals now rounded half-up with Decimal.
   - tests/test_rounding.py: new tests.
4. Errors and fixes: pytest tests/test_export.py -q fails (CSV total column shows 10.004).
5. All user messages:
   - "Invoice totals are off by a cent; fix the rounding."
   - "Now check the CSV export total column as well."
6. Pending Tasks: Add tests for the .005 cases.
7. Current Work: committed 3f9c2ab "Round invoice totals half-up with Decimal".
8. The user insists: always use Decimal for money, never float. Act as a careful reviewer
   of money code."""

TERSE = "Fixed rounding. Next: CSV export."

PARAPHRASE = """The user wants money amounts rounded correctly. I fixed the half-up rounding
of invoice totals using Decimal and committed it; the rounding module was edited.
Pending: tests covering the .005 cases. The export check still fails on the CSV total
column, which shows 10.004. The user said to always use Decimal for money and never
float."""

ALLUSION = """We sorted out the cent discrepancy in the billing code and saved our work.
Some checks are still red. More test coverage is planned."""


def test_the_snapshots_key_items() -> None:
    items = [(item.kind, item.text) for item in key_items(SNAPSHOT)]
    assert items == [
        ("request", "Now check the CSV export total column as well."),
        ("task", "Add tests for the .005 cases"),
        ("file", "tests/test_rounding.py"),
        ("file", "src/invoice/rounding.py"),
        ("commit", "Round invoice totals half-up with Decimal"),
        ("error", "AssertionError: CSV total column shows 10.004"),
        ("instruction", "You are a careful reviewer of money code."),
        ("instruction", "Always use Decimal for money, never float."),
    ]
    (commit,) = [item for item in key_items(SNAPSHOT) if item.kind == "commit"]
    assert commit.sha == "3f9c2ab"


@pytest.mark.parametrize(
    ("summary", "kept"),
    [
        (
            CLAUDE_STYLE,
            ["request", "task", "file", "file", "commit", "error", "instruction", "instruction"],
        ),
        (TERSE, []),
        # The paraphrase names no path, so the files are not carried (a "rounding module"
        # is not src/invoice/rounding.py), nor the reviewer's role; it carries the rest in
        # its own words.
        (PARAPHRASE, ["request", "task", "commit", "error", "instruction"]),
        (ALLUSION, []),
    ],
    ids=["claude-style", "terse", "paraphrase", "allusion"],
)
def test_what_each_summary_kept(summary: str, kept: list[str]) -> None:
    found = coverage(SNAPSHOT, summary)
    rows = found["items"]
    assert isinstance(rows, list)
    assert sorted(str(r["kind"]) for r in rows if r["kept"]) == sorted(kept)
    assert found["kept"] == len(kept) and found["total"] == 8
    assert len(found["restored"]) == 8 - len(kept)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("item_kind", "summary", "expected"),
    [
        # Files: by path or by file name, as words (punctuation and case aside).
        ("file", "Edited `src/invoice/rounding.py`.", True),
        ("file", "Edited rounding.py only.", True),
        ("file", "Edited SRC/Invoice/Rounding.PY.", True),
        ("file", "Edited the rounding code.", False),
        ("file", "Edited rounding_utils.py.", False),
        # Commits: by a sha prefix of 7+ hex digits, or the message.
        ("commit", "HEAD is 3f9c2abdeadbeef.", True),
        ("commit", "HEAD is 3f9c2a.", False),  # six digits: too short to tell
        ("commit", "Commit: Round invoice totals half-up with Decimal.", True),
        ("commit", "We committed: totals of invoices now round half-up (Decimal).", True),
        ("commit", "Work was committed.", False),
        # Errors: by the command they failed on, or the words of the message.
        ("error", "Still failing: pytest tests/test_export.py -q.", True),
        ("error", "test_export.py fails.", True),
        ("error", "The CSV total column still shows 10.004 (AssertionError).", True),
        ("error", "Some tests fail.", False),
        # The last request: its first words, or most of its words.
        ("request", 'User: "Now check the CSV export total column as well."', True),
        ("request", "Next, check the total column of the CSV export.", True),
        ("request", "Next: the export.", False),
        # Standing instructions and tasks: the text, or most of its words.
        ("instruction", "Money is Decimal, never float; always.", True),
        ("instruction", "Be careful.", False),
        ("task", "Pending: add tests for the .005 cases.", True),
        ("task", "Pending: more tests.", False),
    ],
)
def test_matching_rules(item_kind: str, summary: str, expected: bool) -> None:
    items = {item.kind: item for item in key_items(SNAPSHOT)}
    if item_kind == "file":
        item = next(i for i in key_items(SNAPSHOT) if i.text == "src/invoice/rounding.py")
    elif item_kind == "instruction":
        item = next(i for i in key_items(SNAPSHOT) if i.kind == item_kind and "Decimal" in i.text)
    else:
        item = items[item_kind]
    assert carried(item, Summary(summary)) is expected


def test_each_row_names_its_item_and_restored_lists_the_ones_not_kept() -> None:
    found = coverage(SNAPSHOT, "Committed 3f9c2ab; tests/test_rounding.py is new.")
    items = found["items"]
    assert isinstance(items, list)
    rows = [(r["kind"], r["text"], r["shown"], r["kept"]) for r in items]
    request = "Now check the CSV export total column as well."
    commit = "Round invoice totals half-up with Decimal"
    role = "You are a careful reviewer of money code."
    rule = "Always use Decimal for money, never float."
    assert rows == [
        ("request", request, f"request {request}", False),
        ("task", "Add tests for the .005 cases", "task Add tests for the .005 cases", False),
        ("file", "tests/test_rounding.py", "file tests/test_rounding.py", True),
        ("file", "src/invoice/rounding.py", "file src/invoice/rounding.py", False),
        # A commit is shown with its short sha, an error by the command it failed on.
        ("commit", commit, f"commit 3f9c2ab {commit}", True),
        (
            "error",
            "AssertionError: CSV total column shows 10.004",
            "error pytest tests/test_export.py -q",
            False,
        ),
        ("instruction", role, f"instruction {role}", False),
        ("instruction", rule, f"instruction {rule}", False),
    ]
    assert found["restored"] == [shown for _, _, shown, kept in rows if not kept]
    assert found["kept"] == 2


@pytest.mark.parametrize(
    ("item", "shown"),
    [
        (KeyItem("file", "src/a.py"), "file src/a.py"),
        (KeyItem("commit", "Fix login", sha="3f9c2abdeadbeef"), "commit 3f9c2ab Fix login"),
        (KeyItem("commit", "Fix login"), "commit Fix login"),  # no sha recorded
        (KeyItem("error", "AssertionError: x", key="pytest -q"), "error pytest -q"),
        (KeyItem("error", "AssertionError: x"), "error AssertionError: x"),  # no key
        (KeyItem("task", "Split  the\n parser"), "task Split the parser"),
        # Up to 60 characters whole; a longer text cut to 59 and an ellipsis.
        (KeyItem("task", "x" * 60), "task " + "x" * 60),
        (KeyItem("task", "x" * 61), "task " + "x" * 59 + "…"),
    ],
    ids=["file", "commit", "commit-no-sha", "error", "error-no-key", "spaces", "60", "61"],
)
def test_how_an_item_is_shown(item: KeyItem, shown: str) -> None:
    assert item.shown() == shown


LOGIN = KeyItem("commit", "Fix login redirect loop", sha="3f9c2abdeadbeef")
RENAME = KeyItem(
    "request",
    "Rename the config loader to settings then update every import across the package and the docs",
)


THIRTY_ONE = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber coral "
    "olive maple cedar"
)


def _error(key: str, text: str) -> KeyItem:
    return KeyItem("error", text, key=key)


@pytest.mark.parametrize(
    ("item", "summary", "expected"),
    [
        # Endings come off words of three letters or more: fixes, fixed and fix are one
        # word, so three of the commit's four content words are carried.
        (LOGIN, "It fixes the redirect loop.", True),
        (LOGIN, "Fixed the redirect loop.", True),
        (LOGIN, "Fixing the redirect loop.", True),
        (LOGIN, "Fix the redirect loops.", True),
        (LOGIN, "The redirect loop.", False),  # two of four: under the overlap
        # Not off shorter words: bus is buses, not bu.
        (KeyItem("commit", "Fix bus stop timetable"), "Fixed the timetable of buses.", True),
        # Words under three letters and function words are not content words.
        (KeyItem("commit", "Fix a login loop in the UI"), "Fixed the login loop.", True),
        # Two content words at least; the first thirty count.
        (KeyItem("task", "Refactor parser"), "The parser needs a refactor.", True),
        (KeyItem("task", "Refactor it"), "Refactoring.", False),
        (KeyItem("task", THIRTY_ONE), " ".join(THIRTY_ONE.split()[:18]), True),
        # A sha shorter than seven digits (or none) matches no word of the summary.
        (KeyItem("commit", "Fix login", sha="3f9c2a"), "HEAD is 3f9c2abdeadbeef.", False),
        (KeyItem("commit", "Fix login"), "HEAD is deadbeef1.", False),
        # The last request by its first eight words in a row, though they are only half of
        # its content words; seven are not enough.
        (RENAME, 'Asked to "rename the config loader to settings then update".', True),
        (RENAME, 'Asked to "rename the config loader to settings then".', False),
        # An error by the file name of a path in its key: a word with a dot or a slash
        # that is not an option; the command itself or an option's value does not count.
        (
            _error("python manage.py migrate", "OperationalError: no such table: app_user"),
            "manage.py still fails.",
            True,
        ),
        (_error("ls build/out", "Permission denied"), "out is missing.", True),
        (
            _error("pytest tests/test_export.py -q", "AssertionError: CSV total 10.004"),
            "pytest is still red.",
            False,
        ),
        (
            _error("pytest -q --junitxml=reports/junit.xml", "3 failed, 12 passed"),
            "The report went to reports/junit.xml.",
            False,
        ),
    ],
    ids=[
        "es",
        "ed",
        "ing",
        "s",
        "too-few-words",
        "short-word-kept-whole",
        "no-short-or-function-words",
        "two-words",
        "one-word",
        "first-thirty",
        "short-sha",
        "no-sha",
        "request-prefix",
        "request-7-words",
        "dotted-name",
        "slashed-name",
        "command",
        "option-value",
    ],
)
def test_matching_details(item: KeyItem, summary: str, expected: bool) -> None:
    assert carried(item, Summary(summary)) is expected


def test_no_summary_means_every_item_was_restored_by_the_snapshot() -> None:
    found = coverage(SNAPSHOT, None)
    assert found["kept"] is None
    assert found["total"] == 8 and len(found["restored"]) == 8  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "snapshot",
    [
        '<session_resume session="s" unchanged_since="1">Nothing new…</session_resume>\n',
        "<session_resume/>\n",
        "not xml at all <",
        "",
    ],
)
def test_a_pointer_or_a_broken_snapshot_has_no_key_items(snapshot: str) -> None:
    assert key_items(snapshot) == []
    assert coverage(snapshot, "anything")["total"] == 0
