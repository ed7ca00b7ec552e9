"""Crash safety: hook processes killed with SIGKILL at chosen and at random points.

What must hold after any number of kills:

- the store passes ``PRAGMA integrity_check`` (and the FTS index its own check);
- every event whose hook exited 0 is in the store (stored, or spooled and then stored);
- no half-made store and no half-written snapshot is ever visible: a SessionStart after
  a killed PreCompact prints either PreCompact's whole snapshot or one built on the
  spot, always well-formed XML covering every event;
- events a killed hook had claimed from the spool are picked up by a later hook.

Two kinds of kill. *Crash points*: the hook runs with one function of the store patched
to SIGKILL its own process at a named point (an empty or a migrated store not yet renamed
into place, a transaction before or after its COMMIT, a claimed spool not imported, an
imported spool not removed, a snapshot not yet or just saved): deterministic, so the test
knows which kills landed. *Random-time kills*: SIGKILL sent at points spread over a hook's
life, which also land inside SQLite's own writes; how many land depends on the machine,
so nothing is asserted about their number (only about what the store holds after them).

The default run uses crash points only (a few dozen kills, no clock, no sleep); ``-m slow``
(scripts/soak.sh) adds the random-time kills, hundreds of them, with a fresh seed each run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ctxmode import paths, spool
from ctxmode.events import make
from ctxmode.migrations import SCHEMA_VERSION
from ctxmode.store import Store
from tests.hooktools import REPO, hook_command, hook_env, run_hook, start_hook

PROJECT = "/home/dev/proj"
SCALE = int(os.environ.get("CTXMODE_SOAK_SCALE", "1"))

# A hook process that SIGKILLs itself at a named point (see the module docstring).
CRASHING_HOOK = f"""
import os, runpy, signal, sys
point, shim = sys.argv[1:3]
sys.argv = [shim]
sys.path.insert(0, {str(REPO)!r})
from ctxmode import spool, store
from ctxmode.store import connection  # where Store.open calls migrate, and _Tx

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

def after(owner, name):
    original = getattr(owner, name)
    def wrapped(*args, **kwargs):
        original(*args, **kwargs)
        die()
    setattr(owner, name, wrapped)

def before_commit(self, exc_type, exc, tb):
    if exc_type is None:
        die()
    return original_exit(self, exc_type, exc, tb)

