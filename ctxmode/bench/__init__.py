"""``ctxmode bench``: what each hook costs per call on this machine, in plain functions.

Every hook command runs exactly as Claude Code runs it: through ``sh -c``, a realistic
payload (shapes of Claude Code 2.1.197, bundled in ``data/bench_payloads.json``) on
stdin, in a throwaway data root (``CTXMODE_HOME``) and project. The session is seeded
with 1,000 events first, so PreCompact and SessionStart work on a full session and
PostToolUse inserts into a session at its cap (each insert also evicts).

Each hook run follows a run of the bare interpreter of the same command
(``<python> -I -S -c pass``, also through ``sh -c``): the floor. Machines are noisy,
so the figures that mean something are the ratios to the floor measured in the same
run; wall times in milliseconds are shown for scale. Peak memory is the child's
maximum resident set size, from ``os.wait4`` (the shell and the interpreter it
starts; the larger of the two).

The click command (``ctxmode.cli.bench_cmd``) only wires options to :func:`run`,
:func:`format_report` and :func:`report_dict`. Only that command loads this package
(never a hook). Its modules, in the order of a run:

- ``cases``: limits, :class:`BenchError`, the measured hook calls: every host's
  (``ctxmode/hosts/<name>/bench.py``: its cases, commands, payloads and proofs), in the
  registry's order (:func:`host_cases`);
- ``commands``: the commands a settings file registers, the interpreter (the floor) of each;
- ``payloads``: the sandbox: bundled payloads, the 20 MB Write, the seeded session;
- ``launcher``: the helper process that spawns, times and measures each run;
- ``runner``: :func:`run`: the rounds, the proof the hooks worked, the :class:`Report`;
- ``results``: samples, statistics and results; ``report``: the table and the JSON;
- ``imports``: the throughput of ``ctxmode import`` over a synthetic transcript;
- ``view``: ``ctxmode view``'s page size, build and render time at 1,000 and 100,000 events;
- ``recall``: the retrieval benchmark on the bundled corpus: ``ctxmode search`` beside BM25;
  ``recall_report``: its figures, table and JSON.
"""

from __future__ import annotations

from ctxmode.bench.cases import (
    BIG_MEMORY_TARGET_MIB,
    BIG_PAYLOAD_BYTES,
    DEFAULT_RUNS,
    MAX_RUNS,
    MEMORY_TARGET_MIB,
    MIB,
    P95_MIN_RUNS,
    SEED_EVENTS,
    SEED_SOURCE,
    SESSION_ID,
    TOOL_TARGET,
    BenchError,
    Case,
    HostCommands,
    host_cases,
)
from ctxmode.bench.commands import commands_from_settings, floor_command, interpreter_of
from ctxmode.bench.launcher import LAUNCHER, Launcher, LocalRunner, make_runner
from ctxmode.bench.payloads import (
    PAYLOADS_FILE,
    big_payload,
    hook_env,
    load_payloads,
    render,
    seed_session,
)
from ctxmode.bench.report import HOW_TO_READ, format_report, report_dict
from ctxmode.bench.results import CaseResult, Report, Sample, Stats, percentile, summarize
from ctxmode.bench.runner import run


def __getattr__(name: str) -> object:
    # CASES: every host's cases, gathered on first use (the hosts' bench parts import
    # this package's modules, so they cannot be gathered while it loads).
    if name == "CASES":
        return host_cases()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BIG_MEMORY_TARGET_MIB",
    "BIG_PAYLOAD_BYTES",
    "CASES",
    "DEFAULT_RUNS",
    "HOW_TO_READ",
    "LAUNCHER",
    "MAX_RUNS",
    "MEMORY_TARGET_MIB",
    "MIB",
    "P95_MIN_RUNS",
    "PAYLOADS_FILE",
    "SEED_EVENTS",
    "SEED_SOURCE",
    "SESSION_ID",
    "TOOL_TARGET",
    "BenchError",
    "Case",
    "CaseResult",
    "HostCommands",
    "Launcher",
    "LocalRunner",
    "Report",
    "Sample",
    "Stats",
    "big_payload",
    "commands_from_settings",
    "floor_command",
    "format_report",
    "hook_env",
    "host_cases",
    "interpreter_of",
    "load_payloads",
    "make_runner",
    "percentile",
    "render",
    "report_dict",
    "run",
    "seed_session",
    "summarize",
]
