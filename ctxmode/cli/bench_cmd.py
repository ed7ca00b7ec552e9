"""``ctxmode bench``: a thin click edge over :mod:`ctxmode.bench`."""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from ctxmode import bench


@click.command("bench")
@click.option(
    "--runs",
    type=click.IntRange(min=1, max=bench.MAX_RUNS),
    default=bench.DEFAULT_RUNS,
    show_default=True,
    help="Runs per hook (each next to a run of the bare interpreter). With fewer than "
    f"{bench.P95_MIN_RUNS}, the p95 columns show the slowest run instead (marked *).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON document, for machines.")
@click.option(
    "--settings",
    "settings_path",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="Benchmark the ctxmode hooks registered in this settings.json "
    "(default: the installed ones, else the ones `ctxmode install` would write).",
)
def bench_command(runs: int, as_json: bool, settings_path: str | None) -> None:
    """Measure what each hook costs per call on this machine.

    Runs every hook command as Claude Code runs it (sh -c, realistic payloads on
    stdin, a throwaway store with a 1,000-event session), interleaved with the bare
    interpreter start, the floor. Prints median and p95 wall time, peak memory and
    the ratio to the floor measured in the same run. A 95th percentile needs at
    least 20 runs: a row with fewer shows its maximum, marked *, and its p95 target
    is not judged. Nothing of yours is touched.
    """

    def progress(message: str) -> None:
        click.echo(f"\r\033[K{message}", nl=False, err=True)

    on_tty = sys.stderr.isatty()
    show: Callable[[str], None] | None = progress if not as_json and on_tty else None
    try:
        report = bench.run(runs, settings_path, progress=show)
    except bench.BenchError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        if show:
            click.echo("\r\033[K", nl=False, err=True)
    if as_json:
        import orjson

        click.echo(orjson.dumps(bench.report_dict(report), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(bench.format_report(report))
    failed = report.problems or any(result.failures for result in report.results)
    if failed:
        raise SystemExit(1)
