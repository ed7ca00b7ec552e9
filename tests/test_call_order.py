"""One order, whatever the speed: the snapshot is a function of the calls alone.

A session's calls replayed by different launchers — hooks in the launcher's own young
process group (which once made every call of its first second share one stamp), each
hook in a new session (``setsid``), through ``sh -c``, two replays at once, in process —
give the same snapshot, byte for byte (but the root's ``from``/``to``: the wall-clock
times of the replay). Timing variations (a replay paused past a second) run with -m slow.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxmode import hookrun, paths
from ctxmode.store import Store
from tests.helpers import tool_payload
from tests.hooktools import hook_command, hook_env
from tests.long_sessions import compaction_payloads, replay_in_process, session

REPLAY = Path(__file__).resolve().parent / "replay.py"
CALLS = 80


def _normal(xml: str) -> str:
    """The snapshot without the replay's wall-clock times."""
    return re.sub(r' (from|to)="[^"]*"', "", xml, count=2)


class Replays:
    def __init__(self, tmp_path: Path, seed: int = 11, calls: int = CALLS) -> None:
        self.tmp = tmp_path
        self.project = tmp_path / "proj"
        (self.project / ".git").mkdir(parents=True)
        self.calls, self.truth = session(seed, calls, root=str(self.project))
        self.file = tmp_path / "calls.json"
        self.file.write_text(json.dumps([*self.calls, *compaction_payloads(self.calls)]))
        self.n = 0

    def env(self) -> dict[str, str]:
        self.n += 1
        return hook_env(CTXMODE_HOME=str(self.tmp / f"data{self.n}"))

    def start(self, mode: str) -> subprocess.Popen[bytes]:
        # A new session: the replay leads a young group of its own, as a script a user
        # starts from a terminal does (the case that once shared one stamp per second).
        return subprocess.Popen(
            [sys.executable, str(REPLAY), str(self.file), mode],
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )

    def run(self, mode: str) -> str:
        proc = self.start(mode)
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()
        return _normal(out.decode())


def test_replays_by_different_launchers_give_the_same_snapshot(tmp_path: Path) -> None:
    r = Replays(tmp_path)
    first = r.run("direct")
    assert r.truth.first_prompt[:40] in first  # the goal is there
    assert r.run("setsid") == first
    assert r.run("sh") == first
    # Two replays at once (two data roots), each as if alone.
    a, b = r.start("direct"), r.start("sh")
    outs = [p.communicate(timeout=600) for p in (a, b)]
    assert [_normal(o.decode()) for o, _ in outs] == [first, first]
    # The in-process core (a test, a script): the same order.
    assert _normal(replay_in_process(r.calls, r.env())) == first


def test_a_call_stamps_its_group_only_when_the_group_is_its_own() -> None:
    # The in-process core never trusts the group: the test runner's is shared by all.
    assert hookrun.call_stamp()[1] is False
    # A hook process in a group a replay leads (the replay is no `sh -c`): not exact.
    code = "from ctxmode import hookrun; print(hookrun.call_stamp(True)[1])"
    shared = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    own = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, check=True, start_new_session=True
    )
    via_sh = subprocess.run(
        ["sh", "-c", f"{sys.executable} -c '{code}'; true"],
        capture_output=True,
        check=True,
        start_new_session=True,
    )
    assert shared.stdout.strip() == b"False"
    assert own.stdout.strip() == b"True"  # leader of its own group
    assert via_sh.stdout.strip() == b"True"  # its parent `sh -c` leads the group


@pytest.mark.slow
def test_a_replay_paused_past_its_first_second_gives_the_same_snapshot(tmp_path: Path) -> None:
    r = Replays(tmp_path)
    first = r.run("direct")
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    proc = r.start(f"wait:{gate}")
    import time

    time.sleep(1.5)  # -m slow only: the replay's group is past its first second
    with open(gate, "wb") as fh:
        fh.write(b"x")
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode()
    assert _normal(out.decode()) == first


# -- a call's place, from the kernel's start of its group (hookrun.spawn_stamp) ----------

HZ = 100  # USER_HZ: /proc gives process starts in 10 ms ticks
TICK = 1_000_000_000 // HZ
BOOTED = 1_790_000_000  # s since the epoch


