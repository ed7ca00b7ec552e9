"""Contention: many writers, readers and a PreCompact at once; a store locked for too long.

- 64 concurrent PostToolUse hooks, ``ctxmode dump``/``search`` CLI readers, a reader
  process looping over ``Store.search``/``Store.dump``, UserPromptSubmit hooks and a
  running PreCompact: zero lost events, zero errors, and no hook runs past its deadline
  (the hook's own watchdog logs an ERROR when it does: no wall clock is read here).
- A store held under ``BEGIN EXCLUSIVE`` past the deadlines: every hook gives up in
  time (exit 0, nothing printed), logs it, writes nothing half: the events are in the
  spool, not the store, and land in the store with the next hook after the release.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ctxmode import hookrun, paths, spool
from ctxmode.events import make
from ctxmode.store import Store
from tests.hooktools import hook_command, hook_env, run_hook

PROJECT = "/home/dev/proj"
SCALE = int(os.environ.get("CTXMODE_SOAK_SCALE", "1"))
REPO = Path(__file__).resolve().parents[1]


def _env(root: Path) -> dict[str, str]:
    return hook_env(CTXMODE_HOME=str(root), CLAUDE_PROJECT_DIR=PROJECT)


def _store_path(root: Path) -> str:
    return paths.store_path(PROJECT, {"CTXMODE_HOME": str(root)})


def _write(name: str, session: str) -> dict:
    path = f"{PROJECT}/{name}"
    return {
        "session_id": session, "cwd": PROJECT, "hook_event_name": "PostToolUse",
        "tool_name": "Write", "tool_input": {"file_path": path, "content": ""},
        "tool_response": {"type": "create", "filePath": path},
    }  # fmt: skip


def _log_records(root: Path) -> list[str]:
    log = root / "logs" / "ctxmode.log"
    if not log.exists():
        return []
    return [line for line in log.read_text().splitlines() if not line.startswith(" ")]


class Timed:
    """A process fed ``stdin`` and read to its end by a thread of its own."""

    def __init__(
        self,
        kind: str,
        argv: list[str],
        stdin: bytes,
        env: dict[str, str],
        pass_fds: tuple[int, ...] = (),
    ) -> None:
        self.kind = kind
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            pass_fds=pass_fds,
        )
        self.out = self.err = b""
        self.thread = threading.Thread(target=self._wait, args=(stdin,))
        self.thread.start()

    def _wait(self, stdin: bytes) -> None:
        self.out, self.err = self.proc.communicate(stdin, timeout=120)

    def join(self) -> Timed:
        self.thread.join()
        return self


def _hook(event: str, payload: dict, env: dict[str, str]) -> Timed:
    return Timed(event, hook_command(event), json.dumps(payload).encode(), env)


def _cli(args: list[str], env: dict[str, str]) -> Timed:
    return Timed(args[0], [sys.executable, "-m", "ctxmode", *args], b"", env)


# Loops over the store's read API until told to stop; any exception fails the process.
# (The store exists before it starts: see _contention_round.)
READER = """
import os, sys
from ctxmode.store import Store
path, stop = sys.argv[1], sys.argv[2]
loops = 0
while not os.path.exists(stop) or loops == 0:
    with Store.open(path, readonly=True) as store:
        store.search("w1")
        store.search("create", category="file")
        store.dump()
    loops += 1
