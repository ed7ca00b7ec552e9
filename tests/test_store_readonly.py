"""The reading commands work where the data root is readable but not writable.

A lookup the snapshot hands the model runs in the client's sandbox (Claude Code's
sandboxed Bash, Codex's workspace-write and read-only sandboxes): the data root can be
read, not written. SQLite opens a WAL store read-only only while its -wal and -shm exist
(or can be made), so each state of the store is tried: right after a hook wrote (another
connection kept -wal/-shm), idle (the last close removed them), and while a hook is
writing (an open write transaction). The folder is really read-only (a read-only bind
mount, see tests/readonly.py): as root, chmod would not stop a write.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxmode import paths
from ctxmode.events import make
from ctxmode.migrations import _sqlite3
from ctxmode.store import Store
from tests.helpers import hook_payload, make_project, tool_payload
from tests.hooktools import hook_env, run_hook
from tests.readonly import readonly_argv

SESSION = "5e551011-0000-4000-8000-00000000c0de"
DETAIL = "KeyError: 'VAT_RATE_DE missing from rates.toml'"
LATE = "LATE_COMMITTED_NEEDLE"
UNCOMMITTED = "UNCOMMITTED_NEEDLE"


@pytest.fixture
def recorded(tmp_path: Path, data_root: Path) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    """A project whose store the real hooks wrote (a failure, a compaction), then idle."""
    project = make_project(tmp_path, "shop")
    env = hook_env(CTXMODE_HOME=str(data_root), CLAUDE_PROJECT_DIR=str(project))
    calls = [
        (
            "SessionStart",
            hook_payload("SessionStart", session_id=SESSION, cwd=str(project), source="startup"),
        ),
        (
            "UserPromptSubmit",
            hook_payload(
                "UserPromptSubmit",
                session_id=SESSION,
                cwd=str(project),
                prompt="Fix the German rate",
            ),
        ),
        (
            "PostToolUseFailure",
            tool_payload(
                "Bash",
                {"command": "python -m app", "description": "Run"},
                event="PostToolUseFailure",
                session_id=SESSION,
                cwd=str(project),
                error=f"Exit code 1\nTraceback (most recent call last):\n{DETAIL}",
                is_interrupt=False,
            ),
        ),
        (
            "PreCompact",
            hook_payload(
                "PreCompact",
                session_id=SESSION,
                cwd=str(project),
                trigger="manual",
                custom_instructions=None,
            ),
        ),
    ]
    for event, payload in calls:
        done = run_hook(event, payload, env=env)
        assert done.returncode == 0 and done.stderr == b"", (event, done.stderr)
    store = Path(paths.store_path(str(project), env))
    assert store.is_file()
    yield project, store, env


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "ctxmode", *args]


def _readonly_run(
    data_root: Path, argv: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    # /tmp and /var/tmp too: a sandbox may leave SQLite no temp folder (temp_store).
    wrapped = readonly_argv(
        [data_root, *(p for p in map(Path, ("/tmp", "/var/tmp")) if p.is_dir())], argv
    )
    if wrapped is None:
        pytest.skip("no way to make a folder read-only here (unshare -rm or bwrap)")
    return subprocess.run(
        wrapped, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def _reading_commands(project: Path, needle: str) -> dict[str, list[str]]:
    p = ["--project", str(project)]
    return {
        "search": _cli("search", *p, needle),
        "search --json": _cli("search", *p, "--json", needle),
        "dump": _cli("dump", "--json", *p),
        "sessions": _cli("sessions", *p),
        "stats": _cli("stats", "--json", *p),
        "show-snapshot": _cli("show-snapshot", *p),
    }


def _files(store: Path) -> dict[str, tuple[int, int]]:
    folder = store.parent
    return {
        name: (os.stat(folder / name).st_size, os.stat(folder / name).st_mtime_ns)
        for name in sorted(os.listdir(folder))
    }


def _check_all(
    project: Path, store: Path, env: dict[str, str], data_root: Path, *, needle: str = "VAT_RATE_DE"
) -> None:
    # The model's Claude Code session counts its searches: that write is lost, not the read.
    env = {**env, "CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": SESSION}
    for name, argv in _reading_commands(project, needle).items():
        done = _readonly_run(data_root, argv, env)
        assert done.returncode == 0, (name, done.stdout[-800:], done.stderr[-800:])
        assert done.stderr == "", (name, done.stderr)
        if name.startswith(("search", "dump")):
            text = done.stdout if name == "search" else json.dumps(json.loads(done.stdout))
            assert needle in text, (name, done.stdout[-1500:])
        if name == "dump":
            assert UNCOMMITTED not in done.stdout, "an uncommitted event was read"


def test_every_state_of_the_store_is_read_in_a_read_only_folder(
    recorded: tuple[Path, Path, dict[str, str]], data_root: Path
) -> None:
    project, store, env = recorded

    # 1. Idle: the last close removed -wal/-shm; a read-only folder cannot get them.
    assert not os.path.exists(f"{store}-wal") and not os.path.exists(f"{store}-shm")
    before = _files(store)
    _check_all(project, store, env, data_root)
    assert _files(store) == before  # nothing written, nothing left behind

    # 2. Right after a hook wrote: a connection that stays open (the status line, a long
    # hook) keeps -wal/-shm, and the late event is only in the -wal.
    keeper = _sqlite3.connect(str(store), isolation_level=None)
    try:
        keeper.execute("SELECT count(*) FROM sqlite_master").fetchone()
        with Store.open(str(store)) as writer:
            writer.add_events(
                SESSION,
                [make("tool_error", {"tool": "Bash", "key": "late", "error": f"KeyError: {LATE}"})],
                source_hook="PostToolUseFailure",
                project_dir=str(project),
            )
        assert os.path.getsize(f"{store}-wal") > 0 and os.path.exists(f"{store}-shm")
        _check_all(project, store, env, data_root, needle=LATE)
    finally:
        keeper.close()

    # 3. While a hook is writing: its transaction is open. The readers see what is
    # committed, not what is not, and take no lock the writer needs to commit.
    writer_conn = _sqlite3.connect(str(store), isolation_level=None)
    try:
        writer_conn.execute("BEGIN IMMEDIATE")
        writer_conn.execute(
            "INSERT INTO store_meta (key, value) VALUES (?, ?)", ("probe", UNCOMMITTED)
        )
        _check_all(project, store, env, data_root, needle=LATE)
        writer_conn.execute("COMMIT")
    finally:
        writer_conn.close()
    with Store.open(str(store)) as check:
        assert check.get_meta("probe") == UNCOMMITTED
        assert check.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    # 4. A state that cannot be read safely: a -wal with content but no -shm, in a folder
    # where none can be made. One Error: line, exit 1, never a traceback.
    keeper = _sqlite3.connect(str(store), isolation_level=None)
    try:
        keeper.execute("INSERT INTO store_meta (key, value) VALUES ('k', 'v')")
        os.unlink(f"{store}-shm")
        done = _readonly_run(data_root, _cli("search", "--project", str(project), "x"), env)
    finally:
        keeper.close()
    assert done.returncode == 1, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    assert "Traceback" not in done.stderr


def test_the_main_file_is_read_in_place_only_when_it_is_the_whole_store(
    recorded: tuple[Path, Path, dict[str, str]],
) -> None:
    from ctxmode.store import connection

    _project, store, _env = recorded
    pin = connection._Pin.take(str(store))
    assert pin is not None and pin.intact()
    pin.release()
    keeper = _sqlite3.connect(str(store), isolation_level=None)
    try:
        keeper.execute("INSERT INTO store_meta (key, value) VALUES ('k', 'v')")
        assert connection._Pin.take(str(store)) is None  # committed rows are in the -wal
    finally:
        keeper.close()
    pin = connection._Pin.take(str(store))
    assert pin is not None
    in_place = connection._in_place(str(store), 1000)
    try:
        assert in_place.execute("SELECT value FROM store_meta WHERE key = 'k'").fetchone() == ("v",)
        with pytest.raises(_sqlite3.Error):  # query-only: a write fails, never vanishes
            in_place.execute("INSERT INTO store_meta (key, value) VALUES ('x', 'y')")
        # Sorts and temporary indexes stay in memory: a sandbox may have no temp folder.
        assert in_place.execute("PRAGMA temp_store").fetchone() == (2,)
        with Store.open(str(store), readonly=True, tidy=True) as reader:
            assert reader.conn.execute("PRAGMA temp_store").fetchone() == (2,)
        # Reading in place makes nothing beside the store: no -wal, no -shm, no journal.
        assert sorted(p.name for p in store.parent.iterdir() if p.name.startswith(store.name)) == [
            store.name
        ]
    finally:
        connection._close_read(in_place, pin)


def test_a_call_that_read_while_the_file_changed_runs_again(
    recorded: tuple[Path, Path, dict[str, str]],
) -> None:
    """A store read in place is checked after each call: a writer that came by while it
    read (its -wal, a checkpoint into the main file) makes the call run again on a fresh
    read, which then sees what was committed."""
    from ctxmode.store import connection

    _project, store, _env = recorded
    reader = Store.open(str(store), readonly=True)
    calls: list[int] = []
    try:
        # Make this reader one that reads in place, as in a read-only folder.
        reader.conn.close()
        reader._pin = connection._Pin.take(str(store))
        reader.conn = connection._in_place(str(store), 1000)
        assert reader._pin is not None

        def read_then_write(conn: _sqlite3.Connection) -> str | None:
            calls.append(1)
            row = conn.execute("SELECT value FROM store_meta WHERE key = 'late'").fetchone()
            if len(calls) == 1:  # a hook commits while this call reads
                with Store.open(str(store)) as writer:
                    writer.set_meta("late", LATE)
            return None if row is None else str(row[0])

        assert reader.reading(read_then_write) == LATE
        assert len(calls) == 2
    finally:
        reader.close()


def test_while_the_main_file_is_read_no_closing_writer_rewrites_it(
    recorded: tuple[Path, Path, dict[str, str]],
) -> None:
    """The reader holds SQLite's SHARED lock: a hook that writes and exits meanwhile cannot
    checkpoint into the main file and delete its -wal (that needs EXCLUSIVE, which it
    does not wait for), so the main file stays as read; and a connection that holds
    EXCLUSIVE (a final checkpoint under way) makes the reader retry instead."""
    from ctxmode.store import connection

    project, store, env = recorded
    main_before = store.read_bytes()
    with open(store, "rb") as handle:
        assert connection._shared_lock(handle.fileno())
        payload = hook_payload(
            "UserPromptSubmit", session_id=SESSION, cwd=str(project), prompt=f"note {LATE}"
        )
        done = run_hook("UserPromptSubmit", payload, env=env)
        assert done.returncode == 0 and done.stderr == b""
        assert os.path.getsize(f"{store}-wal") > 0  # the writer left it: it could not delete
        assert store.read_bytes() == main_before
    with Store.open(str(store)) as check:  # everything is there, and sound
        assert LATE in json.dumps(check.session_events(SESSION), default=str)
        assert check.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys\n"
            f"f = open({str(store)!r}, 'r+b')\n"
            f"fcntl.lockf(f.fileno(), fcntl.LOCK_EX, {connection._SHARED_SIZE}, "
            f"{connection._SHARED_FIRST})\n"
            "print('locked', flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        assert not os.path.exists(f"{store}-wal")  # the check above closed last
        assert connection._Pin.take(str(store)) is None
    finally:
        holder.communicate("", timeout=30)
    pin = connection._Pin.take(str(store))
    assert pin is not None
    pin.release()


def _unprivileged() -> list[str]:
    """The prefix that runs a command as a user whom a folder's mode binds (root is not)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv to run a command as another user than root")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def test_a_data_root_of_mode_0500_is_read_by_every_reading_command() -> None:
    """Issue 30: a data root readable but not writable by its own user (``chmod 500``,
    no mount, no sandbox): SQLite opens the store but cannot make its -wal/-shm and says
    "attempt to write a readonly database"; every reading command reads it all the same,
    writes nothing and leaves nothing behind."""
    prefix = _unprivileged()
    base = Path(tempfile.mkdtemp(prefix="ctxmode-0500-"))
    try:
        base.chmod(0o755)
        project = make_project(base, "shop")
        root = base / "root"
        out = base / "out"
        out.mkdir()
        env = hook_env(CTXMODE_HOME=str(root), CLAUDE_PROJECT_DIR=str(project))
        for event, payload in (
            ("UserPromptSubmit", hook_payload("UserPromptSubmit", session_id=SESSION,
                                              cwd=str(project), prompt="Fix the German rate")),
            ("PostToolUseFailure", tool_payload(
                "Bash", {"command": "python -m app"}, event="PostToolUseFailure",
                session_id=SESSION, cwd=str(project), error=f"Exit code 1\n{DETAIL}",
                is_interrupt=False)),
            ("PreCompact", hook_payload("PreCompact", session_id=SESSION, cwd=str(project),
                                        trigger="manual", custom_instructions=None)),
        ):  # fmt: skip
            assert run_hook(event, payload, env=env).returncode == 0
        store = Path(paths.store_path(str(project), env))
        assert store.is_file() and not Path(f"{store}-wal").exists()
        if prefix:
            for path in (base, *base.rglob("*")):
                os.chown(path, 65534, 65534)
        for folder in (root, *(p for p in root.rglob("*") if p.is_dir())):
            folder.chmod(0o500)
        before = _files(store)
        run_env = {**env, "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
                   "HOME": str(base), "TMPDIR": str(out)}  # fmt: skip
        commands = {
            **_reading_commands(project, "VAT_RATE_DE"),
            "view": _cli("view", "--project", str(project), "--output", str(out / "v.html")),
        }
        for name, argv in commands.items():
            done = subprocess.run(
                [*prefix, *argv],
                env=run_env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert (done.returncode, done.stderr) == (0, ""), (name, done.stderr[-800:])
            if name.startswith(("search", "dump")):
                assert "VAT_RATE_DE" in done.stdout, (name, done.stdout[-800:])
        assert "VAT_RATE_DE" in (out / "v.html").read_text()
        assert _files(store) == before  # nothing written, nothing left behind
    finally:
        for folder in (base, *base.rglob("*")):
            if folder.is_dir():
                folder.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
