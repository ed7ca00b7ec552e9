"""Upgrades lose nothing; an interrupted upgrade leaves the old version, usable.

The harness, for every schema version N of ``migrations.MIGRATIONS``:

- builds a store migrated only up to N (``migrate(conn, MIGRATIONS[:N])``) and fills it
  with realistic rows written in version N's own schema (``FILLERS[N]``: raw SQL, not the
  current Store API), then upgrades it with the current code and checks every row of
  every table N had, column by column (a SHA-256 over the rows in key order);
- does the same with the stores frozen in ``tests/fixtures_old_schemas/`` (``v<N>.db``,
  made by the real hooks of version N replaying a captured Claude Code session, with a
  manifest of its rows): those catch an edit to a released step, which the harness
  cannot;
- upgrades each through two more (test-only) steps, so that the upgrade path runs even
  while there is a single real version;
- interrupts the upgrade: a step that fails half-way, and a process SIGKILLed inside a
  step (at a fixed point, and at random times in a loop). The store must stay at its
  old version with its rows intact, pass the integrity check, and work for the hooks.

When you add ``m00N``: add ``fill_vN`` below and run
``python tests/fixtures_old_schemas/make_fixture.py`` on the release that adds it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxmode import hookrun, migrations
from ctxmode.hashing import sha256_hex
from ctxmode.migrations import MIGRATIONS, SCHEMA_VERSION, migrate
from ctxmode.store import Store

REPO = Path(__file__).resolve().parents[1]
FROZEN = Path(__file__).resolve().parent / "fixtures_old_schemas"
PROJECT = "/home/dev/proj"
TABLES = (
    "session_events",
    "session_meta",
    "session_resume",
    "store_meta",
    "compaction",
    "import_progress",
)
KEYS = {"store_meta": "key", "session_meta": "session_id", "import_progress": "path"}
SCALE = int(os.environ.get("CTXMODE_SOAK_SCALE", "1"))


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(path), timeout=10, isolation_level=None)


# ---------------------------------------------------------------- version fillers


def fill_v1(conn: sqlite3.Connection) -> None:
    """A store as version 1 leaves it after a few real sessions (schema of m001_initial)."""
    sessions = {
        "9f1c2e4a-sess-one": "2026-11-28T09:00:00.000Z",
        "4b7d0a13-sess-two": "2026-11-30T14:30:00.000Z",
        "c2e8f6b9-cleared": "2026-12-01T08:15:00.000Z",
    }
    kinds = [
        ("user_prompt", "prompt", 1, {"text": "add a CSV export to the report page"}),
        ("intent", "intent", 3, {"intent": "implement"}),
        ("file_read", "file", 4, {"path": "src/report.py"}),
        ("file_edit", "file", 2, {"path": "src/report.py", "kind": "edit"}),
        ("file_write", "file", 2, {"path": "src/export_csv.py", "kind": "create"}),
        ("rule_read", "rule", 2, {"path": "CLAUDE.md"}),
        ("git_commit", "git", 2, {"message": "Add CSV export", "branch": "feature/csv"}),
        ("git_branch", "git", 3, {"branch": "feature/csv", "action": "create"}),
        ("task_create", "task", 2, {"id": "1", "subject": "Export CSV", "status": "pending"}),
        ("task_update", "task", 2, {"id": "1", "status": "completed"}),
        ("tool_error", "error", 1, {"tool": "Bash", "key": "pytest", "error": "1 failed"}),
        ("error_resolved", "error", 3, {"tool": "Bash", "key": "pytest"}),
        ("cwd_change", "cwd", 3, {"cwd": "src"}),
        ("env_setup", "env", 3, {"command": "uv pip install -e .", "kind": "install"}),
        ("mcp_call", "mcp", 4, {"server": "db", "tool": "query", "args": ["sql"]}),
        ("web_fetch", "external-ref", 4, {"url": "https://docs.python.org/3/library/csv.html"}),
        ("subagent_run", "subagent", 3, {"type": "reviewer", "description": "review export"}),
        ("decision", "decision", 1, {"text": "no, use the csv module, not pandas"}),
        ("role", "role", 2, {"text": "you are a careful reviewer"}),
        ("plan_exit", "plan", 2, {"plan": "1. add exporter 2. wire the button"}),
    ]
    minute = 0
    for session, started in sessions.items():
        count = 0
        for n in range(3):
            for kind, category, priority, data in kinds:
                text = json.dumps({**data, "n": n}, separators=(",", ":"), ensure_ascii=False)
                minute += 1
                stamp = f"{started[:11]}{(9 + minute // 60) % 24:02d}:{minute % 60:02d}:00.000Z"
                conn.execute(
                    "INSERT INTO session_events (session_id, type, category, priority, data, "
                    "data_hash, source_hook, agent_id, agent_type, tool_use_id, bytes_avoided, "
                    "bytes_returned, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (session, kind, category, priority, text, sha256_hex(text), "PostToolUse",
                     "agent-7" if kind == "subagent_run" else None,
                     "reviewer" if kind == "subagent_run" else None,
                     f"toolu_{minute:04d}", 1200 if category == "file" else 0, 0, stamp),
                )  # fmt: skip
                count += 1
        conn.execute(
            "INSERT INTO session_meta (session_id, project_dir, started_at, last_event_at, "
            "event_count, compact_count, evicted_count, last_hook, flags) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            (session, PROJECT, started, started[:11] + "23:59:00.000Z", count, 1, 0,
             "PostToolUse", ",cleared," if "cleared" in session else ""),
        )  # fmt: skip
    snapshot = (
        '<session_resume session="{s}" compaction="{n}" events="60">\n'
        "<last_request>add a CSV export to the report page</last_request>\n"
        '<files_changed>\n<file path="src/export_csv.py" change="create" count="1"/>\n'
        "</files_changed>\n</session_resume>\n"
    )
    resumes = [
        ("9f1c2e4a-sess-one", 1, "compact", 1, "9f1c2e4a-sess-one"),
        ("9f1c2e4a-sess-one", 1, "end", 1, "4b7d0a13-sess-two"),
        ("4b7d0a13-sess-two", 1, "compact", 0, None),  # unclaimed: must survive, claimable
        ("4b7d0a13-sess-two", 1, "end", 0, None),
        ("c2e8f6b9-cleared", 1, "compact", 1, "clear"),
    ]
    for session, seq, kind, consumed, by in resumes:
        conn.execute(
            "INSERT INTO session_resume (session_id, compact_seq, kind, snapshot, event_count, "
            "created_at, consumed, consumed_at, consumed_by) VALUES (?,?,?,?,?,?,?,?,?)",
            (session, seq, kind, snapshot.format(s=session, n=seq), 60,
             "2026-12-01T10:00:00.000Z", consumed,
             "2026-12-01T10:00:05.000Z" if consumed else None, by),
        )  # fmt: skip
    conn.execute(
        "INSERT INTO store_meta (key, value) VALUES ('incident:2026-11-29T10:00:00.000Z', "
        "'2026-11-29T10:00:00.000Z moved x.db aside to x.db.corrupt-20261129T100000Z')"
    )
    conn.execute("INSERT OR REPLACE INTO store_meta (key, value) VALUES ('last_prune', '1.0')")


# Version 2 (m002_search_values) changed only the search index: its tables and their
# rows are those of version 1.
fill_v2 = fill_v1


def fill_v3(conn: sqlite3.Connection) -> None:
    """Version 2's rows, plus what m003_identity_history added: where each session ran,
    its compactions with their summaries, and how far an import read each transcript."""
    fill_v1(conn)
    conn.execute(
        "UPDATE session_meta SET worktree = ?, branch = 'feature/csv', cwd = ?, "
        "client = 'claude_code' WHERE session_id != 'c2e8f6b9-cleared'",
        (PROJECT, PROJECT + "/src"),
    )
    conn.execute(
        "UPDATE session_meta SET worktree = ?, branch = 'main', cwd = ?, client = 'codex' "
        "WHERE session_id = 'c2e8f6b9-cleared'",
        (PROJECT + "-wt", PROJECT + "-wt"),
    )
    compactions = [
        ("9f1c2e4a-sess-one", 1, "auto", "The user asked for a CSV export; done.", "hook"),
        ("4b7d0a13-sess-two", 1, "manual", None, "hook"),  # PostCompact never came
        ("c2e8f6b9-cleared", 1, "auto", "Summary read from the transcript.", "import"),
    ]
    for session, seq, trigger, summary, origin in compactions:
        conn.execute(
            "INSERT INTO compaction (session_id, compact_seq, trigger, summary, summary_at, "
            "origin, created_at) VALUES (?,?,?,?,?,?,?)",
            (session, seq, trigger, summary, "2026-12-01T10:00:01.000Z" if summary else None,
             origin, "2026-12-01T10:00:00.000Z"),
        )  # fmt: skip
    conn.execute(
        "INSERT INTO import_progress (path, session_id, offset, head_hash, mtime_ns, records, "
        "events, skipped, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
        ("/home/dev/.claude/projects/-home-dev-proj/c2e8f6b9-cleared.jsonl", "c2e8f6b9-cleared",
         48213, "ab" * 32, 1764583200000000000, 212, 57, 3, "2026-12-01T10:05:00.000Z"),
    )  # fmt: skip


def fill_v4(conn: sqlite3.Connection) -> None:
    """Version 3's rows, plus what m004_replayed_snapshots added: the snapshot the hooks
    would have built at an imported compaction, and how many events it was built from."""
    fill_v3(conn)
    conn.execute(
        "UPDATE compaction SET replayed = ?, replayed_events = 41 "
        "WHERE session_id = 'c2e8f6b9-cleared' AND compact_seq = 1",
        ('<session_resume session="c2e8f6b9-cleared" compaction="1" events="41">\n'
         "<requests>\n<prompt>add the CSV export</prompt>\n</requests>\n</session_resume>\n",),
    )  # fmt: skip


# m005_word_index adds an index (and its triggers), no table or column of user data:
# version 5's rows are those of version 4.
fill_v5 = fill_v4


FILLERS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: fill_v1,
    2: fill_v2,
    3: fill_v3,
    4: fill_v4,
    5: fill_v5,
}


# ---------------------------------------------------------------- test-only future steps


def m_future_add_column(conn: sqlite3.Connection) -> None:
    """Like a real m002: a column, a backfill, an index."""
    conn.execute("ALTER TABLE session_meta ADD COLUMN title TEXT")
    conn.execute("UPDATE session_meta SET title = substr(session_id, 1, 8)")
    conn.execute("CREATE INDEX idx_meta_title ON session_meta(title)")


def m_future_new_table(conn: sqlite3.Connection) -> None:
    """Like a real m003: a table filled from the others."""
    conn.execute(
        "CREATE TABLE session_files (session_id TEXT, path TEXT, PRIMARY KEY (session_id, path))"
    )
    conn.execute(
        "INSERT OR IGNORE INTO session_files SELECT session_id, json_extract(data, '$.path') "
        "FROM session_events WHERE category = 'file'"
    )


FUTURE = [m_future_add_column, m_future_new_table]


# ---------------------------------------------------------------- digests


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _digest(conn: sqlite3.Connection, columns: dict[str, list[str]]) -> dict[str, tuple[int, str]]:
    """(row count, SHA-256 of the rows) per table, over the given columns, in key order.

    The same formula as tests/fixtures_old_schemas/make_fixture.py (json of the rows).
    """
    result = {}
    for table, cols in columns.items():
        order = KEYS.get(table, "id")
        rows = conn.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY {order}").fetchall()
        text = json.dumps([list(row) for row in rows], ensure_ascii=False)
        result[table] = (len(rows), hashlib.sha256(text.encode()).hexdigest())
    return result


def _schema_columns(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """The columns of each user-data table the store has (later versions add tables)."""
    present = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return {table: _columns(conn, table) for table in TABLES if table in present}


def _make_store(
    path: Path, version: int
) -> tuple[dict[str, list[str]], dict[str, tuple[int, str]]]:
    """A store migrated only up to ``version`` and filled as that version would have."""
    conn = _connect(path)
    try:
        assert migrate(conn, MIGRATIONS[:version]) == version
        conn.execute("BEGIN")
        FILLERS[version](conn)
        conn.execute("COMMIT")
        columns = _schema_columns(conn)
        return columns, _digest(conn, columns)
    finally:
        conn.close()


def _assert_usable(path: Path, columns: dict[str, list[str]], digest: dict[str, tuple[int, str]],
                   version: int = SCHEMA_VERSION) -> None:  # fmt: skip
    """Rows intact, the given version, integrity ok, and the hooks work on it."""
    conn = _connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == version
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert _digest(conn, columns) == digest
    finally:
        conn.close()


def _hooks_work(root: Path, store_file: Path) -> None:
    """Place the store where the hooks look for it, then a short session on top of it."""
    from ctxmode import paths

    env = {"CTXMODE_HOME": str(root), "CLAUDE_PROJECT_DIR": PROJECT}
    target = Path(paths.store_path(PROJECT, env))
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(store_file, target)
    with Store.open(str(target), readonly=True) as store:
        unclaimed = [r for r in store.resumes() if not r["consumed"] and r["kind"] == "compact"]
        old_events = {e.id for s in store.sessions() for e in store.session_events(s["session_id"])}
    write = {"session_id": "after-upgrade", "cwd": PROJECT, "hook_event_name": "PostToolUse",
             "tool_name": "Write", "tool_input": {"file_path": f"{PROJECT}/new.py"},
             "tool_response": {"type": "create"}}  # fmt: skip
    assert hookrun.run_hook("PostToolUse", io.BytesIO(json.dumps(write).encode()), env) == b""
    for row in unclaimed:  # a snapshot made before the upgrade is still delivered, once
        start = {"session_id": row["session_id"], "cwd": PROJECT, "hook_event_name": "SessionStart",
                 "source": "compact"}  # fmt: skip
        out = hookrun.run_hook("SessionStart", io.BytesIO(json.dumps(start).encode()), env)
        assert json.loads(out)["hookSpecificOutput"]["additionalContext"] == row["snapshot"]
    with Store.open(str(target)) as store:
        assert store.integrity_check() == "ok"
        assert [e.type for e in store.session_events("after-upgrade")] == ["file_write"]
        now = {e.id for s in store.sessions() for e in store.session_events(s["session_id"])}
        assert old_events < now
        # The FTS index covers the old rows too (built by the triggers, kept by upgrades),
        # and so does the word index of schema 5 (built by the upgrade).
        if store.fts_enabled():
            assert store.search("src/report.py") or store.search("hello.py")
            assert store.words_enabled()
            indexed = store.conn.execute("SELECT count(*) FROM events_words").fetchone()[0]
            assert indexed == len(now)


# ---------------------------------------------------------------- the harness


def test_every_version_has_a_filler_and_a_frozen_store() -> None:
    assert sorted(FILLERS) == list(range(1, SCHEMA_VERSION + 1)), (
        "add fill_vN for every schema version (see the module docstring)"
    )
    frozen = sorted(int(p.stem[1:]) for p in FROZEN.glob("v*.db"))
    assert frozen == list(range(1, SCHEMA_VERSION + 1)), (
        "freeze a store of each released version: python tests/fixtures_old_schemas/make_fixture.py"
    )


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION + 1))
def test_store_made_at_each_version_upgrades_losing_nothing(version: int, tmp_path: Path) -> None:
    path = tmp_path / f"v{version}.db"
    columns, digest = _make_store(path, version)
    Store.open(str(path)).close()  # the upgrade, as the first hook after an update runs it
    _assert_usable(path, columns, digest)
    _hooks_work(tmp_path / "root", path)
    # And on through two more steps: each in its own transaction, nothing lost.
    conn = _connect(path)
    try:
        assert migrate(conn, [*MIGRATIONS, *FUTURE]) == SCHEMA_VERSION + 2
        assert conn.execute("SELECT count(*) FROM session_meta WHERE title IS NULL").fetchone() == (
            0,
        )
        assert conn.execute("SELECT count(*) FROM session_files").fetchone()[0] > 0
    finally:
        conn.close()
    _assert_usable(path, columns, digest, version=SCHEMA_VERSION + 2)


@pytest.mark.parametrize("frozen", sorted(p.name for p in FROZEN.glob("v*.db")))
def test_frozen_store_of_each_version_upgrades_losing_nothing(frozen: str, tmp_path: Path) -> None:
    manifest = json.loads((FROZEN / frozen).with_suffix(".json").read_text())
    path = tmp_path / frozen
    shutil.copyfile(FROZEN / frozen, path)
    columns = {table: spec["columns"] for table, spec in manifest["tables"].items()}
    expected = {table: (spec["rows"], spec["sha256"]) for table, spec in manifest["tables"].items()}
    _assert_usable(path, columns, expected, version=manifest["schema_version"])  # as frozen
    Store.open(str(path)).close()
    _assert_usable(path, columns, expected)
    _hooks_work(tmp_path / "root", path)
    conn = _connect(path)
    try:
        assert migrate(conn, [*MIGRATIONS, *FUTURE]) == SCHEMA_VERSION + 2
    finally:
        conn.close()
    _assert_usable(path, columns, expected, version=SCHEMA_VERSION + 2)


def _fail_after(what: str) -> Callable[[sqlite3.Connection], None]:
    def step(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE session_meta ADD COLUMN doomed TEXT")
        if what == "ddl":
            raise RuntimeError("power cut after the ALTER")
        conn.execute("UPDATE session_meta SET doomed = 'x'")
        conn.execute("DELETE FROM session_events WHERE priority > 2")
        if what == "dml":
            raise RuntimeError("power cut after rewriting rows")
        conn.execute("CREATE TABLE half (x)")
        conn.execute("DROP TABLE session_resume")
        raise RuntimeError("power cut after dropping a table")

    return step


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION + 1))
@pytest.mark.parametrize("what", ["ddl", "dml", "drop"])
def test_failed_step_leaves_the_old_version_with_its_rows(version: int, what: str,
                                                          tmp_path: Path) -> None:  # fmt: skip
    path = tmp_path / "s.db"
    columns, digest = _make_store(path, version)
    conn = _connect(path)
    try:
        with pytest.raises(RuntimeError, match="power cut"):
            migrate(conn, [*MIGRATIONS[:version], _fail_after(what)])
        assert not conn.in_transaction
    finally:
        conn.close()
    _assert_usable(path, columns, digest, version=version)
    conn = _connect(path)
    assert "doomed" not in _columns(conn, "session_meta")
    conn.close()
    Store.open(str(path)).close()  # and the real upgrade still runs from there
    _assert_usable(path, columns, digest)
    _hooks_work(tmp_path / "root", path)


# A process that upgrades through a slow step; it is killed inside that step.
KILLED_UPGRADE = """
import os, signal, sqlite3, sys
sys.path.insert(0, {repo!r})
from ctxmode.migrations import MIGRATIONS, migrate

