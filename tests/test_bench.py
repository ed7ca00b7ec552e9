"""ctxmode bench: statistics, command discovery, the measuring launcher, the report.

No timing assertion anywhere (the machine is noisy): the tests check that the bench
runs every hook, measures the right process and reports well-formed figures.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxmode import bench, settings
from ctxmode.cli import main
from ctxmode.hosts.claude_code import bench as claude_bench
from ctxmode.hosts.claude_code import install as installer
from ctxmode.hosts.codex.bench import CODEX
from ctxmode.hosts.gemini import bench as gemini_bench
from tests.hooktools import SHIMS, hook_command, hook_env

LINUX = sys.platform.startswith("linux")
MIB = 1024 * 1024


@pytest.fixture
def no_installed_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Claude config dir and a project without settings: nothing is installed."""
    config = tmp_path / "claude-config"
    config.mkdir()
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.chdir(project)
    return project


# --------------------------------------------------------------------------- statistics


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([5.0], 0.5, 5.0),
        ([5.0], 0.95, 5.0),
        ([3.0, 1.0, 2.0], 0.5, 2.0),
        ([1.0, 2.0, 3.0, 4.0], 0.5, 2.5),
        ([1.0, 2.0, 3.0, 4.0], 0.0, 1.0),
        ([1.0, 2.0, 3.0, 4.0], 1.0, 4.0),
        ([float(i) for i in range(1, 21)], 0.95, 19.05),
        ([10.0, 20.0], 0.95, 19.5),
    ],
)
def test_percentile(values: list[float], q: float, expected: float) -> None:
    assert bench.percentile(values, q) == pytest.approx(expected)


def test_percentile_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        bench.percentile([], 0.5)


def test_summarize() -> None:
    samples = [
        bench.Sample(seconds, rss, 0, b"", b"")
        for seconds, rss in ((0.010, 9 * MIB), (0.030, 12 * MIB), (0.020, None))
    ]
    stats = bench.summarize(samples)
    assert (stats.runs, stats.min_ms, stats.peak_rss_mib) == (3, 10.0, 12.0)
    assert stats.p50_ms == pytest.approx(20.0)
    # Three runs hold no 95th percentile: only the maximum, which is reported as such.
    assert stats.p95_ms is None
    assert stats.max_ms == pytest.approx(30.0)
    assert stats.high_ms == pytest.approx(30.0)


@pytest.mark.parametrize(("runs", "has_p95"), [(1, False), (5, False), (19, False), (20, True)])
def test_p95_needs_twenty_runs(runs: int, has_p95: bool) -> None:
    samples = [bench.Sample(0.001 * (i + 1), None, 0, b"", b"") for i in range(runs)]
    stats = bench.summarize(samples)
    assert (stats.p95_ms is not None) is has_p95
    assert stats.max_ms == pytest.approx(runs * 1.0)
    if has_p95:
        # With 20 runs the p95 lies below the slowest run: a percentile, not the maximum.
        assert stats.p95_ms is not None and stats.p95_ms < stats.max_ms


def test_a_p95_target_is_not_judged_without_a_p95() -> None:
    case = bench.Case("PostToolUse Edit", "PostToolUse", "edit", 2.5, 3.5)
    stats = bench.Stats(runs=5, p50_ms=1.0, p95_ms=None, min_ms=1.0, peak_rss_mib=10.0, max_ms=9.0)
    result = bench.CaseResult(case, "cmd", stats, 2.0, None, [], None, 9.0)
    assert result.meets_target() and not result.p95_judged()


@pytest.mark.parametrize(
    ("ratios", "rss", "failures", "expected"),
    [
        ((2.4, 3.4), 15.9, [], True),
        ((2.6, 3.0), 10.0, [], False),  # p50 over
        ((2.0, 3.6), 10.0, [], False),  # p95 over
        ((2.0, 3.0), 16.5, [], False),  # memory over
        ((2.0, 3.0), None, [], True),  # memory unknown (no wait4): not held against it
        ((2.0, 3.0), 10.0, ["exit status 1"], False),
    ],
)
def test_meets_target(
    ratios: tuple[float, float], rss: float | None, failures: list[str], expected: bool
) -> None:
    case = bench.Case("PostToolUse Edit", "PostToolUse", "edit", 2.5, 3.5)
    stats = bench.Stats(runs=3, p50_ms=1.0, p95_ms=1.0, min_ms=1.0, peak_rss_mib=rss)
    result = bench.CaseResult(case, "cmd", stats, ratios[0], ratios[1], failures)
    assert result.meets_target() is expected


