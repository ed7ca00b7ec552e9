"""Schema steps, user_version bookkeeping, races on first run, newer stores untouched."""

from __future__ import annotations

import _sqlite3
import os
import subprocess
import sys
import threading

import pytest

from ctxmode import migrations
from ctxmode.events import make
from ctxmode.migrations import SCHEMA_VERSION, StoreTooNew, migrate
from ctxmode.store import Store

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _private_home(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXMODE_HOME", str(tmp_path / "ctxmode-home"))
    monkeypatch.delenv("CTXMODE_NO_FTS", raising=False)


def race(script: str, n: int, **fmt) -> list[str]:
    """Run ``script`` in ``n`` processes released at once (see tests/test_store.py)."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", PRELUDE + script.format(i=i, **fmt)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    for p in procs:
        assert p.stdout.readline() == "ready\n"
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert (p.returncode, err) == (0, ""), err
        results.append(out.strip())
    return results


PRELUDE = f"""
import sys
sys.path.insert(0, {REPO!r})
def wait_for_go():
    print("ready", flush=True)
    sys.stdin.readline()
"""


def connect(path) -> _sqlite3.Connection:
    return _sqlite3.connect(str(path), timeout=10, isolation_level=None)


def objects(conn) -> set[tuple[str, str]]:
    rows = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
        "AND name NOT LIKE 'events_fts_%' AND name NOT LIKE 'events_words_%'"
    ).fetchall()
    return {(t, n) for t, n in rows}


def columns(conn, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


SCHEMA_V1 = {
    ("table", "session_events"),
    ("index", "idx_events_session"),
    ("index", "idx_events_priority"),
    ("index", "idx_events_category"),
    ("table", "session_meta"),
    ("table", "session_resume"),
    ("index", "idx_resume_unclaimed"),
    ("table", "store_meta"),
}
FTS_OBJECTS_V1 = {
    ("table", "events_fts"),
    ("trigger", "session_events_ai"),
    ("trigger", "session_events_ad"),
    ("trigger", "session_events_au"),
}
# m002: the searchable text of each event (its values), and the index over it.
SCHEMA = SCHEMA_V1 | {
    ("view", "events_text"),
    # m005: the text the trigram index holds (the values but outputs and excerpts).
    ("view", "events_trigram"),
    ("table", "compaction"),
    ("table", "import_progress"),
    # m003: session_events.call_at, the calls' order (ctxmode.inflight), and its index.
    ("index", "idx_events_call"),
}
FTS_OBJECTS = {
    ("table", "events_fts"),
    ("trigger", "session_events_ai"),
    ("trigger", "session_events_bd"),
    ("trigger", "session_events_bu"),
    ("trigger", "session_events_au"),
    # m005: the word index beside the trigram one, with triggers of its own.
    ("table", "events_words"),
    ("trigger", "session_events_words_ai"),
    ("trigger", "session_events_words_bd"),
    ("trigger", "session_events_words_bu"),
    ("trigger", "session_events_words_au"),
}


def test_blank_store_gets_the_full_schema(tmp_path):
    conn = connect(tmp_path / "s.db")
    assert migrate(conn) == SCHEMA_VERSION == 5
    assert objects(conn) == SCHEMA | FTS_OBJECTS
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 5
    assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # INCREMENTAL
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT value FROM store_meta WHERE key = 'fts'").fetchone()[0] == "trigram"
    assert columns(conn, "session_events") == [
        "id", "session_id", "type", "category", "priority", "data", "data_hash",
        "source_hook", "agent_id", "agent_type", "tool_use_id", "bytes_avoided",
        "bytes_returned", "created_at", "call_at",
    ]  # fmt: skip
    assert columns(conn, "session_meta") == [
        "session_id", "project_dir", "started_at", "last_event_at", "event_count",
        "compact_count", "evicted_count", "last_hook", "flags", "worktree", "branch", "cwd",
        "client",
    ]  # fmt: skip
    assert columns(conn, "session_resume") == [
        "id", "session_id", "compact_seq", "kind", "snapshot", "event_count", "created_at",
        "consumed", "consumed_at", "consumed_by",
    ]  # fmt: skip
    assert columns(conn, "store_meta") == ["key", "value"]
    assert columns(conn, "compaction") == [
        "id", "session_id", "compact_seq", "trigger", "summary", "summary_at", "origin",
        "created_at", "replayed", "replayed_events",
    ]  # fmt: skip


def test_migrate_twice_changes_nothing(tmp_path):
    conn = connect(tmp_path / "s.db")
    migrate(conn)
    before = conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall()
    assert migrate(conn) == SCHEMA_VERSION
    assert conn.execute("SELECT sql FROM sqlite_master ORDER BY name").fetchall() == before


def test_current_store_runs_no_migration_statement(tmp_path):
    Store.open(str(tmp_path / "s.db")).close()
    conn = connect(tmp_path / "s.db")
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    assert migrate(conn) == SCHEMA_VERSION
    assert statements == ["PRAGMA user_version"]


def make_newer_store(path, kind: str) -> None:
    if kind == "ours-next":
        store = Store.open(str(path))
        store.add_events(
            "s", [make("file_read", {"path": "a.py"})], source_hook="t", project_dir="/p"
        )
        store.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        store.close()  # checkpoints: the file holds everything
    else:
        conn = connect(path)
        conn.execute("CREATE TABLE future (x)")
        conn.execute("PRAGMA user_version = 7")
        conn.close()


@pytest.mark.parametrize("kind", ["ours-next", "foreign-v7"])
def test_newer_store_raises_and_is_left_byte_for_byte(tmp_path, kind):
    path = tmp_path / "s.db"
    make_newer_store(path, kind)
    before = path.read_bytes()
    listing = sorted(os.listdir(tmp_path))
    with pytest.raises(StoreTooNew):
        Store.open(str(path))
    with pytest.raises(StoreTooNew):
        Store.open(str(path), recover=True)  # too new is not corrupt: never moved aside
    with pytest.raises(StoreTooNew):
        Store.open(str(path), readonly=True)
    conn = connect(path)
    with pytest.raises(StoreTooNew):
        migrate(conn)
    conn.close()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == listing


def test_store_newer_than_the_steps_in_hand(tmp_path):
    conn = connect(tmp_path / "s.db")
    migrate(conn)
    with pytest.raises(StoreTooNew):
        migrate(conn, steps=[])


def test_failed_step_leaves_the_previous_version_usable(tmp_path):
    conn = connect(tmp_path / "s.db")
    migrate(conn, steps=migrations.MIGRATIONS[:1])

    def m002_broken(c):
        c.execute("CREATE TABLE half_done (x)")
        c.execute("ALTER TABLE session_meta ADD COLUMN doomed TEXT")
        raise RuntimeError("power cut")

    with pytest.raises(RuntimeError, match="power cut"):
        migrate(conn, steps=[migrations.m001_initial, m002_broken])
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert ("table", "half_done") not in objects(conn)
    assert "doomed" not in columns(conn, "session_meta")
    assert not conn.in_transaction
    conn.close()
    store = Store.open(str(tmp_path / "s.db"))
    assert (
        store.add_events("s", [make("file_read", {"path": "x"})], source_hook="t", project_dir="")
        == 1
    )


def test_upgrade_keeps_data(tmp_path):
    store = Store.open(str(tmp_path / "s.db"))
    store.add_events(
        "s1", [make("user_prompt", {"text": "keep me"})], source_hook="t", project_dir="/p"
    )
    store.close()

    def m003_add_tag(c):
        c.execute("ALTER TABLE session_meta ADD COLUMN tag TEXT")
        c.execute("UPDATE session_meta SET tag = 'migrated'")

    conn = connect(tmp_path / "s.db")
    assert migrate(conn, steps=[*migrations.MIGRATIONS, m003_add_tag]) == SCHEMA_VERSION + 1
    assert conn.execute("SELECT session_id, tag FROM session_meta").fetchall() == [
        ("s1", "migrated")
    ]
    assert conn.execute("SELECT data FROM session_events").fetchall() == [('{"text":"keep me"}',)]


def test_stale_version_read_is_rechecked_under_the_lock(tmp_path, monkeypatch):
    # Process A read user_version == 0, then B migrated before A took the lock.
    path = tmp_path / "s.db"
    Store.open(str(path)).close()
    conn = connect(path)
    real = migrations.user_version
    calls = []

    def stale_then_real(c):
        calls.append(1)
        return 0 if len(calls) == 1 else real(c)

    monkeypatch.setattr(migrations, "user_version", stale_then_real)
    ran: list[str] = []

    def m001_spy(c):
        ran.append("m001")
        migrations.m001_initial(c)

    def m002_spy(c):
        ran.append("m002")
        migrations.m002_search_values(c)

    def m003_spy(c):
        ran.append("m003")
        migrations.m003_identity_history(c)

    def m004_spy(c):
        ran.append("m004")
        migrations.m004_replayed_snapshots(c)

    def m005_spy(c):
        ran.append("m005")
        migrations.m005_word_index(c)

    steps = [m001_spy, m002_spy, m003_spy, m004_spy, m005_spy]
    assert migrate(conn, steps=steps) == 5
    assert ran == []  # no step ran twice
    assert objects(conn) == SCHEMA | FTS_OBJECTS


def test_parallel_threads_migrate_a_new_store_once(tmp_path):
    path = str(tmp_path / "new" / "s.db")
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []
    versions: list[int] = []

    def worker():
        try:
            barrier.wait()
            store = Store.open(path, busy_timeout_ms=10000)
            versions.append(store.schema_version())
            store.add_events("s", [], source_hook="t", project_dir="")
            store.close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert versions == [SCHEMA_VERSION] * 8
    conn = connect(path)
    assert objects(conn) == SCHEMA | FTS_OBJECTS
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


OPEN_SCRIPT = """
from ctxmode.events import make
from ctxmode.store import Store
wait_for_go()
store = Store.open({path!r}, busy_timeout_ms=10000)
store.add_events("s{i}", [make("file_read", {{"path": "f{i}.py"}})], source_hook="t", project_dir="")
print(store.schema_version())
store.close()
"""


def test_parallel_processes_migrate_a_new_store_once(tmp_path):
    path = str(tmp_path / "new" / "s.db")
    n = 12
    assert race(OPEN_SCRIPT, n, path=path) == [str(SCHEMA_VERSION)] * n
    store = Store.open(path)
    assert sorted(s["session_id"] for s in store.sessions()) == sorted(f"s{i}" for i in range(n))
    assert store.integrity_check() == "ok"


def test_no_fts_flag_builds_the_schema_without_fts(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXMODE_NO_FTS", "1")
    conn = connect(tmp_path / "s.db")
    migrate(conn)
    assert objects(conn) == SCHEMA
    assert (
        conn.execute("SELECT value FROM store_meta WHERE key = 'fts'").fetchone()[0] == "disabled"
    )


def test_missing_fts_module_falls_back_without_fts(tmp_path, monkeypatch):
    # What a Python whose SQLite lacks FTS5 (or trigram, < 3.34) sees.
    broken = (migrations.FTS_SCHEMA[0].replace("fts5(", "fts5_not_built("),)
    monkeypatch.setattr(migrations, "FTS_SCHEMA", broken + migrations.FTS_SCHEMA[1:])
    conn = connect(tmp_path / "s.db")
    assert migrate(conn) == SCHEMA_VERSION
    assert objects(conn) == SCHEMA
    value = conn.execute("SELECT value FROM store_meta WHERE key = 'fts'").fetchone()[0]
    assert value == "unavailable: no such module: fts5_not_built"
    conn.close()
    store = Store.open(str(tmp_path / "s.db"))
    store.add_events(
        "s", [make("file_edit", {"path": "src/hello.py"})], source_hook="t", project_dir=""
    )
    assert [hit.data for hit in store.search("hello.py")] == ['{"path":"src/hello.py"}']


def test_other_fts_errors_are_not_swallowed(tmp_path, monkeypatch):
    bad = ("CREATE VIRTUAL TABLE events_fts USING fts5(data, nonsense_option=1)",)
    monkeypatch.setattr(migrations, "FTS_SCHEMA", bad)
    conn = connect(tmp_path / "s.db")
    with pytest.raises(_sqlite3.OperationalError):
        migrate(conn)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
    assert objects(conn) == set()