print(loops)
"""


def _contention_round(root: Path, writers: int, tag: str) -> None:
    env = _env(root)
    cli_env = hook_env(CTXMODE_HOME=str(root))
    # The readers open the store read-only, which never creates it: make it first, so that
    # none has to wait for a writer (racing creators are tests/test_reliability_crash.py's).
    Store.open(_store_path(root)).close()
    stop = root / f"stop-{tag}"
    sessions = [f"{tag}-s{k}" for k in range(4)]
    main = sessions[0]
    procs: list[Timed] = []
    readers = [
        Timed("reader", [sys.executable, "-c", READER, _store_path(root), str(stop)], b"", env)
        for _ in range(2)
    ]
    procs.append(_hook("PreCompact", {"session_id": main, "cwd": PROJECT,
                                      "hook_event_name": "PreCompact", "trigger": "auto"}, env))  # fmt: skip
    for k in range(writers):
        procs.append(_hook("PostToolUse", _write(f"{tag}-w{k}.py", sessions[k % 4]), env))
        if k % 16 == 0:
            procs.append(_cli(["dump", "--json", "--project", PROJECT], cli_env))
            procs.append(_cli(["search", f"{tag}-w", "--project", PROJECT, "--json"], cli_env))
            prompt = {"session_id": sessions[1], "cwd": PROJECT,
                      "hook_event_name": "UserPromptSubmit", "prompt": f"fix bug {tag}-{k}"}  # fmt: skip
            procs.append(_hook("UserPromptSubmit", prompt, env))
    for proc in procs:
        proc.join()
    stop.touch()
    for reader in readers:
        reader.join()
        assert (reader.proc.returncode, reader.err) == (0, b""), reader.err.decode()[-2000:]
        assert int(reader.out) >= 1

    for proc in procs:
        code = proc.proc.returncode
        assert (code, proc.err) == (0, b""), (proc.kind, code, proc.err.decode()[-2000:])
        if proc.kind in hookrun.DEADLINES:
            assert proc.out == b"", (proc.kind, proc.out[:300])
        elif proc.kind == "dump":
            assert "sessions" in json.loads(proc.out)
        else:
            assert isinstance(json.loads(proc.out), list)

    # Zero lost: every writer's file, once; every prompt.
    with Store.open(_store_path(root), readonly=True) as store:
        names = [
            json.loads(e.data)["path"]
            for s in sessions
            for e in store.session_events(s)
            if e.type == "file_write"
        ]
        prompts = [e for e in store.session_events(sessions[1]) if e.type == "user_prompt"]
        snapshot = store.latest_resume(main, kind="compact")
    assert sorted(names) == sorted(f"{tag}-w{k}.py" for k in range(writers))
    assert len(prompts) == len([p for p in procs if p.kind == "UserPromptSubmit"])
    # The PreCompact that ran among them stored a whole snapshot, claimable once.
    assert snapshot is not None and not snapshot["consumed"]
    start = {"session_id": main, "cwd": PROJECT, "hook_event_name": "SessionStart",
             "source": "compact"}  # fmt: skip
    printed = run_hook("SessionStart", start, env=env)
    context = json.loads(printed.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context == snapshot["snapshot"]
    assert ET.fromstring(context).tag == "session_resume"


def test_64_writers_with_readers_and_a_precompact(tmp_path: Path) -> None:
    _contention_round(tmp_path, 64, "r0")
    # Zero errors, no hook cut short by its deadline (the watchdog would log an ERROR),
    # and no hook had to spool (no lock was held past a busy timeout).
    assert _log_records(tmp_path) == []
    with Store.open(_store_path(tmp_path)) as store:
        assert store.integrity_check() == "ok"


@pytest.mark.slow
def test_contention_soak(request, tmp_path: Path) -> None:
    rounds = 10 * SCALE
    for r in range(rounds):
        _contention_round(tmp_path, 64, f"r{r}")
    assert [line for line in _log_records(tmp_path) if "\tERROR\t" in line] == []
    with Store.open(_store_path(tmp_path)) as store:
        assert store.integrity_check() == "ok"


# ---------------------------------------------------------------- a lock held too long


def _hold_exclusive(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=0)
    conn.execute("BEGIN EXCLUSIVE")
    return conn


def _spooled_lines(root: Path) -> list[dict]:
    path = Path(spool.spool_path(str(root), _store_path(root)))
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_locked_store_hooks_give_up_in_time_and_spool(tmp_path: Path) -> None:
    env = _env(tmp_path)
    base = {"session_id": "main", "cwd": PROJECT}
    assert run_hook("PostToolUse", _write("before.py", "main"), env=env).returncode == 0
    pre = {**base, "hook_event_name": "PreCompact", "trigger": "auto"}
    assert run_hook("PreCompact", pre, env=env).returncode == 0  # an unclaimed snapshot

    calls = {
        "PostToolUse": _write("during.py", "main"),
        "PostToolUseFailure": {
            **base, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_input": {"command": "make test"}, "error": "Exit code 2\nmake: *** [test] Error 2",
        },
        "UserPromptSubmit": {**base, "hook_event_name": "UserPromptSubmit",
                             "prompt": "please fix the failing make target"},
        "SessionStart": {**base, "hook_event_name": "SessionStart", "source": "compact"},
        "PreCompact": {**pre, "session_id": "other"},
        "SessionEnd": {**base, "hook_event_name": "SessionEnd", "reason": "other"},
    }  # fmt: skip
    holder = _hold_exclusive(_store_path(tmp_path))
    try:
        procs = [_hook(event, payload, env) for event, payload in calls.items()]
        for proc in procs:
            proc.join()
            # Gave up cleanly: exit 0, nothing printed (not even the snapshot); in time is
            # the log's word below (no deadline record).
            assert (proc.proc.returncode, proc.out, proc.err) == (0, b"", b""), proc.kind
        # Nothing half-written: the store (read beside the lock) has none of it...
        reader = sqlite3.connect(_store_path(tmp_path))
        stored = [row[0] for row in reader.execute("SELECT data FROM session_events")]
        claimed = reader.execute("SELECT consumed FROM session_resume").fetchall()
        reader.close()
        assert [json.loads(data)["path"] for data in stored] == ["before.py"]
        assert claimed == [(0,)]
        # ...the spool has every event, whole, with the hook that saw it...
        lines = _spooled_lines(tmp_path)
        spooled = {(e["source_hook"], e["type"]) for line in lines for e in line["events"]}
        assert {("PostToolUse", "file_write"), ("PostToolUseFailure", "tool_error"),
                ("UserPromptSubmit", "user_prompt")} <= spooled  # fmt: skip
        # ...and each hook said so in the log.
        records = _log_records(tmp_path)
        for event in calls:
            assert any(f"\t{event}\t" in r and "locked" in r for r in records), (event, records)
        # Each gave up by itself: none had to be cut short by the deadline watchdog.
        assert [r for r in records if "deadline" in r] == []
    finally:
        holder.execute("ROLLBACK")
        holder.close()

    # The next hook after the release moves the spool into the store, once.
    result = run_hook("PostToolUse", _write("after.py", "main"), env=env)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    with Store.open(_store_path(tmp_path), readonly=True) as store:
        events = store.session_events("main")
    kinds = [(e.source_hook, e.type) for e in events]
    for pair in [("PostToolUse", "file_write"), ("PostToolUseFailure", "tool_error"),
                 ("UserPromptSubmit", "user_prompt")]:  # fmt: skip
        assert kinds.count(pair) >= 1, pair
    paths_written = [json.loads(e.data)["path"] for e in events if e.type == "file_write"]
    assert paths_written == ["before.py", "during.py", "after.py"]
    assert sorted(os.listdir(tmp_path / "spool")) == []
    # The snapshot nobody could claim under the lock is delivered by the next prompt.
    prompt = {**calls["UserPromptSubmit"], "prompt": "go on"}
    out = run_hook("UserPromptSubmit", prompt, env=env).stdout
    assert ET.fromstring(json.loads(out)["hookSpecificOutput"]["additionalContext"]).tag == (
        "session_resume"
    )


# A hook process that tells the test (one byte down a pipe it inherits) when it is about
# to call ``Store.<method>``: the point where it meets the lock. With ``gate``, it first
# says it has started and waits for the test's go: the writers then meet the lock
# together, however unevenly their interpreters started on a loaded machine. Its
# deadline is raised so that no watchdog ends a writer while it waits for the go.
# One pipe, never reopened (a FIFO reopened per signal can drop a byte between a
# reader's end of file and its close); the test holds no write end of it, so it reads
# end of file once every hook has exited, and fails instead of waiting for ever.
SIGNALLING_HOOK = """
import os, runpy, sys
signal_fd, go_fd, method, shim = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
sys.argv = [shim]
sys.path.insert(0, {repo!r})
from ctxmode import hookrun
from ctxmode.store import Store
if go_fd >= 0:
    hookrun.DEADLINES["PostToolUse"] = 120.0
    os.write(signal_fd, b"s")
    if os.read(go_fd, 1) != b"g":
        sys.exit(3)
