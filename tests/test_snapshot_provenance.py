"""A snapshot handed to another session says where it comes from (issue 13, item 8).

A compaction snapshot goes back to its own session: ``compaction="N"`` and "the earlier
part of this session". An end-of-session snapshot is numbered on its own (``end="N"``);
when ``inject_on_startup``, ``inject_on_clear`` or a resume under a new id hands it (or
a compaction snapshot its session never took up) to *another* session, its root says
``source="previous-session"``, which session, when it ended and why it is given, and
its preface says the same in words — never "the earlier part of this session".
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ctxmode import paths
from ctxmode.events import make
from ctxmode.snapshot import (
    PREFACE,
    PROVENANCE_RESERVE,
    build_snapshot,
    provenance,
)
from ctxmode.store import Store
from tests.hooktools import hook_env, run_hook

PROJECT = "/home/dev/proj"
EARLIER = "e0a1b2c3-earlier-session"
NEW = "f9e8d7c6-new-session"


def _events(n: int = 30) -> list:
    events = [make("user_prompt", {"text": "Add CSV export to the invoice page"})]
    for k in range(n):
        events.append(make("file_edit", {"path": f"src/module_{k}.py", "summary": "x" * 80}))
        events[-1].created_at = f"2026-12-01T10:{k % 60:02d}:00.000Z"
    events[0].created_at = "2026-12-01T09:59:00.000Z"
    return events


# ---------------------------------------------------------------- the pure functions


def test_end_snapshot_is_numbered_as_an_end_not_a_compaction() -> None:
    xml = build_snapshot(_events(), session_id=EARLIER, compact_seq=2, kind="end")
    root = ET.fromstring(xml)
    assert root.get("end") == "2" and root.get("compaction") is None
    assert root.get("session") == EARLIER
    preface = root.findtext("preface") or ""
    assert f"in session {EARLIER} until it ended" in preface
    assert "earlier part of this session" not in preface
    # A compaction snapshot is unchanged: its number, its preface.
    compact = ET.fromstring(build_snapshot(_events(), session_id=EARLIER, compact_seq=3))
    assert compact.get("compaction") == "3" and compact.get("end") is None
    assert compact.findtext("preface") == PREFACE


@pytest.mark.parametrize("budget", [1024, 2048, 4096, 9000])
def test_handed_on_end_snapshot_still_fits_its_budget(budget: int) -> None:
    xml = build_snapshot(
        _events(200), session_id="s" * 64, compact_seq=1, budget=budget, kind="end"
    )
    assert len(xml.encode()) <= budget - PROVENANCE_RESERVE
    handed = provenance(
        xml,
        from_session="s" * 64,
        kind="end",
        seq=1,
        taken_at="2026-12-01T11:00:00.000Z",
        reason="inject_on_startup",
    )
    assert len(handed.encode()) <= budget
    ET.fromstring(handed)


def test_provenance_says_which_session_when_and_why() -> None:
    xml = build_snapshot(_events(), session_id=EARLIER, compact_seq=1, kind="end")
    handed = provenance(
        xml,
        from_session=EARLIER,
        kind="end",
        seq=1,
        taken_at="2026-12-01T11:00:00.000Z",
        reason="inject_on_startup",
    )
    root = ET.fromstring(handed)
    assert handed.startswith(
        f'<session_resume source="previous-session" from_session="{EARLIER}" end="1" '
        'ended_at="2026-12-01T11:00:00.000Z" reason="inject_on_startup" events="31" '
        'from="2026-12-01T09:59:00.000Z" to="2026-12-01T10:29:00.000Z">\n<preface>'
    )
    assert root.get("compaction") is None and root.get("session") is None
    assert root.findtext("preface") == (
        f"Facts recorded by ctxmode in an earlier session (id {EARLIER}, ended "
        "2026-12-01T11:00:00.000Z), not in this one; given at this fresh start because "
        "the inject_on_startup setting is on. Run the search command below with a few "
        "words for any other detail, or with a section's lookup for what it leaves out."
    )
    # Everything after the preface is the stored snapshot, byte for byte.
    assert handed.split("</preface>", 1)[1] == xml.split("</preface>", 1)[1]


@pytest.mark.parametrize(
    ("reason", "words"),
    [
        ("inject_on_clear", "after /clear because the inject_on_clear setting is on"),
        ("resume", "because this session was resumed under a new id"),
        ("fork", "because this session was forked under a new id"),
    ],
)
def test_each_reason_is_explained(reason: str, words: str) -> None:
    xml = build_snapshot(_events(), session_id=EARLIER, compact_seq=1, kind="end")
    handed = provenance(
        xml, from_session=EARLIER, kind="end", seq=1, taken_at="2026-12-01T11:00Z", reason=reason
    )
    root = ET.fromstring(handed)
    assert root.get("reason") == reason
    assert words in (root.findtext("preface") or "")


def test_a_stale_compaction_snapshot_of_another_session_says_so() -> None:
    xml = build_snapshot(_events(), session_id=EARLIER, compact_seq=2)
    handed = provenance(
        xml,
        from_session=EARLIER,
        kind="compact",
        seq=2,
        taken_at="2026-12-01T11:00Z",
        reason="resume",
    )
    root = ET.fromstring(handed)
    assert (root.get("source"), root.get("compaction"), root.get("compacted_at")) == (
        "previous-session",
        "2",
        "2026-12-01T11:00Z",
    )
    preface = root.findtext("preface") or ""
    assert "earlier part of this session" not in preface
    assert "never taken up by that session" in preface


@pytest.mark.parametrize(
    "stored",
    [
        # Written by an older ctxmode: an end snapshot that called itself a compaction.
        f'<session_resume session="{EARLIER}" compaction="1" events="3">\n'
        f"<preface>{PREFACE}</preface>\n<requests/>\n</session_resume>\n",
        "<session_resume/>\n",
        '<session_resume session="a&amp;b" compaction="1" events="0">\n</session_resume>\n',
    ],
)
def test_provenance_of_other_shapes_stays_well_formed(stored: str) -> None:
    handed = provenance(
        stored, from_session='a&b"<c', kind="end", seq=1, taken_at="t", reason="inject_on_startup"
    )
    root = ET.fromstring(handed)
    assert root.get("from_session") == 'a&b"<c'
    assert "earlier part of this session" not in handed
    assert root.get("compaction") is None


def test_provenance_leaves_what_it_cannot_read() -> None:
    assert provenance("garbage", from_session="x", kind="end", seq=1, taken_at="", reason="r") == (
        "garbage"
    )


# ---------------------------------------------------------------- through the real hooks


def _call(event: str, session: str, **fields: str) -> dict[str, str]:
    return {"session_id": session, "cwd": PROJECT, "hook_event_name": event, **fields}


def _write(session: str, name: str) -> dict[str, object]:
    path = f"{PROJECT}/{name}"
    return {
        **_call("PostToolUse", session),
        "tool_name": "Write",
        "tool_input": {"file_path": path, "content": ""},
        "tool_response": {"type": "create", "filePath": path},
    }


def _ok(result: subprocess.CompletedProcess[bytes]) -> bytes:
    assert (result.returncode, result.stderr) == (0, b""), result.stderr
    return result.stdout


def _context(out: bytes) -> str:
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def _ended_session(root: Path) -> dict[str, str]:
    env = hook_env(CTXMODE_HOME=str(root), CLAUDE_PROJECT_DIR=PROJECT)
    _ok(run_hook("PostToolUse", _write(EARLIER, "billing.py"), env=env))
    _ok(run_hook("PreCompact", _call("PreCompact", EARLIER, trigger="auto"), env=env))
    _ok(run_hook("SessionStart", _call("SessionStart", EARLIER, source="compact"), env=env))
    _ok(run_hook("PreCompact", _call("PreCompact", EARLIER, trigger="auto"), env=env))
    _ok(run_hook("SessionStart", _call("SessionStart", EARLIER, source="compact"), env=env))
    _ok(run_hook("SessionEnd", _call("SessionEnd", EARLIER, reason="other"), env=env))
    return env


def _rows(root: Path) -> list[dict[str, object]]:
    with Store.open(paths.store_path(PROJECT, {"CTXMODE_HOME": str(root)}), readonly=True) as s:
        return s.resumes()


def test_startup_injection_names_the_earlier_session(tmp_path: Path) -> None:
    env = _ended_session(tmp_path)
    # Two compactions, then the end: numbered compact 1, 2 and end 1, not "compaction 3".
    rows = _rows(tmp_path)
    assert [(r["kind"], r["compact_seq"]) for r in rows] == [
        ("compact", 1),
        ("compact", 2),
        ("end", 1),
    ]
    stored_end = str(rows[-1]["snapshot"])
    assert ET.fromstring(stored_end).get("end") == "1"
    (tmp_path / "config.json").write_text('{"inject_on_startup": true}')
    out = _ok(run_hook("SessionStart", _call("SessionStart", NEW, source="startup"), env=env))
    given = _context(out)
    root = ET.fromstring(given)
    ended_at = str(_rows(tmp_path)[-1]["created_at"])
    assert root.attrib["source"] == "previous-session"
    assert root.attrib["from_session"] == EARLIER
    assert root.attrib["end"] == "1"
    assert root.attrib["ended_at"] == ended_at
    assert root.attrib["reason"] == "inject_on_startup"
    assert "compaction" not in root.attrib and "session" not in root.attrib
    preface = root.findtext("preface") or ""
    assert f"an earlier session (id {EARLIER}, ended {ended_at})" in preface
    assert "inject_on_startup" in preface
    assert "earlier part of this session" not in given
    assert "billing.py" in given
    # The store keeps the snapshot as SessionEnd wrote it; it is claimed by the new session.
    row = _rows(tmp_path)[-1]
    assert (row["snapshot"], row["consumed_by"]) == (stored_end, NEW)


def test_a_resume_under_a_new_id_and_a_clear_say_why(tmp_path: Path) -> None:
    env = _ended_session(tmp_path)
    out = _ok(run_hook("SessionStart", _call("SessionStart", NEW, source="resume"), env=env))
    root = ET.fromstring(_context(out))
    assert (root.get("source"), root.get("reason"), root.get("from_session")) == (
        "previous-session",
        "resume",
        EARLIER,
    )
    # Another session ends; after a /clear with inject_on_clear its snapshot is given.
    _ok(run_hook("PostToolUse", _write(NEW, "later.py"), env=env))
    _ok(run_hook("SessionEnd", _call("SessionEnd", NEW, reason="other"), env=env))
    (tmp_path / "config.json").write_text('{"inject_on_clear": true}')
    out = _ok(run_hook("SessionStart", _call("SessionStart", "third", source="clear"), env=env))
    root = ET.fromstring(_context(out))
    assert (root.get("reason"), root.get("from_session")) == ("inject_on_clear", NEW)
    assert "/clear" in (root.findtext("preface") or "")


def test_own_compaction_snapshot_is_unchanged(tmp_path: Path) -> None:
    env = hook_env(CTXMODE_HOME=str(tmp_path), CLAUDE_PROJECT_DIR=PROJECT)
    _ok(run_hook("PostToolUse", _write(EARLIER, "billing.py"), env=env))
    _ok(run_hook("PreCompact", _call("PreCompact", EARLIER, trigger="auto"), env=env))
    out = _ok(run_hook("SessionStart", _call("SessionStart", EARLIER, source="compact"), env=env))
    given = _context(out)
    assert given == _rows(tmp_path)[0]["snapshot"]
    root = ET.fromstring(given)
    assert (root.get("session"), root.get("compaction"), root.get("source")) == (EARLIER, "1", None)
    assert root.findtext("preface") == PREFACE