def test_calls_started_in_one_tick_keep_the_order_the_client_started_them() -> None:
    """Two hooks the client started within one 10 ms tick (a parallel batch): ordered by
    the kernel's numbering of their processes, whichever hook got going first."""
    tick = 61_234
    first = hookrun.spawn_stamp(BOOTED, tick, 9000, HZ)
    second = hookrun.spawn_stamp(BOOTED, tick, 9001, HZ)
    assert first < second
    start = BOOTED * 10**9 + tick * TICK
    assert start <= first < second < start + TICK
    # A later tick comes after, whatever the pids (the largest pid against the smallest).
    assert hookrun.spawn_stamp(BOOTED, tick, hookrun.PID_SPAN - 1, HZ) < hookrun.spawn_stamp(
        BOOTED, tick + 1, 1, HZ
    )


def test_where_there_are_no_process_groups_a_call_has_no_exact_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(os, "getpgid")  # Windows
    at, exact = hookrun.call_stamp(True)
    assert exact is False and at > 0


_PREEMPTED = """
import sys, time
sys.path.insert(0, {repo!r})
from ctxmode import hookrun
first = hookrun.call_stamp(True)
# Preempted between its clock reads, for longer than the gap between two calls: every
# boot clock read comes 250 ms late against the realtime read before it.
real = time.clock_gettime_ns
time.clock_gettime_ns = lambda clock: real(clock) + 250_000_000
second = hookrun.call_stamp(True)
print(first[1], second[1], first[0] == second[0])
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_hook_preempted_while_it_takes_its_stamp_keeps_its_calls_place(tmp_path: Path) -> None:
    """Under load a hook can lose the CPU for longer than the gap between two calls at
    any point. Its call's place once came from a realtime and a boot clock read taken
    several syscalls apart: preempted between them (measured 8-16 ms on a loaded machine,
    issue 30), it placed its call before the one that came before it. The place is made
    of what the kernel recorded of the call's process group, no clock read."""
    script = tmp_path / "stamp.py"
    script.write_text(_PREEMPTED.format(repo=str(REPLAY.parents[1])))
    done = subprocess.run(
        ["sh", "-c", f"'{sys.executable}' -I -S '{script}'; true"],  # as the client starts it
        capture_output=True,
        check=True,
        start_new_session=True,
    )
    assert done.stdout.split() == [b"True", b"True", b"True"], done.stderr


def _gated_hook(gate: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A PostToolUse hook as the client starts it (``sh -c`` leading a group of its own),
    held before its first line until ``gate`` (a fifo) is written: a slow start."""
    os.mkfifo(gate)
    argv = " ".join(f"'{arg}'" for arg in hook_command("PostToolUse"))
    return subprocess.Popen(
        ["sh", "-c", f"read go < '{gate}' && exec {argv}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )


def _start_tick(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return int(fh.read().rsplit(b")", 1)[1].split()[19])


def _run_gated(proc: subprocess.Popen[bytes], gate: Path, payload: dict[str, Any]) -> None:
    with open(gate, "w") as fh:
        fh.write("go\n")
    out, err = proc.communicate(json.dumps(payload).encode(), timeout=60)
    assert (proc.returncode, out, err) == (0, b"", b"")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_calls_started_in_one_tick_keep_their_order_when_the_first_start_slowly(
    tmp_path: Path,
) -> None:
    """Hooks the client starts within one clock tick (a parallel batch), each held before
    its first line, then let go last first: the store lists them in the order they were
    started. (The time each hook got going decided it before, within a tick.) Four are
    started; at least two of them must share a tick (on a loaded machine four rarely do), and
    those are next to each other in the order: their tie is what is tested."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    names = [f"call{n}.py" for n in range(4)]
    payloads = [
        tool_payload("Write", {"file_path": str(project / name), "content": "x\n"},
                     {"type": "create", "filePath": str(project / name)},
                     tool_use_id=f"toolu_{name}", session_id="tick", cwd=str(project))
        for name in names
    ]  # fmt: skip
    for attempt in range(100):
        env = hook_env(CTXMODE_HOME=str(tmp_path / f"data{attempt}"))
        gates = [tmp_path / f"gate{attempt}-{n}" for n in range(len(names))]
        procs = [_gated_hook(gate, env) for gate in gates]
        if len({_start_tick(proc.pid) for proc in procs}) < len(procs):
            break
        for proc in procs:  # a tick boundary fell between them: start them again
            os.killpg(proc.pid, 9)
            proc.communicate()
    else:
        pytest.fail("no two hooks started within one clock tick in 100 tries")
    for proc, gate, payload in reversed(list(zip(procs, gates, payloads, strict=True))):
        _run_gated(proc, gate, payload)  # the last started stores first
    store = paths.store_path(str(project), env)
    with Store.open(store, readonly=True) as opened:
        writes = [json.loads(e.data)["path"] for e in opened.session_events("tick")]
    assert writes == names
