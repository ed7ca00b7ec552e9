"""The run itself: seed the sandbox, run every case round by round right after a run of
its floor, check that the hooks did their work, and turn the samples into a
:class:`Report`."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ctxmode.bench.cases import (
    CASES,
    DEFAULT_RUNS,
    GEMINI_PLAIN,
    GEMINI_SUMMARY,
    MAX_RUNS,
    SEED_EVENTS,
    SESSION_ID,
    STATUS_LINE,
    BenchError,
    Case,
)
from ctxmode.bench.commands import (
    floor_command,
    interpreter_of,
    resolve_commands,
    statusline_command,
)
from ctxmode.bench.launcher import Launcher, LocalRunner, make_runner
from ctxmode.bench.payloads import (
    big_payload,
    gemini_request,
    hook_env,
    load_payloads,
    render,
    seed_session,
)
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


def _sample_failures(case: Case, sample: Sample) -> list[str]:
    problems = []
    if sample.exit_code != 0:
        problems.append(f"exit status {sample.exit_code}")
    if sample.stderr:
        problems.append(f"stderr: {sample.stderr[:200]!r}")
    if case.payload == "session_start_compact" and b"<session_resume" not in sample.stdout:
        problems.append("printed no <session_resume> snapshot")
    if case.payload == GEMINI_SUMMARY and sample.stdout.count(b"<session_resume ") != 1:
        problems.append("appended no <session_resume> snapshot (or more than one)")
    if case.payload == GEMINI_PLAIN and sample.stdout:
        problems.append(f"printed {sample.stdout[:80]!r} for a request with no summary")
    if case.event == STATUS_LINE and not sample.stdout.startswith(b"ctx 1,000 ev"):
        # Proof it read the seeded session (a status line that reads nothing is fast too).
        problems.append(f"printed {sample.stdout[:80]!r}, not the session's status line")
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
            for problem in _sample_failures(case, sample):
                if problem not in failures[case.name]:
                    failures[case.name].append(problem)


def run(
    runs: int = DEFAULT_RUNS,
    settings_path: str | None = None,
    *,
    cases: Sequence[Case] = CASES,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Run the benchmark; see the module docstring."""
    if not 1 <= runs <= MAX_RUNS:
        raise BenchError(f"--runs must be 1 to {MAX_RUNS:,}")
    began = time.perf_counter()
    resolved = resolve_commands(settings_path)
    commands, source = resolved.commands, resolved.source
    commands[STATUS_LINE] = statusline_command(settings_path)
    # The Codex CLI's commands: the same interpreter and package, with --host codex.
    from ctxmode.bench.cases import CODEX
    from ctxmode.codex_config import hook_specs as codex_specs

    python = interpreter_of(commands.get("PostToolUse", ""))
    for spec in codex_specs(python if os.path.isabs(python) else None):
        commands.setdefault(CODEX + spec.event, spec.command)
    # And the Gemini CLI's (Gemini's event names; BeforeModel has a shim of its own).
    from ctxmode.bench.cases import GEMINI
    from ctxmode.gemini_config import hook_specs as gemini_specs

    for spec in gemini_specs(python if os.path.isabs(python) else None):
        commands.setdefault(GEMINI + spec.event, spec.command)
    # Both capture modes, whichever is installed: the foreground command (the agent waits
    # for it) as "PostToolUse", the same with --background (it does not) beside it.
    from ctxmode.bench.cases import BACKGROUND
    from ctxmode.installer import BACKGROUND_FLAG

    capture = commands.get("PostToolUse", "")
    installed_background = capture.endswith(" " + BACKGROUND_FLAG)
    if installed_background:
        capture = capture[: -len(BACKGROUND_FLAG) - 1]
        commands["PostToolUse"] = capture
    if capture:
        commands[BACKGROUND + "PostToolUse"] = f"{capture} {BACKGROUND_FLAG}"
    missing = sorted({case.event for case in cases} - set(commands))
    if missing:
        raise BenchError(f"no hook command for {', '.join(missing)}")
    payloads = load_payloads()
    pythons = {case.event: interpreter_of(commands[case.event]) for case in cases}
    main_python = pythons.get("PostToolUse") or next(iter(pythons.values()))
    notes = [capture_note(installed_background, resolved.plan)]
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
        _write_rollout(os.path.join(project, ".codex-rollout.jsonl"))
        env = hook_env(home, project)
        if progress:
            progress(f"seeding a session with {SEED_EVENTS:,} events")
        seeded = seed_session(env, project, payloads)
        if seeded < SEED_EVENTS:
            raise BenchError(f"seeding stopped at {seeded} events")
        big = os.path.join(tmp, "big-payload.json")
        if any(case.memory_case for case in cases):
            with open(big, "wb") as handle:
                handle.write(big_payload(project, SESSION_ID))
        files = {"big": big}
        for key, summary in ((GEMINI_PLAIN, False), (GEMINI_SUMMARY, True)):
            files[key] = os.path.join(tmp, f"{key}.json")
            with open(files[key], "wb") as handle:
                handle.write(gemini_request(project, SESSION_ID, summary))
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
    )


def capture_note(background: bool, plan: tuple[bool, str] | None) -> str:
    """What the 'background' row means for the captures measured: as registered, or
    (``plan``: nothing is installed) as ``ctxmode install`` would register them here."""
    mode = "background" if background else "foreground"
    if plan is None:
        how = f"captures are registered in the {mode}"
        wait = "the agent does not wait for them" if background else "the agent waits for each"
    else:
        how = (
            "nothing is installed; `ctxmode install` would register the captures in the "
            f"{mode} ({plan[1]})"
        )
        wait = (
            "the agent would not wait for them" if background else "the agent would wait for each"
        )
    if background:
        row = (
            "the 'background' row is the process's own cost, spent beside the agent loop "
            "(scripts/bench_background.py measures the loop through the real client)"
        )
    else:
        row = (
            "the 'background' row is what a client that runs them in the background "
            "(Claude Code >= 2.1.19) would leave to run beside the agent loop"
        )
    return f"{how}: {wait}; {row}"


def _write_rollout(path: str, calls: int = 50) -> None:
    """A Codex rollout file for the Codex cases: each call and its output, a failure among
    them. The first Codex hook reads it whole (one MAX_READ at most), later ones find
    nothing new: the incremental read's steady state is a stat and an empty read."""
    import json

    lines = []
    for i in range(calls):
        call_id = f"call_rollout_{i}"
        code = 2 if i == calls // 2 else 0
        lines.append(
            {
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "exec_command",
                    "arguments": json.dumps({"cmd": f"pytest tests/test_{i}.py"}),
                    "call_id": call_id,
                },
            }
        )
        lines.append(
            {
                "type": "response_item",
                "payload": {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": f"Process exited with code {code}\nOutput:\nok\n",
                },
            }
        )
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in lines))


def _ratio(value: float | None, floor: float | None) -> float | None:
    return None if value is None or not floor else value / floor
