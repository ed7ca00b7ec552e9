"""Peak memory and throughput of ``ctxmode import`` on one big transcript, run by hand.

    python3 benchmarks/import_memory.py                 # a ~200 MB transcript
    python3 benchmarks/import_memory.py --mb 50         # a quicker look

Builds the bench's synthetic transcript (``ctxmode.bench.imports.synthetic``: records of
the real client, repeated with fresh tool-use ids) of ``--mb`` megabytes, written copy by
copy so this process never holds it whole, then imports it in a child process
(``ctxmode.importer.run``, as ``ctxmode import FILE`` does, into a throwaway data root) and
reports the child's peak resident memory (``ru_maxrss`` from ``wait4``) and MB/s. Not part
of the test run: memory is measured here, never asserted in a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CHILD = """
import json, sys
from ctxmode import importer
env = {"CTXMODE_HOME": sys.argv[2], "HOME": sys.argv[3]}
totals = importer.run(importer.find(env, files=[sys.argv[1]]), env)
print(json.dumps(totals.as_dict()))
"""


def write_transcript(path: Path, target: int) -> int:
    """The synthetic transcript, ``target`` bytes or a little more, one copy at a time."""
    from importlib import resources

    from ctxmode.bench.imports import DATA

    source = resources.files("ctxmode.data").joinpath(DATA).read_bytes()
    size = n = 0
    with path.open("wb") as fh:
        while size < target:
            block = source.replace(b'"toolu_', b'"toolu_%d_' % n)
            fh.write(block)
            size += len(block)
            n += 1
    return size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=200.0, help="transcript size in MB")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ctxmode-import-memory-") as tmp:
        folder = Path(tmp) / "projects" / "-home-dev-proj"
        folder.mkdir(parents=True)
        path = folder / "big.jsonl"
        size = write_transcript(path, int(args.mb * 1e6))
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(path), os.path.join(tmp, "home"), tmp],
            stdout=subprocess.PIPE,
            cwd=str(REPO),
        )
        assert child.stdout is not None
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        if status != 0:
            raise SystemExit(f"the import failed (status {status})")
        totals = json.loads(out)
    peak_mib = usage.ru_maxrss / 1024  # kilobytes on Linux
    print(
        f"{size / 1e6:.1f} MB transcript: {totals['records']:,} records, "
        f"{totals['events_added']:,} events in {totals['seconds']:.2f} s "
        f"({totals['mb_per_second']} MB/s); peak RSS {peak_mib:.0f} MiB"
    )


if __name__ == "__main__":
    main()
