"""The hook harness: the only code that touches stdin, stdout and the exit status.

Claude Code runs one short process per hook call. Whatever happens in here — empty
or hostile input, a 50 MB payload, a locked, corrupt or missing store, a full disk —
the process exits 0, prints exactly its contract (one JSON object for SessionStart /
UserPromptSubmit, or nothing) and nothing on stderr. Failures go to the bounded log.

``run_hook`` is the testable core (streams and environment injected, returns the
bytes to print); ``main`` wires it to the real process and leaves with ``os._exit``
so no interpreter teardown (or a broken pipe at flush time) can change the status.
"""

from __future__ import annotations

import os
import sys
import time

# hooklog is imported where a message is written: a hook that succeeds writes none, and
# the import costs ~0.2 ms per process (bench: ctxmode bench).
from ctxmode import hosts, paths, payload
from ctxmode.context import Context as Context  # re-exported: tests and older callers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import BinaryIO, NoReturn

# Our own deadlines, well inside the timeouts ``ctxmode install`` registers
# (10 s for tool and prompt hooks, 30 s for PreCompact/SessionStart, 5 s SessionEnd;
# Claude Code 2.1.197 gives SessionEnd hooks the largest registered SessionEnd timeout,
# at least 1.5 s: 5 s with ours, unless CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS says).
DEADLINES = {
    "PostToolUse": 4.0,
    "PostToolUseFailure": 4.0,
    "UserPromptSubmit": 4.0,
    "Stop": 4.0,
    "PreCompact": 15.0,
    "SessionStart": 15.0,
    "SessionEnd": 1.2,
    # Gemini's, before every model request: ~nothing to do, but the first request after a
    # compression builds the snapshot (as PreCompact would); registered with 20 s.
    "BeforeModel": 10.0,
}
DEFAULT_DEADLINE = 4.0

# Store errors that describe a state to report, not a bug to trace (ctxmode.store's
# exception names; matched by name so the harness need not import the store).
EXPECTED_STATES = {
    "StoreLocked": "store locked longer than the busy timeout; this call was not recorded",
    "StoreTooNew": "store written by a newer ctxmode; left untouched, nothing recorded",
}

# Bytes of an oversized payload kept for salvaging its leading fields.
SALVAGE_HEAD = 64 * 1024
READ_CHUNK = 1024 * 1024


def call_stamp(one_call: bool = False) -> tuple[int, bool]:
    """When the client started this hook call: ``(ns since the epoch, exact)``, the call's
    place in the session (background captures finish in any order; the store reads their
    events in this one).

    The time the client spawned the process is the start of our process group's leader
    when the client gave the call a group of its own: under load, a hook can take tens of
    ms to reach its first line, more than the time between two calls, so a clock read
    here would misorder them. :func:`spawn_stamp` turns what the kernel recorded of that
    leader into the call's place; no clock is read.

    Whether the group is the call's own is decided exactly, never by its age: this
    process runs this one call (``one_call``: the hook shim's process, not the in-process
    core a test or a script drives), and the group's leader is this process or its
    parent, a shell run with ``-c`` (the ``sh -c`` the client spawned for the hook's
    command). A group that many calls share (a replay script, a test runner, a host that
    starts no group) would give them all the same start. Otherwise, or without /proc:
    ``(our clock, False)``, and the store gives the call the next place of the session's
    own sequence (``Store.add_events`` with ``call_at=None``): the order of arrival, which
    is the calls' order for whoever runs them one after the other.
    """
    if not one_call:
        return time.time_ns(), False
    try:
        pid, group = os.getpid(), os.getpgid(0)
        if group != pid and (group != os.getppid() or not _shell_c(group)):
            return time.time_ns(), False
        with open(f"/proc/{group}/stat", "rb") as fh:
            ticks = int(fh.read().rsplit(b")", 1)[1].split()[19])
        booted = _boot_time()
        hz = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):  # (no getpgid: Windows)
        return time.time_ns(), False
    return spawn_stamp(booted, ticks, group, hz), True


# Pids are below 2**22 (the kernel's PID_MAX_LIMIT): a leader's pid scaled by this span
# places it within its clock tick.
PID_SPAN = 1 << 22


