#!/usr/bin/env python3
"""What ctxmode's capture hooks add to the agent loop, through the real Claude Code CLI.

Side by side in one run, interleaved: a scripted session of CALLS tool calls (Write, one
per model turn) against the offline mock of the Messages API (tests/e2e), with

- ``none``: no hooks at all;
- ``sync``: ctxmode's hooks as registered for a client without background hooks (the
  agent waits for each capture);
- ``background``: as registered for Claude Code >= 2.1.19 (captures with
  ``"async": true``; ctxmode.inflight).

The loop time is taken by the mock: from the first request of the session to the last
(the model's answer after the last tool result), so the start-up and the end of
``claude -p`` are left out. Reported: the median over the runs, the time added per tool
call against ``none`` in ms and as a fraction of the interpreter floor
(``python -I -S -c pass``), and for ``background`` that every call was stored.

Then a burst: one model turn of BURST parallel Write calls, in the background mode:
the peak number of capture processes alive at once, the CPU the run cost beyond the same
burst without hooks, and how long after the client's exit the last capture ended.

Usage: scripts/bench_background.py [--runs N] [--calls N] [--burst N] [--json]
Needs the client in the e2e cache (scripts/e2e-install-claude.sh) and this repository's
.venv. Nothing touches the real home.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ctxmode import settings  # noqa: E402
from ctxmode.hosts.claude_code import install as installer  # noqa: E402
from tests.e2e import claude_cli  # noqa: E402
from tests.e2e.mock_api import MockAPI, Reply, Request, Steps, ToolCall, call, calls, say  # noqa: E402

MODES = ("none", "sync", "background")
# --more: the client's own cost of a hook that does nothing, and the exec form.
MORE = ("noop-sync", "noop-background", "background-exec")


def settings_text(mode: str, python: str) -> str:
    if mode == "none":
        return "{}\n"
    if mode in ("noop-sync", "noop-background"):
        # The client's own cost of a hook: one that does nothing (`true`).
        handler = {"type": "command", "command": "true", "timeout": 10}
        if mode == "noop-background":
            handler["async"] = True
        group = {"matcher": "", "hooks": [handler]}
        return json.dumps({"hooks": {"PostToolUse": [group], "PostToolUseFailure": [group]}})
    if mode == "background-exec":
        # The exec form (Claude Code >= 2.1.139): no shell between the client and Python.
        doc = json.loads(settings_text("background", python))
        for event in ("PostToolUse", "PostToolUseFailure"):
            for handler in doc["hooks"][event][0]["hooks"]:
                shim = str(REPO / "ctxmode" / "hooks" / (settings.SHIMS[event] + ".py"))
                handler["command"] = python
                handler["args"] = ["-I", "-S", shim, "--background"]
        return json.dumps(doc)
    specs = installer.hook_specs(
        python, str(REPO / "ctxmode"), events=None, background=mode == "background"
    )
    return settings.merge("{}\n", specs)


class Timed:
    """The script of one run, noting when each main-loop request came."""

    def __init__(self, steps: Steps, latency: float = 0.0) -> None:
        self.steps = steps
        self.latency = latency
        self.times: list[float] = []

    def __call__(self, req: Request) -> Reply:
        self.times.append(time.monotonic())
        if self.latency and len(self.times) > 1:
            time.sleep(self.latency)  # the model's time to answer (--latency)
        return self.steps(req)


def floor_ms(python: str, runs: int = 30) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([python, "-I", "-S", "-c", "pass"], check=True)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def hook_processes() -> int:
    count = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        if b"post_tool_use" in cmdline and b"--background" in cmdline:
            count += 1
    return count


def stored_writes(python: str, env: dict[str, str], proj: Path, session_id: str) -> list[str]:
    out = subprocess.run(
        [python, "-m", "ctxmode", "dump", "--json", "--project", str(proj)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    if out.returncode != 0:
        return []
    for session in json.loads(out.stdout)["sessions"]:
        if session["session_id"] == session_id:
            return [e["data"]["path"] for e in session["events"] if e["type"] == "file_write"]
    return []


class World:
    def __init__(
        self, base: Path, claude: claude_cli.ClaudeInstall, python: str, latency: float
    ) -> None:
        self.latency = latency
        self.base = base
        self.claude = claude
        self.python = python
        self.count = 0

    def run(self, mode: str, steps: Steps, *, watch: bool = False) -> dict[str, Any]:
        self.count += 1
        root = self.base / f"{mode}-{self.count}"
        home = root / "home"
        (home / ".claude").mkdir(parents=True)
        (home / ".claude" / "settings.json").write_text(settings_text(mode, self.python))
        proj = root / "proj"
        proj.mkdir()
        subprocess.run(["git", "init", "-q", str(proj)], check=True)
        data = root / "ctxmode-data"
        data.mkdir()
        script = Timed(steps, self.latency)
        api = MockAPI(script, log_path=root / "requests.jsonl", max_requests=500).start()
        env = claude_cli.hermetic_env(
            {
                "ANTHROPIC_BASE_URL": api.base_url,
                "ANTHROPIC_API_KEY": "dummy",
                "CTXMODE_HOME": str(data),
            },
            home=home,
        )
        peak = [0]
        stop = threading.Event()

        def watcher() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], hook_processes())
                stop.wait(0.002)

        thread = threading.Thread(target=watcher, daemon=True)
        if watch:
            thread.start()
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            run = claude_cli.run_claude(self.claude, ["-p", "go"], cwd=proj, env=env, timeout=300)
            exited = time.monotonic()
            drained = exited
            if watch:
                # How long after the client's exit the last capture ended (bounded).
                while hook_processes() and time.monotonic() - exited < 10:
                    time.sleep(0.002)
                drained = time.monotonic()
        finally:
            stop.set()
            api.stop()
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if run.returncode != 0:
            raise SystemExit(f"claude -p failed in mode {mode}:\n{run.describe()}")
        cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (
            cpu_after.ru_stime - cpu_before.ru_stime
        )
        return {
            "loop_ms": (script.times[-1] - script.times[0]) * 1000,
            "wall_ms": run.seconds * 1000,
            "cpu_ms": cpu * 1000,
            "peak": peak[0],
            "drain_ms": (drained - exited) * 1000,
            "writes": stored_writes(self.python, env, proj, run.session_id)
            if not mode.startswith(("none", "noop"))
            else [],
            "proj": proj,
        }


def sequential(proj_paths: list[str]) -> Steps:
    return Steps(
        *(call("Write", file_path=p, content=f"{i}\n") for i, p in enumerate(proj_paths)),
        say("Done."),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--burst", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--latency", type=float, default=0.0, help="ms the mock model takes per answer"
    )
    parser.add_argument("--more", action="store_true", help="also: " + ", ".join(MORE))
    args = parser.parse_args()
    modes = MODES + MORE if args.more else MODES

    python = sys.executable
    claude = claude_cli.ensure_claude()
    floor = floor_ms(python)
    results: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
    lost: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ctxmode-bench-bg-") as tmp:
        world = World(Path(tmp), claude, python, args.latency / 1000)
        for n in range(args.runs):
            for mode in modes:  # interleaved: the machine's drift hits every mode alike
                names = [f"w/f_{i:02d}.txt" for i in range(args.calls)]
                base = Path(tmp) / f"{mode}-{world.count + 1}" / "proj"
                result = world.run(mode, sequential([str(base / name) for name in names]))
                if mode.startswith("background") and result["writes"] != names:
                    lost.append(f"run {n}: stored {len(result['writes'])} of {len(names)} in order")
                results[mode].append(result)
        bursts = {}
        for mode in ("none", "background"):
            names = [f"b/f_{i:02d}.txt" for i in range(args.burst)]
            base = Path(tmp) / f"{mode}-{world.count + 1}" / "proj"
            steps = Steps(
                calls(
                    *(
                        ToolCall("Write", {"file_path": str(base / n), "content": "x\n"})
                        for n in names
                    )
                ),
                say("Done."),
            )
            bursts[mode] = world.run(mode, steps, watch=mode == "background")
            if mode == "background" and sorted(bursts[mode]["writes"]) != names:
                lost.append(f"burst: stored {len(bursts[mode]['writes'])} of {len(names)}")

    med = {mode: statistics.median(r["loop_ms"] for r in results[mode]) for mode in modes}
    spread = {
        mode: (min(r["loop_ms"] for r in results[mode]), max(r["loop_ms"] for r in results[mode]))
        for mode in modes
    }
    added = {mode: (med[mode] - med["none"]) / args.calls for mode in modes}
    report = {
        "client": claude.version,
        "calls": args.calls,
        "latency_ms": args.latency,
        "runs": args.runs,
        "floor_ms": round(floor, 2),
        "loop_ms_median": {m: round(v, 1) for m, v in med.items()},
        "loop_ms_range": {m: [round(a, 1), round(b, 1)] for m, (a, b) in spread.items()},
        "added_ms_per_call": {m: round(v, 2) for m, v in added.items()},
        "added_per_call_in_floors": {m: round(v / floor, 2) for m, v in added.items()},
        "wall_ms_median": {
            m: round(statistics.median(r["wall_ms"] for r in results[m]), 1) for m in modes
        },
        "burst": {
            "calls": args.burst,
            "peak_capture_processes": bursts["background"]["peak"],
            "extra_cpu_ms": round(bursts["background"]["cpu_ms"] - bursts["none"]["cpu_ms"], 1),
            "drain_after_exit_ms": round(bursts["background"]["drain_ms"], 1),
            "stored": len(bursts["background"]["writes"]),
        },
        "lost": lost,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 1 if lost else 0
    print(
        f"Claude Code {claude.version}: {args.calls} tool calls per session, {args.runs} runs "
        f"per mode, interleaved, model latency {args.latency:.0f} ms; floor (python -I -S -c pass) {floor:.1f} ms"
    )
    print(f"{'mode':<12}{'loop (median)':>15}{'range':>22}{'added/call':>12}{'x floor':>9}")
    for mode in modes:
        low, high = spread[mode]
        print(
            f"{mode:<12}{med[mode]:>12.0f} ms{f'{low:.0f}-{high:.0f} ms':>22}"
            f"{added[mode]:>9.2f} ms{added[mode] / floor:>9.2f}"
        )
    b = report["burst"]
    print(
        f"burst of {b['calls']} parallel calls (background): peak {b['peak_capture_processes']} "
        f"capture processes, {b['extra_cpu_ms']:.0f} ms CPU beyond no hooks, last capture "
        f"ended {b['drain_after_exit_ms']:.0f} ms after the client's exit; "
        f"{b['stored']} of {b['calls']} stored"
    )
    print("every event stored, in order" if not lost else "LOST: " + "; ".join(lost))
    return 1 if lost else 0


if __name__ == "__main__":
    raise SystemExit(main())