def slow_step(conn):
    conn.execute("ALTER TABLE session_meta ADD COLUMN doomed TEXT")
    conn.execute("CREATE TABLE bulk (n INTEGER PRIMARY KEY, pad TEXT)")
    for n in range(200000):
        conn.execute("INSERT INTO bulk (pad) VALUES (?)", ("x" * 200,))
        if n == {kill_at}:
            os.kill(os.getpid(), signal.SIGKILL)  # mid-step, spilled pages in the WAL
    conn.execute("UPDATE session_meta SET doomed = 'y'")
    if {kill_at} == 200000:
        os.kill(os.getpid(), signal.SIGKILL)  # the step done, before its COMMIT

conn = sqlite3.connect(sys.argv[1], isolation_level=None)
print("migrating", flush=True)
migrate(conn, [*MIGRATIONS[:{version}], slow_step])
print("done", flush=True)
"""


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION + 1))
def test_process_killed_mid_migration_leaves_the_old_version(version: int, tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    columns, digest = _make_store(path, version)
    script = KILLED_UPGRADE.format(repo=str(REPO), version=version, kill_at=20000)
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == -signal.SIGKILL and done.stdout == b"migrating\n"
    assert Path(f"{path}-wal").exists()  # the half-done step was really written out
    _assert_usable(path, columns, digest, version=version)
    conn = _connect(path)
    assert "doomed" not in _columns(conn, "session_meta")
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'bulk'").fetchall() == []
    conn.close()
    Store.open(str(path)).close()
    _assert_usable(path, columns, digest)
    _hooks_work(tmp_path / "root", path)


def _random_kills(tmp_path: Path, iterations: int, seed: int) -> dict[str, int]:
    """Upgrades killed at random points of the step (a row of its bulk insert, or after
    the step and before its COMMIT), chosen by the seed, not by the clock; the first
    one runs to its end."""
    rng = random.Random(seed)
    figures = {"killed": 0, "finished": 0}
    for it in range(iterations):
        version = rng.randint(1, SCHEMA_VERSION)
        path = tmp_path / f"k{it}.db"
        columns, digest = _make_store(path, version)
        # -1: never (runs to its end); 200000: after the step, before its COMMIT.
        kill_at = {0: -1, 1: 200000}.get(it, rng.randint(0, 200000))
        script = KILLED_UPGRADE.format(repo=str(REPO), version=version, kill_at=kill_at)
        proc = subprocess.Popen([sys.executable, "-c", script, str(path)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        assert proc.stdout is not None and proc.stdout.readline() == b"migrating\n"
        code = proc.wait(60)
        assert code == (0 if kill_at < 0 else -signal.SIGKILL), proc.stderr.read()  # type: ignore[union-attr]
        conn = _connect(path)
        reached = conn.execute("PRAGMA user_version").fetchone()[0]
        conn.close()
        figures["finished" if code == 0 else "killed"] += 1
        # Before the step (killed, whatever the point) or after it, whole.
        assert reached == (version if kill_at >= 0 else version + 1)
        conn = _connect(path)
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert _digest(conn, columns) == digest
        has_bulk = conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'bulk'").fetchone()
        if reached == version:
            assert has_bulk == (0,) and "doomed" not in _columns(conn, "session_meta")
        else:
            assert conn.execute("SELECT count(*) FROM bulk").fetchone() == (200000,)
            assert conn.execute("SELECT count(*) FROM session_meta WHERE doomed = 'y'").fetchone()[
                0
            ] == len(conn.execute("SELECT 1 FROM session_meta").fetchall())
        conn.close()
        path.unlink()
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    return figures


def test_migration_killed_at_random_points(tmp_path: Path) -> None:
    assert _random_kills(tmp_path, 4, seed=11) == {"finished": 1, "killed": 3}


@pytest.mark.slow
def test_migration_kill_soak(request, tmp_path: Path, capsys) -> None:
    figures = _random_kills(tmp_path, 40 * SCALE, seed=random.SystemRandom().randrange(2**32))
    with capsys.disabled():
        print(f"\n[migrations] kill soak: {figures}")


def test_the_frozen_store_matches_its_manifest_as_made() -> None:
    """The fixture itself is what its manifest says (so a stale manifest cannot pass)."""
    for db in FROZEN.glob("v*.db"):
        manifest = json.loads(db.with_suffix(".json").read_text())
        conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
        try:
            columns = {t: spec["columns"] for t, spec in manifest["tables"].items()}
            assert _digest(conn, columns) == {
                t: (spec["rows"], spec["sha256"]) for t, spec in manifest["tables"].items()
            }
            assert conn.execute("PRAGMA user_version").fetchone()[0] == manifest["schema_version"]
            assert manifest["tables"]["session_events"]["rows"] > 0
        finally:
            conn.close()
    assert len(MIGRATIONS) == migrations.SCHEMA_VERSION
