"""Search matches what a person sees: the values of the event data (issue 13, item 7).

Not its JSON: ``search path`` must not match every file event through the key
``"path"``, a one-letter query must not match the ``n`` of an escaped line break, and a
backslash or a quote in a value is found as the person reads it. Both engines (the FTS5
trigram index and the LIKE fallback) match the same values, the snippet shows them, and
a store of schema 1 is upgraded to search them too (migrations.m002_search_values),
including a large one whose oldest events stay out of the index and are found by LIKE.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxmode import migrations, paths
from ctxmode.cli import main
from ctxmode.events import make
from ctxmode.store import Store

FROZEN = Path(__file__).resolve().parent / "fixtures_old_schemas" / "v1.db"

EVENTS = [
    ("file_read", {"path": "src/app.py"}),
    ("user_prompt", {"text": "first line\nsecond line"}),
    ("file_edit", {"path": "C:\\work\\report.py", "summary": 'say "hello"'}),
    ("task_update", {"id": "7", "status": "completed"}),
    ("file_edit", {"path": "notes.md", "replace_all": True}),
    ("mcp_call", {"server": "billing", "tool": "lookup", "args": ["invoice", "year"]}),
    ("todo_write", {"todos": [{"content": "Write rounding tests", "status": "pending"}]}),
]


@pytest.fixture(params=["fts", "like"])
def store(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    if request.param == "like":
        monkeypatch.setenv("CTXMODE_NO_FTS", "1")
    s = Store.open(str(tmp_path / "s.db"))
    assert s.fts_enabled() is (request.param == "fts")
    s.add_events("s", [make(t, d) for t, d in EVENTS], source_hook="PostToolUse", project_dir="/p")
    yield s
    s.close()


def types(hits) -> list[str]:
    return sorted(h.type for h in hits)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # Key names are not what a person reads: no match through "path", "status", ...
        ("path", []),
        ("status", []),
        ("summary", []),
        ("todos", []),
        ("replace_all", []),
        ("args", []),
        # The "n" of an escaped line break, the quote and backslash escapes.
        ("n", ["file_edit", "mcp_call", "todo_write", "user_prompt"]),
        ("\\n", []),
        # Values, as they read.
        ("app.py", ["file_read"]),
        ("C:\\work\\report", ["file_edit"]),
        ("\\work", ["file_edit"]),
        ('say "hello"', ["file_edit"]),
        ("line second", ["user_prompt"]),
        ("completed", ["task_update"]),
        ("true", ["file_edit"]),  # a boolean value reads true
        ("invoice year", ["mcp_call"]),
        ("rounding tests pending", ["todo_write"]),
    ],
)
def test_search_matches_values_not_json(store: Store, query: str, expected: list[str]) -> None:
    hits = store.search(query)
    # The events holding the query come first (others may follow: they share a word).
    assert types(hits[: len(expected)]) == expected
    assert bool(hits) == bool(expected)


def test_one_letter_does_not_match_escapes(store: Store) -> None:
    # "t" is in "\t"-free values only where the person sees a t.
    assert "user_prompt" not in types(store.search("\\"))
    assert types(store.search("\\")) == ["file_edit"]  # the Windows path, and only it


def test_snippet_shows_values(store: Store) -> None:
    [hit] = store.search("report")
    assert hit.snippet == 'C:\\work\\**report**.py\nsay "hello"'
    [hit] = store.search("second")
    assert hit.snippet == "first line\n**second** line"
    assert '"path"' not in hit.snippet and "\\n" not in hit.snippet


def test_cli_search_path_and_a_letter(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    with Store.open(paths.store_path(str(project), os.environ)) as s:
        s.add_events(
            "s", [make(t, d) for t, d in EVENTS], source_hook="PostToolUse", project_dir="/p"
        )
    run = CliRunner().invoke
    result = run(main, ["search", "path", "--project", str(project), "--json"])
    assert result.exit_code == 0 and json.loads(result.output) == []
    result = run(main, ["search", "path", "--project", str(project)])
    assert result.output.startswith("No event shares a word with 'path'.")
    hits = json.loads(run(main, ["search", "n", "--project", str(project), "--json"]).output)
    assert "task_update" not in {h["type"] for h in hits}  # {"id":"7","status":"completed"}
    result = run(main, ["search", "C:\\work", "--project", str(project), "--json"])
    assert [h["type"] for h in json.loads(result.output)] == ["file_edit"]


def test_data_that_is_not_json_is_searched_as_it_is(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "s.db")) as s:
        s.add_events("s", [make("decision", {"text": "x"})], source_hook="t", project_dir="")
        s.conn.execute('UPDATE session_events SET data = \'{"text": "cut in the mid\'')
        assert [h.type for h in s.search("cut in")] == ["decision"]
        assert s.integrity_check() == "ok"


# ---------------------------------------------------------------- the upgrade from schema 1


def _v1_store(path: Path, n: int) -> None:
    """A store at schema 1 (its raw-JSON index), with ``n`` file events."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        migrations.migrate(conn, migrations.MIGRATIONS[:1])
        conn.execute("BEGIN")
        for i in range(n):
            data = json.dumps({"path": f"src/mod_{i:03d}.py", "summary": f"edit {i}"})
            conn.execute(
                "INSERT INTO session_events (session_id, type, category, priority, data, "
                "data_hash, created_at) VALUES ('s', 'file_edit', 'file', 2, ?, ?, ?)",
                (data, f"{i:064x}", f"2026-12-01T10:{i // 60:02d}:{i % 60:02d}.000Z"),
            )
        conn.execute(
            "INSERT INTO session_meta (session_id, started_at, last_event_at, event_count) "
            "VALUES ('s', '2026-12-01T10:00:00.000Z', '2026-12-01T11:00:00.000Z', ?)",
            (n,),
        )
        conn.execute("COMMIT")
        # Schema 1 matched the key: every file event for "path".
        assert conn.execute(
            "SELECT count(*) FROM events_fts WHERE events_fts MATCH '\"path\"'"
        ).fetchone() == (n,)
    finally:
        conn.close()


