"""One function per hook event: (input, context) → text for the model, or None.

The resume policy lives here (design.md, "When the resume is printed"):

- PreCompact stores a snapshot of the session (kind ``compact``) and prints nothing.
- SessionStart ``compact`` claims this session's newest unclaimed snapshot, or builds
  one on the spot if PreCompact never ran.
- SessionStart ``resume``/``fork``: a session with events of its own has its transcript,
  so it only gets a compaction snapshot it never received; its stale end-of-session
  snapshots are retired. A new session id without events claims the newest unclaimed
  snapshot of another session of the same store (not after a /clear).
- SessionStart ``startup``/``clear``: nothing unless configured (then another session's
  newest unclaimed snapshot, not older than ``startup_max_age_hours``).
- UserPromptSubmit prints a snapshot of this session still unclaimed (some clients
  drop SessionStart output after compaction).
- PreCompact gives a session the full snapshot of one state at most twice; compacting
  again with nothing new recorded stores a one-line pointer instead (``snapshot.repeat``).
- PostCompact stores the client's summary of the compaction (masked) beside its snapshot.
- SessionEnd stores a snapshot (kind ``end``) for a later session to pick up, except
  after /clear, where every unclaimed snapshot of the session is retired instead.

Every claim is one atomic store operation: of racing processes exactly one wins.

Long on purpose: the resume policy is one set of rules over the hook events, and reads
best in one place; what a rule needs beyond the policy lives in its own module
(extract, snapshot, store, spool, inflight).
"""

from __future__ import annotations

import os
import sys

from ctxmode import config as config_mod
from ctxmode.store import Store, StoreLocked
from ctxmode.store.resumes import ENDED_BY_CLEAR

# hooklog and spool are imported where they are needed: a hook that stores its events
# normally writes no log line and finds no spool (each import ~0.3 ms per process).
# SPOOL_DIR is the folder of spool's files under the data root (see spool.spool_path).
SPOOL_DIR = "spool"
# ctxmode.inflight's folder (FOLDER there) and bounds, named here so that a hook run in
# the foreground never loads it (tests/test_bench.py checks they agree).
INFLIGHT_DIR = "inflight"
FLUSH_BOUND = 2.0
# ctxmode.secret_memory's folder (FOLDER there), named here so that a hook of a project
# that remembers no secret never loads it (tests/test_secret_memory.py checks they agree).
SECRETS_DIR = "masked"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ctxmode.context import Context
    from ctxmode.events import SessionEvent
    from ctxmode.payload import HookInput
    from ctxmode.store import Resume
    from ctxmode.worktree import Pending

# How long a compaction snapshot is reserved for its own session (see on_session_start).
COMPACT_GRACE_SECONDS = 600.0


def handle(inp: HookInput, ctx: Context) -> str | None:
    handler = _HANDLERS.get(inp.event)
    if handler is None or not inp.session_id:
        return None
    return handler(inp, ctx)


# -- helpers -------------------------------------------------------------------------


def _lock_wait_ms(ctx: Context, floor: float) -> int:
    """How long a wait for the write lock may take: never past the deadline (with a
    margin left to spool), never more than 3 s, at least ``floor`` seconds."""
    return int(max(floor, min(ctx.remaining() - 0.5, 3.0)) * 1000)


def _open(ctx: Context) -> Store:
    return Store.open(ctx.store_path, busy_timeout_ms=_lock_wait_ms(ctx, 0.2), recover=True)


def _config(inp: HookInput, ctx: Context) -> dict[str, object]:
    return config_mod.load(ctx.env, inp.project_dir)


def _mark_source(events: list[SessionEvent], inp: HookInput) -> list[SessionEvent]:
    for event in events:
        event.source_hook = inp.event
    return events


def _masked(inp: HookInput, cfg: dict[str, object], ctx: Context) -> HookInput:
    """The payload as every later step sees it: ``<private>`` spans removed and secrets
    masked (the user's ``redact_patterns`` too) in each string whole, before anything
    reads or cuts it (see ctxmode.extract.masked); and every secret an earlier payload of
    the project masked, masked here too (ctxmode.secret_memory), what is new remembered."""
    from ctxmode.extract import masked

    extra = cfg.get("redact_patterns")
    memory = _memory(ctx, inp.session_id)
    out = masked(inp, tuple(extra) if extra else (), memory)  # type: ignore[arg-type]
    _remember(ctx, memory)
    return out


class _Noted:
    """What a payload masked, where the store remembers nothing yet: the memory is made
    (ctxmode.secret_memory, its key and file) only once there is something to keep."""

    __slots__ = ("found", "session_id")
    lengths: frozenset[int] = frozenset()

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.found: dict[str, str] = {}

    def remember(self, found: dict[str, str]) -> None:
        self.found.update(found)

    def use_session(self, session_id: str) -> None:
        self.session_id = session_id


