"""Peak memory of a read-only lookup against the store's size (issue 29), run by hand.

    python3 benchmarks/readonly_memory.py                    # 100k and 300k events
    python3 benchmarks/readonly_memory.py --events 20000     # a quicker look

A lookup the snapshot hands the model often runs in the client's sandbox, where the data
root can be read but not written (``ctxmode.store.connection._read_connection``). This
fills one project store with ``--events`` events made by the real extractors from the
bench payloads (1,000-event sessions, as the cap keeps them), lets it go idle (no
``-wal``: the state a sandbox cannot open with ``mode=ro``), and runs the reading
commands (``search``, ``stats``, ``sessions``, ``dump --session``) as fresh processes:
once with the folder writable (the baseline), once with it read-only for real (a
read-only bind mount in a private namespace, ``tests/readonly.py``). Each child's peak
resident memory (``ru_maxrss`` from ``wait4``) is reported beside the store's size, and
the ratio of the read-only peak to the writable one. Not part of the test run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.scale import event_pool, fill_session  # noqa: E402
from ctxmode import paths  # noqa: E402
from ctxmode.store import Store  # noqa: E402
from tests.readonly import readonly_argv  # noqa: E402

PER_SESSION = 1000
NEEDLE = "reconcile"


def build(root: str, project: str, events: int) -> str:
    """A store of ``events`` events in sessions of 1,000, closed (idle: no -wal)."""
    path = paths.store_file(root, project)
    pool = event_pool(project)
    start = time.time() - 86400 * 30
    n = 0
    with Store.open(path, synchronous="OFF") as store:
        for s in range(max(1, events // PER_SESSION)):
            n = fill_session(store, f"bench-{s:05d}", pool, PER_SESSION, start + s * 600, n)
    return path


def peak(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(peak RSS in MiB, seconds, exit status) of one child process."""
    began = time.perf_counter()
    child = subprocess.Popen(list(argv), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - began
    if child.stderr is not None:
        err = child.stderr.read()
        child.stderr.close()
        if status and err:
            print(f"    ({' '.join(argv[-4:])}: {err.decode(errors='replace').strip()[-300:]})")
    return usage.ru_maxrss / 1024, seconds, status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--events", type=int, nargs="+", default=[100_000, 300_000], help="store sizes"
    )
    args = parser.parse_args()
    for events in args.events:
        with tempfile.TemporaryDirectory(prefix="ctxmode-ro-memory-") as tmp:
            root = os.path.join(tmp, "root")
            project = os.path.join(tmp, "proj")
            os.makedirs(os.path.join(project, ".git"))
            began = time.perf_counter()
            path = build(root, project, events)
            size = os.path.getsize(path)
            print(
                f"{events:,} events: store {size / 1e6:.0f} MB "
                f"(built in {time.perf_counter() - began:.0f} s)"
            )
            env = {**os.environ, "CTXMODE_HOME": root, "NO_COLOR": "1"}
            env.pop("CLAUDECODE", None)
            cli = [sys.executable, "-m", "ctxmode"]
            commands = {
                "search": [*cli, "search", NEEDLE, "--project", project],
                "stats": [*cli, "stats", "--json", "--project", project],
                "sessions": [*cli, "sessions", "--project", project],
                "dump --session": [
                    *cli, "dump", "--json", "--session", "bench-00000", "--project", project
                ],
            }  # fmt: skip
            for name, argv in commands.items():
                rw_mib, rw_s, rw_status = peak(argv, env)
                wrapped = readonly_argv([Path(root)], argv)
                if wrapped is None:
                    raise SystemExit("no way to make a folder read-only here (unshare or bwrap)")
                ro_mib, ro_s, ro_status = peak(wrapped, env)
                print(
                    f"  {name:<15} writable {rw_mib:6.0f} MiB {rw_s:5.2f} s"
                    f"{'' if rw_status == 0 else ' FAILED'} | read-only {ro_mib:6.0f} MiB "
                    f"{ro_s:5.2f} s{'' if ro_status == 0 else ' FAILED'} | "
                    f"{ro_mib / rw_mib:4.1f}x the writable peak, "
                    f"{ro_mib * 1048576 / size:4.2f}x the store"
                )
            leftovers = sorted(os.listdir(os.path.dirname(path)))
            print(f"  sessions folder after: {', '.join(leftovers)}")


if __name__ == "__main__":
    main()
