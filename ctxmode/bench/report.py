"""The two ways a :class:`Report` is shown: the table with how to read it, and the
``--json`` document."""

from __future__ import annotations

from typing import Any

import ctxmode
from ctxmode.bench.cases import P95_MIN_RUNS
from ctxmode.bench.recall_report import report_dict as recall_dict
from ctxmode.bench.recall_report import summary_line as recall_summary
from ctxmode.bench.results import CaseResult, Report, Stats
from ctxmode.wording import plural

HOW_TO_READ = """\
How to read this: each hook ran as Claude Code runs it (sh -c, a realistic payload on
stdin, a throwaway store whose session holds 1,000 events), each run right after a run
of the bare interpreter (the floor). "p50 x" is the hook's median wall time divided by
the floor's median, "p95 x" its 95th percentile divided by the floor's 95th percentile,
both from this run: 2.0x means a hook call costs about two interpreter start-ups.
Compare ratios, not milliseconds: the milliseconds move with the machine's load, the
ratios much less; but on a busy disk they rise too (a hook's store write waits for the
disk, the bare interpreter does not), so measure on an idle machine. "peak MiB" is the largest resident memory of any run (of the
process, an upper bound: never below the few MiB of the helper that starts it).
"target" is the bound ctxmode aims to stay under. A p95 needs at least 20 runs: a
figure marked * is the slowest run instead (max, and max over the floor's max), and a
p95 target marked * was not judged."""


def _ratio_target(result: CaseResult) -> str:
    case = result.case
    parts = []
    if case.target_p50 is not None:
        parts.append(f"p50≤{case.target_p50:g}x")
    if case.target_p95 is not None:
        parts.append(f"p95≤{case.target_p95:g}x" + ("" if result.p95_judged() else "*"))
    parts.append(f"≤{case.target_rss_mib:g}MiB")
    return " ".join(parts)


def _high(value: float | None, fallback: float | None, width: int, digits: int) -> str:
    """A p95 figure, or (marked *) the maximum standing in for it."""
    if value is not None:
        return f"{value:>{width}.{digits}f}"
    if fallback is None:
        return f"{'-':>{width}}"
    return f"{fallback:>{width - 1}.{digits}f}*"


def format_report(report: Report) -> str:
    """The human-readable table."""
    floor = report.floor
    lines = [
        f"ctxmode bench: {plural(report.runs, 'run')} per hook, {report.seconds:.0f}s in all",
        f"hook commands: {report.commands_source}",
        f"floor: {report.floor_command}",
        "",
        f"{'hook':<37}{'p50 ms':>8}{'p95 ms':>8}{'p50 x':>7}{'p95 x':>7}{'peak MiB':>10}  target",
        f"{'floor (bare interpreter)':<37}{floor.p50_ms:>8.1f}"
        f"{_high(floor.p95_ms, floor.max_ms, 8, 1)}"
        f"{1.0:>7.2f}{_high(1.0 if floor.p95_ms is not None else None, 1.0, 7, 2)}"
        f"{_mib(floor.peak_rss_mib):>10}",
    ]
    marked = floor.p95_ms is None
    for result in report.results:
        stats = result.stats
        verdict = "ok" if result.meets_target() else "MISSED"
        name = result.case.name + (
            f" ({plural(stats.runs, 'run')})" if result.case.memory_case else ""
        )
        marked = marked or stats.p95_ms is None or result.ratio_p95 is None
        lines.append(
            f"{name:<37}{stats.p50_ms:>8.1f}{_high(stats.p95_ms, stats.max_ms, 8, 1)}"
            f"{result.ratio_p50:>7.2f}{_high(result.ratio_p95, result.ratio_max, 7, 2)}"
            f"{_mib(stats.peak_rss_mib):>10}  {_ratio_target(result)} {verdict}"
        )
        for failure in result.failures:
            lines.append(f"    problem: {failure}")
    figure = report.import_figure
    if figure is not None:
        lines.append(
            f"ctxmode import: {figure.bytes / 1e6:.1f} MB of transcript ({figure.records:,} "
            f"records, {figure.events:,} events) in {figure.seconds:.2f} s: "
            f"{figure.mb_per_second:.0f} MB/s"
        )
    for view in report.view_figures:
        render = "-" if view.render_ms is None else f"{view.render_ms:.0f} ms"
        lines.append(
            f"ctxmode view: {view.events:,} events in {plural(view.sessions, 'session')}: "
            f"{view.bytes / 1e6:.2f} MB page built in {view.build_seconds:.2f} s, "
            f"rendered in {render}"
            + ("" if view.render_ms is not None else " (no headless Chromium found)")
        )
    if report.recall is not None:
        lines.append(recall_summary(report.recall))
    for problem in report.problems:
        lines.append(f"problem: {problem}")
    for note in report.notes:
        lines.append(f"note: {note}")
    if marked:
        lines.append(
            f"* fewer than {P95_MIN_RUNS} runs: the slowest run (max), not a 95th percentile; "
            f"p95 targets not judged (--runs {P95_MIN_RUNS} or more for a p95)"
        )
    lines += ["", HOW_TO_READ]
    return "\n".join(lines)


def _mib(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def _stats_dict(stats: Stats) -> dict[str, Any]:
    return {
        "runs": stats.runs,
        "p50_ms": _round(stats.p50_ms),
        "p95_ms": _round(stats.p95_ms),  # null with fewer than p95_min_runs runs
        "max_ms": _round(stats.max_ms),
        "min_ms": _round(stats.min_ms),
        "peak_rss_mib": _round(stats.peak_rss_mib),
    }


def report_dict(report: Report) -> dict[str, Any]:
    """The ``--json`` document."""
    return {
        "ctxmode": ctxmode.__version__,
        "runs": report.runs,
        "p95_min_runs": P95_MIN_RUNS,
        "python": report.python,
        "commands_source": report.commands_source,
        "floor": {"command": report.floor_command, **_stats_dict(report.floor)},
        "hooks": [
            {
                "name": r.case.name,
                "event": r.case.event,
                "command": r.command,
                **_stats_dict(r.stats),
                "ratio_p50": _round(r.ratio_p50, 3),
                "ratio_p95": _round(r.ratio_p95, 3),
                "ratio_p95_to_floor_p50": _round(r.ratio_p95_to_floor_p50, 3),
                "ratio_max": _round(r.ratio_max, 3),
                "p95_judged": r.p95_judged(),
                "target": {
                    "ratio_p50": r.case.target_p50,
                    "ratio_p95": r.case.target_p95,
                    "peak_rss_mib": r.case.target_rss_mib,
                },
                "meets_target": r.meets_target(),
                "failures": r.failures,
            }
            for r in report.results
        ],
        "import": None
        if report.import_figure is None
        else {
            "bytes": report.import_figure.bytes,
            "seconds": _round(report.import_figure.seconds, 3),
            "records": report.import_figure.records,
            "events": report.import_figure.events,
            "mb_per_second": _round(report.import_figure.mb_per_second, 1),
        },
        "view": [
            {
                "events": view.events,
                "sessions": view.sessions,
                "bytes": view.bytes,
                "build_seconds": _round(view.build_seconds, 3),
                "render_ms": view.render_ms,  # null without a headless Chromium
            }
            for view in report.view_figures
        ],
        # The retrieval benchmark's figures (its per-question ranks: benchmarks/recall_bench.py).
        "recall": None
        if report.recall is None
        else {k: v for k, v in recall_dict(report.recall).items() if k != "per_question"},
        "problems": report.problems,
        "notes": report.notes,
        "seconds": _round(report.seconds, 1),
    }