def _memory(ctx: Context, session_id: str) -> object:
    """The store's memory of masked secrets (loaded once per process), or a ``_Noted``."""
    memory = ctx.memory
    if memory is None:
        # One failed open where nothing is remembered: the module is not even loaded.
        if os.path.exists(_records_path(ctx)):
            from ctxmode import secret_memory

            memory = secret_memory.load(ctx.root, ctx.store_path, session_id)
        ctx.memory = memory = memory or _Noted(session_id)
    else:
        memory.use_session(session_id)  # type: ignore[attr-defined]
    return memory


def scrub_known(inp: HookInput, ctx: Context) -> Callable[[str], str] | None:
    """A function that masks what the store remembers in a text kept outside the store
    (Codex's rollout state), or None when it remembers nothing."""
    memory = _memory(ctx, inp.session_id)
    if not getattr(memory, "lengths", None):
        return None
    from ctxmode import redact

    return lambda text: redact.mask_known(text, memory)


def _records_path(ctx: Context) -> str:
    # secret_memory.records_path, without loading the module.
    name = os.path.splitext(os.path.basename(ctx.store_path))[0]
    return os.path.join(ctx.root, SECRETS_DIR, name + ".bin")


def _remember(ctx: Context, memory: object) -> None:
    """Keep what the payload masked that the store did not remember (best effort: a
    root that cannot be written costs the memory of it, never the call)."""
    if isinstance(memory, _Noted) and not memory.found:
        return
    from ctxmode import secret_memory

    try:
        if isinstance(memory, _Noted):
            fresh = secret_memory.fresh(ctx.root, memory.session_id)
            found, memory.found = memory.found, {}
            if fresh is None:
                return
            fresh.remember(found)
            ctx.memory = memory = fresh
        if isinstance(memory, secret_memory.Memory) and memory.new:
            secret_memory.save(ctx.root, ctx.store_path, memory)
    except OSError:
        if isinstance(memory, secret_memory.Memory):
            memory.new = []


def _extract(inp: HookInput, cfg: dict[str, object]) -> list[SessionEvent]:
    from ctxmode.extract import extract

    events = extract(inp)
    excluded = cfg.get("exclude_paths")
    if events and excluded:
        events = _drop_excluded(events, excluded)  # type: ignore[arg-type]
    extra = cfg.get("redact_patterns")
    if events and extra:
        from ctxmode import redact

        for event in events:
            event.data = redact.mask(event.data, extra=tuple(extra))  # type: ignore[arg-type]
    return _mark_source(events, inp)


def _worktree_moves(events: list[SessionEvent], inp: HookInput, ctx: Context) -> list[SessionEvent]:
    """A ``cd`` into another worktree of the repository moves the session there: a
    ``worktree_change`` after each such ``cwd_change`` (the extractors are pure and cannot
    tell a worktree from a folder; this reads the target's ``.git``). A ``cd`` to the root
    of the session's own work tree is a move back (the payload's cwd is already where the
    command left the shell, so it cannot say where the session was)."""
    from ctxmode import events as event_types
    from ctxmode import fastjson
    from ctxmode.paths import head_branch

    own = ctx.identity
    if own is None or not own.worktree:
        return []
    moves = []
    last = ""
    for event in events:
        if event.type != "cwd_change":
            continue
        try:
            path = fastjson.loads(event.data).get("path")
        except (fastjson.JSONDecodeError, AttributeError):
            continue
        if not isinstance(path, str) or not path:
            continue
        target = ctx.moved_to(path.rstrip("/") or "/")
        if target is None and _realpath(path) == own.worktree:
            target = own
        if target is None or not target.worktree or target.worktree == last:
            continue
        last = target.worktree
        data: dict[str, object] = {"path": last, "via": "cd"}
        branch = head_branch(target.gitdir)
        if branch:
            data["branch"] = branch
        move = event_types.make("worktree_change", data)
        move.tool_use_id, move.agent_id, move.agent_type = (
            event.tool_use_id,
            event.agent_id,
            event.agent_type,
        )
        move.source_hook = event.source_hook
        moves.append(move)
    return moves


def _realpath(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):  # a name no file can have (a NUL, a lone surrogate)
        return ""


def _drop_excluded(events: list[SessionEvent], patterns: list[str]) -> list[SessionEvent]:
    from ctxmode import fastjson

    kept = []
    for event in events:
        if event.category in ("file", "rule"):
            try:
                path = fastjson.loads(event.data).get("path", "")
            except (fastjson.JSONDecodeError, AttributeError):
                path = ""
            if path and any(_glob_match(path, pattern) for pattern in patterns):
                continue
        kept.append(event)
    return kept


def _glob_match(path: str, pattern: str) -> bool:
    """fnmatch, where a leading ``**/`` also matches no folder at all (as in .gitignore).

    Paths inside the project are stored relative to it (``secret.txt``), so without
    this ``**/secret.txt`` would miss the one at the top.
    """
    from fnmatch import fnmatch

    if fnmatch(path, pattern):
        return True
    while pattern.startswith("**/"):
        pattern = pattern[3:]
        if fnmatch(path, pattern):
            return True
    return False