original = getattr(Store, method)
def signalled(self, *args, **kwargs):
    os.write(signal_fd, b"x")
    return original(self, *args, **kwargs)
setattr(Store, method, signalled)
runpy.run_path(shim, run_name="__main__")
"""


class Signals:
    """The pipes between the test and its signalling hooks."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.go_read, self.go_write = os.pipe()
        self.procs: list[Timed] = []

    def hook(self, event: str, payload: dict, env: dict[str, str], method: str, gate: bool) -> None:
        shim = hook_command(event)[-1]
        code = SIGNALLING_HOOK.format(repo=str(REPO))
        go = self.go_read if gate else -1
        argv = [sys.executable, "-I", "-S", "-c", code, str(self.write_fd), str(go), method, shim]
        fds = (self.write_fd, self.go_read) if gate else (self.write_fd,)
        self.procs.append(Timed(event, argv, json.dumps(payload).encode(), env, fds))

    def started(self) -> None:
        """Every hook is spawned: from now on only they hold the pipes' other ends."""
        os.close(self.write_fd)
        os.close(self.go_read)

    def wait_for(self, byte: bytes, count: int) -> None:
        """Block until ``count`` hooks have sent ``byte`` (no clock: each read is awaited)."""
        got = 0
        while got < count:
            chunk = os.read(self.read_fd, count - got)
            if not chunk:
                outputs = [(p.kind, p.join().proc.returncode, p.err[-2000:]) for p in self.procs]
                pytest.fail(f"hooks exited before {count} sent {byte!r}: {outputs}")
            assert set(chunk) == {byte[0]}, chunk
            got += len(chunk)

    def go(self) -> None:
        os.write(self.go_write, b"g" * len(self.procs))

    def close(self) -> None:
        for fd in (self.read_fd, self.go_write):
            os.close(fd)