# --------------------------------------------------------------------------- payloads


def test_every_case_has_its_payload_and_event(tmp_path: Path) -> None:
    from ctxmode import hosts

    bundle = bench.load_payloads()
    made: dict[str, str] = {}
    for name in hosts.NAMES:
        wanted = {case.payload for case in hosts.part(name, "bench").CASES}
        made.update(hosts.part(name, "bench").prepare(str(tmp_path), str(tmp_path), "s", wanted))
    for case in bench.CASES:
        if case.payload == "big":
            continue
        # A non-default host's case event is "<host>:<event>": that host's hook command of
        # that event. A background case's "background:<event>": that event's capture, run
        # --background.
        event = case.event.split(":")[-1]
        if case.payload in made:  # made at run time: a file
            payload = json.loads(Path(made[case.payload]).read_bytes())
            assert payload["hook_event_name"] == event
            continue
        if case.event == claude_bench.STATUS_LINE:  # a status payload names no hook event
            assert "hook_event_name" not in bundle["payloads"][case.payload]
            assert "context_window" in bundle["payloads"][case.payload]
            continue
        assert bundle["payloads"][case.payload]["hook_event_name"] == event
    assert set(bundle["seed"]) <= set(bundle["payloads"])
    request = gemini_bench.gemini_request("/p", "s", True)
    assert len(request) >= gemini_bench.GEMINI_REQUEST_BYTES


def test_render_fills_every_placeholder() -> None:
    template = {
        "session_id": "@SESSION@",
        "cwd": "@PROJECT@",
        "tool_input": {"file_path": "@PROJECT@/src/a_@N@.py"},
    }
    project = '/tmp/we"ird\\dir'
    data = bench.render(template, project, "s-1", 7)
    assert json.loads(data) == {
        "session_id": "s-1",
        "cwd": project,
        "tool_input": {"file_path": project + "/src/a_7.py"},
    }


def test_big_payload_is_a_valid_write_of_the_given_size() -> None:
    data = bench.big_payload("/p", "s-2", size=1000)
    value = json.loads(data)
    assert value["tool_input"] == {"file_path": "/p/data/big.csv", "content": "x" * 1000}
    assert (value["session_id"], value["tool_name"], value["hook_event_name"]) == (
        "s-2",
        "Write",
        "PostToolUse",
    )
    assert len(data) == len(bench.big_payload("/p", "s-2", size=0)) + 1000


# --------------------------------------------------------------------------- commands


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            "'/opt/my py/bin/python3' -I -S '/x/ctxmode/hooks/post_tool_use.py'",
            "/opt/my py/bin/python3",
        ),
        ('python3 -I -S "${CLAUDE_PLUGIN_ROOT}/hooks/post_tool_use.py"', "python3"),
        ("", sys.executable),
    ],
)
def test_interpreter_of(command: str, expected: str) -> None:
    assert bench.interpreter_of(command) == expected


def test_floor_command_quotes_the_interpreter() -> None:
    assert bench.floor_command("/opt/my py/python") == "'/opt/my py/python' -I -S -c pass"


@pytest.mark.parametrize(
    ("version", "background", "why"),
    [
        ("2.1.197", True, 'Claude Code 2.1.197 has "async" hooks'),
        ("2.1.0", False, "Claude Code 2.1.0 has no background hooks (2.1.19 has)"),
        ("none", False, "Claude Code's version is unknown; background hooks need 2.1.19"),
    ],
)
def test_without_settings_the_commands_install_would_write(
    no_installed_settings: Path,
    monkeypatch: pytest.MonkeyPatch,
    version: str,
    background: bool,
    why: str,
) -> None:
    # The captures in the mode install would choose for the Claude Code it finds.
    monkeypatch.setenv(installer.CLIENT_VERSION_ENV, version)
    commands, source, plan = claude_bench.resolve_commands()
    expected = {spec.event: spec.command for spec in installer.hook_specs(background=background)}
    assert commands == expected
    assert commands["PostToolUse"].endswith(" --background") is background
    assert set(commands) == set(SHIMS)
    assert (source, plan) == (claude_bench.NOT_INSTALLED, (background, why))
    assert source == "not installed: the commands `ctxmode install` would write"
    note = claude_bench.capture_note(background, plan)
    mode = "background" if background else "foreground"
    assert note.startswith(
        f"nothing is installed; `ctxmode install` would register the captures in the {mode} "
        f"({why}): the agent would {'not wait for them' if background else 'wait for each'}; "
    )


