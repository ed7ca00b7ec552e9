"""Scale and concurrency of the store (issue 7), run by hand; not part of the test run.

    python3 benchmarks/scale.py                       # 1,000 sessions x 1,000 events, 32 parallel
    python3 benchmarks/scale.py --sessions 100        # a quicker look
    python3 benchmarks/scale.py --skip-scale          # only the concurrency part

Scale: fills one project store with ``--sessions`` x ``--events`` events made by the real
extractors from the bench payloads (Claude Code 2.1.197 shapes), and measures as it
grows: the cost of one hook-sized insert (open, insert one event into a full session,
close) in-process, and the real PostToolUse hook as a ratio to the interpreter floor.
At full size: ``ctxmode dump --session`` and ``ctxmode search`` (the real CLI, a fresh
process each, so their start-up is included; and the store calls alone), PreCompact and
SessionStart (compact) on a 1,000-event session, and the store's size per event.

Concurrency: waves of ``--concurrency`` PostToolUse hooks started at once on one store
(one session: parallel tool calls), checking that each exits 0 silently and that every
event arrives, and reporting events per second.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ctxmode import bench, hooklog, paths, payload  # noqa: E402
from ctxmode.events import SessionEvent  # noqa: E402
from ctxmode.extract import extract  # noqa: E402
from ctxmode.hosts.claude_code.bench import default_commands  # noqa: E402
from ctxmode.store import Store, iso_utc  # noqa: E402

PLACEHOLDER = "@N@"
BATCH = 25  # events per seeding transaction (the measured inserts are hook-sized)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f} ms"


def event_pool(project: str) -> list[SessionEvent]:
    """One round of the seed mix, extracted once, with ``@N@`` left in the data."""
    bundle = bench.load_payloads()
    pool: list[SessionEvent] = []
    for name in bundle["seed"]:
        # Render with an unmistakable number, then put the placeholder back where it went.
        raw = json.loads(bench.render(bundle["payloads"][name], project, "seed", 987654321))
        inp = payload.from_dict(raw)
        inp.project_dir = project
        for event in extract(inp):
            event.data = event.data.replace("987654321", PLACEHOLDER)
            event.source_hook = inp.event
            pool.append(event)
    return pool


def fill_session(
    store: Store, session: str, pool: Sequence[SessionEvent], events: int, start: float, n0: int
) -> int:
    """Insert ``events`` events into ``session``; return the next free number."""
    n = n0
    stamp = start
    count = 0
    while count < events:
        batch = []
        for _ in range(BATCH):
            template = pool[n % len(pool)]
            batch.append(
                SessionEvent(
                    template.type,
                    template.category,
                    template.priority,
                    template.data.replace(PLACEHOLDER, str(n)),
                    source_hook=template.source_hook,
                    tool_use_id=f"toolu_scale_{n}",
                )
            )
            n += 1
        stamp += 1.2 * BATCH
        store.add_events(
            session,
            batch[: events - count],
            source_hook="PostToolUse",
            project_dir="",
            now=iso_utc(stamp),
            max_events=events,
        )
        count = store.event_count(session)
    return n


def hook_sized_insert(path: str, session: str, event: SessionEvent, runs: int) -> list[float]:
    """What a PostToolUse hook does to the store: open, one insert (at the cap), close."""
    times = []
    for i in range(runs):
        event.data = f'{{"path":"src/hot_{time.time_ns()}_{i}.py","summary":"+1 -1"}}'
        started = time.perf_counter()
        store = Store.open(path)
        store.add_events(session, [event], source_hook="PostToolUse", project_dir="")
        store.close()
        times.append(time.perf_counter() - started)
    return times


def hook_ratio(
    runner: bench.Launcher, command: str, data: bytes | str, python: str, runs: int
) -> tuple[float, float, float]:
    """(hook p50 ms, floor p50 ms, ratio) of a real hook process, interleaved with the floor."""
    hook, floor = [], []
    for _ in range(runs):
        floor.append(runner.run(bench.floor_command(python), b"").seconds)
        sample = runner.run(command, data)
        if sample.exit_code or sample.stderr:
            raise SystemExit(f"hook failed: {sample.exit_code} {sample.stderr[:300]!r}")
        hook.append(sample.seconds)
    h, f = statistics.median(hook), statistics.median(floor)
    return h * 1000, f * 1000, h / f


def cli(args: list[str], env: dict[str, str], runs: int = 3) -> tuple[float, bytes]:
    """Median wall time of ``ctxmode ARGS`` as a user runs it (a fresh process)."""
    times, out = [], b""
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "ctxmode", *args],
            capture_output=True,
            env=env,
            cwd=REPO,
            check=False,
        )
        times.append(time.perf_counter() - started)
        if proc.returncode != 0:
            raise SystemExit(f"ctxmode {' '.join(args)} failed: {proc.stderr.decode()[-500:]}")
        out = proc.stdout
    return statistics.median(times), out


def scale(root: str, sessions: int, events: int) -> None:
    home, project = os.path.join(root, "home"), os.path.join(root, "project")
    os.makedirs(os.path.join(project, ".git"), exist_ok=True)
    env = bench.hook_env(home, project)
    path = paths.store_path(project, env)
    commands = default_commands()
    python = bench.interpreter_of(commands["PostToolUse"])
    bundle = bench.load_payloads()
    pool = event_pool(project)
    hot = SessionEvent("file_edit", "file", 2, "")
    hot_session = "scale-hot"
    runner = bench.Launcher(env, project, root)
    checkpoints = sorted({0, sessions // 10, sessions // 4, sessions // 2, sessions})
    start = time.time() - sessions * 20 * 60.0 - events * 1.2
    n = 0
    print(f"store: {path}")
    print(f"filling {sessions:,} sessions x {events:,} events ({BATCH} per transaction)\n")
    print(
        f"{'sessions':>9}{'events':>11}{'fill s':>8}   "
        f"{'insert p50':>11}{'insert p95':>11}   {'hook p50':>9}{'floor':>8}{'ratio':>7}"
    )
    filled = 0
    fill_seconds = 0.0
    store = Store.open(path)
    store.close()
    # The hot session is full from the start: every measured insert also evicts one.
    store = Store.open(path)
    n = fill_session(store, hot_session, pool, events, start, n)
    store.close()
    for target in checkpoints:
        began = time.perf_counter()
        store = Store.open(path)
        while filled < target:
            n = fill_session(
                store, f"scale-{filled:05d}", pool, events, start + filled * 20 * 60.0, n
            )
            filled += 1
        store.close()
        fill_seconds = time.perf_counter() - began
        # Let the fill's dirty pages reach the disk first: writeback of a big fill
        # throttles every writer, and the figures would measure that instead.
        os.sync()
        time.sleep(1.0)
        inserts = hook_sized_insert(path, hot_session, hot, 200)
        data = bench.render(bundle["payloads"]["edit"], project, hot_session, n)
        n += 1
        hook_ms, floor_ms, ratio = hook_ratio(runner, commands["PostToolUse"], data, python, 20)
        total = (filled + 1) * events
        print(
            f"{filled:>9,}{total:>11,}{fill_seconds:>8.1f}   "
            f"{ms(statistics.median(inserts)):>11}{ms(bench.percentile(inserts, 0.95)):>11}   "
            f"{hook_ms:>6.1f} ms{floor_ms:>5.1f}ms{ratio:>6.2f}x"
        )

    print("\nat full size")
    sizes = {
        suffix: os.path.getsize(path + suffix)
        for suffix in ("", "-wal")
        if os.path.exists(path + suffix)
    }
    store = Store.open(path, readonly=True)
    stored = store.conn.execute("SELECT count(*) FROM session_events").fetchone()[0]
    data_bytes = store.conn.execute("SELECT sum(length(data)) FROM session_events").fetchone()[0]
    try:
        per_table = store.conn.execute(
            "SELECT CASE WHEN name LIKE 'events_fts%' THEN 'FTS index' "
            "WHEN name LIKE 'idx_%' OR name LIKE 'sqlite_autoindex%' THEN 'indexes' "
            "ELSE name END, sum(pgsize) FROM dbstat GROUP BY 1 ORDER BY 2 DESC"
        ).fetchall()
    except Exception:  # dbstat is a compile-time option of SQLite
        per_table = []
    session_id = "scale-00042" if sessions > 42 else hot_session
    started = time.perf_counter()
    dumped = store.dump(session_id)
    dump_call = time.perf_counter() - started
    queries = ("invoice_4242", "pytest", "rounding case")
    search_calls = []
    for query in queries:
        started = time.perf_counter()
        hits = store.search(query, limit=10)
        search_calls.append((query, time.perf_counter() - started, len(hits)))
    started = time.perf_counter()
    store.search("invoice", session_id=session_id, limit=10)
    session_search = time.perf_counter() - started
    store.close()
    total_size = sum(sizes.values())
    print(f"  events stored        {stored:,} in {sessions + 1:,} sessions")
    print(f"  file size            {total_size / 1e6:,.1f} MB ({sizes})")
    print(
        f"  size per event       {total_size / stored:,.0f} bytes "
        f"(event data itself: {data_bytes / stored:,.0f} bytes)"
    )
    for name, size in per_table:
        print(f"    {name:<22} {size / 1e6:8.1f} MB  {size / stored:6.0f} B/event")
    print(
        f"  Store.dump(session)  {ms(dump_call)}  ({len(dumped['sessions'][0]['events'])} events)"
    )
    for query, seconds, count in search_calls:
        print(f"  Store.search({query!r:<22}) {ms(seconds)}  ({count} hits)")
    print(f"  Store.search('invoice', session) {ms(session_search)}")
    cli_env = {**env, "PYTHONPATH": str(REPO)}
    seconds, out = cli(["dump", "--project", project, "--session", session_id, "--json"], cli_env)
    events_out = len(json.loads(out)["sessions"][0]["events"])
    print(
        f"  ctxmode dump --session --json   {ms(seconds)}  ({events_out} events, {len(out):,} bytes)"
    )
    for query in queries:
        seconds, out = cli(["search", query, "--project", project], cli_env)
        print(f"  ctxmode search {query!r:<22} {ms(seconds)}")
    seconds, out = cli(
        ["search", "invoice", "--project", project, "--session", session_id], cli_env
    )
    print(f"  ctxmode search 'invoice' --session {ms(seconds)}")
    seconds, _ = cli(["--version"], cli_env)
    print(f"  (ctxmode --version alone: {ms(seconds)})")

    for case, payload_name in (
        ("PreCompact", "pre_compact"),
        ("SessionStart", "session_start_compact"),
    ):
        hook_ms, floor_ms, ratio = hook_ratio(
            runner,
            commands[case],
            bench.render(bundle["payloads"][payload_name], project, hot_session, n),
            python,
            20,
        )
        print(f"  {case} on a 1,000-event session: {hook_ms:.1f} ms = {ratio:.2f}x floor")
    runner.close()


def concurrency(root: str, parallel: int, waves: int) -> None:
    home, project = os.path.join(root, "home"), os.path.join(root, "project")
    os.makedirs(os.path.join(project, ".git"), exist_ok=True)
    env = bench.hook_env(home, project)
    path = paths.store_path(project, env)
    command = default_commands()["PostToolUse"]
    template = bench.load_payloads()["payloads"]["edit"]
    session = f"parallel-{time.time_ns()}"
    before = 0
    if os.path.exists(path):
        store = Store.open(path, readonly=True)
        before = store.conn.execute("SELECT count(*) FROM session_events").fetchone()[0]
        store.close()
    print(
        f"\nconcurrency: {waves} waves of {parallel} PostToolUse hooks on one store "
        f"({before:,} events in it), one session"
    )
    problems: list[str] = []
    walls = []
    n = 5_000_000
    for _ in range(waves):
        datas = []
        for _ in range(parallel):
            n += 1
            datas.append(bench.render(template, project, session, n))
        started = time.perf_counter()
        procs = [
            subprocess.Popen(
                ["/bin/sh", "-c", command],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=project,
            )
            for _ in datas
        ]
        for proc, data in zip(procs, datas, strict=True):
            assert proc.stdin is not None
            proc.stdin.write(data)
            proc.stdin.close()
        for proc in procs:
            assert proc.stdout is not None and proc.stderr is not None
            out, err = proc.stdout.read(), proc.stderr.read()
            proc.wait()
            if proc.returncode or out or err:
                problems.append(
                    f"exit {proc.returncode}, stdout {out[:100]!r}, stderr {err[:200]!r}"
                )
        walls.append(time.perf_counter() - started)
    store = Store.open(path, readonly=True)
    arrived = store.conn.execute(
        "SELECT count(*) FROM session_events WHERE session_id = ?", (session,)
    ).fetchone()[0]
    store.close()
    records = hooklog.read_records(os.path.join(home, "logs"), limit=1000)
    logged = [r for r in records if r["level"] in ("WARN", "ERROR")]
    spooled = (
        os.listdir(os.path.join(home, "spool"))
        if os.path.isdir(os.path.join(home, "spool"))
        else []
    )
    sent = parallel * waves
    print(f"  hooks run            {sent} ({len(problems)} with an exit status, output or stderr)")
    print(f"  events stored        {arrived} of {sent} (lost: {sent - arrived})")
    print(f"  log warnings/errors  {len(logged)}; spool files: {spooled}")
    print(f"  wave wall time       median {ms(statistics.median(walls))}, max {ms(max(walls))}")
    print(
        f"  throughput           {sent / sum(walls):,.0f} events/s "
        f"({parallel} processes at once, {os.cpu_count()} CPUs)"
    )
    for problem in problems[:5] + [f"{r['event']}: {r['message']}" for r in logged[:5]]:
        print(f"  problem: {problem}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--waves", type=int, default=10)
    parser.add_argument("--dir", help="work here (kept) instead of a temporary directory")
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--skip-concurrency", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ctxmode-scale-") as tmp:
        root = os.path.realpath(args.dir or tmp)
        os.makedirs(root, exist_ok=True)
        began = time.perf_counter()
        if not args.skip_scale:
            scale(root, args.sessions, args.events)
        if not args.skip_concurrency:
            concurrency(root, args.concurrency, args.waves)
        print(f"\n{time.perf_counter() - began:.0f}s in all")


if __name__ == "__main__":
    main()
