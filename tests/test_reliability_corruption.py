"""Corruption and odd states: every hook exits 0 silently, nothing valid is lost.

- A damaged store (truncated, garbage, damaged pages, a directory in its place, a
  ``-wal`` without its database) is moved aside as ``<name>.corrupt-<UTC stamp>``
  byte for byte, a fresh store takes the new events, and the incident is recorded
  (``Store.incidents()``; ``ctxmode doctor`` shows it) while ``ctxmode dump`` works.
- A store from a newer ctxmode is left byte-identical and no hook does anything.
- A read-only data root (immutable, or a user without access), a full disk (a small
  tmpfs) and a file-size limit (RLIMIT_FSIZE: SIGXFSZ must not kill the hook): exit 0,
  nothing printed, the store intact, nothing moved aside as "corrupt".
- A torn spool line, a FIFO in place of the config file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmode import paths, spool
from ctxmode.events import make
from ctxmode.migrations import SCHEMA_VERSION
from ctxmode.store import Store
from tests.hooktools import SHIMS, hook_command, hook_env, run_hook, start_hook

PROJECT = "/home/dev/proj"
CORRUPT_NAME = re.compile(r"^repo-[0-9a-f]{16}\.db\.corrupt-\d{8}T\d{6}Z(-\d+)?$")


def _env(root: Path) -> dict[str, str]:
    return hook_env(CTXMODE_HOME=str(root), CLAUDE_PROJECT_DIR=PROJECT)


def _store_path(root: Path) -> Path:
    return Path(paths.store_path(PROJECT, {"CTXMODE_HOME": str(root)}))


def _write(name: str, session: str = "after") -> dict:
    path = f"{PROJECT}/{name}"
    return {
        "session_id": session, "cwd": PROJECT, "hook_event_name": "PostToolUse",
        "tool_name": "Write", "tool_input": {"file_path": path, "content": ""},
        "tool_response": {"type": "create", "filePath": path},
    }  # fmt: skip


def _call(event: str, session: str = "after", **fields: str) -> dict:
    return {"session_id": session, "cwd": PROJECT, "hook_event_name": event, **fields}


# One call of each hook that does not print on a fresh session.
SILENT_CALLS = [
    ("PostToolUse", _write("fresh.py")),
    ("UserPromptSubmit", _call("UserPromptSubmit", prompt="carry on with the parser")),
    ("SessionStart", _call("SessionStart", source="startup")),
    ("PreCompact", _call("PreCompact", trigger="auto")),
    ("PostToolUseFailure", _call("PostToolUseFailure", tool_name="Bash", error="Exit code 1")),
    ("SessionEnd", _call("SessionEnd", reason="other")),
    ("PostCompact", _call("PostCompact", trigger="auto", compact_summary="<summary>s</summary>")),
    ("Stop", _call("Stop", stop_hook_active=False, last_assistant_message="Wrote fresh.py.")),
]


def _populate(root: Path, events: int = 60) -> Path:
    """A real store with a session's events and an unclaimed snapshot in it."""
    path = _store_path(root)
    store = Store.open(str(path))
    try:
        for n in range(events):
            event = make("file_read", {"path": f"src/module_{n:03d}.py" + "x" * 40})
            store.add_events("before", [event], source_hook="PostToolUse", project_dir=PROJECT)
        store.save_resume("before", "<session_resume/>", events, kind="compact")
    finally:
        store.close()
    return path


def _digest(path: Path) -> str:
    if path.is_dir():
        return "dir:" + ",".join(sorted(p.name for p in path.iterdir()))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tree(folder: Path) -> dict[str, str]:
    """Every entry of a folder with its content digest (the lock file aside)."""
    return {p.name: _digest(p) for p in folder.iterdir() if p.name != paths.LOCK_NAME}


def _log_records(root: Path) -> list[str]:
    log = root / "logs" / "ctxmode.log"
    if not log.exists():
        return []
    return [line for line in log.read_text().splitlines() if not line.startswith(" ")]


def _run_silent(root: Path, calls=SILENT_CALLS) -> None:
    env = _env(root)
    for event, payload in calls:
        result = run_hook(event, payload, env=env)
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b""), event


def _dump(root: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "ctxmode", "dump", "--json", "--project", PROJECT],
        capture_output=True, env=hook_env(CTXMODE_HOME=str(root)), timeout=60, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


# ---------------------------------------------------------------- damaged stores


