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

import pytest

from ctxmode import hookrun
from tests.hooktools import hook_env
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
