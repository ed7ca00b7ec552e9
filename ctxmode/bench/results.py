"""What a run measured: one process run (:class:`Sample`), the order statistics of a
series (:class:`Stats`), one hook's figures beside the floor's (:class:`CaseResult`) and
the whole run (:class:`Report`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxmode.bench.cases import MIB, P95_MIN_RUNS, Case
from ctxmode.bench.imports import ImportFigure
from ctxmode.bench.recall import RecallReport
from ctxmode.bench.view import ViewFigure


@dataclass
class Sample:
    """One process run: wall time, peak memory (bytes; None where unknown), outcome."""

    seconds: float
    max_rss: int | None
    exit_code: int
    stdout: bytes
    stderr: bytes
    cpu_seconds: float | None = None  # user + system CPU time of the process


@dataclass
class Stats:
    """Order statistics of a series of runs."""

    runs: int
    p50_ms: float
    p95_ms: float | None  # None with fewer than P95_MIN_RUNS runs: see max_ms
    min_ms: float
    peak_rss_mib: float | None
    max_ms: float | None = None

    @property
    def high_ms(self) -> float:
        """The p95 where there are runs enough for one, else the maximum."""
        if self.p95_ms is not None:
            return self.p95_ms
        return self.max_ms if self.max_ms is not None else self.p50_ms


@dataclass
class CaseResult:
    case: Case
    command: str
    stats: Stats
    ratio_p50: float
    # The hook's p95 over the floor's p95; None when either has too few runs for one.
    ratio_p95: float | None
    failures: list[str] = field(default_factory=list)
    # The stricter reading, for whoever wants it: the hook's p95 over the floor's median.
    ratio_p95_to_floor_p50: float | None = None
    # The hook's slowest run over the floor's: shown (marked *) where there is no p95.
    ratio_max: float | None = None

    def p95_judged(self) -> bool:
        return self.case.target_p95 is not None and self.ratio_p95 is not None

    def meets_target(self) -> bool:
        ok = not self.failures
        if self.case.target_p50 is not None:
            ok = ok and self.ratio_p50 <= self.case.target_p50
        if self.case.target_p95 is not None and self.ratio_p95 is not None:
            ok = ok and self.ratio_p95 <= self.case.target_p95
        if self.stats.peak_rss_mib is not None:
            ok = ok and self.stats.peak_rss_mib <= self.case.target_rss_mib
        return ok


@dataclass
class Report:
    runs: int
    python: str
    commands_source: str
    floor_command: str
    floor: Stats
    results: list[CaseResult]
    problems: list[str]
    notes: list[str]
    seconds: float
    # ``ctxmode import``'s throughput (bench/imports.py), when it was measured.
    import_figure: ImportFigure | None = None
    # ``ctxmode view``'s page size, build and render times (bench/view.py).
    view_figures: tuple[ViewFigure, ...] = ()
    # ``ctxmode search`` on the bundled retrieval corpus, beside BM25 (bench/recall.py).
    recall: RecallReport | None = None


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation between closest ranks."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(samples: Sequence[Sample]) -> Stats:
    times = [s.seconds * 1000.0 for s in samples]
    rss = [s.max_rss for s in samples if s.max_rss is not None]
    return Stats(
        runs=len(samples),
        p50_ms=percentile(times, 0.5),
        p95_ms=percentile(times, 0.95) if len(times) >= P95_MIN_RUNS else None,
        min_ms=min(times),
        peak_rss_mib=max(rss) / MIB if rss else None,
        max_ms=max(times),
    )