def test_upgrade_from_schema_1_searches_values(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    _v1_store(path, 30)
    with Store.open(str(path)) as s:
        assert s.schema_version() == migrations.SCHEMA_VERSION == 5
        assert s.search("path") == []
        assert s.search("mod_007")[0].data == '{"path": "src/mod_007.py", "summary": "edit 7"}'
        assert len(s.search("src/mod", limit=100)) == 30
        assert s.integrity_check() == "ok"
        # The index follows inserts and deletions (eviction) after the upgrade.
        s.add_events(
            "s",
            [make("file_edit", {"path": "src/after.py"})],
            source_hook="t",
            project_dir="",
            max_events=20,
        )
        found = s.search("src/mod", limit=100)
        assert len([h for h in found if "src/mod" in h.data]) == 19  # 11 evicted, oldest first
        assert s.search("after.py")[0].data == '{"path":"src/after.py"}'
        assert s.integrity_check() == "ok"


def test_a_large_upgrade_indexes_the_newest_and_finds_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(migrations, "UPGRADE_INDEX_ROWS", 10)
    monkeypatch.setattr(migrations, "UPGRADE_WORD_ROWS", 10)
    path = tmp_path / "s.db"
    _v1_store(path, 30)
    with Store.open(str(path)) as s:
        indexed = [r[0] for r in s.conn.execute("SELECT rowid FROM events_fts ORDER BY rowid")]
        assert indexed == list(range(21, 31))  # the newest ten
        words = [r[0] for r in s.conn.execute("SELECT rowid FROM events_words ORDER BY rowid")]
        assert words == list(range(21, 31))  # the word index too
        # Found all the same: the older ones through LIKE over the same values.
        assert len(s.search("src/mod", limit=100)) == 30
        assert s.search("mod_003")[0].data == '{"path": "src/mod_003.py", "summary": "edit 3"}'
        assert s.search("path") == []
        assert s.search("mod_003")[0].snippet == "src/**mod_003**.py\nedit 3"
        # An old event is found by its words too ("edit 3"), through LIKE.
        assert s.search("edit 3 summary")[0].data.endswith('"edit 3"}')
        # Deleting old (unindexed) and new (indexed) rows keeps the index whole.
        s.conn.execute("DELETE FROM session_events WHERE id IN (5, 25)")  # mod_004, mod_024
        assert s.integrity_check() == "ok"
        assert s.search("mod_003")[0].data.startswith('{"path": "src/mod_003.py"')
        assert not any("mod_004" in h.data or "mod_024" in h.data for h in s.search("mod_004"))
        # Every row from the index's first rowid on is in it, and no other: a new event is
        # indexed (by the trigger) and found, and so are the old ones (by LIKE).
        s.conn.execute("DELETE FROM session_events WHERE id >= 21")
        assert s.conn.execute("SELECT count(*) FROM events_fts").fetchone() == (0,)
        assert s.conn.execute("SELECT count(*) FROM events_words").fetchone() == (0,)
        s.add_events(
            "s", [make("file_edit", {"path": "src/late.py"})], source_hook="t", project_dir=""
        )
        late = s.search("late.py")
        assert (late[0].type, late[0].id) == ("file_edit", 21)
        assert s.conn.execute("SELECT rowid FROM events_fts").fetchall() == [(21,)]
        assert s.conn.execute("SELECT rowid FROM events_words").fetchall() == [(21,)]
        assert len(s.search("src/", limit=100)) == 19 + 1  # ids 1-20 but 5, and the new one
        assert s.integrity_check() == "ok"


def test_the_frozen_v1_store_searches_values_after_the_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    shutil.copyfile(FROZEN, path)
    conn = sqlite3.connect(str(path))
    raw = conn.execute(
        "SELECT count(*) FROM session_events WHERE data LIKE '%\"path\"%'"
    ).fetchone()[0]
    conn.close()
    assert raw > 0
    with Store.open(str(path)) as s:
        assert s.schema_version() == migrations.SCHEMA_VERSION
        assert s.search("path") == []
        assert s.integrity_check() == "ok"
        events = [e for m in s.sessions() for e in s.session_events(m["session_id"])]
        some = next(e for e in events if e.type in ("file_read", "file_write", "file_edit"))
        wanted = json.loads(some.data)["path"]
        assert some.id in {h.id for h in s.search(wanted, limit=1000)}


def test_without_json1_the_raw_data_is_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(migrations, "json_available", lambda conn: False)
    with Store.open(str(tmp_path / "s.db")) as s:
        s.add_events("s", [make("file_read", {"path": "a.py"})], source_hook="t", project_dir="")
        assert [h.type for h in s.search("a.py")] == ["file_read"]
        assert s.integrity_check() == "ok"


def _indexed(s: Store, index: str, text: str) -> list[int]:
    rows = s.conn.execute(
        f"SELECT rowid FROM {index} WHERE {index} MATCH ?", ('"' + text + '"',)
    ).fetchall()
    return [int(r[0]) for r in rows]


def test_schema_5_indexes_words_and_keeps_outputs_out_of_the_trigram_index(
    tmp_path: Path,
) -> None:
    """A store small enough for the upgrade's budget: the trigram index is built again
    over the values but outputs and excerpts (the word index holds them)."""
    path = tmp_path / "s.db"
    _v1_store(path, 30)
    with Store.open(str(path)) as s:
        assert s.words_enabled()
        s.add_events(
            "s",
            [make("shell_call", {"command": "npm run preview", "output": "Local: localhost:4173"})],
            source_hook="t",
            project_dir="",
        )
        (new,) = [e.id for e in s.session_events("s") if e.type == "shell_call"]
        assert _indexed(s, "events_fts", "npm run preview") == [new]
        assert _indexed(s, "events_fts", "localhost:4173") == []  # the output: words only
        assert _indexed(s, "events_words", "localhost 4173") == [new]
        assert s.search("localhost:4173")[0].id == new
        assert _indexed(s, "events_fts", "mod_007") == [8]  # the old rows, again
        assert s.integrity_check() == "ok"


def test_a_large_store_keeps_its_trigram_index_at_the_upgrade(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over the upgrade's budget, dropping the trigram index alone would cost a hook its
    deadline: it stays as schema 2 made it (over all values), the word index covers the
    newest events, and search finds the old ones through the trigram index."""
    monkeypatch.setattr(migrations, "UPGRADE_WORD_ROWS", 10)
    path = tmp_path / "s.db"
    _v1_store(path, 30)
    with Store.open(str(path)) as s:
        words = [r[0] for r in s.conn.execute("SELECT rowid FROM events_words ORDER BY rowid")]
        assert words == list(range(21, 31))
        assert len(_indexed(s, "events_fts", "src/mod_")) == 30  # kept whole
        s.add_events(
            "s",
            [make("shell_call", {"command": "make", "output": "built target zeta_9"})],
            source_hook="t",
            project_dir="",
        )
        assert len(_indexed(s, "events_fts", "zeta_9")) == 1  # its old triggers: all values
        assert s.search("edit 3 summary")[0].data.endswith('"edit 3"}')  # via trigrams
        assert s.integrity_check() == "ok"