def _truncate_half(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def _truncate_header(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(50)


def _garbage(path: Path) -> None:
    path.write_bytes(bytes(range(256)) * 40)


def _damage_pages(path: Path) -> None:
    # Pages 2-5 overwritten: the header still says "SQLite format 3", the b-trees lie.
    with open(path, "r+b") as handle:
        handle.seek(4096)
        handle.write(b"\xa5" * 4096 * 4)


def _zero_header(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.write(b"\0" * 100)


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "something").write_text("not ours")


DAMAGE = {
    "truncated-half": _truncate_half,
    "truncated-header": _truncate_header,
    "garbage": _garbage,
    "damaged-pages": _damage_pages,
    "zeroed-header": _zero_header,
    "directory": _directory,
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damaged_store_is_moved_aside_and_replaced(kind: str, tmp_path: Path) -> None:
    path = _populate(tmp_path)
    DAMAGE[kind](path)
    damaged = _digest(path)

    _run_silent(tmp_path)

    folder = path.parent
    moved = [p for p in folder.iterdir() if ".corrupt-" in p.name]
    assert [CORRUPT_NAME.match(p.name) is not None for p in moved] == [True]
    assert _digest(moved[0]) == damaged  # moved, not altered: nothing deleted
    with Store.open(str(path)) as store:  # the fresh store
        assert store.integrity_check() == "ok"
        assert store.schema_version() == SCHEMA_VERSION
        assert [e.type for e in store.session_events("after")][:1] == ["file_write"]
        assert store.session_events("before") == []
        [(key, text)] = store.incidents()
    assert key.startswith("incident:") and moved[0].name in text
    document = _dump(tmp_path)
    assert [s["session_id"] for s in document["sessions"]] == ["after"]
    assert [r for r in _log_records(tmp_path) if "\tERROR\t" in r] == []


def test_wal_without_its_database_is_kept_aside(tmp_path: Path) -> None:
    path = _populate(tmp_path)
    wal = Path(f"{path}-wal")
    wal.write_bytes(b"\x37\x7f\x06\x82" + b"\x00" * 4092)  # a WAL header, nothing valid after
    kept = _digest(wal)
    path.unlink()

    _run_silent(tmp_path)

    moved = [p for p in path.parent.iterdir() if ".corrupt-" in p.name]
    assert len(moved) == 1 and moved[0].name.endswith("-wal")
    assert _digest(moved[0]) == kept
    with Store.open(str(path)) as store:
        assert store.integrity_check() == "ok"
        assert "-wal file without its database" in store.incidents()[0][1]


def test_parallel_hooks_on_a_damaged_store_move_it_once_and_lose_nothing(tmp_path: Path) -> None:
    path = _populate(tmp_path)
    _garbage(path)
    env = _env(tmp_path)
    procs = [start_hook("PostToolUse", json.dumps(_write(f"p{k}.py")).encode(), env)
             for k in range(12)]  # fmt: skip
    for proc in procs:
        assert proc.wait(60) == 0
        assert (proc.stdout.read(), proc.stderr.read()) == (b"", b"")  # type: ignore[union-attr]
    assert len([p for p in path.parent.iterdir() if ".corrupt-" in p.name]) == 1
    with Store.open(str(path), readonly=True) as store:
        names = sorted(json.loads(e.data)["path"] for e in store.session_events("after"))
        assert len(store.incidents()) == 1
    assert names == sorted(f"p{k}.py" for k in range(12))


def test_valid_store_with_a_hot_wal_is_never_moved(tmp_path: Path) -> None:
    """A writer killed with its WAL un-checkpointed: the data is recovered, not quarantined."""
    path = _populate(tmp_path)
    script = (
        "import os, sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "conn.execute('PRAGMA wal_autocheckpoint = 0')\n"
        "conn.execute(\"INSERT INTO store_meta VALUES ('hot', 'wal')\")\n"
        "os.kill(os.getpid(), 9)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(path)], check=False)
    assert proc.returncode == -9 and Path(f"{path}-wal").stat().st_size > 0
    _run_silent(tmp_path)
    assert [p for p in path.parent.iterdir() if ".corrupt-" in p.name] == []
    with Store.open(str(path), readonly=True) as store:
        assert store.get_meta("hot") == "wal"
        assert len(store.session_events("before")) == 60


# ---------------------------------------------------------------- a newer store


def test_store_of_a_newer_version_is_left_byte_identical(tmp_path: Path) -> None:
    path = _populate(tmp_path)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = _tree(path.parent)
    assert set(before) == {path.name}  # checkpointed, no side files

    calls = [*SILENT_CALLS, ("SessionStart", _call("SessionStart", "before", source="compact")),
             ("UserPromptSubmit", _call("UserPromptSubmit", "before", prompt="go on")),
             ("SessionStart", _call("SessionStart", "new", source="resume"))]  # fmt: skip
    _run_silent(tmp_path, calls)

    assert _tree(path.parent) == before
    records = _log_records(tmp_path)
    assert records and all("newer" in r for r in records), records
    # The CLI says why it cannot read it, and changes nothing either.
    out = subprocess.run(
        [sys.executable, "-m", "ctxmode", "dump", "--json", "--project", PROJECT],
        capture_output=True, env=hook_env(CTXMODE_HOME=str(tmp_path)), timeout=60, check=False,
    )  # fmt: skip
    assert out.returncode != 0 and b"newer" in out.stderr
    assert _tree(path.parent) == before


# ---------------------------------------------------------------- read-only, full disk


def _chattr(flag: str, target: Path) -> bool:
    if shutil.which("chattr") is None:
        return False
    done = subprocess.run(["chattr", "-R", flag, str(target)], capture_output=True, check=False)
    return done.returncode == 0


def _as_nobody() -> list[str]:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run a hook as another user")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.parametrize("how", ["immutable", "nobody-no-access", "nobody-read-only"])
def test_read_only_data_root(how: str, tmp_path: Path) -> None:
    root = tmp_path / "data"
    env = _env(root)
    _ok = run_hook("PostToolUse", _write("first.py"), env=env)
    assert _ok.returncode == 0
    path = _store_path(root)
    before = _tree(path.parent)
    prefix: list[str] = []
    if how == "immutable":
        if not _chattr("+i", root):
            pytest.skip("chattr +i is not available here (needs root and ext2/3/4-like fs)")
    else:
        prefix = _as_nobody()
        for folder in (tmp_path, root, *root.rglob("*")):
            folder.chmod(0o755 if folder.is_dir() else 0o644)
        if how == "nobody-no-access":
            root.chmod(0o700)
    try:
        for event, payload in SILENT_CALLS:
            result = subprocess.run(
                [*prefix, *hook_command(event)], input=json.dumps(payload).encode(),
                capture_output=True, env=env, timeout=30, check=False,
            )  # fmt: skip
            assert (result.returncode, result.stdout, result.stderr) == (0, b"", b""), event
    finally:
        if how == "immutable":
            _chattr("-i", root)
    assert _tree(path.parent) == before  # not written, not "repaired", not moved
    # Writable again: the next hook records as if nothing happened.
    root.chmod(0o700)
    assert run_hook("PostToolUse", _write("later.py"), env=env).returncode == 0
    with Store.open(str(path), readonly=True) as store:
        names = [json.loads(e.data)["path"] for e in store.session_events("after")]
    assert names == ["first.py", "later.py"]


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 2 MiB tmpfs (root only; skipped where mounting is not allowed)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root to mount a small tmpfs")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(mount)],
                          capture_output=True, check=False)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    with open(filler, "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError:
            pass
    return filler


def test_full_disk(small_disk: Path) -> None:
    root = small_disk / "data"
    env = _env(root)
    for k in range(5):
        assert run_hook("PostToolUse", _write(f"ok{k}.py"), env=env).returncode == 0
    filler = _fill(small_disk)
    big = "x" * 3000
    calls = [("PostToolUse", _write(f"{big}-{k}.py")) for k in range(5)] + [
        (e, p) for e, p in SILENT_CALLS if e != "SessionStart"
    ]
    for event, payload in calls:
        result = run_hook(event, payload, env=env)
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b""), event
    start = run_hook("SessionStart", _call("SessionStart", source="compact"), env=env)
    assert (start.returncode, start.stderr) == (0, b"")
    # A full disk is not corruption: nothing moved aside, the store intact.
    path = _store_path(root)
    assert [p for p in path.parent.iterdir() if ".corrupt-" in p.name] == []
    filler.unlink()
    assert run_hook("PostToolUse", _write("after-space.py"), env=env).returncode == 0
    with Store.open(str(path)) as store:
        assert store.integrity_check() == "ok"
        names = [json.loads(e.data)["path"] for e in store.session_events("after")]
    assert names[:5] == [f"ok{k}.py" for k in range(5)]
    assert names[-1] == "after-space.py"


def test_file_size_limit_does_not_kill_the_hook(tmp_path: Path) -> None:
    """RLIMIT_FSIZE: writes fail with EFBIG; SIGXFSZ (default: kill) must not end the hook."""
    env = _env(tmp_path)
    assert run_hook("PostToolUse", _write("ok.py"), env=env).returncode == 0
    limit = _store_path(tmp_path).stat().st_size + 2048

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    for k in range(4):
        payload = json.dumps(_write("y" * 3000 + f"{k}.py")).encode()
        result = subprocess.run(hook_command("PostToolUse"), input=payload, capture_output=True,
                                env=env, preexec_fn=small_files, timeout=30, check=False)  # fmt: skip
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    path = _store_path(tmp_path)
    assert [p for p in path.parent.iterdir() if ".corrupt-" in p.name] == []
    with Store.open(str(path)) as store:
        assert store.integrity_check() == "ok"
        assert next(json.loads(e.data)["path"] for e in store.session_events("after")) == "ok.py"


# ---------------------------------------------------------------- other odd states


def test_torn_spool_line_is_skipped_and_the_rest_lands(tmp_path: Path) -> None:
    env = _env(tmp_path)
    assert run_hook("PostToolUse", _write("a.py"), env=env).returncode == 0
    store = str(_store_path(tmp_path))
    first = make(
        "file_write", {"path": "spooled-1.py", "kind": "create"}, source_hook="PostToolUse"
    )
    second = make(
        "file_write", {"path": "spooled-2.py", "kind": "create"}, source_hook="PostToolUse"
    )
    spool.put(str(tmp_path), store, "after", [first])
    live = Path(spool.spool_path(str(tmp_path), store))
    with open(live, "ab") as handle:  # a write cut short (a full disk, a kill)
        handle.write(b'{"session_id": "after", "events": [{"type": "file_write", "data": "{\\"pa')
    spool.put(str(tmp_path), store, "after", [second])

    result = run_hook("PostToolUse", _write("b.py"), env=env)  # a real process: no json package
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    with Store.open(store, readonly=True) as opened:
        names = [json.loads(e.data)["path"] for e in opened.session_events("after")]
    assert names == ["a.py", "spooled-1.py", "spooled-2.py", "b.py"]
    assert os.listdir(live.parent) == []
    assert [r for r in _log_records(tmp_path) if "\tERROR\t" in r] == []


def test_fifo_in_place_of_the_config_file_cannot_hold_a_hook(tmp_path: Path) -> None:
    """A FIFO where the config file should be is skipped (not read): the hook records."""
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    os.mkfifo(project / ".claude" / "ctxmode.json")
    root = tmp_path / "data"
    env = hook_env(CTXMODE_HOME=str(root), CLAUDE_PROJECT_DIR=str(project))
    result = run_hook("UserPromptSubmit", {**_call("UserPromptSubmit", prompt="hi there"),
                                           "cwd": str(project)}, env=env)  # fmt: skip
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    # Not held until the deadline: the watchdog would have logged it.
    assert not any("deadline" in r for r in _log_records(root))
    with Store.open(paths.store_path(str(project), env), readonly=True) as store:
        texts = [
            json.loads(e.data).get("text")
            for s in store.sessions()
            for e in store.session_events(s["session_id"])
        ]
    assert "hi there" in texts


def test_malformed_config_file_does_not_stop_recording(tmp_path: Path) -> None:
    """A half-saved config file: the defaults apply, the hook still records."""
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "ctxmode.json").write_text('{"snapshot_budget": 4096, "redact')
    root = tmp_path / "data"
    env = hook_env(CTXMODE_HOME=str(root), CLAUDE_PROJECT_DIR=str(project))
    payload = {**_write("kept.py"), "cwd": str(project)}
    payload["tool_input"]["file_path"] = str(project / "kept.py")
    assert run_hook("PostToolUse", payload, env=env).returncode == 0
    with Store.open(paths.store_path(str(project), env), readonly=True) as store:
        assert [json.loads(e.data)["path"] for e in store.session_events("after")] == ["kept.py"]


def test_every_hook_script_survives_a_missing_data_root(tmp_path: Path) -> None:
    """A data root that does not exist yet is made, private, on first use."""
    root = tmp_path / "not" / "yet"
    _run_silent(root)
    for folder in (root, root / "sessions"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert set(SHIMS) == {event for event, _ in SILENT_CALLS}