def _settings_with(path: Path, python: str, events: set[str] | None = None) -> dict[str, str]:
    specs = [
        spec
        for spec in installer.hook_specs(python=python)
        if events is None or spec.event in events
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(settings.merge('{"model": "opus"}\n', specs))
    return {spec.event: spec.command for spec in specs}


def test_commands_from_an_explicit_settings_file(
    tmp_path: Path, no_installed_settings: Path
) -> None:
    path = tmp_path / "elsewhere" / "settings.json"
    written = _settings_with(path, "/opt/py/bin/python3")
    commands, source, plan = claude_bench.resolve_commands(str(path))
    assert commands == written
    assert (source, plan) == (str(path), None)


def test_installed_user_settings_win_and_gaps_are_named(no_installed_settings: Path) -> None:
    user_file = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"
    written = _settings_with(user_file, "/opt/py/bin/python3", {"PostToolUse", "PreCompact"})
    commands, source, plan = claude_bench.resolve_commands()
    assert plan is None
    defaults = {spec.event: spec.command for spec in installer.hook_specs()}
    assert commands == {**defaults, **written}
    missing = sorted(set(SHIMS) - {"PostToolUse", "PreCompact"}, key=list(defaults).index)
    assert source == (
        f"{user_file} (not registered there, so as `ctxmode install` would write: "
        f"{', '.join(missing)})"
    )


def test_project_local_settings_come_before_user_settings(no_installed_settings: Path) -> None:
    user_file = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"
    _settings_with(user_file, "/user/python3")
    local_file = no_installed_settings / ".claude" / "settings.local.json"
    local = _settings_with(local_file, "/local/python3")
    commands, source, _ = claude_bench.resolve_commands(project_dir=str(no_installed_settings))
    assert commands == local
    assert source == str(local_file)


def test_a_settings_file_without_ctxmode_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        '{"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "x"}]}]}}'
    )
    with pytest.raises(bench.BenchError, match="no ctxmode hook is registered"):
        claude_bench.resolve_commands(str(path))


# --------------------------------------------------------------------------- measuring


# A memory reading: with -m slow (scripts/soak.sh), not in the default run.
@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason="ru_maxrss inheritance is a Linux matter")
def test_peak_memory_is_the_hooks_own_not_the_benchs(tmp_path: Path) -> None:
    """A big benchmarking process must not show up in the figures of the processes it starts."""
    ballast = bytearray(96 * MIB)  # the bench process itself is big
    ballast[::4096] = b"x" * len(ballast[::4096])  # touch every page: make it resident
    runner = bench.Launcher(dict(os.environ), str(tmp_path), str(tmp_path))
    try:
        floor = runner.run(bench.floor_command(sys.executable), b"")
        grow = "b = bytearray(48 << 20); b[::4096] = b'y' * len(b[::4096])"
        hungry = runner.run(f"{shlex.quote(sys.executable)} -I -S -c {shlex.quote(grow)}", b"")
        echo = runner.run("cat; echo done >&2", b"payload on stdin")
    finally:
        runner.close()
    del ballast
    assert floor.exit_code == 0 and floor.max_rss is not None
    assert floor.max_rss < 40 * MIB
    assert hungry.exit_code == 0 and hungry.max_rss is not None
    assert hungry.max_rss >= 48 * MIB
    assert (echo.exit_code, echo.stdout, echo.stderr) == (0, b"payload on stdin", b"done\n")


@pytest.mark.skipif(not LINUX, reason="posix_spawn launcher")
def test_launcher_streams_a_payload_bigger_than_the_pipe(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"0123456789" * 300_000)  # 3 MB: streamed, not read up front
    runner = bench.Launcher(dict(os.environ), str(tmp_path), str(tmp_path))
    try:
        sample = runner.run("wc -c", str(big))
        failing = runner.run("exit 3", b"")
    finally:
        runner.close()
    assert (sample.exit_code, sample.stdout.split()) == (0, [b"3000000"])
    assert failing.exit_code == 3


# --------------------------------------------------------------------------- the command


