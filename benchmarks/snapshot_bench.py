"""Time ``snapshot.build_snapshot`` on a realistic session, against a bare decode loop.

    python3 benchmarks/snapshot_bench.py [N_EVENTS ...]   (default: 1000)

The baseline is the least any snapshot must do: decode every event's data with
``fastjson.loads``. The ratio says what the rest (folding, rendering, fitting the budget)
costs on top. Each is timed many times on two clocks: CPU time of this process (robust
when other processes compete for the cores) and wall time; medians and bests are shown.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable  # a benchmark, not the hot path
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxmode import fastjson
from ctxmode.snapshot import build_snapshot
from tests.snapshot_sessions import work_session


def _times(fn: Callable[[], object], repeat: int, clock: Callable[[], float]) -> list[float]:
    out = []
    for _ in range(repeat):
        start = clock()
        fn()
        out.append((clock() - start) * 1000)
    return out


def bench(n: int, repeat: int = 300) -> dict[str, float]:
    events = work_session(n)

    def snapshot() -> None:
        build_snapshot(events, session_id="bench", compact_seq=1)

    def decode_only() -> None:
        for e in events:
            fastjson.loads(e.data)

    snapshot()  # warm up
    decode_only()
    result: dict[str, float] = {"events": n}
    for clock_name, clock in (("cpu", time.process_time), ("wall", time.perf_counter)):
        snap = _times(snapshot, repeat, clock)
        base = _times(decode_only, repeat, clock)
        result[f"{clock_name}_snapshot_median"] = statistics.median(snap)
        result[f"{clock_name}_snapshot_best"] = min(snap)
        result[f"{clock_name}_decode_median"] = statistics.median(base)
        result[f"{clock_name}_decode_best"] = min(base)
        result[f"{clock_name}_ratio"] = statistics.median(snap) / statistics.median(base)
    xml = build_snapshot(events, session_id="bench", compact_seq=1)
    result["bytes"] = len(xml.encode("utf-8"))
    return result


def main(argv: list[str]) -> None:
    for n in [int(a) for a in argv] or [1000]:
        r = bench(n)
        print(f"{n} events -> snapshot of {r['bytes']:.0f} bytes")
        for c in ("cpu", "wall"):
            print(
                f"  {c:>4}: snapshot {r[c + '_snapshot_median']:.2f} ms median"
                f" ({r[c + '_snapshot_best']:.2f} best); decode-only loop"
                f" {r[c + '_decode_median']:.2f} ms median ({r[c + '_decode_best']:.2f} best);"
                f" ratio of medians {r[c + '_ratio']:.1f}x"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
