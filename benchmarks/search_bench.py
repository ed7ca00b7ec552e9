"""Time ``ctxmode search`` on a large store, against a plain SELECT of the same rows.

    python3 benchmarks/search_bench.py [N_EVENTS] [--no-fts] [--keep DIR]   (default: 1000000)

Builds a store of N realistic events (1,000 per session, five kinds of events, ids and
times increasing) in one transaction with ``executemany``, the FTS index built in one
pass (``migrations.reindex_fts``). Then, for each query, it times
``Store.search(query, limit=10)`` and a plain ``SELECT … WHERE id IN (…)`` of the very
rows the search returned: the ratio is what finding and ranking cost over merely reading
the answer. Each is run several times (the first run, with cold pages, is reported
apart); medians are shown. Last, the whole
command as the model runs it: a ``ctxmode search`` process, against ``--help`` (the
interpreter, click and the command imports) as its floor.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxmode import fastjson, migrations, paths
from ctxmode.store import Store, iso_utc

PROJECT = "/bench/project"
PER_SESSION = 1000
WORDS = [
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
    "rounding",
    "invoice",
    "export",
]

# (query, filters): common and rare terms, paths, phrases, short terms (LIKE), filters.
QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("snapshot", {}),
    ("src/gamma_40.py", {}),
    ("AssertionError timeout", {}),
    ('"rounding invoice"', {}),
    ("pytest rounding", {"category": "error"}),
    ("src/beta", {"session_id": "bulk7"}),
    ("install", {"since": "LAST_HOUR"}),
    ("py", {}),
    ("git status --short", {}),
    ("no-such-thing-anywhere", {}),
    # Sentences, as an agent asks after a compaction (stop words carry no weight).
    ("why did the rounding of the invoice export fail", {}),
    ("which handler parses the payload config?", {}),
]


def rows(n: int, t0: float) -> Iterator[tuple[object, ...]]:
    rnd = random.Random(n)
    choice, choices = rnd.choice, rnd.choices
    kinds: list[tuple[str, str, int, Callable[[int], dict[str, object]]]] = [
        ("file_edit", "file", 2, lambda i: {"path": f"src/{WORDS[i % 21]}_{i % 5000}.py",
                                           "summary": " ".join(choices(WORDS, k=6))}),
        ("file_read", "file", 4, lambda i: {"path": f"tests/test_{choice(WORDS)}.py"}),
        ("git_query", "git", 5, lambda i: {"op": "status",
                                          "args": f"git status --short {choice(WORDS)}"}),
        ("user_prompt", "prompt", 1, lambda i: {"text": " ".join(choices(WORDS, k=rnd.randint(5, 30)))}),
        ("tool_error", "error", 1, lambda i: {"tool": "Bash", "key": f"pytest {choice(WORDS)}",
                                             "error": f"AssertionError: {choice(WORDS)} failed line {i % 900}"}),
    ]  # fmt: skip
    for i in range(n):
        type_, category, priority, make = kinds[i % len(kinds)]
        data = fastjson.dumps(make(i))
        # One event per 10 ms up to now: ids and created_at grow together, as in real use.
        yield (
            f"bulk{i // PER_SESSION}",
            type_,
            category,
            priority,
            data,
            f"{i:064x}",
            "PostToolUse",
            len(data) * 8,
            iso_utc(t0 - (n - i) * 0.01),
        )


def build(path: str, n: int) -> float:
    """Fill a fresh store with ``n`` events; return the seconds it took."""
    started = time.perf_counter()
    store = Store.open(path)
    conn = store.conn
    fts = store.fts_enabled()
    conn.execute("BEGIN IMMEDIATE")
    if fts:  # one indexing pass is several times faster than the per-row triggers
        conn.execute("DROP TRIGGER session_events_ai")
        conn.execute("DROP TRIGGER IF EXISTS session_events_words_ai")
    conn.executemany(
        "INSERT INTO session_events (session_id, type, category, priority, data, data_hash, "
        "source_hook, bytes_avoided, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows(n, time.time()),
    )
    conn.execute(
        "INSERT INTO session_meta (session_id, project_dir, started_at, last_event_at, "
        "event_count) SELECT session_id, ?, MIN(created_at), MAX(created_at), COUNT(*) "
        "FROM session_events GROUP BY session_id",
        (PROJECT,),
    )
    if fts:
        migrations.reindex_fts(conn)  # the index and its triggers, over every row
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return time.perf_counter() - started


def _median_ms(
    fn: Callable[[], object], repeat: int, clock: Callable[[], float] = time.perf_counter
) -> float:
    samples = []
    for _ in range(repeat):
        started = clock()
        fn()
        samples.append((clock() - started) * 1000)
    return statistics.median(samples)


def time_queries(path: str, repeat: int) -> list[dict[str, Any]]:
    store = Store.open(path, readonly=True)
    results = []
    for query, filters in QUERIES:
        kw = dict(filters)
        if kw.get("since") == "LAST_HOUR":
            kw["since"] = iso_utc(time.time() - 3600)
        started = time.perf_counter()
        hits = store.search(query, limit=10, **kw)
        cold = (time.perf_counter() - started) * 1000
        search_ms = _median_ms(lambda q=query, k=kw: store.search(q, limit=10, **k), repeat)
        # CPU time of this process: robust when other processes compete for the cores.
        search_cpu = _median_ms(
            lambda q=query, k=kw: store.search(q, limit=10, **k), repeat, time.process_time
        )
        ids = [hit.id for hit in hits]
        marks = ",".join("?" * len(ids))

        def plain(ids: list[Any] = ids, marks: str = marks) -> object:
            return store.conn.execute(
                f"SELECT id, session_id, type, category, priority, data, created_at "
                f"FROM session_events WHERE id IN ({marks})",
                ids,
            ).fetchall()

        select_ms = _median_ms(plain, repeat * 20)
        label = query + "".join(f" --{k.replace('_id', '')} {v}" for k, v in filters.items())
        results.append({
            "query": label, "hits": len(hits), "cold_ms": cold, "search_ms": search_ms,
            "select_ms": select_ms, "ratio": search_ms / select_ms if select_ms else 0.0,
            "search_cpu": search_cpu,
        })  # fmt: skip
    store.close()
    return results


def time_cli(home: str, repeat: int = 5) -> dict[str, float]:
    """Wall time of whole ``ctxmode search`` processes, and of ``ctxmode --help``."""
    env = {**os.environ, "CTXMODE_HOME": home}
    env.pop("CLAUDECODE", None)  # not a model's search: record nothing
    env.pop("CLAUDE_CODE_SESSION_ID", None)

    def run(*args: str) -> float:
        return _median_ms(
            lambda: subprocess.run(
                [sys.executable, "-m", "ctxmode", *args], env=env, capture_output=True, check=True
            ),
            repeat,
        )

    return {
        "help_ms": run("--help"),
        "search_ms": run("search", "--project", PROJECT, "AssertionError timeout"),
        "search_path_ms": run("search", "--project", PROJECT, "src/gamma_40.py"),
    }


def main(argv: list[str]) -> None:
    n = next((int(a) for a in argv if a.isdigit()), 1_000_000)
    if "--no-fts" in argv:
        os.environ["CTXMODE_NO_FTS"] = "1"
    keep = argv[argv.index("--keep") + 1] if "--keep" in argv else None
    home = keep or tempfile.mkdtemp(prefix="ctxmode-bench-")
    os.environ["CTXMODE_HOME"] = home
    path = paths.store_path(PROJECT, os.environ)
    if os.path.exists(path):
        print(f"reusing {path}")
    else:
        print(f"building {n:,} events in {path} ...", flush=True)
        seconds = build(path, n)
        print(f"built in {seconds:.1f} s; {os.path.getsize(path) / n:.0f} B per event")
    print(
        f"\n{'query':<44} {'hits':>4} {'cold':>8} {'search':>8} {'SELECT':>8} {'ratio':>7}"
        f" {'cpu':>8}"
    )
    for row in time_queries(path, repeat=7):
        print(
            f"{row['query']:<44} {row['hits']:>4} {row['cold_ms']:>6.1f}ms "
            f"{row['search_ms']:>6.1f}ms {row['select_ms']:>6.3f}ms {row['ratio']:>6.0f}x"
            f" {row['search_cpu']:>6.1f}ms"
        )
    cli = time_cli(home)
    print(
        f"\nwhole process: ctxmode search {cli['search_ms']:.0f} ms "
        f"(path query {cli['search_path_ms']:.0f} ms); ctxmode --help {cli['help_ms']:.0f} ms; "
        f"search work over --help: {cli['search_ms'] - cli['help_ms']:.0f} ms"
    )
    if not keep:
        import shutil

        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
