"""``ctxmode import`` shows what ctxmode would have restored at each compaction of the
user's history: the snapshot the hooks would have built then (from the session's events
before it; ``compaction.replayed``, schema 4), never claimed or injected, held against
the client's summary by ``stats``, ``show-snapshot`` and ``view``. And records of types
the importer does not know are named, and read when they carry a turn."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers import cli
from tests.test_import import (
    VERSIONS,
    copy_transcripts,
    rows,
    run_import,
    session_file,
    session_ids,
)


def _replayed(root: Path, sid: str) -> list[tuple[int, str | None, int | None]]:
    return rows(
        root,
        "SELECT compact_seq, replayed, replayed_events FROM compaction WHERE session_id = ? "
        "ORDER BY compact_seq",
        sid,
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_each_imported_compaction_gets_the_snapshot_the_hooks_would_have_built(
    version: str, tmp_path: Path, data_root: Path
) -> None:
    claude = copy_transcripts(tmp_path, version)
    summary = run_import(claude, "--all")
    assert summary["replayed"] == summary["compactions"] == 2
    sid = session_ids(version)["compacted"]
    (one, first, n1), (two, second, n2) = _replayed(data_root, sid)
    assert (one, two) == (1, 2) and first and second and 0 < n1 < n2
    # Built from the events before each compaction, as the hooks would have: the file
    # written before the first, edited between the two; the prompt typed after the
    # second belongs to neither.
    assert '<session_resume session="' + sid + '" compaction="1"' in first
    assert re.search(r'<file path="notes\.md" change="create" count="1"', first), first
    assert re.search(r'<file path="notes\.md" change="create,edit" count="2"', second), second
    assert "BIGCTX write the notes" in first and "what is left?" not in second
    # Kept apart from the snapshots the hooks hand over: none to claim or inject.
    assert rows(data_root, "SELECT count(*) FROM session_resume") == [(0,)]
    # A second run replays nothing again.
    assert run_import(claude, "--all")["replayed"] == 0


def test_stats_show_snapshot_and_view_compare_the_summary_with_the_replayed_snapshot(
    tmp_path: Path, data_root: Path
) -> None:
    claude = copy_transcripts(tmp_path)
    run_import(claude, "--all")
    sid = session_ids()["compacted"]
    project = ["--project", "/home/dev/proj"]
    stats = cli("stats", *project)
    assert stats.exit_code == 0, stats.output
    assert (
        "compaction 1 (auto), imported: the summary kept 0 of the 3 key items of a ctxmode "
        "snapshot; the snapshot would have added: request BIGCTX write the notes, task Fill in "
        "the notes, file notes.md"
    ) in stats.output
    assert "at 2 imported compactions they kept 0 of the 6 key items" in stats.output
    doc = json.loads(cli("stats", "--json", *project).output)
    found = doc["sessions"][[s["session_id"] for s in doc["sessions"]].index(sid)]
    assert [c["snapshot"] for c in found["compaction_coverage"]] == ["replayed", "replayed"]
    assert (found["replayed"], found["replayed_key_items"]) == (2, 6)

    shown = cli("show-snapshot", sid, "--seq", "1", *project)
    assert shown.exit_code == 0, shown.output
    head, coverage = shown.output.splitlines()[:2]
    assert head.startswith(f"replayed snapshot #1 of session {sid}") and "never injected" in head
    assert coverage.startswith("compaction 1 (auto), imported: the summary kept 0 of the 3")
    assert "<session_resume" in shown.output

    from ctxmode.store import Store
    from ctxmode.view.model import build_model

    path = str(sorted((data_root / "sessions").glob("*.db"))[0])
    with Store.open(path) as store:
        model = build_model(store.conn, project="/home/dev/proj", store_path=path,
                            generated_at="2026-12-05T00:00:00Z", session_id=sid)  # fmt: skip
    session = next(s for s in model["sessions"] if s["session_id"] == sid)
    states = [c["snapshot"]["state"] for c in session["compactions"]]
    assert states == ["replayed", "replayed"]
    assert session["compactions"][0]["coverage"]["total"] == 3


def test_unknown_record_types_are_named_and_a_turn_they_carry_is_read(
    tmp_path: Path, data_root: Path
) -> None:
    claude = copy_transcripts(tmp_path)
    path = session_file(claude, "plain")
    lines = path.read_text().splitlines(keepends=True)
    prompt = next(json.loads(x) for x in lines if '"type":"user"' in x.replace(" ", ""))
    carried = dict(prompt, type="user-turn-v9", uuid="u-new")
    carried["message"] = {"role": "user", "content": "ZEBRA please also add a README"}
    extra = [
        json.dumps(carried) + "\n",
        '{"type":"brand-new-kind","x":1}\n',
        '{"type":"brand-new-kind","x":2}\n',
        '{"type":"telemetry-blob","x":3}\n',
    ]
    path.write_text("".join(lines + extra))
    summary = run_import(claude, "--all")
    assert summary["unknown"] == 3
    assert summary["unknown_types"] == {"brand-new-kind": 2, "telemetry-blob": 1}
    sid = session_ids()["plain"]
    prompts = rows(
        data_root,
        "SELECT data FROM session_events WHERE session_id = ? AND type = 'user_prompt'",
        sid,
    )
    assert any("ZEBRA please also add a README" in r[0] for r in prompts)
    line = cli("import", "--all", env={"CLAUDE_CONFIG_DIR": str(claude)})
    assert line.exit_code == 0


def test_the_summary_line_names_the_unknown_types() -> None:
    from ctxmode import importer
    from ctxmode.cli.import_cmd import summary_line

    totals = importer.Totals()
    totals.unknown = 117
    totals.unknown_types = {"a": 100, "b": 10, "c": 3, "d": 2, "e": 1, "f": 1}
    assert "117 of unknown types (a 100, b 10, c 3, d 2, e 1, 1 more)" in summary_line(totals)


def test_an_import_into_a_store_of_schema_3_upgrades_it_and_replays(
    tmp_path: Path, data_root: Path
) -> None:
    import os
    import shutil

    from ctxmode import paths

    store = Path(paths.store_path("/home/dev/proj", dict(os.environ)))
    store.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    frozen = Path(__file__).resolve().parent / "fixtures_old_schemas" / "v3.db"
    shutil.copyfile(frozen, store)
    os.chmod(store, 0o600)
    before = rows(data_root, "SELECT count(*) FROM session_events")
    claude = copy_transcripts(tmp_path)
    assert run_import(claude, "--all")["replayed"] == 2
    assert rows(data_root, "PRAGMA user_version") == [(5,)]
    assert rows(data_root, "SELECT count(*) FROM session_events")[0][0] > before[0][0]
    sid = session_ids()["compacted"]
    assert [(seq, bool(text)) for seq, text, _ in _replayed(data_root, sid)] == [
        (1, True),
        (2, True),
    ]


def test_snapshots_of_a_history_in_one_pass_equal_each_prefix_built_alone() -> None:
    """``build_snapshots`` (one fold for all of a session's compactions) gives exactly
    ``build_snapshot`` of each prefix, a commit whose failure comes late included."""
    from ctxmode.events import make
    from ctxmode.snapshot import build_snapshot, build_snapshots
    from tests.snapshot_sessions import work_session

    events = work_session(200)
    late = make("git_commit", {"message": "Late failing commit"}, tool_use_id="toolu_late")
    failure = make("tool_error", {"tool": "Bash", "key": "git commit", "error": "hook failed"},
                   tool_use_id="toolu_late")  # fmt: skip
    events = [*events[:120], late, *events[120:150], failure, *events[150:]]
    ends = [1, 7, 60, 121, 122, 140, 151, 152, 190, len(events)]
    points = [(end, n) for n, end in enumerate(ends, 1)]
    for budget in (1024, 4096):
        got = build_snapshots(events, points, session_id="s", budget=budget, search_command="x")
        for (end, seq), xml in zip(points, got, strict=True):
            alone = build_snapshot(events[:end], session_id="s", compact_seq=seq, budget=budget,
                                   search_command="x")  # fmt: skip
            assert xml == alone, (end, budget)
    assert "Late failing commit" in build_snapshots(events, [(125, 1)], session_id="s")[0]
