"""The run itself: seed the sandbox, run every case round by round right after a run of
its floor, check that the hooks did their work, and turn the samples into a
:class:`Report`."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ctxmode import hosts
from ctxmode.bench.cases import (
    DEFAULT_RUNS,
    MAX_RUNS,
    SEED_EVENTS,
    SESSION_ID,
    BenchError,
    Case,
    host_cases,
)
from ctxmode.bench.commands import floor_command, interpreter_of
from ctxmode.bench.launcher import Launcher, LocalRunner, make_runner
from ctxmode.bench.payloads import hook_env, load_payloads, render, seed_session
from ctxmode.bench.results import CaseResult, Report, Sample, summarize
from ctxmode.wording import plural


def _check_store(env: Mapping[str, str], project: str, expect: Mapping[str, int]) -> list[str]:
    """Proof the hooks did their work (a hook that does nothing is fast, too)."""
    from ctxmode import paths
    from ctxmode.store import Store

    problems = []
    store = Store.open(paths.store_path(project, env), readonly=True)
    try:
        hooks = dict(
            store.conn.execute(
                "SELECT source_hook, count(*) FROM session_events WHERE session_id = ? "
                "GROUP BY source_hook",
                (SESSION_ID,),
            ).fetchall()
        )
        kinds = dict(
            store.conn.execute(
                "SELECT kind, count(*) FROM session_resume WHERE session_id = ? GROUP BY kind",
                (SESSION_ID,),
            ).fetchall()
        )
        count = store.event_count(SESSION_ID)
    finally:
        store.close()
    for hook in ("PostToolUse", "PostToolUseFailure", "UserPromptSubmit"):
        if expect.get(hook) and not hooks.get(hook):
            problems.append(f"no event of {hook} reached the store")
    for kind, hook in (("compact", "PreCompact"), ("end", "SessionEnd")):
        if expect.get(hook) and kinds.get(kind, 0) < expect[hook]:
            problems.append(
                f"{hook} stored {plural(kinds.get(kind, 0), 'snapshot')} in "
                f"{plural(expect[hook], 'run')}"
            )
    if count > SEED_EVENTS:
        problems.append(f"the session holds {count} events, over the cap of {SEED_EVENTS}")
    return problems


def _log_problems(home: str) -> list[str]:
    from ctxmode import hooklog

    return [
        f"hook log: {r['level']} {r['event']}: {r['message']}"
        for r in hooklog.read_records(os.path.join(home, "logs"))
        if r["level"] in ("ERROR", "WARN")
    ]


def _sample_failures(case: Case, sample: Sample, benches: Sequence[Any] = ()) -> list[str]:
    problems = []
    if sample.exit_code != 0:
        problems.append(f"exit status {sample.exit_code}")
    if sample.stderr:
        problems.append(f"stderr: {sample.stderr[:200]!r}")
    for bench in benches:  # each host's proof of its own cases (the others ignore them)
        problems += bench.check(case, sample)
    return problems


def _rounds(
    runner: Launcher | LocalRunner,
    runs: int,
    cases: Sequence[Case],
    commands: Mapping[str, str],
    pythons: Mapping[str, str],
    payloads: Mapping[str, Any],
    project: str,
    files: Mapping[str, str],
    floor_samples: dict[str, list[Sample]],
    samples: dict[str, list[Sample]],
    failures: dict[str, list[str]],
    expect: dict[str, int],
    progress: Callable[[str], None] | None,
    benches: Sequence[Any] = (),
) -> None:
    """Run every case ``runs`` times, round by round, each after a run of its floor."""
    n = 100_000  # above every seeded number: no call is a duplicate of the seed
    for round_no in range(runs):
        if progress:
            progress(f"round {round_no + 1}/{runs}")
        for case in cases:
            if case.memory_case and round_no >= max(3, runs // 8):
                continue
            n += 1
            python = pythons[case.event]
            floor = runner.run(floor_command(python), b"")
            floor_samples[python].append(floor)
            if floor.exit_code != 0 or floor.stderr:
                problem = f"exit status {floor.exit_code}: {floor.stderr[:200]!r}"
                failures.setdefault(f"floor {python}", [problem])
            stdin: bytes | str
            if case.payload in files:  # made at run time: its file
                stdin = files[case.payload]
            else:
                stdin = render(payloads["payloads"][case.payload], project, SESSION_ID, n)
            sample = runner.run(commands[case.event], stdin)
            samples[case.name].append(sample)
            expect[case.event] = expect.get(case.event, 0) + 1
            for problem in _sample_failures(case, sample, benches):
                if problem not in failures[case.name]:
                    failures[case.name].append(problem)


def run(
    runs: int = DEFAULT_RUNS,
    settings_path: str | None = None,
    *,
    cases: Sequence[Case] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Run the benchmark; see the module docstring."""
    if not 1 <= runs <= MAX_RUNS:
        raise BenchError(f"--runs must be 1 to {MAX_RUNS:,}")
    began = time.perf_counter()
    cases = host_cases() if cases is None else cases
    # Each host's commands (hosts/<name>/bench.py): the default host's as installed (or
    # from ``settings_path``), the others' as install would write them, run by the same
    # interpreter.
    names = [hosts.DEFAULT, *(name for name in hosts.NAMES if name != hosts.DEFAULT)]
    benches = [hosts.part(name, "bench") for name in names]
    first = benches[0].commands(settings_path, None)
    commands, source, notes = dict(first.commands), first.source, list(first.notes)
    python = first.python or ""
    wanted: dict[str, str] = dict(first.pythons)
    for bench in benches[1:]:
        found = bench.commands(None, python if os.path.isabs(python) else None)
        for event, command in found.commands.items():
            commands.setdefault(event, command)
        wanted.update({k: v for k, v in found.pythons.items() if k not in wanted})
        notes += found.notes
    missing = sorted({case.event for case in cases} - set(commands))
    if missing:
        raise BenchError(f"no hook command for {', '.join(missing)}")
    payloads = load_payloads()
    pythons = {
        case.event: wanted.get(case.event) or interpreter_of(commands[case.event]) for case in cases
    }
    main_python = python or pythons.get("PostToolUse") or next(iter(pythons.values()))
    if not os.path.isabs(main_python):
        notes.append(
            f"the hooks start {main_python!r} found on PATH: if that is a pyenv/asdf shim "
            "it costs several times the interpreter; `ctxmode install` pins an absolute path"
        )
    floor_samples: dict[str, list[Sample]] = {python: [] for python in set(pythons.values())}
    samples: dict[str, list[Sample]] = {case.name: [] for case in cases}
    failures: dict[str, list[str]] = {case.name: [] for case in cases}
    expect: dict[str, int] = {}

    with tempfile.TemporaryDirectory(prefix="ctxmode-bench-") as tmp:
        tmp = os.path.realpath(tmp)  # macOS: /var is a symlink; keep one spelling
        home = os.path.join(tmp, "home")
        project = os.path.join(tmp, "project")
        os.makedirs(os.path.join(project, ".git"))
        os.makedirs(os.path.join(project, "src"))
        env = hook_env(home, project)
        if progress:
            progress(f"seeding a session with {SEED_EVENTS:,} events")
        seeded = seed_session(env, project, payloads)
        if seeded < SEED_EVENTS:
            raise BenchError(f"seeding stopped at {seeded} events")
        # Each host's sandbox files (Codex's rollout) and the payloads made now (the
        # 20 MB Write, Gemini's requests): key → file, sent as it is.
        made = os.path.join(tmp, "made")
        os.makedirs(made)
        files: dict[str, str] = {}
        used = {case.payload for case in cases}
        for bench in benches:
            files.update(bench.prepare(project, made, SESSION_ID, used))
        scratch = os.path.join(tmp, "payloads")
        os.makedirs(scratch)
        runner = make_runner(env, project, scratch)
        try:
            _rounds(
                runner,
                runs,
                cases,
                commands,
                pythons,
                payloads,
                project,
                files,
                floor_samples,
                samples,
                failures,
                expect,
                progress,
                benches,
            )
        finally:
            runner.close()
        problems = _check_store(env, project, expect) + _log_problems(home)
        problems += [
            f"{name} failed: {', '.join(text)}"
            for name, text in failures.items()
            if name.startswith("floor ")
        ]

    if progress:
        progress("importing a synthetic transcript")
    from ctxmode.bench.imports import measure

    figure = measure()
    if progress:
        progress("ctxmode view at 1,000 and 100,000 events")
    from ctxmode.bench.view import measure as measure_view

    view_figures = tuple(measure_view())
    if progress:
        progress("ctxmode search on the bundled retrieval questions")
    from ctxmode.bench import recall

    try:
        recall_report: recall.RecallReport | None = recall.run_bundled(compact=True)
    except BenchError as exc:
        recall_report = None
        problems.append(f"retrieval benchmark: {exc}")
    floors = {python: summarize(s) for python, s in floor_samples.items()}
    results = []
    for case in cases:
        stats = summarize(samples[case.name])
        floor = floors[pythons[case.event]]
        results.append(
            CaseResult(
                case=case,
                command=commands[case.event],
                stats=stats,
                ratio_p50=stats.p50_ms / floor.p50_ms,
                # Like with like: the floor's runs, interleaved with the hook's, met the
                # same machine noise, so its p95 carries the noise the hook's p95 does.
                ratio_p95=_ratio(stats.p95_ms, floor.p95_ms),
                failures=failures[case.name],
                ratio_p95_to_floor_p50=_ratio(stats.p95_ms, floor.p50_ms),
                ratio_max=_ratio(stats.max_ms, floor.max_ms),
            )
        )
    return Report(
        runs=runs,
        python=main_python,
        commands_source=source,
        floor_command=floor_command(main_python),
        floor=floors[main_python],
        results=results,
        problems=problems,
        notes=notes,
        seconds=time.perf_counter() - began,
        import_figure=figure,
        view_figures=view_figures,
        recall=recall_report,
    )


def _ratio(value: float | None, floor: float | None) -> float | None:
    return None if value is None or not floor else value / floor