original_exit = connection._Tx.__exit__
{{
    "create_empty": lambda: setattr(connection, "migrate", die),
    "create_migrated": lambda: after(connection, "migrate"),
    "before_commit": lambda: setattr(connection._Tx, "__exit__", before_commit),
    "after_commit": lambda: after(store.Store, "add_events"),
    "spool_claimed": lambda: setattr(store.Store, "add_batches", die),
    "spool_imported": lambda: setattr(spool, "finish", die),
    "snapshot_unsaved": lambda: setattr(store.Store, "save_resume", die),
    "snapshot_saved": lambda: after(store.Store, "save_resume"),
}}[point]()
runpy.run_path(shim, run_name="__main__")
"""
# Points every PostToolUse that records an event reaches; the others only some hooks do
# (the one that creates the store, or the one that takes the spool).
SURE_POINTS = ("before_commit", "after_commit")
SPOOL_POINTS = ("spool_claimed", "spool_imported")


def start_crashing(event: str, stdin: bytes, env: dict[str, str], point: str):
    """Start a hook that kills itself at ``point`` (or exits 0 if it never gets there)."""
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", CRASHING_HOOK, point, hook_command(event)[-1]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    return proc


def _log(root: Path) -> str:
    log = root / "logs" / "ctxmode.log"
    return log.read_text(errors="replace") if log.exists() else ""


def _env(root: Path) -> dict[str, str]:
    return hook_env(CTXMODE_HOME=str(root), CLAUDE_PROJECT_DIR=PROJECT)


def _store_path(root: Path) -> str:
    return paths.store_path(PROJECT, {"CTXMODE_HOME": str(root)})


def _write(n: int, session: str) -> bytes:
    """A PostToolUse Write of ``w<n>.py``: one file_write event, unique per ``n``."""
    path = f"{PROJECT}/w{n}.py"
    return json.dumps({
        "session_id": session, "cwd": PROJECT, "hook_event_name": "PostToolUse",
        "tool_name": "Write", "tool_input": {"file_path": path, "content": "x = 1\n"},
        "tool_response": {"type": "create", "filePath": path},
        "tool_use_id": f"toolu_{n}",
    }).encode()  # fmt: skip


def _written(root: Path) -> dict[str, int]:
    """How many times each ``w<n>.py``/``sp<n>.py`` was recorded, from a fresh connection."""
    conn = sqlite3.connect(_store_path(root))
    try:
        rows = conn.execute("SELECT data FROM session_events WHERE type = 'file_write'").fetchall()
    finally:
        conn.close()
    counts: dict[str, int] = {}
    for (data,) in rows:
        name = json.loads(data)["path"]
        counts[name] = counts.get(name, 0) + 1
    return counts


def _assert_healthy(root: Path) -> None:
    """Integrity (b-tree and FTS), the current schema, no temp or orphan files left."""
    path = _store_path(root)
    store = Store.open(path)  # no recover: a damaged store must fail here, not heal
    try:
        assert store.integrity_check() == "ok"
        assert store.schema_version() == SCHEMA_VERSION
    finally:
        store.close()
    leftovers = [n for n in os.listdir(os.path.dirname(path)) if ".new-" in n or "corrupt" in n]
    assert leftovers == []


def _assert_all_accounted(missing: list[str], root: Path, what: str) -> None:
    """No event of a hook that exited 0 is missing, unless that hook gave up at its
    deadline (the watchdog's fail-open exit 0 on a starved machine, logged as an ERROR):
    then the log must hold one such record per missing event."""
    gave_up = [r for r in _log(root).splitlines() if "exceeded; gave up" in r]
    assert len(missing) <= len(gave_up), (
        f"{len(missing)} events of hooks that exited 0 are missing: {missing}\n"
        f"log:\n{_log(root)[-4000:]}"
    )


def _kill_rounds(
    root: Path,
    rounds: int,
    writers: int,
    seed: int,
    spooled_every: int = 0,
    timed_kills: bool = False,
) -> dict[str, int]:
    """Rounds of ``writers`` concurrent PostToolUse hooks: half of them kill themselves at
    a crash point; with ``timed_kills`` (the soak) a quarter do, and a quarter are
    SIGKILLed at random times.

    Every ``spooled_every`` rounds, a batch is put in the spool first (as a hook that met
    a locked store would), so that kills also land while hooks import the spool.
    Returns figures, and checks that each hook that exited 0 did so silently.
    """
    rng = random.Random(seed)
    env = _env(root)
    store_path = _store_path(root)
    ok: set[str] = set()
    spooled: set[str] = set()
    figures = {"started": 0, "killed": 0, "exited_0": 0, "signals_sent": 0, "crash_points": 0}
    n = 0
    # How long a writer lives among its concurrent peers (median of an undisturbed round),
    # so that the kills land over the whole life of a hook however fast hooks get.
    # (Two warm-up rounds: the first one also creates the store.)
    for warm in range(2):
        lifetimes = []
        base = -(warm + 1) * 1000
        warmup = [start_hook("PostToolUse", _write(base - k, "warm"), env) for k in range(writers)]
        started = time.monotonic()
        for proc in warmup:
            assert proc.wait(60) == 0
            lifetimes.append(time.monotonic() - started)  # read only with timed_kills
        ok.update(f"w{base - k}.py" for k in range(writers))
    lifetime = sorted(lifetimes)[len(lifetimes) // 2]
    for round_no in range(rounds):
        if spooled_every and round_no % spooled_every == spooled_every - 1:
            name = f"sp{round_no}.py"
            event = make("file_write", {"path": name, "kind": "create"}, source_hook="PostToolUse")
            spool.put(str(root), store_path, "spooled-session", [event])
            spooled.add(name)
        procs = []
        sure: set[str] = set()  # hooks that must die at their crash point
        crashers = writers // 4 if timed_kills else writers // 2
        for k in range(writers):
            n += 1
            name, stdin = f"w{n}.py", _write(n, f"s{n % 3}")
            if k < crashers:
                spool_round = spooled_every and round_no % spooled_every == spooled_every - 1
                points = SPOOL_POINTS if spool_round and k == 0 else SURE_POINTS
                point = rng.choice(points)
                procs.append((name, start_crashing("PostToolUse", stdin, env, point)))
                if point in SURE_POINTS:
                    sure.add(name)
            else:
                procs.append((name, start_hook("PostToolUse", stdin, env)))
        figures["started"] += writers
        figures["crash_points"] += len(sure)
        # Random-time kills (the soak only), among the hooks without a crash point.
        victims = rng.sample(procs[crashers:], writers // 4) if timed_kills else []
        started = time.monotonic()
        # Spread over a hook's whole life: start-up, parsing, opening, the transaction
        # (one kill in each slice of it, in random order).
        slices = len(victims)
        delays = [(k + rng.random()) / slices * lifetime for k in range(slices)]
        for delay, (_, proc) in sorted(zip(delays, victims, strict=True),
                                       key=lambda item: item[0]):  # fmt: skip
            time.sleep(max(0.0, started + delay - time.monotonic()))
            proc.send_signal(signal.SIGKILL)
            figures["signals_sent"] += 1
        for name, proc in procs:
            code = proc.wait(60)
            out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
            if name in sure:
                assert code == -signal.SIGKILL, (name, code, err)  # a crash point always lands
            if code == 0:
                assert (out, err) == (b"", b""), (name, out, err)
                ok.add(name)
                figures["exited_0"] += 1
            else:
                assert code == -signal.SIGKILL, (name, code, err)
                figures["killed"] += 1
    # One more hook, never killed: it drains whatever the spool still holds.
    n += 1
    last = run_hook("PostToolUse", _write(n, "s0"), env=env)
    assert (last.returncode, last.stdout, last.stderr) == (0, b"", b"")
    ok.add(f"w{n}.py")

    _assert_healthy(root)
    counts = _written(root)
    _assert_all_accounted(sorted(ok - set(counts)), root, "writes")
    assert sorted(spooled - set(counts)) == [], "spooled events were lost"
    # Each write is one unique event: a duplicate would mean a batch imported twice.
    assert sorted(name for name, count in counts.items() if count > 1) == []
    spool_dir = root / "spool"
    assert not spool_dir.exists() or sorted(os.listdir(spool_dir)) == []
    figures["stored"] = len(counts)
    return figures


def test_sigkill_during_concurrent_writes_loses_nothing_committed(tmp_path: Path, capsys) -> None:
    figures = _kill_rounds(tmp_path, rounds=12, writers=8, seed=1, spooled_every=3)
    with capsys.disabled():
        print(f"\n[crash] default: {figures}")
    # The crash points did land (the random-time kills may or may not, by the machine).
    assert figures["crash_points"] >= 12 and figures["killed"] >= figures["crash_points"]


@pytest.mark.slow
def test_sigkill_soak(request, tmp_path: Path, capsys) -> None:
    seed = random.SystemRandom().randrange(2**32)
    figures = _kill_rounds(
        tmp_path, rounds=150 * SCALE, writers=8, seed=seed, spooled_every=5, timed_kills=True
    )
    with capsys.disabled():
        print(f"\n[crash] soak (seed {seed}): {figures}")
    assert figures["killed"] >= figures["crash_points"] >= 150 * SCALE


CREATION_POINTS = ("create_empty", "create_migrated", "before_commit")


def _creation_kills(tmp_path: Path, iterations: int, seed: int, timed_kills: bool = False) -> int:
    """Kill hooks while they race to create a project's first store.

    Each round starts with a first hook killed at a crash point of its own creation
    (before its store is renamed into place, or before its first commit: a sure kill),
    then 6 hooks race on what it left, two with a creation crash point (each lands if
    that hook is the one that creates); with ``timed_kills`` (the soak) two more are
    SIGKILLed at random times. Returns the kills.
    """
    rng = random.Random(seed)
    kills = 0
    lifetime = 0.0
    if timed_kills:
        # The median life of 6 hooks racing to create a store, undisturbed: kills spread
        # over it.
        env = _env(tmp_path / "warmup")
        warmup = [start_hook("PostToolUse", _write(k, "c"), env) for k in range(6)]
        started = time.monotonic()
        lives = []
        for proc in warmup:
            assert proc.wait(60) == 0
            lives.append(time.monotonic() - started)
        lifetime = sorted(lives)[3]
    for it in range(iterations):
        root = tmp_path / f"root{it}"
        env = _env(root)
        first = start_crashing("PostToolUse", _write(99, "c"), env, CREATION_POINTS[it % 3])
        assert first.wait(60) == -signal.SIGKILL
        kills += 1
        procs = [
            (f"w{k}.py", start_crashing("PostToolUse", _write(k, "c"), env, point))
            for k, point in enumerate(rng.choices(CREATION_POINTS[:2], k=2))
        ]
        procs += [(f"w{k}.py", start_hook("PostToolUse", _write(k, "c"), env)) for k in range(2, 6)]
        if timed_kills:
            started = time.monotonic()
            delays = [(k + rng.random()) / 2 * lifetime for k in range(2)]
            for delay, (_, proc) in zip(delays, rng.sample(procs[2:], 2), strict=True):
                time.sleep(max(0.0, started + delay - time.monotonic()))
                proc.send_signal(signal.SIGKILL)
        ok = set()
        for name, proc in procs:
            code = proc.wait(60)
            if code == 0:
                ok.add(name)
            else:
                kills += 1
        store = _store_path(root)
        if not os.path.exists(store):
            assert ok == set()  # nobody claimed success without a store
            continue
        # A store that exists is complete: the right version, every table there.
        _assert_healthy(root)
        # The next hook works on it (and takes whatever a hook had to spool).
        n = 100 + it
        assert run_hook("PostToolUse", _write(n, "c"), env=env).returncode == 0
        assert f"w{n}.py" in _written(root)
        _assert_all_accounted(sorted(ok - set(_written(root))), root, "creation")
    return kills


def test_sigkill_while_creating_the_store(tmp_path: Path) -> None:
    assert _creation_kills(tmp_path, iterations=9, seed=3) >= 9


@pytest.mark.slow
def test_sigkill_while_creating_the_store_soak(request, tmp_path: Path) -> None:
    seed = random.SystemRandom().randrange(2**32)
    kills = _creation_kills(tmp_path, iterations=100 * SCALE, seed=seed, timed_kills=True)
    assert kills >= 100 * SCALE, seed


def _snapshot_kills(
    root: Path, iterations: int, seed: int, timed_kills: bool = False
) -> dict[str, int]:
    """PreCompact killed, then SessionStart(compact) of the same session.

    Even rounds: at a crash point (before any commit, before its snapshot is saved, just
    after); odd rounds: left alone, or with ``timed_kills`` (the soak) killed at a random
    time spread over an undisturbed PreCompact's life.
    """
    rng = random.Random(seed)
    env = _env(root)
    session = "snap-1"
    base = {"session_id": session, "cwd": PROJECT}
    pre = json.dumps({**base, "hook_event_name": "PreCompact", "trigger": "auto"}).encode()
    start = json.dumps({**base, "hook_event_name": "SessionStart", "source": "compact"}).encode()
    figures = {"precompact_killed": 0, "precompact_completed": 0, "crash_points": 0}
    crash_points = ("before_commit", "snapshot_unsaved", "snapshot_saved")
    # Random-time kill points spread over an undisturbed PreCompact's life (measured on
    # the first odd round), in random order: start-up, reading events, building, commit.
    lifetime = 0.0
    points = [k / iterations for k in range(iterations)]
    rng.shuffle(points)
    for it in range(iterations):
        wrote = run_hook("PostToolUse", _write(it, session), env=env)
        assert wrote.returncode == 0
        if it % 2 == 0:
            proc = start_crashing("PreCompact", pre, env, crash_points[(it // 2) % 3])
            assert proc.wait(60) == -signal.SIGKILL, (it, proc.stderr.read())  # type: ignore[union-attr]
            figures["crash_points"] += 1
        else:
            proc = start_hook("PreCompact", pre, env)
            if timed_kills:
                if lifetime == 0.0:
                    started = time.monotonic()
                    proc.wait(60)
                    lifetime = time.monotonic() - started
                time.sleep(points[it] * lifetime)
                proc.send_signal(signal.SIGKILL)
        code = proc.wait(60)
        figures["precompact_killed" if code else "precompact_completed"] += 1
        result = run_hook("SessionStart", start, env=env)
        assert (result.returncode, result.stderr) == (0, b"")
        document = json.loads(result.stdout)
        context = document["hookSpecificOutput"]["additionalContext"]
        snapshot = ET.fromstring(context)
        # Whole: built from every event recorded so far, whichever process built it.
        assert snapshot.tag == "session_resume"
        assert snapshot.attrib["events"] == str(it + 1)
        with Store.open(_store_path(root), readonly=True) as store:
            rows = store.resumes(session)
        # What was printed is the newest snapshot row, and it is now claimed.
        assert rows[-1]["snapshot"] == context
        assert rows[-1]["consumed_by"] == session
        # Nothing half-written was ever stored, nor left claimable.
        assert [r for r in rows if not r["consumed"]] == []
        for row in rows:
            assert ET.fromstring(row["snapshot"]).tag == "session_resume"
        # A second SessionStart prints nothing: delivered once.
        again = run_hook("SessionStart", start, env=env)
        assert (again.returncode, again.stdout) == (0, b"")
    _assert_healthy(root)
    return figures


def test_killed_precompact_never_leaves_a_half_snapshot(tmp_path: Path, capsys) -> None:
    figures = _snapshot_kills(tmp_path, iterations=10, seed=5)
    with capsys.disabled():
        print(f"\n[crash] snapshots: {figures}")
    assert figures == {"precompact_killed": 5, "precompact_completed": 5, "crash_points": 5}


@pytest.mark.slow
def test_killed_precompact_soak(request, tmp_path: Path, capsys) -> None:
    seed = random.SystemRandom().randrange(2**32)
    figures = _snapshot_kills(tmp_path, iterations=120 * SCALE, seed=seed, timed_kills=True)
    with capsys.disabled():
        print(f"\n[crash] snapshots soak: {figures}")


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _spool_events(root: Path, sessions: dict[str, list[str]]) -> None:
    for session, names in sessions.items():
        events = [make("file_write", {"path": n, "kind": "create"}, source_hook="PostToolUse")
                  for n in names]  # fmt: skip
        spool.put(str(root), _store_path(root), session, events)


def test_spool_claimed_by_a_killed_hook_is_taken_again(tmp_path: Path) -> None:
    """A hook killed after claiming the spool (renamed it) and before storing it."""
    env = _env(tmp_path)
    assert run_hook("PostToolUse", _write(0, "s"), env=env).returncode == 0
    _spool_events(tmp_path, {"a": ["sp1.py", "sp2.py"], "b": ["sp3.py"]})
    live = spool.spool_path(str(tmp_path), _store_path(tmp_path))
    os.rename(live, f"{live}.{_dead_pid()}.taking")  # what the killed hook left
    _spool_events(tmp_path, {"c": ["sp4.py"]})  # and a new live spool beside it

    result = run_hook("PostToolUse", _write(1, "s"), env=env)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert _written(tmp_path) == {f"{n}.py": 1 for n in ("w0", "w1", "sp1", "sp2", "sp3", "sp4")}
    assert os.listdir(os.path.dirname(live)) == []
    with Store.open(_store_path(tmp_path), readonly=True) as store:
        assert {e.session_id for e in store.session_events("a")} == {"a"}
        assert [json.loads(e.data)["path"] for e in store.session_events("b")] == ["sp3.py"]


def test_spool_claimed_by_a_live_hook_is_left_alone(tmp_path: Path) -> None:
    """A claimed spool of a process still at work is its business, not ours."""
    env = _env(tmp_path)
    _spool_events(tmp_path, {"a": ["sp1.py"]})
    live = spool.spool_path(str(tmp_path), _store_path(tmp_path))
    holder = subprocess.Popen(["cat"], stdin=subprocess.PIPE)  # alive until its stdin closes
    try:
        claimed = f"{live}.{holder.pid}.taking"
        os.rename(live, claimed)
        assert run_hook("PostToolUse", _write(1, "s"), env=env).returncode == 0
        assert _written(tmp_path) == {"w1.py": 1}
        assert os.path.exists(claimed)
    finally:
        holder.kill()
        holder.wait()
    # Once its process is gone, the next hook takes it.
    assert run_hook("PostToolUse", _write(2, "s"), env=env).returncode == 0
    assert _written(tmp_path) == {"w1.py": 1, "w2.py": 1, "sp1.py": 1}
    assert not os.path.exists(claimed)


@pytest.mark.parametrize(
    ("point", "own_event_stored"),
    [("spool_claimed", False), ("before_commit", False), ("spool_imported", False),
     ("after_commit", True)],
)  # fmt: skip
def test_sigkill_while_importing_the_spool(
    point: str, own_event_stored: bool, tmp_path: Path
) -> None:
    """Kill the hook that imports a large spool; the next hook still lands every event."""
    env = _env(tmp_path)
    assert run_hook("PostToolUse", _write(0, "s"), env=env).returncode == 0
    names = {f"sess{k}": [f"sp{k}_{j}.py" for j in range(20)] for k in range(30)}
    _spool_events(tmp_path, names)
    proc = start_crashing("PostToolUse", _write(1, "s"), env, point)
    assert proc.wait(60) == -signal.SIGKILL
    result = run_hook("PostToolUse", _write(2, "s"), env=env)
    assert result.returncode == 0
    counts = _written(tmp_path)
    expected = {n for batch in names.values() for n in batch} | {"w0.py", "w2.py"}
    assert sorted(expected - set(counts)) == []
    # Imported once: one transaction, and each spool line's marker is recorded in it.
    assert sorted(name for name, count in counts.items() if count > 1) == []
    assert ("w1.py" in counts) == own_event_stored
    _assert_healthy(tmp_path)
    assert os.listdir(tmp_path / "spool") == []


def test_add_batches_imports_each_marker_once(tmp_path: Path) -> None:
    """The store side of the spool import: all or nothing, and never twice."""
    store = Store.open(str(tmp_path / "s.db"))
    try:
        batch = [
            ("a", [make("file_write", {"path": "a.py", "kind": "create"})], "spool:1"),
            ("b", [make("file_write", {"path": "b.py", "kind": "create"})], "spool:2"),
        ]
        kwargs = {"source_hook": "spool", "project_dir": PROJECT}
        assert store.add_batches(batch, **kwargs) == 2
        assert store.add_batches(batch, **kwargs) == 0  # a re-import of a left-behind file
        later = [("a", [make("file_write", {"path": "c.py", "kind": "create"})], "spool:3")]
        assert store.add_batches(batch + later, **kwargs) == 1
        assert [json.loads(e.data)["path"] for e in store.session_events("a")] == ["a.py", "c.py"]
        # A failure in the middle leaves nothing of the batch behind.
        broken = [("d", [make("file_write", {"path": "d.py", "kind": "create"})], "spool:4"),
                  ("e", [object()], "spool:5")]  # type: ignore[list-item]  # fmt: skip
        with pytest.raises(AttributeError):
            store.add_batches(broken, **kwargs)  # type: ignore[arg-type]
        assert store.session_events("d") == []
        assert store.get_meta("spool:4") is None
        assert store.add_batches(broken[:1], **kwargs) == 1
    finally:
        store.close()