def spawn_stamp(booted: int, ticks: int, leader: int, hz: int) -> int:
    """The place of a call whose group ``leader`` the kernel started ``ticks`` clock ticks
    (1/``hz`` s) after it booted at ``booted`` (s since the epoch), in ns since the epoch.

    Made of what the kernel recorded alone, so a call has one place however late and
    however interrupted its hook computes it. (Clock reads could not give that: the boot
    clock's start on the epoch, read as realtime minus boottime, came out as much too
    early as the hook was preempted between the two reads, before the call that came
    before it; and read by two processes it differs by a few hundred ns, more than
    orders two calls within one tick.) The ticks order calls started in different
    ticks; within one tick (10 ms: a parallel batch, or two calls close together) the
    leader's pid does: the kernel numbers processes in the order it creates them. The
    kernel's boot time is whole seconds: places are up to a second before the wall
    clock's time of the call, the same second for every call of one boot.
    """
    tick = 1_000_000_000 // hz
    return booted * 1_000_000_000 + ticks * tick + leader % PID_SPAN * tick // PID_SPAN


def _boot_time() -> int:
    """When the kernel booted, in s since the epoch (``btime`` in /proc/stat)."""
    with open("/proc/stat", "rb") as fh:
        data = fh.read()
    at = data.index(b"\nbtime ") + 7
    return int(data[at : data.index(b"\n", at)])


# The shells a client runs a hook's command with (``sh -c``; Codex: ``bash -lc``).
_SHELLS = frozenset((b"sh", b"bash", b"dash", b"zsh", b"ash", b"ksh", b"mksh", b"busybox"))


def _shell_c(pid: int) -> bool:
    """Whether process ``pid`` is a shell running a command string (``sh -c '…'``)."""
    with open(f"/proc/{pid}/cmdline", "rb") as fh:
        argv = fh.read(4096).split(b"\0")
    name = argv[0].rsplit(b"/", 1)[-1].lstrip(b"-")
    if name not in _SHELLS:
        return False
    for arg in argv[1:-1]:
        if not arg.startswith(b"-") or arg.startswith(b"--"):
            return False  # a script's name: `bash replay.sh` runs many calls
        if b"c" in arg:
            return True
    return False


def disabled(env: Mapping[str, str]) -> bool:
    return env.get("CTXMODE_DISABLE", "").strip().lower() in ("1", "true", "yes", "on")