def test_lock_released_within_the_wait_needs_no_spool(tmp_path: Path) -> None:
    """A lock held shorter than the busy timeout only delays the writers."""
    env = _env(tmp_path)
    assert run_hook("PostToolUse", _write("a.py", "s"), env=env).returncode == 0
    signals = Signals()
    holder = _hold_exclusive(_store_path(tmp_path))
    try:
        for k in range(8):
            signals.hook("PostToolUse", _write(f"b{k}.py", "s"), env, "add_events", gate=True)
        signals.started()
        signals.wait_for(b"s", 8)
        signals.go()
        # Released once every writer is at its insert, i.e. waiting for this lock.
        signals.wait_for(b"x", 8)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        signals.close()
    for proc in signals.procs:
        proc.join()
        assert (proc.proc.returncode, proc.out, proc.err) == (0, b"", b"")
    with Store.open(_store_path(tmp_path), readonly=True) as store:
        names = sorted(json.loads(e.data)["path"] for e in store.session_events("s"))
    assert names == ["a.py"] + [f"b{k}.py" for k in range(8)]
    assert not (tmp_path / "spool").exists()
    assert _log_records(tmp_path) == []


def test_spool_import_waits_leave_time_for_the_own_events(tmp_path: Path) -> None:
    """Spooled events and the hook's own both land though the lock goes away late."""
    env = _env(tmp_path)
    assert run_hook("PostToolUse", _write("a.py", "s"), env=env).returncode == 0
    event = make("file_write", {"path": "spooled.py", "kind": "create"}, source_hook="PostToolUse")
    spool.put(str(tmp_path), _store_path(tmp_path), "s", [event])
    signals = Signals()
    holder = _hold_exclusive(_store_path(tmp_path))
    try:
        signals.hook("PostToolUse", _write("late.py", "s"), env, "add_batches", gate=False)
        signals.started()
        signals.wait_for(b"x", 1)  # the hook is importing the spool, i.e. waiting for the lock
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        signals.close()
    proc = signals.procs[0].join()
    assert (proc.proc.returncode, proc.out, proc.err) == (0, b"", b"")
    with Store.open(_store_path(tmp_path), readonly=True) as store:
        names = sorted(json.loads(e.data)["path"] for e in store.session_events("s"))
    assert names == ["a.py", "late.py", "spooled.py"]
    assert [r for r in _log_records(tmp_path) if "\tERROR\t" in r] == []


class _FixedClock(hookrun.Context):
    """A hook context whose remaining time is given, not read from a clock."""

    def __init__(self, root: Path, remaining: float) -> None:
        super().__init__({"CTXMODE_HOME": str(root)}, str(root), _store_path(root), 4.0)
        self.left = remaining

    def remaining(self) -> float:
        return self.left


@pytest.mark.parametrize(
    ("remaining", "expected_ms"), [(1.2, 700), (3.0, 2500), (0.3, 100), (10.0, 3000)]
)
def test_the_wait_after_a_spool_import_ends_before_the_deadline(
    remaining: float, expected_ms: int, tmp_path: Path
) -> None:
    """Once the import has waited for the lock, the wait for the hook's own events is
    what is left of the deadline less a margin to spool (at least 0.1 s)."""
    from ctxmode import handlers, payload

    event = make("file_write", {"path": "spooled.py", "kind": "create"}, source_hook="PostToolUse")
    spool.put(str(tmp_path), _store_path(tmp_path), "s", [event])
    inp = payload.from_dict(_write("late.py", "s"), "PostToolUse")
    inp.project_dir = PROJECT
    ctx = _FixedClock(tmp_path, remaining)
    with Store.open(_store_path(tmp_path), busy_timeout_ms=3000) as store:
        handlers._drain_spool(store, inp, ctx, 1000)
        assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] == expected_ms
        assert [json.loads(e.data)["path"] for e in store.session_events("s")] == ["spooled.py"]