def test_bench_json_reports_every_hook_and_the_floor(
    no_installed_settings: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(installer.CLIENT_VERSION_ENV, "2.1.197")
    result = CliRunner().invoke(main, ["bench", "--runs", "3", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    names = [hook["name"] for hook in report["hooks"]]
    assert names == [case.name for case in bench.CASES]
    codex = {CODEX + "PostToolUse", CODEX + "UserPromptSubmit"}
    background = {claude_bench.BACKGROUND + "PostToolUse"}
    gemini = {gemini_bench.GEMINI + "BeforeModel", gemini_bench.GEMINI + "AfterTool"}
    copilot = {"copilot:" + e for e in ("postToolUse", "userPromptSubmitted", "permissionRequest")}
    qwen = {"qwen:PostToolUseFailure", "qwen:UserPromptSubmit"}
    opencode = {"opencode:PostToolUse", "opencode:UserPromptSubmit"}
    assert {hook["event"] for hook in report["hooks"]} == {
        *SHIMS,
        claude_bench.STATUS_LINE,
        *codex,
        *background,
        *gemini,
        *copilot,
        *qwen,
        *opencode,
    }
    # Both capture modes: the foreground command, and the same run in the background.
    by_event = {hook["event"]: hook["command"] for hook in report["hooks"]}
    assert not by_event["PostToolUse"].endswith("--background")
    assert (
        by_event[claude_bench.BACKGROUND + "PostToolUse"]
        == by_event["PostToolUse"] + " --background"
    )
    assert report["runs"] == 3
    assert report["p95_min_runs"] == bench.P95_MIN_RUNS == 20
    assert report["problems"] == []
    assert report["commands_source"].startswith("not installed")
    # Nothing installed: the captures are measured, and described, as install would
    # register them for this client (in the background), not as "registered".
    assert any(
        note.startswith(
            "nothing is installed; `ctxmode install` would register the captures in the "
            'background (Claude Code 2.1.197 has "async" hooks): the agent would not wait'
        )
        for note in report["notes"]
    ), report["notes"]
    floor = report["floor"]
    assert floor["command"] == bench.floor_command(report["python"])
    assert floor["runs"] == 3 * len(bench.CASES)  # 33 runs: enough for a p95
    assert 0 < floor["p50_ms"] <= floor["p95_ms"] <= floor["max_ms"]
    for hook in report["hooks"]:
        assert hook["failures"] == [], hook["name"]
        assert hook["runs"] == 3
        # Three runs hold no 95th percentile: null, and the slowest run is given as such.
        assert hook["p95_ms"] is None and hook["ratio_p95"] is None
        assert hook["ratio_p95_to_floor_p50"] is None and hook["p95_judged"] is False
        assert 0 < hook["min_ms"] <= hook["p50_ms"] <= hook["max_ms"]
        # The ratios are the hook's figures over the floor's of the same run, like with like.
        assert hook["ratio_p50"] == pytest.approx(hook["p50_ms"] / floor["p50_ms"], rel=0.01)
        assert hook["ratio_max"] == pytest.approx(hook["max_ms"] / floor["max_ms"], rel=0.01)
        assert isinstance(hook["meets_target"], bool)
        if LINUX:
            assert hook["peak_rss_mib"] > 0
    # The retrieval benchmark on the bundled corpus: ctxmode beside the raw-transcript BM25.
    recall = report["recall"]
    assert (recall["corpus"], recall["sessions"], recall["questions"]) == ("bundled", 3, 42)
    for system in ("ctxmode", "baseline"):
        for form in ("keyword", "natural"):
            figures = recall["systems"][system][form]["all"]
            assert figures["n"] == 42 and figures["errors"] == 0
            assert 0 <= figures["hit_at_1"] <= figures["hit_at_5"] <= 1
    assert "per_question" not in recall
    targets = {hook["name"]: hook["target"] for hook in report["hooks"]}
    assert targets["PostToolUse Edit"] == {"ratio_p50": 2.5, "ratio_p95": 3.5, "peak_rss_mib": 16.0}
    assert targets["PostToolUse Write, 20 MB"]["peak_rss_mib"] == 64.0


def test_bench_text_output_and_a_settings_file(tmp_path: Path, no_installed_settings: Path) -> None:
    path = tmp_path / "settings.json"
    _settings_with(path, sys.executable)
    result = CliRunner().invoke(main, ["bench", "--runs", "1", "--settings", str(path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("ctxmode bench: 1 run per hook, ")
    assert lines[1] == f"hook commands: {path}"
    assert lines[2] == f"floor: {bench.floor_command(sys.executable)}"
    assert lines[4].split() == [
        "hook",
        "p50",
        "ms",
        "p95",
        "ms",
        "p50",
        "x",
        "p95",
        "x",
        "peak",
        "MiB",
        "target",
    ]
    assert lines[5].startswith("floor (bare interpreter)")
    for case, line in zip(bench.CASES, lines[6 : 6 + len(bench.CASES)], strict=True):
        assert line.startswith(case.name), line
        assert line.endswith((" ok", " MISSED")), line
        # One run: every p95 figure is the maximum, marked, and no p95 target is judged.
        assert "*" in line, line
    # The floor ran once beside each case: a p95 only from P95_MIN_RUNS cases on.
    floor_marked = lines[5].split()[4].endswith("*")
    assert floor_marked == (len(bench.CASES) < bench.P95_MIN_RUNS), lines[5]
    assert (
        "* fewer than 20 runs: the slowest run (max), not a 95th percentile; "
        "p95 targets not judged (--runs 20 or more for a p95)"
    ) in lines
    assert bench.HOW_TO_READ in result.output
    (line,) = [line for line in lines if line.startswith("ctxmode search: ")]
    assert line.startswith("ctxmode search: 42 questions on 3 bundled sessions, found in the top 5")


def test_bench_rejects_zero_runs() -> None:
    result = CliRunner().invoke(main, ["bench", "--runs", "0"])
    assert result.exit_code == 2
    assert "--runs" in result.output


def test_format_report_exact_lines() -> None:
    case = bench.Case("PostToolUse Edit", "PostToolUse", "edit", 2.5, 3.5)
    big = bench.Case(
        "PostToolUse Write, 20 MB", "PostToolUse", "big", target_rss_mib=64.0, memory_case=True
    )
    report = bench.Report(
        runs=40,
        python="/py",
        commands_source="/home/u/.claude/settings.json",
        floor_command="/py -I -S -c pass",
        floor=bench.Stats(
            runs=80, p50_ms=10.0, p95_ms=12.5, min_ms=9.0, peak_rss_mib=8.75, max_ms=15.0
        ),
        results=[
            bench.CaseResult(case, "c", bench.Stats(40, 20.0, 36.0, 18.0, 11.5, 40.0), 2.0, 3.6),
            bench.CaseResult(
                big,
                "c",
                bench.Stats(5, 80.0, None, 70.0, 30.25, 90.0),
                8.0,
                None,
                ["exit status 1"],
                None,
                6.0,
            ),
        ],
        problems=["hook log: ERROR PostToolUse: boom"],
        notes=[],
        seconds=12.4,
    )
    lines = bench.format_report(report).splitlines()
    assert lines[:11] == [
        "ctxmode bench: 40 runs per hook, 12s in all",
        "hook commands: /home/u/.claude/settings.json",
        "floor: /py -I -S -c pass",
        "",
        "hook                                   p50 ms  p95 ms  p50 x  p95 x  peak MiB  target",
        "floor (bare interpreter)                 10.0    12.5   1.00   1.00       8.8",
        "PostToolUse Edit                         20.0    36.0   2.00   3.60      11.5  "
        "p50≤2.5x p95≤3.5x ≤16MiB MISSED",
        "PostToolUse Write, 20 MB (5 runs)        80.0   90.0*   8.00  6.00*      30.2  "
        "≤64MiB MISSED",
        "    problem: exit status 1",
        "problem: hook log: ERROR PostToolUse: boom",
        "* fewer than 20 runs: the slowest run (max), not a 95th percentile; "
        "p95 targets not judged (--runs 20 or more for a p95)",
    ]
    document = bench.report_dict(report)
    assert document["floor"] == {
        "command": "/py -I -S -c pass",
        "runs": 80,
        "p50_ms": 10.0,
        "p95_ms": 12.5,
        "max_ms": 15.0,
        "min_ms": 9.0,
        "peak_rss_mib": 8.75,
    }
    assert [h["p95_ms"] for h in document["hooks"]] == [36.0, None]
    assert [h["max_ms"] for h in document["hooks"]] == [40.0, 90.0]
    assert [h["meets_target"] for h in document["hooks"]] == [False, False]


# --------------------------------------------------------------------------- imports

# Realistic payloads must keep the hook process free of the slow modules; `re` in
# particular is imported only when a secret marker is present, and these carry none.
SLOW = {
    "re",
    "json",
    "typing",
    "sqlite3",
    "hashlib",
    "dataclasses",
    "enum",
    "logging",
    "datetime",
    "pathlib",
    "shlex",
    "tomllib",
    "subprocess",
    "click",
    "orjson",
    "platformdirs",
    "importlib.metadata",
    "functools",
    "collections",
}


def test_bench_payloads_load_no_slow_module(tmp_path: Path) -> None:
    """Every bench payload, in session order, through the real hook with -X importtime."""
    bundle = bench.load_payloads()
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    env = hook_env(CTXMODE_HOME=str(home), CLAUDE_PROJECT_DIR=str(project))
    order = [
        "prompt",
        "edit",
        "read",
        "failure",
        "bash",
        "task",
        "commit",
        "grep",
        "write",
        "task_update",
        "stop",
        "pre_compact",
        "session_start_compact",
        "post_compact",
        "session_end",
        "session_start_startup",
        "codex_prompt",
        "codex_bash",
        "codex_patch",
        "gemini_shell",
        "copilot_prompt",
        "copilot_bash",
        "qwen_shell_failed",
        "qwen_prompt",
        "opencode_bash",
        "opencode_prompt",
    ]
    assert set(order) == set(bundle["payloads"]) - {"statusline"}
    for n, name in enumerate(order):
        data = bench.render(bundle["payloads"][name], str(project), "imports-session", n)
        event = json.loads(data)["hook_event_name"]
        host = (
            name.split("_")[0]
            if name.startswith(("codex_", "gemini_", "copilot_", "qwen_", "opencode_"))
            else None
        )
        if host == "gemini":
            event = {"AfterTool": "PostToolUse"}[event]  # the shim Gemini's AfterTool runs
        if host == "copilot":  # the shims Copilot's events run
            event = {"postToolUse": "PostToolUse", "userPromptSubmitted": "UserPromptSubmit"}[event]
        command = hook_command(event, host=host)
        command[1:1] = ["-X", "importtime"]
        proc = subprocess.run(
            command, input=data, capture_output=True, env=env, cwd=project, timeout=60, check=False
        )
        assert proc.returncode == 0
        lines = proc.stderr.decode().splitlines()
        loaded = {
            line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")
        }
        assert loaded, name
        assert not {line for line in lines if not line.startswith("import time:")}, name
        assert not loaded & SLOW, (name, sorted(loaded & SLOW))
        if name == "session_start_compact":
            assert b"<session_resume" in proc.stdout
    # The status line runs as often as a hook: the same bound on what it loads.
    data = bench.render(bundle["payloads"]["statusline"], str(project), "imports-session", 0)
    shim = Path(ctxmode_package()) / "hooks" / "statusline.py"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-I", "-S", str(shim)],
        input=data,
        capture_output=True,
        env=env,
        cwd=project,
        timeout=60,
        check=False,
    )
    lines = proc.stderr.decode().splitlines()
    loaded = {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")}
    assert proc.returncode == 0 and proc.stdout.startswith(b"ctx ") and loaded
    assert not loaded & SLOW, sorted(loaded & SLOW)


def ctxmode_package() -> str:
    import ctxmode

    return str(Path(ctxmode.__file__).parent)


def test_a_broken_hook_command_is_reported_not_timed(
    tmp_path: Path, no_installed_settings: Path
) -> None:
    """An interpreter that is gone: every hook and the floor fail, and the bench says so."""
    path = tmp_path / "settings.json"
    _settings_with(path, "/nonexistent/bin/python3")
    result = CliRunner().invoke(main, ["bench", "--runs", "1", "--settings", str(path)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert "    problem: exit status 127" in lines
    assert "problem: no event of PostToolUse reached the store" in lines
    assert any(
        line.startswith("problem: floor /nonexistent/bin/python3 failed: exit status 127")
        for line in lines
    ), result.output


def test_the_handlers_spool_shortcut_matches_the_spool_layout(tmp_path: Path) -> None:
    """handlers skips importing spool when <root>/SPOOL_DIR is missing: it must be spool's folder."""
    from ctxmode import handlers, spool

    root = str(tmp_path / "root")
    path = spool.spool_path(root, str(tmp_path / "root" / "sessions" / "0123abcd.db"))
    assert os.path.dirname(path) == os.path.join(root, handlers.SPOOL_DIR)


def test_the_shipped_bench_payloads_are_what_their_generator_makes() -> None:
    """A payload added by hand to ctxmode/data/bench_payloads.json is lost the next time the
    generator runs (it was: PostCompact's and the status line's): the generator owns it."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "make_bench_payloads.py"
    spec = importlib.util.spec_from_file_location("make_bench_payloads", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build() == json.loads(module.OUT.read_text())
