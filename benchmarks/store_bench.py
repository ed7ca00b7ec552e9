"""Store insert cost and search latency at 100,000 and 1,000,000 events, run by hand.

    python3 benchmarks/store_bench.py            # 100k events
    python3 benchmarks/store_bench.py 1000000    # 1M events (about a minute to build)

Reports the median cost of one ``add_events`` of one event into an empty store and into the
full one (it should stay flat), the time to build the store, its size per event, and the
latency of a few searches (each run twice, the first pays for cold pages). These figures
were assertions of tests/test_store.py once; wall-clock limits do not belong in the test
suite (a loaded machine fails them), so they live here and are read, not asserted.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ctxmode import migrations
from ctxmode.events import make
from ctxmode.store import Store, iso_utc

T0 = 1_780_000_000.0


def bulk_fill(store, n: int, per_session: int = 1000) -> None:
    """n realistic events, 1000 per session, one transaction; FTS built in one pass."""
    rnd = random.Random(n)
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "snapshot",
        "store",
        "session",
        "events",
        "compact",
        "resume",
        "search",
        "index",
        "handler",
        "payload",
        "parse",
        "error",
        "timeout",
        "config",
        "install",
    ]
    kinds = [
        ("file_edit", "file", 2, lambda i: {"path": f"src/{words[i % 19]}_{i % 5000}.py", "summary": " ".join(rnd.choices(words, k=6))}),
        ("file_read", "file", 4, lambda i: {"path": f"tests/test_{rnd.choice(words)}.py"}),
        ("git_query", "git", 5, lambda i: {"op": "status", "args": f"git status --short {rnd.choice(words)}"}),
        ("user_prompt", "prompt", 1, lambda i: {"text": " ".join(rnd.choices(words, k=rnd.randint(5, 30)))}),
        ("tool_error", "error", 1, lambda i: {"tool": "Bash", "key": f"pytest {rnd.choice(words)}", "error": f"AssertionError: {rnd.choice(words)} failed line {i % 900}"}),
    ]  # fmt: skip

    def rows():
        for i in range(n):
            t, c, p, f = kinds[i % len(kinds)]
            data = json.dumps(f(i), separators=(",", ":"))
            yield (
                f"bulk{i // per_session}",
                t,
                c,
                p,
                data,
                f"{i:064x}",
                "PostToolUse",
                iso_utc(T0 - n + i),
            )

    conn = store.conn
    has_fts = store.fts_enabled()
    conn.execute("BEGIN IMMEDIATE")
    if has_fts:  # one indexing pass is ~5x faster than the per-row triggers
        conn.execute("DROP TRIGGER session_events_ai")
        conn.execute("DROP TRIGGER IF EXISTS session_events_words_ai")
    conn.executemany(
        "INSERT INTO session_events (session_id, type, category, priority, data, data_hash, "
        "source_hook, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        rows(),
    )
    conn.execute(
        "INSERT INTO session_meta (session_id, started_at, last_event_at, event_count) "
        "SELECT session_id, MIN(created_at), MAX(created_at), COUNT(*) FROM session_events GROUP BY session_id"
    )
    if has_fts:
        migrations.reindex_fts(conn)  # the index and its triggers, over every row
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def time_one_insert(store, rounds: int = 40) -> float:
    samples = []
    for i in range(rounds):
        e = make("file_edit", {"path": f"src/new_{i}.py", "summary": "measure"})
        started = time.perf_counter()
        store.add_events("timed", [e], source_hook="PostToolUse", project_dir="/p")
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def time_search(store, queries) -> dict[str, float]:
    out = {}
    for q, kw in queries:
        started = time.perf_counter()
        store.search(q, **kw)
        out[f"{q} {kw}".strip()] = time.perf_counter() - started
    return out


QUERIES = [
    ("snapshot", {}),
    ("src/gamma_40.py", {}),
    ("AssertionError timeout", {}),
    ("src/beta", {"session_id": "bulk7"}),
    ("snap", {"category": "error"}),
    ("py", {}),
    ("no-such-thing-anywhere", {}),
]


def run(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        empty = Store.open(os.path.join(tmp, "empty.db"))
        big = Store.open(os.path.join(tmp, "big.db"))
        started = time.perf_counter()
        bulk_fill(big, n)
        build = time.perf_counter() - started
        t_empty, t_big = time_one_insert(empty), time_one_insert(big)
        time_search(big, QUERIES)  # cold pages
        searches = time_search(big, QUERIES)
        size = os.path.getsize(os.path.join(tmp, "big.db")) / n
        print(
            f"[store] add_events(1 event) median: empty {t_empty * 1000:.3f} ms, "
            f"{n:,} events {t_big * 1000:.3f} ms (x{t_big / t_empty:.1f}); "
            f"build {build:.1f} s; size {size:.0f} B/event"
        )
        for q, t in searches.items():
            print(f"[store] search {n:,} {q!r}: {t * 1000:.1f} ms")
        empty.close()
        big.close()


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
