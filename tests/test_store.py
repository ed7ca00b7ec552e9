"""The SQLite store: insert/dedup/cap, meta, snapshots and claims, search, recovery, pruning."""

from __future__ import annotations

import _sqlite3
import json
import os
import random
import re
import stat
import subprocess
import sys
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.store_bench import bulk_fill
from ctxmode import migrations
from ctxmode.events import MAX_DATA_CHARS, SessionEvent, make
from ctxmode.store import (
    Store,
    StoreCorrupt,
    StoreError,
    StoreLocked,
    StoreMissing,
    blend,
    iso_utc,
    make_snippet,
    parse_iso,
    parse_query,
)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T0 = 1_780_000_000.0  # 2026-05-28T20:26:40Z: a fixed clock for every stamped test


@pytest.fixture(autouse=True)
def _private_home(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXMODE_HOME", str(tmp_path / "ctxmode-home"))
    monkeypatch.delenv("CTXMODE_NO_FTS", raising=False)


@pytest.fixture
def store(tmp_path):
    s = Store.open(str(tmp_path / "sessions" / "s.db"))
    yield s
    s.close()


def race(script: str, n: int, **fmt) -> list[str]:
    """Run ``script`` in ``n`` processes at once; return their stdout (stderr must be empty).

    Each process does its set-up, prints "ready" and blocks reading stdin; once all are
    ready every one gets "go" at the same moment. ``-I -S``: no site, a fast start.
    """
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
import json, sys
sys.path.insert(0, {REPO!r})
def wait_for_go():
    print("ready", flush=True)
    sys.stdin.readline()
"""


def at(seconds: float) -> str:
    return iso_utc(T0 + seconds)


def add(store, session, events, seconds=0.0, **kw):
    kw.setdefault("source_hook", "PostToolUse")
    kw.setdefault("project_dir", "/proj")
    return store.add_events(session, events, now=at(seconds), **kw)


def read(path: str) -> SessionEvent:
    return make("file_read", {"path": path})


def event(label: str, priority: int) -> SessionEvent:
    return SessionEvent("decision", "decision", priority, label)


def datas(store, session="s") -> list[str]:
    return [e.data for e in store.session_events(session)]


def listing(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n != ".ctxmode.lock")


# ------------------------------------------------------------------ time helpers


@pytest.mark.parametrize(
    ("epoch", "text"),
    [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (T0, "2026-05-28T20:26:40.000Z"),
        (T0 + 0.1239, "2026-05-28T20:26:40.123Z"),
        (951_782_400.5, "2000-02-29T00:00:00.500Z"),
    ],
)
def test_iso_round_trip(epoch, text):
    assert iso_utc(epoch) == text
    assert parse_iso(text) == pytest.approx(int(epoch * 1000) / 1000)


# ------------------------------------------------------------------ opening, files


def test_open_creates_private_folder_and_files(tmp_path):
    path = tmp_path / "root" / "sessions" / "s.db"
    old = os.umask(0o022)
    try:
        s = Store.open(str(path))
        add(s, "s", [read("a.py")])
        for name in ("s.db", "s.db-wal", "s.db-shm"):
            assert stat.S_IMODE(os.stat(path.parent / name).st_mode) == 0o600, name
        assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(path.parent.parent).st_mode) == 0o700
        assert s.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert s.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        s.close()
    finally:
        os.umask(old)
    # checkpoint-on-close is left on: the last close folds the WAL in and removes it
    assert listing(path.parent) == ["s.db"]


def test_creation_is_atomic_and_cleans_up(tmp_path, monkeypatch):
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "s.db.new-99999").write_bytes(b"left by a killed process")
    (folder / "s.db.new-99999-wal").write_bytes(b"wal")

    def m001_fails(conn):
        migrations.m001_initial(conn)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(migrations, "MIGRATIONS", [m001_fails])
    with pytest.raises(StoreError, match="No space left"):
        Store.open(str(folder / "s.db"))
    assert listing(folder) == []  # no half-made store, stale temporaries gone
    monkeypatch.undo()
    monkeypatch.setenv("CTXMODE_HOME", str(tmp_path / "ctxmode-home"))
    with Store.open(str(folder / "s.db")) as s:
        assert s.schema_version() == migrations.SCHEMA_VERSION
    assert listing(folder) == ["s.db"]


def test_hot_open_of_a_current_store_is_three_statements(tmp_path):
    path = str(tmp_path / "s.db")
    Store.open(path).close()
    statements: list[str] = []
    real_connect = _sqlite3.connect

    def traced(*args, **kwargs):
        conn = real_connect(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    import ctxmode.store.connection as store_module

    store_module._sqlite3.connect = traced  # type: ignore[attr-defined]
    try:
        s = Store.open(path)
    finally:
        store_module._sqlite3.connect = real_connect  # type: ignore[attr-defined]
    assert statements == ["PRAGMA synchronous = NORMAL", "PRAGMA user_version"]
    statements.clear()
    add(s, "s", [read("a.py")])
    # One transaction of six statements. (Statements on 'main'.… are FTS5's own;
    # SQLite traces the trigger-firing INSERT again for each trigger program.)
    top = []
    for x in statements:
        words = " ".join(x.split()[:4])
        if "'main'." not in x and not x.startswith("--") and (not top or top[-1] != words):
            top.append(words)
    assert top == [
        "BEGIN IMMEDIATE",
        "SELECT type, data_hash, call_at,",
        "INSERT INTO session_events (session_id,",
        "INSERT INTO session_meta (session_id,",
        "SELECT event_count FROM session_meta",
        "COMMIT",
    ]
    s.close()


@pytest.mark.parametrize(("mode", "value"), [("NORMAL", 1), ("OFF", 0), ("FULL", 2)])
def test_synchronous_mode_is_per_connection(tmp_path, mode, value):
    with Store.open(str(tmp_path / "s.db"), synchronous=mode) as s:
        assert s.conn.execute("PRAGMA synchronous").fetchone()[0] == value
        assert add(s, "s", [read("a.py")]) == 1
    with pytest.raises(ValueError):
        Store.open(str(tmp_path / "s.db"), synchronous="normal; DROP TABLE x")


IMPORT_CHECK = """
import sys
sys.path.insert(0, {repo!r})
from ctxmode.store import Store
from ctxmode.events import make
assert "functools" not in sys.modules and "collections" not in sys.modules, "functools loaded"
store = Store.open({path!r})
for i in range(400):  # more distinct statements than the statement cache holds
    store.conn.execute(f"SELECT {{i % 200}}, ?", (i,)).fetchall()
store.add_events("s", [make("file_read", {{"path": "a.py"}})], source_hook="t", project_dir="")
print(store.event_count("s"))
store.close()
import functools
assert functools.reduce and functools.partial  # the real module, loaded later on demand
print(sorted(set(sys.modules) & {{"json", "sqlite3", "hashlib", "typing", "functools"}}))
"""


def test_hot_path_imports_sqlite_without_functools(tmp_path):
    script = IMPORT_CHECK.format(repo=REPO, path=str(tmp_path / "s.db"))
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script], capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines() == ["1", "['functools']"]


def test_readonly_open(tmp_path):
    path = str(tmp_path / "s.db")
    with pytest.raises(StoreMissing):
        Store.open(path, readonly=True)
    assert not os.path.exists(path)
    with Store.open(path) as s:
        add(s, "s", [read("a.py")])
    ro = Store.open(path, readonly=True)
    assert datas(ro) == ['{"path":"a.py"}']
    assert [h.data for h in ro.search("a.py")] == ['{"path":"a.py"}']
    with pytest.raises(StoreError, match="readonly"):
        add(ro, "s", [read("b.py")])
    ro.close()
    open(tmp_path / "empty.db", "w").close()
    with pytest.raises(StoreError, match="predates"):
        Store.open(str(tmp_path / "empty.db"), readonly=True)


def test_unwritable_location_is_a_store_error(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(StoreError):
        Store.open(str(tmp_path / "file" / "sessions" / "s.db"))


# ------------------------------------------------------------------ add_events


def test_round_trip_of_every_field(store):
    e = make(
        "file_edit",
        {"path": "src/app.py"},
        agent_id="a1",
        agent_type="Explore",
        tool_use_id="toolu_1",
        bytes_avoided=120,
    )
    other = make("git_commit", {"message": "fix"}, source_hook="Override")
    assert add(store, "sess", [e, other], seconds=5, project_dir="/work/p") == 2
    first, second = store.session_events("sess")
    assert first.as_dict() == {
        "agent_id": "a1",
        "agent_type": "Explore",
        "bytes_avoided": 120,
        "category": "file",
        "created_at": "2026-05-28T20:26:45.000Z",
        "data": '{"path":"src/app.py"}',
        "id": 1,
        "priority": 2,
        "session_id": "sess",
        "source_hook": "PostToolUse",
        "tool_use_id": "toolu_1",
        "type": "file_edit",
    }
    assert (second.id, second.source_hook, second.priority) == (2, "Override", 1)
    row = store.conn.execute("SELECT data_hash, bytes_returned FROM session_events WHERE id = 1")
    import hashlib

    assert row.fetchone() == (hashlib.sha256(b'{"path":"src/app.py"}').hexdigest(), 0)


@pytest.mark.parametrize(
    ("batches", "stored"),
    [
        ([["a", "b", "c", "d", "e", "a"]], ["a", "b", "c", "d", "e"]),
        ([["a", "b", "c", "d", "e", "f", "a"]], ["a", "b", "c", "d", "e", "f", "a"]),
        ([["a"], ["a"]], ["a"]),
        ([["a", "a", "a"]], ["a"]),
        ([["a", "b", "c", "d", "e"], ["a"]], ["a", "b", "c", "d", "e"]),
        ([["a", "b", "c", "d", "e"], ["f", "a"]], ["a", "b", "c", "d", "e", "f", "a"]),
        ([["a", "b"], ["c", "d"], ["e", "f"], ["b"], ["a"]], ["a", "b", "c", "d", "e", "f", "a"]),
    ],
)
def test_dedup_window_is_the_last_five(store, batches, stored):
    for i, batch in enumerate(batches):
        add(store, "s", [read(x) for x in batch], seconds=i)
    assert datas(store) == [json.dumps({"path": x}, separators=(",", ":")) for x in stored]
    assert store.event_count("s") == len(stored)


def test_dedup_is_per_type_and_per_session(store):
    assert add(store, "s", [read("x"), make("file_edit", {"path": "x"})]) == 2
    assert add(store, "other", [read("x")]) == 1
    assert add(store, "s", [read("x")]) == 0


def test_data_is_truncated_and_hashed_after_truncation(store):
    long = "x" * (MAX_DATA_CHARS + 500)
    assert add(store, "s", [SessionEvent("decision", "decision", 1, long)]) == 1
    assert add(store, "s", [SessionEvent("decision", "decision", 1, long + "tail")]) == 0
    assert datas(store) == ["x" * MAX_DATA_CHARS]


def test_unencodable_text_does_not_fail_the_hook(store):
    lone = "bad \ud800 surrogate"
    assert add(store, lone, [SessionEvent("decision", "decision", 9, lone)]) == 1
    (e,) = store.session_events("bad ? surrogate")
    assert (e.data, e.priority) == ("bad ? surrogate", 5)


def test_meta_counters(store):
    assert add(store, "s", [], seconds=0, project_dir="/p", source_hook="SessionStart") == 0
    assert store.sessions() == [
        {
            "session_id": "s",
            "project_dir": "/p",
            "started_at": at(0),
            "last_event_at": at(0),
            "event_count": 0,
            "compact_count": 0,
            "evicted_count": 0,
            "last_hook": "SessionStart",
            "flags": "",
            # Where it ran (schema 3): not given here, so unknown.
            "worktree": None,
            "branch": None,
            "cwd": None,
            "client": None,
        }
    ]
    add(store, "s", [read("a"), read("b")], seconds=10, project_dir="")
    add(store, "s", [read("a")], seconds=20)  # a duplicate: counts nothing
    store.save_resume("s", "<r/>", 2, now=at(30))
    (meta,) = store.sessions()
    assert meta["started_at"] == at(0)
    assert meta["last_event_at"] == at(20)
    assert meta["event_count"] == 2 == store.event_count("s")
    assert meta["compact_count"] == 1
    assert meta["project_dir"] == "/proj"  # an empty project_dir keeps the known one
    assert store.event_count("never-seen") == 0


def test_sessions_newest_activity_first(store):
    add(store, "old", [read("a")], seconds=0)
    add(store, "new", [read("b")], seconds=50)
    add(store, "mid", [read("c")], seconds=20)
    assert [m["session_id"] for m in store.sessions()] == ["new", "mid", "old"]


# ------------------------------------------------------------------ cap and eviction


PRIORITIES = [1, 5, 3, 5, 2, 4, 5, 1, 3]


@pytest.mark.parametrize("one_call", [False, True])
def test_eviction_removes_least_important_then_oldest(store, one_call):
    events = [event(f"e{i}", p) for i, p in enumerate(PRIORITIES)]
    if one_call:
        add(store, "s", events, max_events=6)
    else:
        for i, e in enumerate(events):
            add(store, "s", [e], seconds=i, max_events=6)
    assert datas(store) == ["e0", "e2", "e4", "e5", "e7", "e8"]
    (meta,) = store.sessions()
    assert (meta["event_count"], meta["evicted_count"]) == (6, 3)


def test_eviction_among_equals_is_oldest_first(store):
    for i in range(8):
        add(store, "s", [event(f"c{i}", 1)], seconds=i, max_events=6)
    assert datas(store) == [f"c{i}" for i in range(2, 8)]


def test_critical_events_survive_a_flood(store):
    critical = [event(f"critical-{i}", 1) for i in range(10)]
    add(store, "s", critical[:5])
    flood = [event(f"minor-{i}", 5 if i % 2 else 4) for i in range(1200)]
    add(store, "s", flood[:600])
    add(store, "s", critical[5:])
    add(store, "s", flood[600:])
    kept = datas(store)
    assert len(kept) == 1000 == store.event_count("s")
    assert [d for d in kept if d.startswith("critical")] == [e.data for e in critical]
    # 210 over the cap: the 210 oldest priority-5 (odd) events went, nothing else
    evicted = {f"minor-{i}" for i in range(1, 420, 2)}
    assert len(evicted) == 210
    assert [d for d in kept if d.startswith("minor")] == [
        e.data for e in flood if e.data not in evicted
    ]
    assert store.conn.execute("SELECT count(*) FROM session_events").fetchone()[0] == 1000


def reference_model(batches, max_events: int) -> list[str]:
    """The rules of add_events, written as plainly as possible."""
    stored: list[tuple[int, str, str, int]] = []  # (order, type, data, priority)
    order = 0
    for batch in batches:
        window = [(t, d) for _, t, d, _ in stored[-5:]]
        for kind, data, priority in batch:
            if (kind, data) in window[-5:]:
                continue
            window.append((kind, data))
            order += 1
            stored.append((order, kind, data, priority))
        excess = len(stored) - max_events
        if excess > 0:
            doomed = sorted(stored, key=lambda e: (-e[3], e[0]))[:excess]
            stored = [e for e in stored if e not in doomed]
    return [f"{kind}:{data}" for _, kind, data, _ in stored]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    batches=st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["decision", "role"]),
                st.sampled_from("abcdefg"),
                st.integers(1, 5),
            ),
            max_size=6,
        ),
        min_size=1,
        max_size=8,
    ),
    max_events=st.integers(1, 8),
)
def test_dedup_and_eviction_match_the_reference_model(tmp_path_factory, batches, max_events):
    with Store.open(str(tmp_path_factory.mktemp("model") / "s.db")) as s:
        for i, batch in enumerate(batches):
            events = [SessionEvent(k, k, p, f"{k}:{d}") for k, d, p in batch]
            add(s, "s", events, seconds=i, max_events=max_events)
        assert datas(s) == reference_model(batches, max_events)
        assert s.event_count("s") == len(datas(s))


def test_cap_is_per_session(store):
    add(store, "a", [event(f"a{i}", 3) for i in range(5)], max_events=3)
    add(store, "b", [event(f"b{i}", 3) for i in range(2)], max_events=3)
    assert datas(store, "a") == ["a2", "a3", "a4"]
    assert datas(store, "b") == ["b0", "b1"]


# ------------------------------------------------------------------ snapshots


def test_save_resume_numbers_per_session_and_kind(store):
    assert store.save_resume("A", "<a-end/>", 12, kind="end", now=at(0)) == 1
    assert store.save_resume("A", "<a1/>", 10, now=at(1)) == 1
    assert store.save_resume("B", "<b1/>", 3, now=at(2)) == 1
    assert store.save_resume("A", "<a2/>", 15, now=at(3)) == 2
    assert store.save_resume("A", "<a-end2/>", 16, kind="end", now=at(4)) == 2
    with pytest.raises(ValueError):
        store.save_resume("A", "<x/>", 1, kind="bogus")
    rows = [(r["session_id"], r["kind"], r["compact_seq"], r["consumed"]) for r in store.resumes()]
    assert rows == [
        ("A", "end", 1, 0),
        ("A", "compact", 1, 0),
        ("B", "compact", 1, 0),
        ("A", "compact", 2, 0),
        ("A", "end", 2, 0),
    ]
    counts = {m["session_id"]: m["compact_count"] for m in store.sessions()}
    assert counts == {"A": 2, "B": 1}
    assert [r["snapshot"] for r in store.resumes("B")] == ["<b1/>"]
    assert (store.next_compact_seq("A"), store.next_compact_seq("A", "end")) == (3, 3)
    assert store.next_compact_seq("new") == 1


def test_claim_takes_newest_and_only_once(store):
    store.save_resume("A", "<old/>", 1, now=at(0))
    store.save_resume("A", "<new/>", 2, now=at(10))
    first = store.claim_resume(claimed_by="A", session_id="A", now=T0 + 20)
    assert (first.session_id, first.compact_seq, first.snapshot, first.event_count, first.created_at) == (
        "A", 2, "<new/>", 2, at(10)
    )  # fmt: skip
    second = store.claim_resume(claimed_by="A", session_id="A", now=T0 + 21)
    assert second.snapshot == "<old/>"
    assert store.claim_resume(claimed_by="A", session_id="A") is None
    rows = [
        (r["compact_seq"], r["consumed"], r["consumed_by"], r["consumed_at"])
        for r in store.resumes("A")
    ]
    assert rows == [(1, 1, "A", at(21)), (2, 1, "A", at(20))]


def test_claim_orders_by_created_at_not_insertion(store):
    store.save_resume("late", "<late/>", 1, now=at(100))
    store.save_resume("early", "<early/>", 1, now=at(50))
    assert store.claim_resume(claimed_by="x").session_id == "late"


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({}, "C"),
        ({"session_id": "A"}, "A"),
        ({"exclude_session": "C"}, "B"),
        ({"session_id": "C", "exclude_session": "C"}, None),
        ({"max_age_seconds": 150, "now": T0 + 250}, "C"),  # C at 200 is 50 s old
        ({"max_age_seconds": 150, "now": T0 + 350, "exclude_session": "C"}, None),  # B is 250 s old
        ({"max_age_seconds": 260, "now": T0 + 350, "exclude_session": "C"}, "B"),
        ({"session_id": "nobody"}, None),
    ],
)
def test_claim_filters(store, filters, expected):
    for seconds, sid in ((0, "A"), (100, "B"), (200, "C")):
        store.save_resume(sid, f"<{sid}/>", 1, now=at(seconds))
    got = store.claim_resume(claimed_by="claimer", **filters)
    assert (got.session_id if got else None) == expected


def test_has_unclaimed_and_discard(store):
    assert store.has_unclaimed("A") is False
    store.save_resume("A", "<1/>", 1, now=at(0))
    store.save_resume("A", "<2/>", 1, now=at(1))
    store.save_resume("B", "<b/>", 1, now=at(2))
    assert store.has_unclaimed("A") is True
    assert store.discard_unclaimed("A", reason="clear") == 2
    assert store.has_unclaimed("A") is False
    assert store.discard_unclaimed("A", reason="clear") == 0
    assert [r["consumed_by"] for r in store.resumes("A")] == ["clear", "clear"]
    assert store.claim_resume(claimed_by="x").session_id == "B"


def test_kind_filters(store):
    assert store.next_compact_seq("A") == 1
    store.save_resume("A", "<c1/>", 1, kind="compact", now=at(0))
    store.save_resume("A", "<e2/>", 1, kind="end", now=at(1))
    store.save_resume("A", "<c3/>", 1, kind="compact", now=at(2))
    store.save_resume("A", "<e4/>", 1, kind="end", now=at(3))
    assert (store.next_compact_seq("A"), store.next_compact_seq("A", "end")) == (3, 3)
    assert store.discard_unclaimed("A", reason="superseded", kind="end") == 2
    assert store.has_unclaimed("A", kind="end") is False
    assert store.has_unclaimed("A", kind="compact") is True
    got = store.claim_resume(claimed_by="A", session_id="A", kind="compact")
    assert (got.snapshot, got.kind, got.compact_seq) == ("<c3/>", "compact", 2)
    assert store.claim_resume(claimed_by="A", kind="end") is None
    latest = store.latest_resume("A", "compact")
    assert (latest["snapshot"], latest["consumed"], latest["consumed_by"]) == ("<c3/>", 1, "A")
    assert store.latest_resume("A")["snapshot"] == "<e4/>"
    assert store.latest_resume("nobody") is None
    rows = [
        (r["kind"], r["compact_seq"], r["consumed"], r["consumed_by"]) for r in store.resumes("A")
    ]
    assert rows == [
        ("compact", 1, 0, None),
        ("end", 1, 1, "superseded"),
        ("compact", 2, 1, "A"),
        ("end", 2, 1, "superseded"),
    ]


def test_session_flags_and_touch(store):
    assert store.session_flag("new", "cleared") is False
    store.set_session_flag("new", "cleared", "/proj/x", now=at(5))
    store.set_session_flag("new", "cleared", "/proj/x", now=at(6))  # idempotent
    store.set_session_flag("new", "pinned")
    assert store.session_flag("new", "cleared") is True
    assert store.session_flag("new", "clear") is False  # whole names only
    assert store.session_flag("other", "cleared") is False
    (meta,) = store.sessions()
    assert (meta["flags"], meta["project_dir"], meta["started_at"], meta["event_count"]) == (
        ",cleared,pinned,",
        "/proj/x",
        at(5),
        0,
    )
    with pytest.raises(ValueError):
        store.set_session_flag("new", "a,b")
    store.touch_session("quiet", "/proj/q", source_hook="SessionStart", now=at(9))
    add(store, "quiet", [], seconds=10, source_hook="")  # an empty hook name keeps the last
    quiet = next(m for m in store.sessions() if m["session_id"] == "quiet")
    assert (quiet["last_hook"], quiet["last_event_at"], quiet["event_count"]) == (
        "SessionStart",
        at(10),
        0,
    )


CLAIM_SCRIPT = """
from ctxmode.store import Store
store = Store.open({path!r}, busy_timeout_ms=20000)
wait_for_go()
got = store.claim_resume(claimed_by="new{i}", exclude_session="new{i}")
print(json.dumps(got.as_dict() if got else None))
store.close()
"""


@pytest.mark.parametrize(("claimers", "snapshots"), [(32, 1), (16, 5)])
def test_claim_exactly_once_across_processes(tmp_path, claimers, snapshots):
    path = str(tmp_path / "s.db")
    with Store.open(path) as s:
        for k in range(snapshots):
            s.save_resume(f"old{k}", f"<snap{k}/>", k, now=at(k))
    results = [json.loads(out) for out in race(CLAIM_SCRIPT, claimers, path=path)]
    won = [r for r in results if r is not None]
    assert sorted(r["snapshot"] for r in won) == sorted(f"<snap{k}/>" for k in range(snapshots))
    with Store.open(path) as s:
        rows = s.resumes()
        assert all(r["consumed"] == 1 for r in rows)
        # each row names the one process that printed it
        by_claimer = {r["consumed_by"]: r["snapshot"] for r in rows}
        assert len(by_claimer) == snapshots


def test_claim_exactly_once_across_threads(tmp_path):
    path = str(tmp_path / "s.db")
    with Store.open(path) as s:
        for k in range(3):
            s.save_resume(f"old{k}", f"<snap{k}/>", k, now=at(k))
    barrier = threading.Barrier(16)
    results: list = []
    errors: list = []

    def claim(i):
        try:
            st = Store.open(path, busy_timeout_ms=20000)
            barrier.wait()
            results.append(st.claim_resume(claimed_by=f"t{i}"))
            st.close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(r.snapshot for r in results if r) == ["<snap0/>", "<snap1/>", "<snap2/>"]
    assert results.count(None) == 13


def test_unclaimed_snapshot_is_never_half_written(store, monkeypatch):
    # A failure between the meta upsert and the row insert leaves nothing claimable.
    store.conn.execute(
        "CREATE TEMP TRIGGER boom BEFORE INSERT ON session_resume BEGIN SELECT RAISE(ABORT, 'disk gone'); END"
    )
    with pytest.raises(StoreError, match="disk gone"):
        store.save_resume("A", "<a/>", 1)
    store.conn.execute("DROP TRIGGER boom")
    assert store.resumes() == [] and store.sessions() == []
    assert store.claim_resume(claimed_by="x") is None


# ------------------------------------------------------------------ open errors


@pytest.mark.parametrize(
    ("sequence", "expected"),
    [
        ([("tool_error", "k1"), ("output_error", "k2"), ("error_resolved", "k1")], {"k2"}),
        ([("tool_error", "k1"), ("error_resolved", "k1"), ("tool_error", "k1")], {"k1"}),
        ([("error_resolved", "k1")], set()),
        ([("tool_error", "k1"), ("tool_error", "k2"), ("error_resolved", "k3")], {"k1", "k2"}),
        ([], set()),
    ],
)
def test_open_error_keys(store, sequence, expected):
    events = [make(t, {"tool": "Bash", "key": k, "n": i}) for i, (t, k) in enumerate(sequence)]
    events.append(SessionEvent("tool_error", "error", 1, "plain text, not JSON"))
    events.append(make("tool_error", {"tool": "Bash", "error": "no key"}))
    add(store, "s", events)
    add(store, "other", [make("tool_error", {"tool": "Bash", "key": "elsewhere"})])
    assert store.open_error_keys("s") == expected


# ------------------------------------------------------------------ search


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("hello.py", ["hello.py"]),
        ("  fix   bug ", ["fix", "bug"]),
        ('"snapshot bug" store', ["snapshot bug", "store"]),
        ('say "unbalanced phrase', ["say", "unbalanced phrase"]),
        ('a"b', ["a", "b"]),
        ("NEAR(a b) -x foo:bar *", ["NEAR(a", "b)", "-x", "foo:bar", "*"]),
        ("dup dup", ["dup"]),
        ('""', []),
        ("nul\x00byte", ["nulbyte"]),
    ],
)
def test_parse_query(query, terms):
    assert parse_query(query) == terms


@pytest.mark.parametrize(
    ("text", "terms", "width", "expected"),
    [
        ('{"path":"src/hello.py"}', ["hello"], 160, '{"path":"src/**hello**.py"}'),
        ("Error: AssertionError in test", ["error"], 160, "**Error**: Assertion**Error** in test"),
        ("abc", ["zzz"], 160, "abc"),
        (
            "x" * 50 + "needle" + "y" * 50,
            ["needle"],
            30,
            "…" + "x" * 10 + "**needle**" + "y" * 14 + "…",
        ),
        ("overlap", ["overl", "lap"], 160, "**overlap**"),
    ],
)
def test_make_snippet(text, terms, width, expected):
    assert make_snippet(text, terms, width=width) == expected


def test_blend_formula():
    assert blend(2.0, 0) == 2.5
    assert blend(2.0, 7 * 86400) == 2.25
    assert blend(2.0, 14 * 86400) == 2.125
    assert blend(1.0, 0) > blend(1.0, 1) > blend(1.0, 3600)


SEARCH_EVENTS = [
    ("s1", make("file_edit", {"path": "src/hello.py"})),
    ("s1", make("user_prompt", {"text": "fix the snapshot bug in store.py"})),
    (
        "s1",
        make("tool_error", {"tool": "Bash", "key": "pytest", "error": "AssertionError: 3 != 4"}),
    ),
    ("s2", make("file_read", {"path": "docs/README.md"})),
    ("s2", make("git_commit", {"message": "Snapshot: trim to budget"})),
    ("s2", make("file_edit", {"path": "src/world.py"})),
    ("s2", make("decision", {"text": 'call fn(x) -> y: NEAR(a b) *glob* "quoted" a-b ^caret'})),
    ("s3", make("web_fetch", {"url": "https://example.com/a_b%20c"})),
]


def fill(store):
    for i, (sid, e) in enumerate(SEARCH_EVENTS):
        add(store, sid, [e], seconds=i * 60)


def ids(hits) -> list[int]:
    return [h.id for h in hits]


@pytest.mark.parametrize(
    ("query", "kwargs", "expected_ids"),
    [
        # Ranked OR: every event sharing a word, identifier or phrase; best first.
        ("hello.py", {}, [1, 6, 2]),  # the exact path first, then the other .py events
        ("HELLO", {}, [1]),
        ("snap", {}, [5, 2]),  # no event holds the word: found inside "Snapshot"
        ("snapshot bug", {}, [2, 5]),  # both words first, one of them next
        ('"bug in store"', {}, [2]),
        ('"store bug"', {}, [2]),  # no such phrase: its words still find the event
        ("Error", {}, [3]),  # inside "AssertionError"
        (".py", {}, [6, 1, 2]),
        ("py", {}, [6, 1, 2]),  # the word "py", not "pytest"
        ("src py", {}, [6, 1, 2]),
        ("a_b", {}, [8]),  # "_" is literal (event 7 has "a-b"; one letter is no word)
        ("a_b%20", {}, [8]),
        ("%", {}, [8]),
        ("_", {}, [8]),
        ("nothing-like-this", {}, []),
        ("py", {"session_id": "s1"}, [1, 2]),
        ("snap", {"category": "git"}, [5]),
        ("src", {"type": "file_edit"}, [6, 1]),
        ("src", {"type": ["file_edit", "file_read"]}, [6, 1]),
        ("snap", {"category": ["git", "prompt"]}, [5, 2]),
        ("snap", {"since": at(120)}, [5]),
        ("snap", {"since": at(10_000)}, []),
        ("py", {"session_id": "nobody"}, []),
        ("py", {"limit": 1}, [6]),  # hello.py and world.py are equally relevant: the newer
        ("", {"session_id": "s2"}, [7, 6, 5, 4]),
    ],
)
@pytest.mark.parametrize("fts", [True, False])
def test_search_hits(tmp_path, monkeypatch, fts, query, kwargs, expected_ids):
    if not fts:
        monkeypatch.setenv("CTXMODE_NO_FTS", "1")
    s = Store.open(str(tmp_path / "s.db"))
    assert s.fts_enabled() is fts
    fill(s)
    hits = s.search(query, **kwargs)
    assert ids(hits) == expected_ids
    stored = {e.id: e.as_dict() for sid in ("s1", "s2", "s3") for e in s.session_events(sid)}
    for hit in hits:  # a hit carries every field of the stored event
        fields = hit.as_dict()
        assert (fields.pop("rank"), fields.pop("snippet")) == (hit.rank, hit.snippet)
        assert fields == stored[hit.id]
    s.close()


@pytest.mark.parametrize("fts", [True, False])
def test_search_empty_query_lists_newest_first(tmp_path, monkeypatch, fts):
    if not fts:
        monkeypatch.setenv("CTXMODE_NO_FTS", "1")
    s = Store.open(str(tmp_path / "s.db"))
    fill(s)
    assert ids(s.search("", session_id="s2")) == [7, 6, 5, 4]
    assert ids(s.search("", limit=3)) == [8, 7, 6]
    s.close()


@pytest.mark.parametrize(
    "query",
    ['"', "*", "(", ")", "-", ":", "^", "+", "NEAR(a b)", "a AND b", "a OR", "NOT x", "foo:bar",
     "col:val*", '"unbalanced', "-x", "(x))", "\x00", "'", ";DROP TABLE session_events;", "\\"],
)  # fmt: skip
@pytest.mark.parametrize("fts", [True, False])
def test_search_never_fails_on_fts_syntax(tmp_path, monkeypatch, fts, query):
    if not fts:
        monkeypatch.setenv("CTXMODE_NO_FTS", "1")
    s = Store.open(str(tmp_path / "s.db"))
    fill(s)
    hits = s.search(query)
    assert isinstance(hits, list)
    for h in hits if parse_query(query) else []:  # every hit holds a word of the query
        words = [w for t in parse_query(query) for w in re.findall(r"\w+", t.lower())]
        assert any(w in h.data.lower() for w in words) or any(
            t.lower() in h.data.lower() for t in parse_query(query)
        )
    assert s.integrity_check() == "ok"


@pytest.mark.parametrize(
    ("query", "expected"),
    [("NEAR(a b)", [7, 8]), ("*glob*", [7]), ('fn(x) "a-b"', [7, 8]), ("^caret", [7])],
)
def test_search_finds_literal_syntax_characters(store, query, expected):
    fill(store)
    assert ids(store.search(query)) == expected  # 8 shares the word "b"


def test_search_relevance_beats_recency(store):
    background = [event(f"unrelated filler text number {i}", 3) for i in range(60)]
    add(store, "bg", background, seconds=0)
    add(store, "s", [event("needle needle needle", 3)], seconds=10)  # older, dense
    add(
        store,
        "s",
        [event("a needle lost in a much longer sentence about other things", 3)],
        seconds=3600,
    )
    hits = store.search("needle")
    assert [h.data for h in hits] == [
        "needle needle needle",
        "a needle lost in a much longer sentence about other things",
    ]
    assert hits[0].rank > hits[1].rank > 0
    assert hits[0].snippet == "**needle** **needle** **needle**"


def test_search_recency_breaks_ties(store):
    add(store, "bg", [event(f"filler {i}", 3) for i in range(30)], seconds=0)
    add(store, "old", [read("src/same.py")], seconds=100)
    add(store, "new", [read("src/same.py")], seconds=5000)
    add(store, "same-time-a", [read("lib/same.py")], seconds=9000)
    add(store, "same-time-b", [read("lib/same.py")], seconds=9000)
    hits = store.search("src/same.py")  # then the lib/same.py events: they share words
    assert [h.session_id for h in hits][:2] == ["new", "old"]
    assert hits[0].rank > hits[1].rank
    hits = store.search("lib/same.py")
    # equal: the newer id first
    assert [h.session_id for h in hits][:2] == ["same-time-b", "same-time-a"]


def test_like_fallback_gives_the_same_hits(tmp_path, monkeypatch):
    rnd = random.Random(7)
    words = ["store", "snapshot", "hello", "world", "parse", "error", "index", "py", "src", "fix"]
    events = []
    for i in range(300):
        text = " ".join(rnd.choice(words) for _ in range(rnd.randint(1, 8)))
        events.append(SessionEvent("decision", "decision", 1 + i % 5, f"{text} {i % 17}"))
    stores = {}
    for fts in (True, False):
        monkeypatch.setenv("CTXMODE_NO_FTS", "" if fts else "1")
        s = Store.open(str(tmp_path / f"{fts}.db"))
        for i in range(0, 300, 10):
            add(s, f"s{i // 50}", events[i : i + 10], seconds=i)
        stores[fts] = s
    assert stores[True].fts_enabled() and not stores[False].fts_enabled()
    for query in [
        "store",
        "snap",
        "hello world",
        "py 1",
        "orld",
        "ix",
        "error 3",
        "zzz",
        "SNAPSHOT",
    ]:
        got = {fts: sorted(h.id for h in s.search(query, limit=1000)) for fts, s in stores.items()}
        assert got[True] == got[False], query
        assert got[True] or query == "zzz"


def test_purge_session_removes_rows_and_search_entries(store):
    fill(store)
    store.save_resume("s1", "<r/>", 3)
    assert ids(store.search("hello.py"))[0] == 1
    assert store.purge_session("s1") == 3
    assert 1 not in ids(store.search("hello.py"))
    assert store.search("hello") == []
    assert store.session_events("s1") == [] and store.resumes("s1") == []
    assert [m["session_id"] for m in store.sessions()] == ["s3", "s2"]
    assert store.integrity_check() == "ok"
    fts_rows = store.conn.execute(
        "SELECT count(*) FROM events_fts WHERE events_fts MATCH '\"hello.py\"'"
    ).fetchone()[0]
    assert fts_rows == 0


def test_vacuum_gives_space_back(tmp_path):
    path = tmp_path / "s.db"
    s = Store.open(str(path))
    for i in range(20):
        add(s, f"s{i}", [event(f"{i}-{j} " + "payload " * 100, 3) for j in range(50)], seconds=i)
    s.vacuum()
    full = os.path.getsize(path)
    assert s.purge_older_than(0, now=T0 + 10**6) == 20
    assert s.vacuum(optimize_fts=True) > 0
    assert os.path.getsize(path) < full / 4
    assert s.integrity_check() == "ok"
    s.close()


def test_prune_idle_is_bounded_and_rate_limited(store):
    day = 86400
    for i in range(30):
        add(store, f"idle{i:02d}", [read(f"i{i}")], seconds=i)
    add(store, "active", [read("a")], seconds=39 * day)
    now = T0 + 40 * day
    assert store.prune_idle(30, limit=20, now=now) == 20
    assert store.get_meta("last_prune") is None  # backlog left: the next hook goes on
    assert store.prune_idle(30, limit=20, now=now + 1) == 10
    assert store.get_meta("last_prune") == repr(now + 1)
    add(store, "idle-late", [read("x")], seconds=0)
    assert store.prune_idle(30, limit=20, now=now + 1800) == 0  # pruned within the hour
    assert store.prune_idle(30, limit=20, now=now + 3602) == 1
    assert [m["session_id"] for m in store.sessions()] == ["active"]
    assert store.conn.execute("SELECT count(*) FROM session_events").fetchone()[0] == 1


def test_prune_idle_is_bounded_by_events(store):
    for i in range(5):
        add(store, f"idle{i}", [read(f"{i}-{j}") for j in range(3)], seconds=i)
    now = T0 + 40 * 86400
    # 3 events each: two sessions fit a budget of 7, the third would not
    assert store.prune_idle(30, now=now, max_events=7) == 2
    assert store.get_meta("last_prune") is None
    # a session larger than the whole budget still goes (one per call at least)
    assert store.prune_idle(30, now=now, max_events=1) == 1
    assert store.prune_idle(30, now=now, max_events=7) == 2
    assert store.get_meta("last_prune") == repr(now)
    assert store.sessions() == []


def test_dump_contract(store):
    add(store, "s", [read("a.py")], seconds=1)
    store.save_resume("s", "<r/>", 1, now=at(2))
    dump = store.dump()
    (session,) = dump["sessions"]
    assert session["session_id"] == "s" and session["compact_count"] == 1
    assert {k: session["events"][0][k] for k in ("type", "category", "priority", "data", "created_at")} == {
        "type": "file_read", "category": "file", "priority": 4, "data": '{"path":"a.py"}', "created_at": at(1),
    }  # fmt: skip
    assert {k: session["resumes"][0][k] for k in ("compact_seq", "consumed", "snapshot")} == {
        "compact_seq": 1, "consumed": 0, "snapshot": "<r/>",
    }  # fmt: skip
    assert store.dump("other") == {"sessions": []}


# ------------------------------------------------------------------ locking


def test_locked_store_gives_up_cleanly(tmp_path):
    path = str(tmp_path / "s.db")
    s = Store.open(path, busy_timeout_ms=150)
    blocker = _sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    # The wait is SQLite's busy timeout, as configured (no wall-clock bound in the suite).
    assert s.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 150
    with pytest.raises(StoreLocked):
        add(s, "s", [read("a.py")])
    with pytest.raises(StoreLocked):
        s.claim_resume(claimed_by="x")
    blocker.execute("ROLLBACK")
    assert s.sessions() == [] and not s.conn.in_transaction
    assert add(s, "s", [read("a.py")]) == 1
    s.close()


def test_parallel_writers_lose_nothing(tmp_path):
    path = str(tmp_path / "s.db")
    Store.open(path).close()
    barrier = threading.Barrier(8)
    errors: list = []

    def write(i):
        try:
            st = Store.open(path, busy_timeout_ms=20000)
            barrier.wait()
            for j in range(25):
                st.add_events(f"w{i}", [read(f"{i}/{j}")], source_hook="t", project_dir="")
            st.close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with Store.open(path) as s:
        assert sum(m["event_count"] for m in s.sessions()) == 200
        assert s.conn.execute("SELECT count(*) FROM session_events").fetchone()[0] == 200


# ------------------------------------------------------------------ corruption and recovery


def make_valid(path) -> None:
    with Store.open(str(path)) as s:
        add(s, "s", [event(f"row {i} " + "x" * 200, 3) for i in range(200)])


def corrupt(tmp_path, kind: str):
    path = tmp_path / "s.db"
    if kind == "garbage":
        path.write_bytes(random.Random(1).randbytes(16384))
    elif kind == "text":
        path.write_text("this is not a database\n" * 100)
    elif kind == "truncated":
        make_valid(path)
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
    elif kind == "header-only":
        path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4080)
    elif kind == "directory":
        path.mkdir()
        (path / "inside.txt").write_text("keep me")
    elif kind == "wal-orphan":
        (tmp_path / "s.db-wal").write_bytes(b"\x37\x7f\x06\x82" + b"\x00" * 4000)
        (tmp_path / "s.db-shm").write_bytes(b"\x00" * 32768)
    return path


def snapshot_of(tmp_path) -> dict[str, object]:
    out = {}
    for name in listing(tmp_path):
        p = tmp_path / name
        out[name] = sorted(os.listdir(p)) if p.is_dir() else p.read_bytes()
    return out


KINDS = ["garbage", "text", "truncated", "header-only", "directory", "wal-orphan"]


@pytest.mark.parametrize("kind", KINDS)
def test_corrupt_store_without_recover_raises_and_touches_nothing(tmp_path, kind):
    path = corrupt(tmp_path, kind)
    before = snapshot_of(tmp_path)
    with pytest.raises(StoreCorrupt):
        Store.open(str(path))
    assert snapshot_of(tmp_path) == before


@pytest.mark.parametrize("kind", KINDS)
def test_recover_moves_corrupt_store_aside_and_starts_fresh(tmp_path, kind):
    path = corrupt(tmp_path, kind)
    before = snapshot_of(tmp_path)
    s = Store.open(str(path), recover=True)
    assert s.incident is not None
    moved, reason = s.incident
    stem = os.path.basename(moved)
    assert stem.startswith("s.db.corrupt-") and len(stem) == len("s.db.corrupt-20260101T000000Z")
    # the bad files are all there under the new name, byte for byte
    for name, content in before.items():
        assert snapshot_of(tmp_path)[name.replace("s.db", stem)] == content
    assert add(s, "s", [read("a.py")]) == 1
    assert s.schema_version() == migrations.SCHEMA_VERSION and s.integrity_check() == "ok"
    ((key, text),) = s.incidents()
    assert key.startswith("incident:") and stem in text and reason in text
    s.close()
    assert sorted(n for n in listing(tmp_path) if not n.startswith(stem)) == ["s.db"]


def test_recover_never_moves_a_valid_store(tmp_path):
    path = tmp_path / "s.db"
    make_valid(path)
    open(tmp_path / "empty.db", "w").close()  # a zero-length file is a valid empty database
    for p in (path, tmp_path / "empty.db"):
        s = Store.open(str(p), recover=True)
        assert s.incident is None
        s.close()
    assert listing(tmp_path) == ["empty.db", "s.db"]
    with Store.open(str(path)) as s:
        assert s.event_count("s") == 200


def test_corruption_found_after_open_heals_once(tmp_path):
    path = tmp_path / "s.db"
    make_valid(path)
    conn = _sqlite3.connect(str(path))
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    roots = [  # the events table and its indexes; the schema (sqlite_master) stays whole
        r[0]
        for r in conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE tbl_name = 'session_events' AND rootpage > 0"
        )
    ]
    conn.close()
    data = bytearray(path.read_bytes())
    noise = random.Random(2)
    for root in roots:
        data[(root - 1) * page : root * page] = noise.randbytes(page)
    path.write_bytes(bytes(data))
    s = Store.open(str(path), recover=True)
    assert s.incident is None  # the header is fine: the damage shows on first use
    assert add(s, "s", [read("after.py")]) == 1
    assert datas(s) == ['{"path":"after.py"}']
    assert s.incident is not None and len(s.incidents()) == 1
    s.close()
    with pytest.raises(StoreCorrupt):  # without recover, the damage is reported
        s2 = Store.open(str(tmp_path / os.path.basename(s.incident[0])))
        add(s2, "s", [read("x")])


def test_a_guarded_call_within_another_heals_the_whole_call_once(tmp_path):
    """dump() reads through other guarded methods; damage one of them meets heals the store
    once and reruns the whole dump on the fresh store: no mix of old rows and new."""
    path = tmp_path / "s.db"
    make_valid(path)
    conn = _sqlite3.connect(str(path))
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    roots = [  # the events table and its indexes; session_meta stays readable
        r[0]
        for r in conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE tbl_name = 'session_events' AND rootpage > 0"
        )
    ]
    conn.close()
    data = bytearray(path.read_bytes())
    for root in roots:
        data[(root - 1) * page : root * page] = random.Random(3).randbytes(page)
    path.write_bytes(bytes(data))
    s = Store.open(str(path), recover=True)
    assert s.dump() == {"sessions": []}  # not session "s" of the old store without its events
    assert len(s.incidents()) == 1
    s.close()


RECOVER_SCRIPT = """
from ctxmode.events import make
from ctxmode.store import Store
wait_for_go()
s = Store.open({path!r}, busy_timeout_ms=20000, recover=True)
print(s.add_events("p{i}", [make("file_read", {{"path": "f{i}"}})], source_hook="t", project_dir=""))
s.close()
"""


def test_racing_recoveries_move_the_bad_file_once_and_lose_nothing(tmp_path):
    path = corrupt(tmp_path, "garbage")
    n = 8
    assert race(RECOVER_SCRIPT, n, path=str(path)) == ["1"] * n
    moved = [x for x in os.listdir(tmp_path) if ".corrupt-" in x]
    assert len(moved) == 1
    with Store.open(str(path)) as s:
        assert sorted(m["session_id"] for m in s.sessions()) == [f"p{i}" for i in range(n)]
        assert len(s.incidents()) == 1


def test_open_racing_a_recovery_never_makes_a_store_that_gets_replaced(tmp_path, monkeypatch):
    """The interleaving behind rare losses in the test above, forced with two threads.

    X stats the garbage file; before X connects, M moves it aside and is building the
    fresh store under its temporary name. X must not make a file of its own at the
    path (SQLite creates a missing file on connect): M's rename would replace it and
    every event X wrote there. X must end up in M's store instead.
    """
    from ctxmode.store import connection as store_module  # where Store.open calls migrate

    path = str(corrupt(tmp_path, "garbage"))
    real_connect, real_migrate = _sqlite3.connect, store_module.migrate
    x_thread = threading.get_ident()
    m_building = threading.Event()  # M has its fresh store under the temporary name
    x_settled = threading.Event()  # X is done with whatever its connect found or made
    hooked: list[str] = []
    m_opened: list[object] = []

    def run_m() -> None:
        try:
            m_opened.append(Store.open(path, recover=True))
        except BaseException as exc:  # reported by the assert below
            m_opened.append(exc)

    mover = threading.Thread(target=run_m)

    def connect(database, *args, **kwargs):
        name = str(database)
        if threading.get_ident() != x_thread or hooked or ".new-" in name:
            return real_connect(database, *args, **kwargs)
        hooked.append(name)  # X's first connect to the store: its stat saw the garbage
        mover.start()
        assert m_building.wait(10)
        try:
            return real_connect(database, *args, **kwargs)
        finally:
            if not os.path.exists(path):
                x_settled.set()  # X made nothing at the path: M may rename

    def migrate(conn, *args):
        version = real_migrate(conn, *args)
        if ".new-" in conn.execute("PRAGMA database_list").fetchone()[2]:
            m_building.set()
            x_settled.wait(10)  # the bug: X writes into its own file meanwhile
        return version

    monkeypatch.setattr(_sqlite3, "connect", connect)
    monkeypatch.setattr(store_module, "migrate", migrate)
    x = Store.open(path, recover=True)
    assert x.add_events("x", [read("x.py")], source_hook="t", project_dir="") == 1
    x.close()
    x_settled.set()
    mover.join(10)
    (m_store,) = m_opened
    assert isinstance(m_store, Store), m_store
    assert m_store.add_events("m", [read("m.py")], source_hook="t", project_dir="") == 1
    m_store.close()
    monkeypatch.undo()
    assert len(hooked) == 1  # the interleaving did happen
    assert [n for n in listing(tmp_path) if ".corrupt-" not in n] == ["s.db"]
    assert len([n for n in listing(tmp_path) if ".corrupt-" in n]) == 1
    with Store.open(path) as s:
        assert sorted(m["session_id"] for m in s.sessions()) == ["m", "x"]
        assert len(s.incidents()) == 1


# ------------------------------------------------------------------ a large store
# (timings: benchmarks/store_bench.py; no wall-clock limit belongs in the suite)


def test_search_finds_exactly_the_matches_in_a_large_store(tmp_path):
    big = Store.open(str(tmp_path / "big.db"))
    try:
        bulk_fill(big, 20_000)
        hits = big.search("src/gamma_40.py", limit=1000)
        exact = [h.id for h in hits if "src/gamma_40.py" in h.data]
        stored = big.conn.execute(
            r"SELECT COUNT(*) FROM session_events WHERE data LIKE '%src/gamma\_40.py%' ESCAPE '\'"
        ).fetchone()[0]
        assert exact and len(exact) == stored
        assert [h.id for h in hits[: len(exact)]] == exact  # the identifier's events first
        assert big.search("no-such-thing-anywhere") == []
        assert all(h.session_id == "bulk7" for h in big.search("src/beta", session_id="bulk7"))
        before = len(big.session_events("timed"))
        big.add_events("timed", [make("file_edit", {"path": "src/new.py", "summary": "x"})],
                       source_hook="PostToolUse", project_dir="/p")  # fmt: skip
        assert len(big.session_events("timed")) == before + 1
    finally:
        big.close()


def test_where_a_session_runs_may_hold_a_name_no_file_has(store):
    """A payload's cwd is JSON: a lone surrogate (``\\ud800``) in it reaches the session's
    row as '?', for events and flags alike, instead of failing the hook (found by the fuzz)."""
    where = ("/w/tree\ud800", "main\ud800", "/w/tree\ud800/src", "claude_code")
    store.add_events("sur", [make("cwd_change", {"path": "/w"})], source_hook="PostToolUse",
                     project_dir="/w", where=where)  # fmt: skip
    store.set_session_flag("sur", "cleared", "/w", where=where)
    [row] = [m for m in store.sessions() if m["session_id"] == "sur"]
    assert (row["worktree"], row["branch"], row["cwd"]) == ("/w/tree?", "main?", "/w/tree?/src")
