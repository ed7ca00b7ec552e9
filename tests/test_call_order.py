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
EPOCH_AT_BOOT = 1_790_000_000 * 10**9  # the realtime clock when the boot clock read 0


class Clocks:
    """A machine's realtime and boot clocks as one process reads them: each read moves
    time on by a microsecond; ``preempt(after=n, ns)`` suspends the process for ``ns``
    right after its n-th read (the scheduler giving the CPU to others under load)."""

    def __init__(self, boot_now: int) -> None:
        self.boot = boot_now
        self.reads = 0
        self.pauses: dict[int, int] = {}

    def preempt(self, after: int, ns: int) -> Clocks:
        self.pauses[after] = ns
        return self

    def _read(self) -> int:
        self.reads += 1
        self.boot += 1_000
        value = self.boot
        self.boot += self.pauses.pop(self.reads, 0)
        return value

    def realtime(self) -> int:
        return EPOCH_AT_BOOT + self._read()

    def boottime(self) -> int:
        return self._read()


def _place(ticks: int, leader: int, reached: int, clocks: Clocks | None = None) -> int:
    """The stamp of a call whose group ``leader`` started at ``ticks``, computed by a hook
    that reaches :func:`hookrun.spawn_stamp` ``reached`` ns after that start."""
    clocks = clocks or Clocks(ticks * TICK + reached)
    at, exact = hookrun.spawn_stamp(ticks, leader, HZ, clocks.realtime, clocks.boottime)
    assert exact
    return at


def test_a_call_preempted_between_its_clock_reads_keeps_its_place() -> None:
    """Under load a hook can lose the CPU between its realtime and boot clock reads. Its
    boot clock's start on the epoch then comes out as much too early as it waited, and
    its call was placed before the call that came 90 ms earlier (the gap between two
    Bash calls under load, issue 30); the reads are taken again and the tightest kept."""
    first, second = 50_000, 50_009  # ticks: the second call started 90 ms after the first
    preempted = Clocks(first * TICK + 20_000_000).preempt(after=1, ns=250_000_000)
    a = _place(first, 4321, 0, preempted)
    b = _place(second, 4350, 15_000_000)
    assert first * TICK <= a - EPOCH_AT_BOOT < (first + 1) * TICK  # within its own tick
    assert a < b


def test_calls_started_in_one_tick_keep_the_order_the_client_started_them() -> None:
    """Two hooks the client started within one 10 ms tick (a parallel batch): the first
    one's hook is slow to start and reaches its stamp 40 ms after the second one's. The
    kernel numbered their processes in the order it made them; that order stands."""
    tick = 61_234
    first = _place(tick, 9000, reached=45_000_000)  # slow: far past its tick
    second = _place(tick, 9001, reached=5_000_000)
    assert first < second
    assert {first // TICK, second // TICK} == {(EPOCH_AT_BOOT + tick * TICK) // TICK}


def test_a_stamp_stays_within_half_the_tightest_pair_of_reads() -> None:
    # Preempted after every read: the error is at most half the shortest gap seen.
    clocks = Clocks(7_000 * TICK + 3_000_000)
    for n in range(1, 10):
        clocks.preempt(after=n, ns=30_000_000 + n * 1_000_000)
    at = _place(7_000, 0, 0, clocks)
    assert abs(at - (EPOCH_AT_BOOT + 7_000 * TICK)) <= (31_000_000 + 2_000) // 2
    # A start the boot clock has not reached yet: not a place the kernel could give.
    assert hookrun.spawn_stamp(7_000, 1, HZ, lambda: 5, lambda: 7_000 * TICK - 1) == (5, False)


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
def test_two_calls_started_in_one_tick_keep_their_order_when_the_first_starts_slowly(
    tmp_path: Path,
) -> None:
    """Two hooks the client starts within one clock tick, the first held before its first
    line while the second runs and stores: the store lists the first call first."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    payloads = [
        tool_payload("Write", {"file_path": str(project / name), "content": "x\n"},
                     {"type": "create", "filePath": str(project / name)},
                     tool_use_id=f"toolu_{name}", session_id="tick", cwd=str(project))
        for name in ("first.py", "second.py")
    ]  # fmt: skip
    for attempt in range(50):
        env = hook_env(CTXMODE_HOME=str(tmp_path / f"data{attempt}"))
        gates = [tmp_path / f"gate{attempt}-{n}" for n in (1, 2)]
        procs = [_gated_hook(gate, env) for gate in gates]
        if _start_tick(procs[0].pid) == _start_tick(procs[1].pid):
            break
        for proc in procs:  # a tick boundary fell between them: start both again
            os.killpg(proc.pid, 9)
            proc.communicate()
    else:
        pytest.fail("no two hooks started within one clock tick in 50 tries")
    _run_gated(procs[1], gates[1], payloads[1])  # the second call stores first
    _run_gated(procs[0], gates[0], payloads[0])
    store = paths.store_path(str(project), env)
    with Store.open(store, readonly=True) as opened:
        writes = [json.loads(e.data)["path"] for e in opened.session_events("tick")]
    assert writes == ["first.py", "second.py"]
