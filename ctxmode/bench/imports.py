"""The import's throughput: megabytes of transcript per second through ``ctxmode import``.

A synthetic transcript of :data:`TARGET_BYTES` is built from records the real Claude Code
CLI wrote (``data/bench_transcript.jsonl``: a session of 2.1.332 with its bookkeeping, and
a session of 2.1.197 compacted twice), repeated with fresh tool-use ids so that every copy
pairs its own calls, then imported into a throwaway data root by the importer itself
(:func:`ctxmode.importer.run`: reading, pairing, the hooks' extraction and masking, the
store's transaction). The figure is the bytes read over the wall time of that run.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from importlib import resources

TARGET_BYTES = 16 * 1000 * 1000
DATA = "bench_transcript.jsonl"


@dataclass(frozen=True)
class ImportFigure:
    bytes: int
    seconds: float
    records: int
    events: int

    @property
    def mb_per_second(self) -> float:
        return self.bytes / 1e6 / self.seconds if self.seconds else 0.0


def synthetic(target: int = TARGET_BYTES) -> bytes:
    """The recorded records, repeated (fresh tool-use ids per copy) to ``target`` bytes."""
    source = resources.files("ctxmode.data").joinpath(DATA).read_bytes()
    copies = []
    size = n = 0
    while size < target:
        block = source.replace(b'"toolu_', b'"toolu_%d_' % n)
        copies.append(block)
        size += len(block)
        n += 1
    return b"".join(copies)


def measure(target: int = TARGET_BYTES) -> ImportFigure:
    """Import a synthetic transcript of ``target`` bytes into a throwaway data root."""
    from ctxmode import importer

    with tempfile.TemporaryDirectory(prefix="ctxmode-bench-import-") as tmp:
        folder = os.path.join(tmp, "projects", "-home-dev-proj")
        os.makedirs(folder)
        path = os.path.join(folder, "bench-import.jsonl")
        with open(path, "wb") as fh:
            fh.write(synthetic(target))
        env = {"CTXMODE_HOME": os.path.join(tmp, "home"), "HOME": tmp}
        totals = importer.run(importer.find(env, files=[path]), env)
    return ImportFigure(totals.bytes, totals.seconds, totals.records, totals.events)
