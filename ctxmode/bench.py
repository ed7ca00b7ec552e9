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
:func:`format_report` and :func:`report_dict`.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ctxmode
from ctxmode.wording import plural

PAYLOADS_FILE = os.path.join(os.path.dirname(ctxmode.__file__), "data", "bench_payloads.json")
DEFAULT_RUNS = 40
MAX_RUNS = 10_000
# A 95th percentile of n runs is a run other than the slowest only from n = 20 on
# (nearest rank: ceil(0.95 n) < n). Below that the "p95" would be the maximum under
# another name, so the report shows the maximum, says so, and judges no p95 target.
P95_MIN_RUNS = 20
SEED_EVENTS = 1000
SESSION_ID = "bench-0f3c9a52-5d1e-4b7a-9a30-6c2e1d8b4f71"
SEED_SOURCE = "bench-seed"
BIG_PAYLOAD_BYTES = 20 * 1024 * 1024
MIB = 1024 * 1024

# Targets of issue 7 (ratios to the floor's median; memory in MiB).
TOOL_TARGET = (2.5, 3.5)
MEMORY_TARGET_MIB = 16.0
BIG_MEMORY_TARGET_MIB = 64.0


class BenchError(Exception):
    """The benchmark cannot run (no hook command, unreadable settings, ...)."""


@dataclass(frozen=True)
class Case:
    """One benchmarked hook call: which event, which bundled payload, which targets."""

    name: str
    event: str
    payload: str  # key in bench_payloads.json, or "big" for the 20 MB Write
    target_p50: float | None = None
    target_p95: float | None = None
    target_rss_mib: float = MEMORY_TARGET_MIB
    memory_case: bool = False  # few runs: it is there for its peak memory


# In the order of a session; the order matters: PreCompact stores the snapshot that the
# following SessionStart (compact) claims, and the failure's error is resolved by the
# Bash success that follows it in the same round.
CASES: tuple[Case, ...] = (
    Case("PostToolUse Edit", "PostToolUse", "edit", *TOOL_TARGET),
    Case("PostToolUse Read", "PostToolUse", "read", *TOOL_TARGET),
    Case("PostToolUseFailure Bash", "PostToolUseFailure", "failure", *TOOL_TARGET),
    Case("PostToolUse Bash", "PostToolUse", "bash", *TOOL_TARGET),
    Case("PostToolUse TaskCreate", "PostToolUse", "task", *TOOL_TARGET),
    Case("UserPromptSubmit", "UserPromptSubmit", "prompt", 2.5),
    Case("PreCompact (1,000 events)", "PreCompact", "pre_compact", 3.5),
    Case("SessionStart compact (1,000 events)", "SessionStart", "session_start_compact", 3.0),
    Case("SessionEnd (1,000 events)", "SessionEnd", "session_end"),
    Case("SessionStart startup", "SessionStart", "session_start_startup"),
    Case(
        "PostToolUse Write, 20 MB",
        "PostToolUse",
        "big",
        target_rss_mib=BIG_MEMORY_TARGET_MIB,
        memory_case=True,
    ),
)


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


# --------------------------------------------------------------------------- statistics


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


# --------------------------------------------------------------------------- commands


def default_commands() -> dict[str, str]:
    """The commands ``ctxmode install`` would write for this installation."""
    from ctxmode import installer

    return {spec.event: spec.command for spec in installer.hook_specs()}


def _settings_candidates(project_dir: str) -> list[str]:
    """Claude Code's settings files, most specific first: local, project, user."""
    from ctxmode import installer

    files = [
        os.path.join(project_dir, ".claude", "settings.local.json"),
        os.path.join(project_dir, ".claude", "settings.json"),
        os.path.join(installer.user_config_dir(), "settings.json"),
    ]
    unique: list[str] = []
    for path in files:
        if path not in unique:
            unique.append(path)
    return unique