def read_input(stream: BinaryIO, limit: int = payload.MAX_PARSE_BYTES) -> tuple[bytes, int]:
    """Read stdin up to ``limit``; past it keep only the head and drain the rest.

    Returns (data, total bytes read): ``total > len(data)`` means oversized, only the
    head was kept. Draining (not keeping) the tail keeps memory bounded and lets the
    client finish writing its pipe.
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = stream.read(READ_CHUNK)
        if not chunk:
            data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
            return data, size
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            head = chunks[0][:SALVAGE_HEAD]
            chunks.clear()
            while True:
                rest = stream.read(READ_CHUNK)
                if not rest:
                    return head, size
                size += len(rest)


def _start_watchdog(seconds: float, event: str, log_dir: str, output_lock: object) -> None:
    """Leave (exit 0, nothing printed) if the hook is still running after ``seconds``.

    A signal handler cannot interrupt SQLite while it sleeps in its busy handler, so a
    thread does it. SQLite's journal makes a transaction cut short by the exit vanish
    whole: nothing half-written.
    """
    import _thread

    def watchdog() -> None:
        time.sleep(seconds)
        output_lock.acquire()  # type: ignore[attr-defined]  # never cut a write of stdout
        from ctxmode import hooklog

        hooklog.write(log_dir, "ERROR", event, f"deadline of {seconds:.1f}s exceeded; gave up")
        os._exit(0)

    _thread.start_new_thread(watchdog, ())


def run_hook(
    event: str,
    stdin: BinaryIO,
    env: Mapping[str, str],
    *,
    output_lock: object | None = None,
    watchdog: bool = False,
    host: str | None = None,
    background: bool = False,
    one_call: bool = False,
) -> bytes:
    """Run one hook call; return the exact bytes to print (possibly empty). Never raises.

    ``host`` names the client (``ctxmode.hosts``; None: Claude Code): it parses the
    input and shapes the output, the rest is the same for every client. ``one_call``:
    this process was started for this call alone (the shim's ``main``), so its process
    group may say when the client started it (:func:`call_stamp`).
    """
    root = ""
    marker = None
    try:
        if disabled(env):
            return b""
        client = hosts.get(host)
        root = paths.data_root(env)
        if paths.root_problem(root):
            # A root that is a link, someone else's, or not ours alone is not used —
            # not even for the log: skip in silence; `ctxmode doctor` says why.
            root = ""
            return b""
        exact = [False]

        def stamp() -> int:
            at, exact[0] = call_stamp(one_call)
            return at

        if background:
            from ctxmode import inflight

            # Held while this capture runs: PreCompact, SessionEnd and the captures of
            # later calls wait for it. Made before the payload is read, so that no
            # capture started later can look and miss it (ctxmode.inflight).
            marker = inflight.enter(root, stamp)
        # The call's place in the session: background captures finish in any order;
        # the store keeps and reads their events in the order the calls started.
        call_at = marker.call_at if marker is not None else stamp()
        limits = getattr(client, "INPUT_LIMITS", None)
        data, size = read_input(
            stdin, limits.get(event, payload.MAX_PARSE_BYTES) if limits else payload.MAX_PARSE_BYTES
        )
        oversized = size > len(data)
        inp = client.salvage(data, event) if oversized else client.parse(data, event)
        del data  # the parsed payload is all we need from here on: free the bytes
        inp.size = size
        # The folder the session names (its config, ignore file, and the base of the
        # relative paths in events), as before; the store is the repository's, one for
        # all its worktrees (paths.identify): the CLI finds the same one.
        # A host whose CLAUDE_PROJECT_DIR names no project (Gemini sets it to the folder it
        # started in) leaves the project to the payload's cwd, climbed to its repository.
        where_env = env if getattr(client, "PROJECT_FROM_ENV", True) else {}
        inp.project_dir = paths.project_dir(inp.cwd or os.getcwd(), where_env)
        identity = paths.identify(inp.cwd, where_env)
        if os.path.exists(os.path.join(inp.project_dir, ".ctxmode-ignore")):
            return b""
        deadline = DEADLINES.get(event, DEFAULT_DEADLINE)
        store_path = paths.store_file(root, identity.project)
        if not os.path.exists(store_path):
            # Rare: the repository's first hook. Its stores of older versions (per
            # folder, per worktree, a moved checkout's) merge into it first.
            from ctxmode.store.merge import ensure_store

            ensure_store(store_path, identity, root)
        if paths.private_problem(store_path) or paths.private_problem(
            paths.spool_file(root, store_path)
        ):
            root = ""
            return b""
        ctx = Context(env, root, store_path, deadline, identity, client.NAME)
        ctx.call_at, ctx.call_exact, ctx.background = call_at, exact[0], background
        if marker is not None:
            marker.claim(inp.session_id)
        if watchdog and output_lock is not None:
            _start_watchdog(deadline, event, ctx.log_dir, output_lock)

        # A client that reports tool outcomes late (Codex: in its rollout file) hands
        # them over with the input; how far it read is saved once they are handled.
        late = getattr(client, "late", None)
        saved = None
        if late is not None:
            inp.late, saved = late(inp, root)
        # A client whose Stop payload has the turn's reply only (Claude Code) gives what
        # the agent wrote before it in the turn from its transcript (masked with the rest).
        notes_of = getattr(client, "turn_notes", None)
        if notes_of is not None and event == "Stop" and not inp.turn_notes:
            inp.turn_notes = notes_of(inp)
            inp.raw["turn_notes"] = inp.turn_notes

        from ctxmode import handlers

        text = handlers.handle(inp, ctx)
        if saved is not None:
            saved(handlers.scrub_known(inp, ctx))
        if marker is not None and inflight.stopping():
            # The client is ending and will run no SessionEnd (inflight.stopping): this
            # capture, still holding its marker, takes the end snapshot.
            handlers.on_client_ending(inp, ctx)
        if not text:
            return b""
        # A host whose output depends on the input (Gemini's BeforeModel rewrites the
        # request it was given) says so with output_for.
        output_for = getattr(client, "output_for", None)
        out: bytes = output_for(inp, text) if output_for is not None else client.output(event, text)
        return out
    except payload.PayloadError as exc:
        # Not ours to judge the client: note it briefly and carry on.
        if root:
            from ctxmode import hooklog

            hooklog.write(os.path.join(root, "logs"), "WARN", event, f"input skipped: {exc}")
        return b""
    except BaseException as exc:
        if root:
            from ctxmode import hooklog

            log_dir = os.path.join(root, "logs")
            name = type(exc).__name__
            if name in EXPECTED_STATES:
                # A known state of the store, not a bug: one line, no traceback.
                hooklog.write(log_dir, "WARN", event, f"{EXPECTED_STATES[name]}: {exc}"[:500])
            else:
                hooklog.write(log_dir, "ERROR", event, _describe(exc), _frames(exc))
        return b""
    finally:
        if marker is not None:
            marker.leave()


# Exceptions whose messages ctxmode writes itself (paths, counts, never payload text).
_OWN_MESSAGES = (
    "StoreError",
    "StoreLocked",
    "StoreTooNew",
    "StoreCorrupt",
    "StoreMissing",
    "PayloadError",
    "JSONDecodeError",
    "SettingsError",
    "ConfigError",
)


def _describe(exc: BaseException) -> str:
    """The exception's type, and its message only when ctxmode wrote that message.

    Other messages can quote the payload (``KeyError('<a prompt>')``), and the log must
    never hold payload content; the frames in the traceback say where it happened.
    """
    name = type(exc).__name__
    if any(cls.__name__ in _OWN_MESSAGES for cls in type(exc).__mro__):
        return f"{name}: {exc}"[:500]
    if isinstance(exc, OSError) and exc.errno is not None:
        import errno

        return f"{name}: [{errno.errorcode.get(exc.errno, exc.errno)}] {exc.strerror}"
    return f"{name} (message withheld: it may quote the payload)"


def _frames(exc: BaseException) -> str:
    """The traceback's code locations (file, line, function, source line), no message."""
    import traceback

    summary = traceback.extract_tb(exc.__traceback__)
    return "Traceback (most recent call last):\n" + "".join(summary.format())


def _bytes_stream(data: bytes) -> BinaryIO:
    import io

    return io.BytesIO(data)


# The shim argument of a capture the client runs in the background (ctxmode.inflight).
BACKGROUND_FLAG = "--background"


def host_argument(argv: list[str]) -> str | None:
    """The host named on the shim's command line (``--host codex``, ``--host=codex``):
    one shim per event serves every client, the installed command says which."""
    for i, arg in enumerate(argv[1:], 1):
        if arg == "--host" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--host="):
            return arg[len("--host=") :]
    return None


def main(event: str, host: str | None = None, stdin: bytes | None = None) -> NoReturn:
    """Entry point of the hook shims: run, print, exit 0 — always.

    ``host``: the client whose hook this is (``ctxmode.hosts``; None: Claude Code).
    ``stdin``: the input, when the shim has read it already (Gemini's BeforeModel looks
    at it before importing anything).
    """
    import _thread
    import gc

    # A hook process lives for milliseconds and makes next to no reference cycles: the
    # cyclic collector would only walk its objects again and again (~4% of a PreCompact's
    # instructions). Reference counting still frees everything else.
    gc.disable()
    if host is None:
        host = host_argument(sys.argv)
    # `ctxmode install` adds --background to the captures it registers with "async":
    # the client goes on without waiting, and at its end (`claude -p`) sends SIGTERM,
    # then the kill ~1.5 s later: the events are stored in that time (inflight.on_stop).
    background = BACKGROUND_FLAG in sys.argv
    if background:
        import _signal  # type: ignore[import-not-found]  # (signal imports enum)

        from ctxmode import inflight

        _signal.signal(_signal.SIGTERM, inflight.on_stop)
        # A stop that came while the shim imported this module (ctxmode.early_stop).
        from ctxmode import early_stop

        if early_stop.received:
            inflight.on_stop(early_stop.received[0], None)
    lock = _thread.allocate_lock()
    out = b""
    try:
        out = run_hook(
            event,
            sys.stdin.buffer if stdin is None else _bytes_stream(stdin),
            os.environ,
            output_lock=lock,
            watchdog=True,
            host=host,
            background=background,
            one_call=True,
        )
    except BaseException:
        out = b""
    lock.acquire()
    try:
        if out:
            view = memoryview(out)
            while view:
                written = os.write(1, view)
                view = view[written:]
    except BaseException:
        pass
    os._exit(0)
