"""How much a store grows per 1,000 tool calls, and what each kind of event costs.

    python3 benchmarks/growth_bench.py [TRANSCRIPT.jsonl ...]   (default: the bundled sample)

Imports Claude Code transcripts (``ctxmode import``: the hooks' extractors and masking,
one store per project) into a throwaway data root, then reports, over all stores: the
tool calls read, the events kept, the bytes of event data (``length(data)``) in all and
per event type, and the store files' size after a VACUUM (tables, indexes, both FTS5
indexes) per 1,000 tool calls.

To compare two versions, run the script with each on ``PYTHONPATH`` (a checkout of the
other version first), over the same transcripts::

    git archive main | tar -x -C /tmp/main
    PYTHONPATH=/tmp/main python3 benchmarks/growth_bench.py sessions/*.jsonl
    python3 benchmarks/growth_bench.py sessions/*.jsonl
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "ctxmode" / "data" / "sample_session.jsonl"


def tool_calls(paths: list[str]) -> int:
    """The tool calls the transcripts hold (their ``tool_use`` blocks)."""
    count = 0
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if '"tool_use"' not in line:
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                content = (record.get("message") or {}).get("content")
                if isinstance(content, list):
                    count += sum(
                        1 for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
                    )
    return count


def empty_store_size(home: str) -> int:
    """The size of a new store of this version with nothing in it, after a VACUUM."""
    path = Path(home, "empty.db")
    subprocess.run(
        [
            sys.executable,
            "-c",
            f"from ctxmode.store import Store; Store.open({str(path)!r}).close()",
        ],
        check=True,
    )
    conn = sqlite3.connect(path)
    conn.execute("VACUUM")
    conn.close()
    return path.stat().st_size


def main(argv: list[str]) -> None:
    paths = [str(Path(p).resolve()) for p in argv] or [str(SAMPLE)]
    with tempfile.TemporaryDirectory(prefix="ctxmode-growth-") as home:
        env = {**os.environ, "CTXMODE_HOME": home}
        env.pop("CLAUDE_PROJECT_DIR", None)  # each transcript's own project
        subprocess.run(
            [sys.executable, "-m", "ctxmode", "import", *paths],
            env=env,
            cwd=home,
            check=True,
            capture_output=True,
        )
        per_type: dict[str, list[int]] = {}
        size = 0
        stores = sorted(Path(home, "sessions").glob("*.db"))
        empty = empty_store_size(home)
        for store in stores:
            conn = sqlite3.connect(store)
            for type_, count, data in conn.execute(
                "SELECT type, COUNT(*), SUM(length(data)) FROM session_events GROUP BY type"
            ):
                entry = per_type.setdefault(type_, [0, 0])
                entry[0] += int(count)
                entry[1] += int(data)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("VACUUM")
            conn.close()
            size += store.stat().st_size
    calls = tool_calls(paths)
    events = sum(n for n, _ in per_type.values())
    data = sum(b for _, b in per_type.values())
    per_k = 1000 / max(calls, 1)
    print(f"{len(paths)} transcripts, {calls} tool calls, {events} events")
    print(f"events per 1,000 calls        {events * per_k:10,.0f}")
    print(f"event data per 1,000 calls    {data * per_k / 1024:10,.0f} KB")
    print(f"data per event (mean)         {data / max(events, 1):10,.0f} B")
    grown = size - empty * len(stores)
    print(f"store growth per 1,000 calls  {grown * per_k / 1024:10,.0f} KB (after VACUUM; ", end="")
    print(f"{len(stores)} stores of {empty / 1024:.0f} KB each when empty left out)")
    print(f"store growth per event        {grown / max(events, 1):10,.0f} B")
    print("\nper type: events, mean data bytes")
    for type_, (count, total) in sorted(per_type.items(), key=lambda kv: -kv[1][1]):
        print(f"  {type_:16} {count:7} {total / count:8,.0f}")


if __name__ == "__main__":
    main(sys.argv[1:])