def commands_from_settings(path: str) -> dict[str, str]:
    """ctxmode's command per event registered in a settings file (first one wins)."""
    from ctxmode import settings

    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise BenchError(f"cannot read {path}: {exc.strerror}") from None
    try:
        registrations = settings.registrations(text)
    except settings.SettingsError as exc:
        raise BenchError(str(exc)) from None
    found: dict[str, str] = {}
    for registration in registrations:
        found.setdefault(registration.event, registration.command)
    return found


def resolve_commands(
    settings_path: str | None = None, project_dir: str | None = None
) -> tuple[dict[str, str], str]:
    """(command per event, where they came from).

    With ``settings_path``: that file's ctxmode commands. Otherwise the installed ones
    (local, project, then user settings of the current project); when none is
    installed, the commands this installation would write. Events a settings file
    lacks are filled in with the latter, and the source says so.
    """
    defaults = default_commands()
    if settings_path is not None:
        found = commands_from_settings(settings_path)
        if not found:
            raise BenchError(f"no ctxmode hook is registered in {settings_path}")
        sources = [settings_path]
    else:
        if project_dir is None:
            from ctxmode import paths

            project_dir = paths.project_dir(os.getcwd(), os.environ)
        found = {}
        sources = []
        for candidate in _settings_candidates(project_dir):
            if not os.path.isfile(candidate):
                continue
            try:
                here = commands_from_settings(candidate)
            except BenchError:
                continue  # not ours to judge here: `ctxmode doctor` reports it
            new = {event: cmd for event, cmd in here.items() if event not in found}
            if new:
                found.update(new)
                sources.append(candidate)
        if not found:
            return defaults, "not installed: the commands `ctxmode install` would write"
    missing = [event for event in defaults if event not in found]
    source = ", ".join(sources)
    if missing:
        source += (
            f" (not registered there, so as `ctxmode install` would write: {', '.join(missing)})"
        )
    return {**defaults, **found}, source


def interpreter_of(command: str) -> str:
    """The interpreter a hook command starts (its first word, or for a shared project
    file's command the one its per-user launcher runs)."""
    from ctxmode import installer, settings

    if settings.runs_launcher(command):
        try:
            with open(installer.launcher_path(), encoding="utf-8") as handle:
                python = installer.launcher_target(handle.read())[0]
        except OSError:
            python = None
        return python or sys.executable
    try:
        words = shlex.split(command)
    except ValueError:
        words = []
    return words[0] if words else sys.executable


def floor_command(python: str) -> str:
    return f"{shlex.quote(python)} -I -S -c pass"


# --------------------------------------------------------------------------- running

# The process that starts each hook. Why not this process: on Linux a child's peak
# memory (ru_maxrss) counts the memory of the process that spawned it, up to the exec;
# this CLI holds click, the seeded store and a 20 MB payload, which would hide the
# hook's own figure. So a bare interpreter that imports nothing but os/select/time
# spawns, times and reaps every run. Its own few MiB remain in the figure (a reading
# never falls below the launcher's size, ~ the floor's): an upper bound, never less.
# Protocol on its stdin: "<len> <len>\n" + command + stdin file path; it answers
# "<seconds> <maxrss> <exit> <cpu seconds> <len> <len>\n" + stdout + stderr.
LAUNCHER = r"""
import os, select, sys, time

def read_exact(n):
    parts = []
    while n:
        chunk = os.read(0, n)
        if not chunk:
            os._exit(0)
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)

def read_line():
    line = b""
    while not line.endswith(b"\n"):
        char = os.read(0, 1)
        if not char:
            os._exit(0)
        line += char
    return line

try:  # forget the start-up peak (Linux): only what a hook adds should show
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
except OSError:
    pass
scale = 1 if sys.platform == "darwin" else 1024
while True:
    sizes = read_line().split()
    command = read_exact(int(sizes[0])).decode()
    path = read_exact(int(sizes[1])).decode()
    source = os.open(path, os.O_RDONLY)
    # A payload up to 1 MiB is read before the clock starts; a bigger one is streamed.
    exhausted = os.fstat(source).st_size <= 1 << 20
    pending = os.read(source, 1 << 20) if exhausted else b""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    started = time.perf_counter()
    pid = os.posix_spawn("/bin/sh", ["/bin/sh", "-c", command], os.environ, file_actions=[
        (os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2)])
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    os.set_blocking(in_w, False)
    writing = True
    output = {out_r: [], err_r: []}
    readers = [out_r, err_r]
    while readers or writing:
        if writing and exhausted and not pending:
            os.close(in_w)
            writing = False
            continue
        readable, writable, _ = select.select(readers, [in_w] if writing else [], [])
        if writable:
            if not pending:
                pending = os.read(source, 1 << 16)
                exhausted = not pending
            try:
                pending = pending[os.write(in_w, pending[: 1 << 16]):]
            except BrokenPipeError:  # the hook stopped reading: its right
                pending, exhausted = b"", True
        for fd in readable:
            data = os.read(fd, 1 << 16)
            if data:
                output[fd].append(data)
            else:
                readers.remove(fd)
                os.close(fd)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - started
    os.close(source)
    out, err = b"".join(output[out_r]), b"".join(output[err_r])
    cpu = usage.ru_utime + usage.ru_stime
    head = f"{seconds!r} {usage.ru_maxrss * scale} {os.waitstatus_to_exitcode(status)} {cpu!r} "
    os.write(1, (head + f"{len(out)} {len(err)}\n").encode() + out + err)
"""