# Set by ``ctxmode demo`` for the hooks it replays: the lookups of their snapshots are
# run from the user's shell, which does not have the demo's throwaway CTXMODE_HOME, so
# they must name it. (Claude Code gives its Bash tool the environment of the hooks.)
LOOKUP_HOME_ENV = "CTXMODE_LOOKUP_HOME"


def search_command(project_dir: str, ctx: Context | None = None) -> str:
    """A shell prefix the model can run as written to search this project's store.

    It names the repository (``ctx``'s identity when given), not the work tree: the
    path resolves to the same store from any worktree, subfolder or symlink of it.
    """
    if ctx is not None:
        project_dir = ctx.project(project_dir)
    prefix = ""
    if ctx is not None and ctx.env.get(LOOKUP_HOME_ENV) == "1" and ctx.root:
        prefix = f"CTXMODE_HOME={shell_quote(ctx.root)} "
    return f"{prefix}{lookup_program()} search --project {shell_quote(project_dir)}"


def lookup_program(executable: str | None = None) -> str:
    """The program a lookup runs, as the hint prints it: the ``ctxmode`` beside the
    interpreter (``executable``, default this one), by absolute path and quoted only
    when it must be, else a bare ``ctxmode``. ``ctxmode install`` allows exactly this
    program's ``search`` (ctxmode.hosts.claude_code.settings_permissions): keep the two in step."""
    bindir = os.path.dirname(executable or sys.executable)
    for name in ("ctxmode", "ctxmode.exe"):
        candidate = os.path.join(bindir, name)
        if os.path.exists(candidate):
            return shell_quote(candidate)
    return "ctxmode"


