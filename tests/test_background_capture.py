"""Captures run in the background ("async": true, the shim's --background): events are
kept in the order of the calls whatever the order the processes finish in, PreCompact
waits for the captures still in flight (bounded, logged), and a dead capture's marker
makes nobody wait.

Synchronisation is by pipes, never by sleeps: a capture is held at its very start by a
stdin that is not finished yet. Writing more than a pipe holds returns only once the
hook reads it, so when the write returns the hook has taken its call's stamp and
published its in-flight marker (both come before it reads its input, see hookrun).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from ctxmode import inflight, paths
from ctxmode.store import Store
from tests.helpers import hook_payload, tool_payload
from tests.hooktools import hook_command, hook_env, run_hook

SESSION = "sess-background"
# More than a pipe buffer (64 KiB on Linux): the write returns only once the hook reads.
BARRIER_BYTES = 256 * 1024


def _env(data_root: Path, project: Path) -> dict[str, str]:
    return hook_env(CTXMODE_HOME=str(data_root), CLAUDE_PROJECT_DIR=str(project))


def _store_path(data_root: Path, project: Path) -> str:
    return paths.store_path(str(project), {"CTXMODE_HOME": str(data_root)})


def _make_store(data_root: Path, project: Path) -> str:
    path = _store_path(data_root, project)
    Store.open(path, busy_timeout_ms=2000).close()
    return path


def _held(event: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A background capture, held after its stamp and marker until :func:`_release`."""
    proc = subprocess.Popen(
        [*hook_command(event), "--background"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,  # as the client starts a hook: a group of its own
    )
    assert proc.stdin is not None
    proc.stdin.write(b" " * BARRIER_BYTES)  # leading whitespace: still valid JSON
    proc.stdin.flush()
    return proc


def _release(proc: subprocess.Popen[bytes], payload: dict[str, Any]) -> tuple[int, bytes, bytes]:
    out, err = proc.communicate(json.dumps(payload).encode(), timeout=30)
    return proc.returncode, out, err


def _background(event: str, payload: dict[str, Any], env: dict[str, str]) -> None:
    proc = subprocess.run(
        [*hook_command(event), "--background"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        timeout=30,
        check=False,
        start_new_session=True,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def _log(data_root: Path) -> str:
    log = data_root / "logs" / "ctxmode.log"
    return log.read_text() if log.exists() else ""


def _events(store_path: str) -> list[tuple[str, str]]:
    with Store.open(store_path, busy_timeout_ms=2000, readonly=True) as store:
        return [(e.type, e.data) for e in store.session_events(SESSION)]


def _snapshot(data_root: Path, project: Path, env: dict[str, str]) -> str:
    done = run_hook("PreCompact", hook_payload("PreCompact", session_id=SESSION,
                    cwd=str(project), trigger="manual"), env=env)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    with Store.open(_store_path(data_root, project), busy_timeout_ms=2000) as store:
        latest = store.latest_resume(SESSION, kind="compact")
    assert latest is not None
    return str(latest["snapshot"])


def _failure(project: Path) -> dict[str, Any]:
    return tool_payload(
        "Bash",
        {"command": "python -m pytest -q tests/test_app.py", "description": "run the tests"},
        event="PostToolUseFailure",
        error="Exit code 1\nFAILED tests/test_app.py::test_total - assert 3 == 4",
        tool_use_id="toolu_fail",
        session_id=SESSION,
        cwd=str(project),
    )


def _rerun(project: Path) -> dict[str, Any]:
    return tool_payload(
        "Bash",
        {"command": "python -m pytest -q tests/test_app.py", "description": "run the tests"},
        {"stdout": "1 passed in 0.01s", "stderr": "", "interrupted": False},
        tool_use_id="toolu_rerun",
        session_id=SESSION,
        cwd=str(project),
    )


def _write(project: Path, name: str, n: int) -> dict[str, Any]:
    path = str(project / name)
    return tool_payload(
        "Write",
        {"file_path": path, "content": f"x = {n}\n"},
        {"type": "create", "filePath": path, "content": f"x = {n}\n"},
        tool_use_id=f"toolu_w{n}",
        session_id=SESSION,
        cwd=str(project),
    )


def test_a_failure_and_its_rerun_end_resolved_when_the_rerun_finishes_first(
    data_root: Path, project: Path
) -> None:
    env = _env(data_root, project)
    store_path = _make_store(data_root, project)
    failing = _held("PostToolUseFailure", env)  # call 1: stamped, then held
    # Call 2, the rerun, runs to its end while call 1 is still held: it waits for it,
    # bounded (inflight.ORDER_BOUND), then stores its events before call 1's.
    _background("PostToolUse", _rerun(project), env)
    assert failing.poll() is None, "the held failure must still be running"
    assert "still running after 1.0s" in _log(data_root)
    assert _release(failing, _failure(project)) == (0, b"", b"")

    events = _events(store_path)
    kinds = [kind for kind, _ in events]
    # Read back in the calls' order, not the arrival's: the failure, then its resolution.
    assert kinds.index("tool_error") < kinds.index("error_resolved"), events
    with Store.open(store_path, busy_timeout_ms=2000, readonly=True) as store:
        assert store.open_error_keys(SESSION) == set()
    snapshot = _snapshot(data_root, project, env)
    assert "<errors" not in snapshot, snapshot
    assert "assert 3 == 4" not in snapshot


def test_the_later_of_two_identical_calls_is_the_duplicate_whatever_lands_first(
    data_root: Path, project: Path
) -> None:
    env = _env(data_root, project)
    store_path = _make_store(data_root, project)
    first = _held("PostToolUse", env)
    second = _write(project, "same.py", 1) | {"tool_use_id": "toolu_second"}
    _background("PostToolUse", second, env)  # lands first, after its bounded wait
    assert _release(first, _write(project, "same.py", 1) | {"tool_use_id": "toolu_first"})[0] == 0
    with Store.open(store_path, busy_timeout_ms=2000, readonly=True) as store:
        writes = [e for e in store.session_events(SESSION) if e.type == "file_write"]
    # The dedup window is the calls' order: the first call's event is not skipped as a
    # repeat of the second's, which arrived earlier but was called later.
    assert [e.tool_use_id for e in writes][:1] == ["toolu_first"], [e.tool_use_id for e in writes]


def test_pre_compact_waits_for_a_capture_in_flight_at_most_its_bound_and_says_so(
    data_root: Path, project: Path
) -> None:
    env = _env(data_root, project)
    store_path = _make_store(data_root, project)
    _background("PostToolUse", _write(project, "before.py", 1), env)
    held = _held("PostToolUse", env)  # a capture that does not end before the compaction
    snapshot = _snapshot(data_root, project, env)  # waits FLUSH_BOUND, then goes on
    assert "before.py" in snapshot
    assert f"still running after {inflight.FLUSH_BOUND:.1f}s (the bound)" in _log(data_root)
    assert "the snapshot is made without their events" in _log(data_root)
    assert _release(held, _write(project, "late.py", 2)) == (0, b"", b"")
    assert ("file_write", "late.py") in [
        (kind, json.loads(data)["path"]) for kind, data in _events(store_path)
    ]


def test_pre_compact_takes_a_finished_background_capture_and_ignores_a_dead_ones_marker(
    data_root: Path, project: Path
) -> None:
    env = _env(data_root, project)
    _make_store(data_root, project)
    # A capture killed mid-way leaves its marker behind, its lock gone with the process.
    code = (
        "import os, sys; sys.path.insert(0, sys.argv[2]); from ctxmode import inflight; "
        "import time; m = inflight.enter(sys.argv[1], time.time_ns); m.claim(sys.argv[3]); os._exit(0)"
    )
    dead = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(data_root), str(Path.cwd()), SESSION],
        capture_output=True,
        check=False,
    )
    assert dead.returncode == 0, dead.stderr
    markers = os.listdir(data_root / inflight.FOLDER)
    assert len(markers) == 1
    _background("PostToolUse", _write(project, "done.py", 1), env)
    snapshot = _snapshot(data_root, project, env)
    assert "done.py" in snapshot
    assert "still running" not in _log(data_root)
    assert os.listdir(data_root / inflight.FOLDER) == []  # the stale marker was removed
    mode = (data_root / inflight.FOLDER).stat().st_mode & 0o777
    assert mode == 0o700


def test_a_background_capture_leaves_no_marker_and_prints_nothing(
    data_root: Path, project: Path
) -> None:
    env = _env(data_root, project)
    store_path = _make_store(data_root, project)
    _background("PostToolUse", _write(project, "a.py", 1), env)
    _background("PostToolUseFailure", _failure(project), env)
    assert os.listdir(data_root / inflight.FOLDER) == []
    assert [kind for kind, _ in _events(store_path)] == ["file_write", "shell_call", "tool_error"]
    assert _log(data_root) == ""


def _end_snapshots(store_path: str) -> list[dict[str, Any]]:
    with Store.open(store_path, busy_timeout_ms=2000, readonly=True) as store:
        return [r for r in store.resumes(SESSION) if r["kind"] == "end"]


def test_a_capture_the_client_stops_takes_the_end_snapshot_session_end_would_have(
    data_root: Path, project: Path
) -> None:
    """`claude -p` ending with a capture still running sends it SIGTERM and then runs no
    SessionEnd hook (Claude Code 2.1.197, see inflight.stopping): the capture stores its
    events and takes the session's end snapshot itself, for the next session to claim."""
    env = _env(data_root, project)
    store_path = _make_store(data_root, project)
    _background("PostToolUse", _write(project, "early.py", 1), env)
    assert _end_snapshots(store_path) == []  # a capture left to finish takes none
    held = _held("PostToolUse", env)  # its SIGTERM handler is in place (hookrun.main)
    held.send_signal(signal.SIGTERM)  # the client ending
    assert _release(held, _write(project, "last.py", 2)) == (0, b"", b"")

    (end,) = _end_snapshots(store_path)
    assert not end["consumed"], end
    assert "early.py" in end["snapshot"] and "last.py" in end["snapshot"], end["snapshot"]
    assert 'end="1"' in end["snapshot"]
    assert [name for name in os.listdir(data_root / inflight.FOLDER) if "-" in name] == []
    # The next session of the repository is handed that snapshot.
    started = run_hook("SessionStart", hook_payload("SessionStart", session_id="sess-next",
                       cwd=str(project), source="resume"), env=env)  # fmt: skip
    assert started.returncode == 0 and started.stderr == b""
    assert b"last.py" in started.stdout and b"previous-session" in started.stdout


# Runs a capture shim as the client does, except that the client's SIGTERM is sent the
# moment the shim starts importing the hook harness (an import hook sends it): the instant
# a busy machine can make of the ~third of a capture's life spent importing.
_STOP_WHILE_IMPORTING = """
import os, runpy, signal, sys
class StopAtHarness:
    def find_spec(self, name, path=None, target=None):
        if name == "ctxmode.hookrun":
            os.kill(os.getpid(), signal.SIGTERM)
        return None
sys.meta_path.insert(0, StopAtHarness())
sys.argv = [sys.argv[1], "--background"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_a_stop_that_comes_while_the_capture_starts_keeps_its_call(
    data_root: Path, project: Path
) -> None:
    """A stop that lands before the harness has installed its handler (Python's default
    would kill the process, the payload unread) is noted from the shim's first import and
    acted on: the call is stored and the end snapshot taken."""
    env = _env(data_root, project)
    store_path = _make_store(data_root, project)
    shim = hook_command("PostToolUse")[-1]
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _STOP_WHILE_IMPORTING, shim],
        input=json.dumps(_write(project, "last.py", 1)).encode(),
        capture_output=True,
        env=env,
        timeout=30,
        start_new_session=True,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    (end,) = _end_snapshots(store_path)
    assert "last.py" in end["snapshot"], end["snapshot"]


def test_captures_stopped_together_leave_one_end_snapshot_with_all_their_events(
    data_root: Path, project: Path
) -> None:
    env = _env(data_root, project)
    store_path = _make_store(data_root, project)
    first, second = _held("PostToolUse", env), _held("PostToolUse", env)
    for proc in (first, second):
        proc.send_signal(signal.SIGTERM)
    assert first.stdin is not None and second.stdin is not None
    # Both read their payload before either ends: they store and build side by side.
    first.stdin.write(json.dumps(_write(project, "one.py", 1)).encode())
    second.stdin.write(json.dumps(_write(project, "two.py", 2)).encode())
    for proc in (first, second):
        assert proc.communicate(timeout=30) == (b"", b"") and proc.returncode == 0

    ends = _end_snapshots(store_path)
    waiting = [r for r in ends if not r["consumed"]]
    assert len(waiting) == 1, ends
    assert "one.py" in waiting[0]["snapshot"] and "two.py" in waiting[0]["snapshot"]
    assert all(r["consumed_by"] == "superseded" for r in ends if r["consumed"]), ends
