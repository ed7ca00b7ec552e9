"""``ctxmode stats``: counts per session and overall, and the two byte measures.

bytes_returned = claimed snapshots' UTF-8 bytes + the output of searches Claude Code ran;
bytes_avoided = the events' bytes_avoided (raw tool traffic they stand for).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxmode import paths
from ctxmode import stats as stats_mod
from ctxmode.cli import main
from ctxmode.events import SessionEvent, make
from ctxmode.store import Store
from tests.hooktools import hook_env, run_hook

A = "aaaa1111-0000-4000-8000-000000000001"
B = "bbbb2222-0000-4000-8000-000000000002"
SNAPSHOT_A = "<session_resume>rounding: half-up → done</session_resume>"  # 59 bytes, 57 characters
SNAPSHOT_B = "<session_resume>b</session_resume>"  # 34 bytes


def ev(type_: str, data: dict[str, Any], avoided: int) -> SessionEvent:
    event = make(type_, data)
    event.bytes_avoided = avoided
    return event


def stamp(minute: int) -> str:
    return f"2026-12-02T14:{minute:02d}:00.000Z"


def fill(store: Store) -> None:
    """Two sessions with known events, snapshots and searches."""
    store.add_events(
        A,
        [
            ev("user_prompt", {"text": "round half-up"}, 0),
            ev("file_read", {"path": "src/app.py"}, 5000),
            ev("file_edit", {"path": "src/app.py"}, 1200),
            ev("git_commit", {"message": "Round half-up"}, 300),
        ],
        source_hook="PostToolUse",
        project_dir="/p",
        now=stamp(1),
    )
    store.save_resume(A, SNAPSHOT_A, 4, kind="compact", now=stamp(2))
    store.claim_resume(claimed_by=A, session_id=A, kind="compact", now=0)
    store.save_resume(A, "<session_resume>unread end</session_resume>", 4, kind="end", now=stamp(3))
    store.discard_unclaimed(A, reason="superseded", kind="end")
    store.save_resume(
        A, "<session_resume>waiting</session_resume>", 4, kind="compact", now=stamp(4)
    )
    store.record_search(A, 300)
    store.record_search(A, 400)
    store.add_events(
        B,
        [
            ev("tool_error", {"tool": "Bash", "key": "make", "error": "boom"}, 90),
            ev("file_read", {"path": "Makefile"}, 10),
        ],
        source_hook="PostToolUse",
        project_dir="/p",
        now=stamp(10),
    )
    store.save_resume(B, SNAPSHOT_B, 2, kind="end", now=stamp(11))
    # A new session picks up B's end snapshot: B's bytes, put into C's context.
    store.claim_resume(claimed_by="cccc3333", exclude_session="cccc3333", kind="end", now=0)
    store.record_search("", 50)  # Claude Code ran a search, without a session id
    store.record_search("purged-session", 80)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    store = Store.open(paths.store_path(str(tmp_path), os.environ))
    fill(store)
    store.close()
    return tmp_path


SESSION_A = {
    "session_id": A,
    "project_dir": "/p",
    "started_at": stamp(1),
    "last_event_at": stamp(1),
    "events": 4,
    "events_by_category": {"file": 2, "git": 1, "prompt": 1},
    "evicted": 0,
    "compactions": 2,
    "snapshots_stored": 3,
    "snapshots_claimed": 1,
    "snapshots_retired": 1,
    "snapshot_bytes": 59,
    "searches": 2,
    "search_bytes": 700,
    "bytes_returned": 759,
    "bytes_avoided": 6500,
    "ratio": 8.56,
    "summaries": 0,
    "key_items": 0,
    "key_items_kept": 0,
    "replayed": 0,
    "replayed_key_items": 0,
    "replayed_key_items_kept": 0,
    "compaction_coverage": [
        {
            "compact_seq": seq,
            "trigger": "",
            "origin": None,
            "summary_recorded": False,
            "summary_bytes": 0,
            "snapshot": "full",
            "unchanged_since": None,
            "key_items": 0,
            "summary_kept": None,
            "restored": [],
            "items": [],
        }
        for seq in (1, 2)
    ],
}
SESSION_B = {
    "session_id": B,
    "project_dir": "/p",
    "started_at": stamp(10),
    "last_event_at": stamp(10),
    "events": 2,
    "events_by_category": {"file": 1, "error": 1},
    "evicted": 0,
    "compactions": 0,
    "snapshots_stored": 1,
    "snapshots_claimed": 1,
    "snapshots_retired": 0,
    "snapshot_bytes": 34,
    "searches": 0,
    "search_bytes": 0,
    "bytes_returned": 34,
    "bytes_avoided": 100,
    "ratio": 2.94,
    "summaries": 0,
    "key_items": 0,
    "key_items_kept": 0,
    "replayed": 0,
    "replayed_key_items": 0,
    "replayed_key_items_kept": 0,
    "compaction_coverage": [],
}


def _document(result: Any) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    store = document["store"]
    assert store["file_bytes"] > 0
    assert store["bytes_per_event"] == round(store["file_bytes"] / 6, 1)
    store["file_bytes"] = store["bytes_per_event"] = "MASKED"
    return document


def test_json_on_a_known_store(project: Path) -> None:
    result = CliRunner().invoke(
        main, ["stats", "--project", str(project), "--json"], catch_exceptions=False
    )
    assert _document(result) == {
        "store": {
            "path": paths.store_path(str(project), os.environ),
            "file_bytes": "MASKED",
            "events": 6,
            "sessions": 2,
            "bytes_per_event": "MASKED",
            "full_text_search": True,
        },
        "overall": {
            "sessions": 2,
            "events": 6,
            "evicted": 0,
            "compactions": 2,
            "snapshots_stored": 4,
            "snapshots_claimed": 2,
            "snapshots_retired": 1,
            "snapshot_bytes": 93,
            "searches": 4,
            "search_bytes": 830,
            "bytes_returned": 923,
            "bytes_avoided": 6600,
            "events_by_category": {"file": 3, "git": 1, "prompt": 1, "error": 1},
            "other_searches": 2,
            "other_search_bytes": 130,
            "ratio": 7.15,
            "summaries": 0,
            "key_items": 0,
            "key_items_kept": 0,
            "replayed": 0,
            "replayed_key_items": 0,
            "replayed_key_items_kept": 0,
        },
        "sessions": [SESSION_B, SESSION_A],  # most recently active first
    }


def test_one_session_by_prefix(project: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["stats", "--project", str(project), "--json", "--session", "aaaa"],
        catch_exceptions=False,
    )
    document = _document(result)
    assert document["sessions"] == [SESSION_A]
    # Overall is the shown session alone: searches of other or unknown sessions are left out.
    overall = document["overall"]
    assert (
        overall["sessions"],
        overall["searches"],
        overall["bytes_returned"],
        overall["other_searches"],
        overall["ratio"],
    ) == (1, 2, 759, 0, 8.56)


def _masked(text: str) -> str:
    text = re.sub(r"\d+[smhd] ago|just now", "AGE", text)
    return re.sub(r"(?m)^  [\d,]+ B .* on disk", "  SIZE on disk", text)


def test_human_output(project: Path) -> None:
    result = CliRunner().invoke(main, ["stats", "--project", str(project)], catch_exceptions=False)
    assert result.exit_code == 0
    path = paths.store_path(str(project), os.environ)
    body = re.sub(r", [\d,]+ B per event", ", N B per event", _masked(result.stdout))
    assert body == (
        f"store {path}\n"
        "  SIZE on disk, 6 events in 2 sessions, N B per event\n"
        "\n"
        f"session {B} (started AGE, last event AGE)\n"
        "  events       2 stored: file 1, error 1\n"
        "  compactions  0; snapshots 1 stored, 1 claimed, 0 retired unread\n"
        "  searches     0 run by the model\n"
        "  returned     34 B into the context (snapshots 34, searches 0)\n"
        "  avoided      100 B of raw tool traffic stood for\n"
        "  ratio        2.9 : 1 (avoided : returned)\n"
        "\n"
        f"session {A} (started AGE, last event AGE)\n"
        "  events       4 stored: file 2, git 1, prompt 1\n"
        "  compactions  2; snapshots 3 stored, 1 claimed, 1 retired unread\n"
        "  searches     2 run by the model\n"
        "  returned     759 B into the context (snapshots 59, searches 700)\n"
        "  avoided      6,500 B (6.3 KiB) of raw tool traffic stood for\n"
        "  ratio        8.6 : 1 (avoided : returned)\n"
        "  summaries    none recorded (PostCompact not registered, or Claude Code before 2.1.76)\n"
        "    compaction 1: no summary recorded; the snapshot restored 0 key items\n"
        "    compaction 2: no summary recorded; the snapshot restored 0 key items\n"
        "\n"
        "overall (2 sessions)\n"
        "  events       6 stored: file 3, git 1, prompt 1, error 1\n"
        "  compactions  2; snapshots 4 stored, 2 claimed, 1 retired unread\n"
        "  searches     4 run by the model\n"
        "  returned     923 B into the context (snapshots 93, searches 830)\n"
        "  avoided      6,600 B (6.4 KiB) of raw tool traffic stood for\n"
        "  ratio        7.2 : 1 (avoided : returned)\n"
        "  summaries    none recorded (PostCompact not registered, or Claude Code before 2.1.76)\n"
        "  (the searches include 2 run outside a stored session: 130 B)\n"
    )


def test_errors(project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["stats", "--project", str(project), "--session", "zzz"])
    assert result.exit_code == 2  # a usage error, as with every command
    assert "Error: Invalid value for '--session': no session 'zzz' in" in result.output
    # Not under the project's folder: outside git, a subfolder reads the store above it.
    empty = tmp_path_factory.mktemp("never-used")
    result = runner.invoke(main, ["stats", "--project", str(empty)])
    assert result.exit_code == 1
    assert "no ctxmode store for" in result.output


# ------------------------------------------------------------------ the pure pieces


@pytest.mark.parametrize(
    ("row", "claimed"),
    [
        ({"consumed": 1, "consumed_by": A}, True),
        ({"consumed": 1, "consumed_by": "clear"}, False),
        ({"consumed": 1, "consumed_by": "resumed"}, False),
        ({"consumed": 1, "consumed_by": "superseded"}, False),
        ({"consumed": 0, "consumed_by": None}, False),
    ],
)
def test_is_claimed(row: dict[str, Any], claimed: bool) -> None:
    assert stats_mod.is_claimed(row) is claimed


@pytest.mark.parametrize(
    ("avoided", "returned", "expected"),
    [(6500, 758, 8.58), (0, 100, 0.0), (100, 0, None), (0, 0, None), (1, 3, 0.33)],
)
def test_ratio(avoided: int, returned: int, expected: float | None) -> None:
    assert stats_mod.ratio(avoided, returned) == expected


def test_events_by_category_keeps_the_contract_order() -> None:
    meta = {"session_id": "s", "compact_count": 0, "evicted_count": 3}
    totals = [
        ("s", "error", 2, 10),
        ("s", "zeta-new", 1, 0),
        ("s", "file", 5, 90),
        ("s", "cwd", 1, 0),
    ]
    entry = stats_mod.session_entry(meta, totals, [], (0, 0))
    assert list(entry["events_by_category"].items()) == [
        ("file", 5),
        ("cwd", 1),
        ("error", 2),
        ("zeta-new", 1),
    ]
    assert (entry["events"], entry["evicted"], entry["bytes_avoided"], entry["ratio"]) == (
        9,
        3,
        100,
        None,
    )


def test_store_methods_for_stats(project: Path) -> None:
    store = Store.open(paths.store_path(str(project), os.environ), readonly=True)
    try:
        assert sorted(store.event_totals(B)) == [(B, "error", 1, 90), (B, "file", 1, 10)]
        assert len(store.event_totals()) == 5
        sizes = [
            (r["session_id"], r["kind"], r["consumed"], r["consumed_by"], r["bytes"])
            for r in store.resume_sizes()
        ]
        assert sizes == [
            (A, "compact", 1, A, len(SNAPSHOT_A.encode())),
            (A, "end", 1, "superseded", 43),
            (A, "compact", 0, None, 40),
            (B, "end", 1, "cccc3333", 34),
        ]
        assert [r["compact_seq"] for r in store.resume_sizes(A)] == [1, 1, 2]
    finally:
        store.close()


# ------------------------------------------------------------------ real processes, real hooks


def test_stats_after_a_real_session(data_root: Path, tmp_path: Path) -> None:
    """Hooks record a session, compact it (snapshot claimed), the model runs a search,
    the session ends (end snapshot, unclaimed): stats counts each byte once."""
    project = str(tmp_path / "proj")
    env = hook_env(CTXMODE_HOME=str(data_root), CLAUDE_PROJECT_DIR=project)
    sid = "5e551011-0000-4000-8000-00000000b7e5"
    base = {"session_id": sid, "cwd": project, "transcript_path": f"/tmp/{sid}.jsonl"}
    calls = [
        ("UserPromptSubmit", {"prompt": "add a CSV parser and commit it"}),
        (
            "PostToolUse",
            {
                "tool_name": "Write",
                "tool_use_id": "w1",
                "tool_input": {"file_path": f"{project}/parser.py", "content": "x=1\n"},
                "tool_response": {"type": "create", "filePath": f"{project}/parser.py"},
            },
        ),
        (
            "PostToolUse",
            {
                "tool_name": "Bash",
                "tool_use_id": "b1",
                "tool_input": {"command": "git commit -am 'Add CSV parser'"},
                "tool_response": {"stdout": "[main 1a2b3c4] Add CSV parser", "stderr": ""},
            },
        ),
        ("PreCompact", {"trigger": "auto", "custom_instructions": None}),
        ("SessionStart", {"source": "compact"}),
    ]
    outputs = []
    for event, fields in calls:
        result = run_hook(event, {**base, "hook_event_name": event, **fields}, env=env)
        assert (result.returncode, result.stderr) == (0, b"")
        outputs.append(result.stdout)
    snapshot = json.loads(outputs[-1])["hookSpecificOutput"]["additionalContext"]
    searched = subprocess.run(
        [sys.executable, "-m", "ctxmode", "search", "--project", project, "CSV parser"],
        capture_output=True,
        env={**env, "CLAUDE_CODE_SESSION_ID": sid},
        check=True,
        timeout=60,
    )
    assert b"Add CSV parser" in searched.stdout
    end = run_hook(
        "SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "other"}, env=env
    )
    assert end.returncode == 0

    out = subprocess.run(
        [sys.executable, "-m", "ctxmode", "stats", "--project", project, "--json"],
        capture_output=True,
        env=env,
        check=True,
        timeout=60,
    )
    (entry,) = json.loads(out.stdout)["sessions"]
    store = Store.open(paths.store_path(project, {"CTXMODE_HOME": str(data_root)}), readonly=True)
    try:
        events = store.session_events(sid)
    finally:
        store.close()
    categories: dict[str, int] = {}
    for event in events:
        categories[event.category] = categories.get(event.category, 0) + 1
    snapshot_bytes = len(snapshot.encode())
    assert {
        k: entry[k]
        for k in (
            "events",
            "compactions",
            "snapshots_stored",
            "snapshots_claimed",
            "snapshots_retired",
            "snapshot_bytes",
            "searches",
            "search_bytes",
            "bytes_returned",
            "bytes_avoided",
        )
    } == {
        "events": len(events),
        "compactions": 1,
        "snapshots_stored": 2,  # the compact one (claimed) and the end one (waiting)
        "snapshots_claimed": 1,
        "snapshots_retired": 0,
        "snapshot_bytes": snapshot_bytes,
        "searches": 1,
        "search_bytes": len(searched.stdout),
        "bytes_returned": snapshot_bytes + len(searched.stdout),
        "bytes_avoided": sum(e.bytes_avoided for e in events),
    }
    assert entry["events_by_category"] == {
        c: n
        for c, n in sorted(categories.items(), key=lambda kv: stats_mod.CATEGORIES.index(kv[0]))
    }
    assert {"file", "git", "prompt"} <= set(categories)
    human = subprocess.run(
        [sys.executable, "-m", "ctxmode", "stats", "--project", project],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    assert f"session {sid} (started " in human.stdout
    assert f"(snapshots {snapshot_bytes:,}, searches {len(searched.stdout):,})" in human.stdout


@pytest.mark.parametrize(
    ("avoided", "returned", "line"),
    [
        (6500, 759, "  ratio        8.6 : 1 (avoided : returned)"),
        (0, 759, "  ratio        - (no raw tool traffic recorded)"),
        (6500, 0, "  ratio        - (nothing put into the context yet)"),
    ],
)
def test_ratio_line(avoided: int, returned: int, line: str) -> None:
    from ctxmode.cli.stats import entry_lines

    entry = stats_mod.session_entry(
        {"session_id": "s"}, [("s", "file", 1, avoided)], [], (1, returned)
    )
    assert entry_lines(entry)[-1] == line