class Launcher:
    """A small helper process that runs hook commands and reports time and memory."""

    def __init__(self, env: Mapping[str, str], cwd: str, scratch: str) -> None:
        self.scratch = scratch
        self.counter = 0
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", LAUNCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
        )

    def run(self, command: str, stdin: bytes | str) -> Sample:
        """Run ``sh -c command``; ``stdin`` is the payload, or the path of a file holding it."""
        if isinstance(stdin, bytes):
            self.counter += 1
            path = os.path.join(self.scratch, f"payload-{self.counter % 4}")
            with open(path, "wb") as handle:
                handle.write(stdin)
        else:
            path = stdin
        assert self.proc.stdin is not None and self.proc.stdout is not None
        raw_command, raw_path = command.encode(), path.encode()
        self.proc.stdin.write(f"{len(raw_command)} {len(raw_path)}\n".encode())
        self.proc.stdin.write(raw_command + raw_path)
        self.proc.stdin.flush()
        head = self.proc.stdout.readline().split()
        if len(head) != 6:
            raise BenchError("the benchmark's launcher process stopped")
        out = self.proc.stdout.read(int(head[4]))
        err = self.proc.stdout.read(int(head[5]))
        return Sample(float(head[0]), int(head[1]), int(head[2]), out, err, float(head[3]))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class LocalRunner:
    """Fallback where posix_spawn/wait4 are missing (Windows): time only, no memory."""

    def __init__(self, env: Mapping[str, str], cwd: str, scratch: str) -> None:
        self.env, self.cwd = dict(env), cwd

    def run(self, command: str, stdin: bytes | str) -> Sample:
        if isinstance(stdin, str):
            with open(stdin, "rb") as handle:
                stdin = handle.read()
        started = time.perf_counter()
        proc = subprocess.run(
            ["sh", "-c", command],
            input=stdin,
            capture_output=True,
            env=self.env,
            cwd=self.cwd,
            check=False,
        )
        seconds = time.perf_counter() - started
        return Sample(seconds, None, proc.returncode, proc.stdout, proc.stderr)

    def close(self) -> None:
        pass


def make_runner(env: Mapping[str, str], cwd: str, scratch: str) -> Launcher | LocalRunner:
    if hasattr(os, "posix_spawn") and hasattr(os, "wait4") and os.path.exists("/bin/sh"):
        return Launcher(env, cwd, scratch)
    return LocalRunner(env, cwd, scratch)  # pragma: no cover - not POSIX


# --------------------------------------------------------------------------- the sandbox