def shell_quote(text: str) -> str:
    """POSIX single-quoting (shlex.quote without importing shlex and re).

    A lookup is element text of the snapshot, which escapes ``&``, ``<`` and ``>``,
    shows invisible characters as ``\\uXXXX`` and collapses runs of whitespace: text
    holding any of those is written in ANSI-C quoting (``$'…'``, bash and zsh) with
    each such character as ``\\xHH`` bytes, so the command reads and runs as written.
    """
    if text and all(ch.isalnum() or ch in "@%+=:,./-_" for ch in text):
        return text
    if any(ch in "&<>" or not ch.isprintable() for ch in text) or "  " in text:
        out = []
        for ch in text:
            if ch in "\\'":
                out.append("\\" + ch)
            elif ch in "&<> " or not ch.isprintable():
                out.append("".join(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass")))
            else:
                out.append(ch)
        return "$'" + "".join(out) + "'"
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _build_snapshot(
    store: Store,
    inp: HookInput,
    cfg: dict[str, object],
    kind: str,
    events: list[SessionEvent] | None = None,
    ctx: Context | None = None,
) -> tuple[str, int]:
    from ctxmode.snapshot import build_snapshot

    if events is None:
        events = store.session_events(inp.session_id)
    seq = store.next_compact_seq(inp.session_id, kind)
    xml = build_snapshot(
        events,
        session_id=inp.session_id,
        compact_seq=seq,
        budget=int(cfg.get("snapshot_budget", 4096)),  # type: ignore[call-overload]
        search_command=search_command(inp.project_dir, ctx),
        kind=kind,
    )
    return xml, len(events)


def _handed(resume: Resume | None, inp: HookInput, reason: str) -> str | None:
    """The claimed snapshot as this session receives it: another session's one says
    where it comes from and why it is given (see snapshot.provenance)."""
    if resume is None:
        return None
    if resume.session_id == inp.session_id:
        return resume.snapshot
    from ctxmode.snapshot import provenance

    return provenance(
        resume.snapshot,
        from_session=resume.session_id,
        kind=resume.kind,
        seq=resume.compact_seq,
        taken_at=resume.created_at,
        reason=reason,
    )


def _store_events(
    store: Store, inp: HookInput, ctx: Context, events: list[SessionEvent], cfg: dict[str, object]
) -> None:
    cap = int(cfg["max_events_per_session"])  # type: ignore[call-overload]
    _drain_any_spool(store, inp, ctx, cap)
    store.add_events(
        inp.session_id,
        events,
        source_hook=inp.event,
        project_dir=ctx.project(inp.project_dir),
        max_events=cap,
        call_at=ctx.stored_call_at,
        where=ctx.where(inp.cwd),
    )


def _drain_any_spool(store: Store, inp: HookInput, ctx: Context, cap: int) -> None:
    """``_drain_spool`` when there is a spool. spool.take starts by reading <root>/spool,
    which exists only once a hook had to spool (rare): without it there is nothing to
    take, and no need to import spool (~0.3 ms). tests/test_bench.py checks that spool
    keeps its files in that folder."""
    if os.path.isdir(os.path.join(ctx.root, SPOOL_DIR)):
        _drain_spool(store, inp, ctx, cap)


def _drain_spool(store: Store, inp: HookInput, ctx: Context, cap: int) -> None:
    """Move what earlier hooks spooled (store locked past their deadline) into the store."""
    from ctxmode import spool

    claimed, pending = spool.take(ctx.root, ctx.store_path)
    if pending or claimed:
        try:
            # One transaction, each line once (markers): a kill at any point neither
            # loses nor doubles what was spooled.
            store.add_batches(
                pending,
                source_hook="spool",
                project_dir=ctx.project(inp.project_dir),
                max_events=cap,
            )
        except BaseException:
            spool.give_back(claimed, ctx.root, ctx.store_path)
            raise
        spool.finish(claimed)
        # The import may have waited for the lock: the next wait must still end before
        # the deadline, or the watchdog would leave with this call's events unspooled.
        store.conn.execute(f"PRAGMA busy_timeout = {_lock_wait_ms(ctx, 0.1):d}")


def _spool(inp: HookInput, ctx: Context, events: list[SessionEvent]) -> None:
    """The store stayed locked past our deadline: keep the events for the next hook."""
    from ctxmode import hooklog, spool
    from ctxmode.wording import plural

    if events:
        spool.put(ctx.root, ctx.store_path, inp.session_id, events, ctx.stored_call_at)
        hooklog.write(
            ctx.log_dir,
            "WARN",
            inp.event,
            f"store locked; {plural(len(events), 'event')} spooled for the next hook",
        )
    else:
        hooklog.write(ctx.log_dir, "WARN", inp.event, "store locked; nothing to record")


def _record(
    inp: HookInput, ctx: Context, events: list[SessionEvent], cfg: dict[str, object], store: Store
) -> bool:
    """Store events, or spool them if the store stays locked past our deadline.

    Returns False when the store was locked (the caller should not wait for it again).
    """
    try:
        _store_events(store, inp, ctx, events, cfg)
        return True
    except StoreLocked:
        _spool(inp, ctx, events)
        return False


def _open_or_spool(inp: HookInput, ctx: Context, events: list[SessionEvent]) -> Store | None:
    """Open the store; if even that waits past the deadline (a migration or recovery
    holding the lock), spool the events and return None."""
    try:
        return _open(ctx)
    except StoreLocked:
        _spool(inp, ctx, events)
        return None


# -- events --------------------------------------------------------------------------


def on_tool(inp: HookInput, ctx: Context) -> str | None:
    cfg = _config(inp, ctx)
    late = inp.late
    inp = _masked(inp, cfg, ctx)
    events = _extract(inp, cfg)
    if any(e.type == "cwd_change" for e in events):
        events += _worktree_moves(events, inp, ctx)
    # A success may resolve an earlier failure of the same call; one that shows it failed
    # again (an output_error) resolves nothing, nor does a PostToolUse that the client
    # fires for failed calls too (Codex: its outcomes come late, see _late_events).
    resolves = (
        inp.event == "PostToolUse"
        and inp.outcome_known
        and not any(e.type == "output_error" for e in events)
    )
    if events:
        # The raw traffic this call stands for, counted once: on its first event.
        events[0].bytes_avoided = inp.size
    elif not resolves and not late:
        return None
    failures = _late_failures(late, cfg, ctx)
    if ctx.background:
        # Run in the background, the captures of earlier calls may still be at work:
        # storing after them keeps dedup and a failure's resolution in the calls' order.
        from ctxmode.inflight import ORDER_BOUND

        unsure = _wait_for_captures(inp, ctx, ctx.call_at, ORDER_BOUND, "stored before them")
    else:
        unsure = 0
    store = _open_or_spool(inp, ctx, failures + events)
    if store is None:
        return None
    try:
        if late:
            events = _late_events(store, inp, late, failures, cfg, ctx) + events
        if resolves:
            events.extend(_resolutions(store, inp, unsure > 0))
        if events:
            _record(inp, ctx, events, cfg, store)
    finally:
        store.close()
    return None


def _late_failures(
    late: list[HookInput], cfg: dict[str, object], ctx: Context
) -> list[SessionEvent]:
    """The error events of the late outcomes that are failures (masked like any input)."""
    out: list[SessionEvent] = []
    for item in late:
        if item.event == "PostToolUseFailure":
            out.extend(_extract(_masked(item, cfg, ctx), cfg))
    return out


def _late_events(
    store: Store,
    inp: HookInput,
    late: list[HookInput],
    failures: list[SessionEvent],
    cfg: dict[str, object],
    ctx: Context,
) -> list[SessionEvent]:
    """The tool outcomes a client reported late (``inp.late``; Codex's rollout file), in
    the order they happened: errors, and the resolutions of open ones (ctxmode.outcomes)."""
    from ctxmode.outcomes import ordered

    for item in late:
        if item.event == "PostCompact" and item.compact_summary:
            # Codex's compaction summary, found in its rollout file (see on_post_compact).
            summary = summary_text(_masked(item, cfg, ctx).compact_summary or "")
            if summary:
                store.add_compaction_summary(inp.session_id, summary, "")
    masked = [_masked(item, cfg, ctx) for item in late]
    return ordered(store.open_error_keys(inp.session_id), masked, failures)


def _store_late(store: Store, inp: HookInput, ctx: Context, cfg: dict[str, object]) -> None:
    """Record the late tool outcomes before a snapshot is taken, so it is complete."""
    if inp.late:
        failures = _late_failures(inp.late, cfg, ctx)
        events = _late_events(store, inp, inp.late, failures, cfg, ctx)
        if events:
            _record(inp, ctx, events, cfg, store)


def _resolutions(store: Store, inp: HookInput, unsure: bool = False) -> list[SessionEvent]:
    """``error_resolved`` for the session's open error this successful call reruns, if any.

    The key is the one its failure would have had (``extract.errors.failure_key``). Most
    sessions have no open error: the store is asked first, so the error extractors are
    loaded only when there is one (two modules fewer on a hook's usual path).

    ``unsure``: captures of earlier calls were still running when this one gave up
    waiting for them (a background capture): the failure this call reruns may be among
    them, so the resolution is recorded anyway. Read in the calls' order it resolves
    that failure when it lands; with no such failure it resolves nothing.
    """
    open_keys = set() if unsure else store.open_error_keys(inp.session_id)
    if not open_keys and not unsure:
        return []
    from ctxmode.extract.errors import failure_key, resolution

    key = failure_key(inp)
    if not key or (key not in open_keys and not unsure):
        return []
    return [resolution(inp, key)]


def on_prompt(inp: HookInput, ctx: Context) -> str | None:
    cfg = _config(inp, ctx)
    late = inp.late
    inp = _masked(inp, cfg, ctx)
    events = _extract(inp, cfg)
    failures = _late_failures(late, cfg, ctx)
    store = _open_or_spool(inp, ctx, failures + events)
    if store is None:
        return None
    try:
        if late:
            events = _late_events(store, inp, late, failures, cfg, ctx) + events
        # Locked past the busy timeout: a claim would wait as long again and run into
        # the watchdog. The snapshot stays unclaimed for the next prompt.
        if not _record(inp, ctx, events, cfg, store):
            return None
        if inp.prompt_claims_compact and store.has_unclaimed(inp.session_id, kind="compact"):
            resume = store.claim_resume(
                claimed_by=inp.session_id, session_id=inp.session_id, kind="compact"
            )
            if resume is not None:
                return resume.snapshot
    finally:
        store.close()
    return None


def _save_compact_snapshot(
    store: Store,
    inp: HookInput,
    cfg: dict[str, object],
    ctx: Context,
    events: list[SessionEvent] | None = None,
) -> None:
    """Save this compaction's snapshot and its ``compaction`` row.

    The loop policy (``snapshot.repeat``): the full snapshot of one state of the session
    is handed over at most twice; after that, while nothing new is recorded, the
    compaction gets a one-line pointer to its lookup instead.
    """
    from ctxmode.snapshot.repeat import POINTER_ATTR, pointer, repeats

    xml, count = _build_snapshot(store, inp, cfg, "compact", events, ctx)
    history = store.compact_history(inp.session_id, skip_head=f" {POINTER_ATTR}=")
    since = repeats(history, xml) if history else None
    if since is not None:
        xml = pointer(xml, inp.session_id, since, search_command(inp.project_dir, ctx))
    seq = store.save_resume(inp.session_id, xml, count, kind="compact")
    store.record_compaction(inp.session_id, seq, inp.trigger or "")


def _wait_for_captures(
    inp: HookInput, ctx: Context, before: int | None, bound: float, outcome: str
) -> int:
    """Wait, bounded, for the session's background captures in flight (ctxmode.inflight);
    how many were still running at the bound. The folder exists only once a capture ran
    in the background: without it there is nothing to wait for and no module to load."""
    if not os.path.isdir(os.path.join(ctx.root, INFLIGHT_DIR)):
        return 0
    from ctxmode import inflight

    return inflight.wait_logged(ctx.root, ctx.log_dir, inp, before, bound, outcome)


def _flush(store: Store, inp: HookInput, ctx: Context, cfg: dict[str, object]) -> None:
    """Before a snapshot: the session's captures in flight end (bounded wait), and what
    any capture had to spool is in the store."""
    bound = max(0.0, min(FLUSH_BOUND, ctx.remaining() - 0.4))
    _wait_for_captures(inp, ctx, None, bound, "the snapshot is made without their events")
    cap = int(cfg["max_events_per_session"])  # type: ignore[call-overload]
    _drain_any_spool(store, inp, ctx, cap)


def on_pre_compact(inp: HookInput, ctx: Context) -> str | None:
    cfg = _config(inp, ctx)
    store = _open(ctx)
    status = None
    try:
        _flush(store, inp, ctx, cfg)
        _store_late(store, inp, ctx, cfg)
        # git status runs while the session is read (each takes a few ms). One read (of
        # 1,000 events: ~15% of this hook's instructions) serves git status and the
        # snapshot. It is read again only if the session may have changed in between:
        # git status recorded files, or another process committed (a capture landing
        # late); never a snapshot older than the store.
        status = _start_git_status(inp, ctx)
        version = store.data_version()
        events = store.session_events(inp.session_id)
        if _store_worktree_changes(store, inp, ctx, cfg, events, status) or (
            store.data_version() != version
        ):
            events = store.session_events(inp.session_id)
        _save_compact_snapshot(store, inp, cfg, ctx, events)
    finally:
        if status is not None:
            status.close()  # an error came before git's answer was read: end git too
        store.close()
    return None  # PreCompact must never print hookSpecificOutput


def _start_git_status(inp: HookInput, ctx: Context) -> Pending | None:
    """``git status`` of the project started (ctxmode.worktree), if it is a repository."""
    if not os.path.exists(os.path.join(inp.project_dir, ".git")):
        return None
    from ctxmode import worktree

    return worktree.start_status(inp.project_dir, min(worktree.GIT_TIMEOUT, ctx.remaining() / 3))


def _store_worktree_changes(
    store: Store,
    inp: HookInput,
    ctx: Context,
    cfg: dict[str, object],
    events: list[SessionEvent],
    status: Pending | None,
) -> bool:
    """Files the shell changed (``sed -i``, ``>``, ``mv``…), from the repository's own view
    (``git status``, affordable here), recorded before the snapshot lists the files
    (ctxmode.worktree). ``events``: the session's, as stored; ``status``: git status
    started (None: no repository). Whether any were stored."""
    if status is None:
        return False
    from ctxmode import worktree

    found = worktree.new_file_events(events, inp.project_dir, status, inp.event)
    excluded = cfg.get("exclude_paths")
    if found and excluded:
        found = _drop_excluded(found, excluded)  # type: ignore[arg-type]
    return bool(found) and _record(inp, ctx, found, cfg, store)


def summary_text(text: str) -> str:
    """The part of the client's summary that replaces the conversation.

    Claude Code's ``compact_summary`` is ``<analysis>…</analysis><summary>…</summary>``:
    the analysis is the model's draft, which the client drops (its transcripts keep the
    summary alone, untagged). Text without the tags is kept whole.
    """
    start = text.find("<summary>")
    if start >= 0:
        end = text.rfind("</summary>")
        text = text[start + len("<summary>") : end if end > start else len(text)]
    else:
        start, end = text.find("<analysis>"), text.find("</analysis>")
        if 0 <= start < end:
            text = text[:start] + text[end + len("</analysis>") :]
    return text.strip()


def on_post_compact(inp: HookInput, ctx: Context) -> str | None:
    """Keep the client's summary of the compaction beside its snapshot (masked whole
    first, like every payload string). Prints nothing: PostCompact never may."""
    if not inp.compact_summary:
        return None
    cfg = _config(inp, ctx)
    inp = _masked(inp, cfg, ctx)
    summary = summary_text(inp.compact_summary or "")
    if not summary:
        return None
    store = _open(ctx)
    try:
        store.add_compaction_summary(inp.session_id, summary, inp.trigger or "")
    finally:
        store.close()
    return None


def on_session_start(inp: HookInput, ctx: Context) -> str | None:
    cfg = _config(inp, ctx)
    source = inp.source or "startup"
    store = _open(ctx)
    try:
        _note_client(store, inp, ctx)
        if source == "startup":
            store.prune_idle(int(cfg["retention_days"]))  # type: ignore[call-overload]
        own_events = store.event_count(inp.session_id)
        if source == "compact" and not inp.start_claims_compact:
            # The next prompt hands it over (on_prompt): made now if PreCompact did not.
            if own_events and not store.has_unclaimed(inp.session_id, kind="compact"):
                events = store.session_events(inp.session_id)
                latest = store.latest_resume(inp.session_id, kind="compact")
                if latest is None or str(latest["created_at"]) < str(events[-1].created_at):
                    _save_compact_snapshot(store, inp, cfg, ctx, events)
            return None
        if source == "compact":
            resume = store.claim_resume(
                claimed_by=inp.session_id, session_id=inp.session_id, kind="compact"
            )
            if resume is not None:
                return resume.snapshot
            if own_events == 0:
                return None
            events = store.session_events(inp.session_id)
            latest = store.latest_resume(inp.session_id, kind="compact")
            if latest is not None and str(latest["created_at"]) >= str(events[-1].created_at):
                return None  # already delivered, and nothing happened since
            # PreCompact never ran (or failed): build the snapshot now, keep a record of it.
            _save_compact_snapshot(store, inp, cfg, ctx, events)
            resume = store.claim_resume(
                claimed_by=inp.session_id, session_id=inp.session_id, kind="compact"
            )
            return resume.snapshot if resume is not None else None
        if source in ("resume", "fork"):
            if own_events:
                store.discard_unclaimed(inp.session_id, reason="resumed", kind="end")
                if not inp.start_claims_compact:
                    return None  # its next prompt hands the compaction snapshot over
                resume = store.claim_resume(
                    claimed_by=inp.session_id, session_id=inp.session_id, kind="compact"
                )
                return resume.snapshot if resume is not None else None
            if store.session_flag(inp.session_id, "cleared"):
                return None
            _end_unended(store, inp, ctx, cfg)
            resume = store.claim_resume(
                claimed_by=inp.session_id,
                exclude_session=inp.session_id,
                kind="end",
                prefer_worktree=ctx.worktree,
            )
            if resume is None:
                # Another session's compaction snapshot belongs to that session's own
                # SessionStart(compact), due within the compaction: only one that is
                # still unclaimed long after (the compaction never finished) is left
                # for a new session to pick up. Taking it earlier would leave the
                # compacted session with nothing.
                resume = store.claim_resume(
                    claimed_by=inp.session_id,
                    exclude_session=inp.session_id,
                    kind="compact",
                    min_age_seconds=COMPACT_GRACE_SECONDS,
                    prefer_worktree=ctx.worktree,
                )
            return _handed(resume, inp, source)
        if source == "clear":
            # A clean slate: this new session must never inherit what came before it.
            store.set_session_flag(
                inp.session_id, "cleared", ctx.project(inp.project_dir), where=ctx.where(inp.cwd)
            )
            if not cfg["inject_on_clear"]:
                return None
        elif not cfg["inject_on_startup"]:
            store.touch_session(
                inp.session_id, ctx.project(inp.project_dir), where=ctx.where(inp.cwd)
            )
            return None
        max_age = float(cfg["startup_max_age_hours"]) * 3600  # type: ignore[arg-type]
        _end_unended(store, inp, ctx, cfg, max_age)
        resume = store.claim_resume(
            claimed_by=inp.session_id,
            exclude_session=inp.session_id,
            max_age_seconds=max_age,
            kind="end",
            prefer_worktree=ctx.worktree,
        )
        reason = "inject_on_clear" if source == "clear" else "inject_on_startup"
        return _handed(resume, inp, reason)
    finally:
        store.close()


def _note_client(store: Store, inp: HookInput, ctx: Context) -> None:
    """Record the client process this session runs in (``Store.set_client``): a later
    hand-over tells by it whether the session still runs or ended without SessionEnd.
    Only where the client started this hook in a group of its own (``ctx.call_exact``):
    then the group leader's parent is the client, not a test runner or a script."""
    if not ctx.call_exact:
        return
    from ctxmode import liveness

    client = liveness.this_client()
    if client is not None:
        # Not worth this hook's snapshot: unrecorded, the session is taken as running.
        # (try/except, not contextlib.suppress: contextlib is one more import on a hook.)
        try:  # noqa: SIM105
            store.set_client(inp.session_id, client)
        except StoreLocked:
            pass


def on_session_end(inp: HookInput, ctx: Context) -> str | None:
    cfg = _config(inp, ctx)
    store = _open(ctx)
    try:
        if inp.reason == "clear":
            store.discard_unclaimed(inp.session_id, reason="clear")
            # Nor may a later hand-over build one for it (_end_unended).
            store.set_session_flag(inp.session_id, ENDED_BY_CLEAR, where=ctx.where(inp.cwd))
            return None
        _flush(store, inp, ctx, cfg)
        _store_late(store, inp, ctx, cfg)
        if store.event_count(inp.session_id) == 0:
            return None
        _save_end_snapshot(store, inp, cfg, ctx)
    finally:
        store.close()
    return None


def _save_end_snapshot(store: Store, inp: HookInput, cfg: dict[str, object], ctx: Context) -> None:
    """The session's one unclaimed end snapshot, built now (an older one is retired)."""
    store.discard_unclaimed(inp.session_id, reason="superseded", kind="end")
    xml, count = _build_snapshot(store, inp, cfg, "end", ctx=ctx)
    store.save_resume(inp.session_id, xml, count, kind="end")


def _end_unended(
    store: Store,
    inp: HookInput,
    ctx: Context,
    cfg: dict[str, object],
    max_age: float | None = None,
) -> None:
    """Before a new session claims another's end snapshot: the session it should come from
    may have none (``Store.unended_sessions``: its client ended without running SessionEnd,
    as `claude -p` does when a capture is still running at its end, or was killed). Build
    it now from that session's events, as its SessionEnd would have.

    Racing new sessions each may build it; one stores it (``Store.save_missing_end``), and
    the claim gives it to one of them.
    """
    candidates = store.unended_sessions(
        exclude_session=inp.session_id, prefer_worktree=ctx.worktree, max_age_seconds=max_age
    )
    if not candidates:
        return
    from ctxmode import liveness

    # A session whose client still runs is at work, not ended; one whose client is not
    # known (recorded by an older version, a host that starts no group) is left alone.
    other = next((sid for sid, client in candidates if client and liveness.gone(client)), None)
    if other is None:
        return
    from ctxmode.payload import HookInput as Input

    ended = Input({"session_id": other, "cwd": inp.cwd}, inp.event)
    ended.project_dir = inp.project_dir
    # A capture of that session may still be storing (its client gone): wait for it, as
    # SessionEnd would, within this hook's deadline; and what any capture spooled.
    _flush(store, ended, ctx, cfg)
    xml, count = _build_snapshot(store, ended, cfg, "end", ctx=ctx)
    store.save_missing_end(other, xml, count)


def on_client_ending(inp: HookInput, ctx: Context) -> None:
    """A background capture the client asked to stop (``inflight.stopping``): the client
    is ending, and Claude Code 2.1.197 then runs no SessionEnd hook (`claude -p` with a
    capture still running). The capture, its events stored, takes the session's end
    snapshot as SessionEnd would. Should SessionEnd run after all, it starts once the
    captures are gone and supersedes this one.

    The captures stopped together build one after the other (``inflight.end_lock``):
    each stored its events before, so the last sees them all and retires the others'
    snapshots; exactly one end snapshot of the session stays unclaimed.
    """
    from ctxmode import inflight

    cfg = _config(inp, ctx)
    store = _open(ctx)
    try:
        cap = int(cfg["max_events_per_session"])  # type: ignore[call-overload]
        _drain_any_spool(store, inp, ctx, cap)
        if store.event_count(inp.session_id) == 0:
            return
        lock = inflight.end_lock(ctx.root)
        try:
            _save_end_snapshot(store, inp, cfg, ctx)
        finally:
            os.close(lock)
    finally:
        store.close()


def on_model_request(inp: HookInput, ctx: Context) -> str | None:
    """A model request (Gemini's BeforeModel) whose history holds a compression summary
    (``inp.compact_summary``): the snapshot to append to it, the same one on every request
    while that summary is in the history (ctxmode.resume_cache), claimed once.

    The first request after a compression builds it from the events recorded up to then
    (or takes the one PreCompress(manual) built, if nothing was recorded since), like
    PreCompact with SessionStart(compact) here; every later request reads the cache.
    """
    summary = inp.compact_summary
    if not summary:
        return None
    from ctxmode import resume_cache

    cache = resume_cache.path(ctx.root, inp.session_id, resume_cache.digest(summary))
    text = resume_cache.read(cache)
    if text is None:
        lock = resume_cache.lock(ctx.root)
        try:
            text = resume_cache.read(cache)  # another hook may have served it meanwhile
            if text is None:
                text = _compression_snapshot(inp, ctx) or ""
                resume_cache.write(cache, text)
        finally:
            os.close(lock)
    return text or None


def _compression_snapshot(inp: HookInput, ctx: Context) -> str | None:
    """Claim this compression's snapshot: one built ahead (PreCompress manual) with nothing
    recorded since, else one built now from the events recorded so far."""
    cfg = _config(inp, ctx)
    store = _open(ctx)
    status = None
    try:
        _flush(store, inp, ctx, cfg)
        events = store.session_events(inp.session_id)
        latest = store.latest_resume(inp.session_id, kind="compact")
        ahead = (
            latest is not None
            and not latest["consumed"]
            and (not events or str(latest["created_at"]) >= str(events[-1].created_at))
        )
        if not ahead:
            if not events:
                return None
            # An older snapshot never handed over (a /compress that compressed nothing)
            # is stale now: this compression gets the session as it is.
            store.discard_unclaimed(inp.session_id, reason="superseded", kind="compact")
            status = _start_git_status(inp, ctx)
            version = store.data_version()
            if _store_worktree_changes(store, inp, ctx, cfg, events, status) or (
                store.data_version() != version
            ):
                events = store.session_events(inp.session_id)
            _save_compact_snapshot(store, inp, cfg, ctx, events)
        resume = store.claim_resume(
            claimed_by=inp.session_id, session_id=inp.session_id, kind="compact"
        )
        # The client's summary, masked, kept beside the snapshot (ctxmode stats).
        summary = summary_text(_masked(inp, cfg, ctx).compact_summary or "")
        if summary:
            store.add_compaction_summary(inp.session_id, summary, inp.trigger or "")
        return resume.snapshot if resume is not None else None
    finally:
        if status is not None:
            status.close()
        store.close()


_HANDLERS = {
    "PostToolUse": on_tool,
    "PostToolUseFailure": on_tool,
    "Stop": on_tool,  # the turn's reply: an event like a call's (extract.replies)
    "UserPromptSubmit": on_prompt,
    "PreCompact": on_pre_compact,
    "PostCompact": on_post_compact,
    "SessionStart": on_session_start,
    "SessionEnd": on_session_end,
    "BeforeModel": on_model_request,
}