def load_payloads() -> dict[str, Any]:
    with open(PAYLOADS_FILE, encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def render(template: Mapping[str, Any], project: str, session: str, n: int) -> bytes:
    """A bundled payload with its placeholders filled in, as the bytes sent on stdin."""
    text = json.dumps(template, ensure_ascii=False)
    text = (
        text.replace("@PROJECT@", json.dumps(project)[1:-1])
        .replace("@SESSION@", session)
        .replace("@N@", str(n))
    )
    return text.encode("utf-8")


def big_payload(project: str, session: str, size: int = BIG_PAYLOAD_BYTES) -> bytes:
    """A Write of a ``size``-byte file: the payload that tests the memory bound."""
    head = json.dumps(
        {
            "session_id": session,
            "transcript_path": f"{project}/.transcript.jsonl",
            "cwd": project,
            "permission_mode": "default",
            "hook_event_name": "PostToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": f"{project}/data/big.csv", "content": ""},
        }
    )
    # Splice the content in as bytes: building a 20 MB str through json would cost more.
    cut = head.rindex('""')
    body = head[: cut + 1].encode() + b"x" * size + head[cut + 1 :].encode()
    return body[:-1] + b', "tool_response": {"type": "create"}, "tool_use_id": "toolu_big"}'


def hook_env(home: str, project: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment Claude Code gives a hook, pointed at the throwaway data root."""
    source = os.environ if base is None else base
    env = {
        k: v for k, v in source.items() if not k.startswith(("CLAUDE_", "CLAUDECODE", "CTXMODE_"))
    }
    env.update(CTXMODE_HOME=home, CLAUDE_PROJECT_DIR=project, CLAUDECODE="1")
    return env


def seed_session(
    env: Mapping[str, str], project: str, payloads: Mapping[str, Any], events: int = SEED_EVENTS
) -> int:
    """Fill the bench session with ``events`` events made by the real extractors.

    In-process (not through hooks: 1,000 processes would take a minute); timestamps a
    few seconds apart ending now. Returns the session's event count.
    """
    from ctxmode import paths, payload
    from ctxmode.extract import extract
    from ctxmode.store import Store, iso_utc

    path = paths.store_path(project, env)
    templates = [payloads["payloads"][name] for name in payloads["seed"]]
    start = time.time() - events * 5.0
    store = Store.open(path)
    try:
        n = 0
        count = 0
        while count < events and n < events * 10:
            raw = json.loads(render(templates[n % len(templates)], project, SESSION_ID, n))
            inp = payload.from_dict(raw)
            inp.project_dir = project
            batch = extract(inp)
            for event in batch:
                # Not the hook's name: the check after the run counts what hooks stored.
                event.source_hook = SEED_SOURCE
            store.add_events(
                SESSION_ID,
                batch,
                source_hook=SEED_SOURCE,
                project_dir=project,
                now=iso_utc(start + n * 5.0),
                max_events=events,
            )
            count = store.event_count(SESSION_ID)
            n += 1
    finally:
        store.close()
    return count


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
    return problems


def _rounds(
    runner: Launcher | LocalRunner,
    runs: int,
    cases: Sequence[Case],
    commands: Mapping[str, str],
    pythons: Mapping[str, str],
    payloads: Mapping[str, Any],
    project: str,
    big: str,
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
            stdin: bytes | str = big
            if case.payload != "big":
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
    commands, source = resolve_commands(settings_path)
    missing = sorted({case.event for case in cases} - set(commands))
    if missing:
        raise BenchError(f"no hook command for {', '.join(missing)}")
    payloads = load_payloads()
    pythons = {case.event: interpreter_of(commands[case.event]) for case in cases}
    main_python = pythons.get("PostToolUse") or next(iter(pythons.values()))
    notes = []
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
        big = os.path.join(tmp, "big-payload.json")
        if any(case.memory_case for case in cases):
            with open(big, "wb") as handle:
                handle.write(big_payload(project, SESSION_ID))
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
                big,
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
    )


def _ratio(value: float | None, floor: float | None) -> float | None:
    return None if value is None or not floor else value / floor


# --------------------------------------------------------------------------- output

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
        "problems": report.problems,
        "notes": report.notes,
        "seconds": _round(report.seconds, 1),
    }
