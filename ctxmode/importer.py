"""``ctxmode import``: the clients' own history → the store, as the hooks would have recorded it.

The neutral orchestration (no click; the CLI edge is ``cli/import_cmd.py``). The client's
side — where its history files live, what a record means — is the host's ``history`` part
(``hosts/<name>/history.py``, for every host that has one: ``hosts.having("history")``;
the records it returns are :mod:`ctxmode.history`'s); this module decides which store each
file goes to
(:func:`locate`, from the cwd its records name), runs the hooks' own masking and extractors
(``handlers._masked`` / ``handlers._extract``, with the project's config), and writes
each window of a file's new records in one transaction with its progress
(``store/imports.py``).

A file is read in windows of :data:`WINDOW` bytes, never whole (a long session's
transcript runs to hundreds of MB): each window is cut at its last line end, read
(the host's ``read``), imported, and the next one starts at the chunk's offset. A window
that makes no progress (a call's result or a compaction's summary lies beyond it) is read
again twice as large, so any file completes. What one window reads past its offset is read
again by the next, and skipped there: the calls already taken are remembered for the file,
and compactions are numbered on from the count before the window.

Incremental and idempotent: ``import_progress`` keeps, per file, the offset read so far
(a line end, never past a ``tool_use`` still waiting for its result), a hash of the file's
head (a file replaced under the same name starts again) and its mtime; a file whose size
and mtime did not change is not even opened. Each window commits with its progress, so a
killed import resumes after the last committed window. What the hooks captured already is
not stored twice (the store skips known ``tool_use_id``s and known prompts).

Long on purpose (~650 lines): windows that resume where the last committed one stopped
need the bookkeeping of :class:`FileRun`, and it is clearest kept beside the loop that
uses it.
"""

from __future__ import annotations

import os
import tempfile
import time

from ctxmode import config as config_mod
from ctxmode import hosts, paths
from ctxmode.context import Context
from ctxmode.hashing import sha256_hex
from ctxmode.history import Boundary
from ctxmode.store import Store
from ctxmode.store import imports as store_imports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from types import ModuleType
    from typing import Any, BinaryIO

    from ctxmode.events import SessionEvent
    from ctxmode.history import Chunk
    from ctxmode.payload import HookInput

# The head whose hash tells a file replaced under the same name from one that grew.
HEAD_BYTES = 4096
# How much of a transcript is read and imported at a time (one transaction each): the
# import's memory is bounded by it, not by the file. 8 MiB is a few thousand records,
# enough that the per-window cost (a transaction, a session's known calls) is noise.
WINDOW = 8 * 1024 * 1024
IGNORE_FILE = ".ctxmode-ignore"


def locate(cwd: str, env: Mapping[str, str]) -> tuple[str, str]:
    """``(project dir, store path)`` of a transcript whose records ran in ``cwd``.

    The one place the importer asks which project and store a cwd belongs to: the same
    functions the CLI's ``--project`` and the hooks use (``CLAUDE_PROJECT_DIR`` is the
    client's, set for hooks only, so it is not read here). A cwd of another system
    (``C:\\Users\\x\\proj`` read on Linux: a transcript copied over) names no folder
    here: its sessions go to a store of their own, keyed by that path as ctxmode on that
    system keys it (:func:`foreign_cwd`), never to the folder the import runs in. A cwd
    that is not absolute at all is no project: ``("", "")``.
    """
    if foreign_cwd(cwd) is not None:
        key = paths.foreign_key(cwd)
        return key, paths.store_file(paths.data_root(env), key)
    if not os.path.isabs(cwd):
        return "", ""
    project = paths.project_dir(cwd, {})
    return project, paths.store_path(project, env)


def foreign_cwd(cwd: str) -> str | None:
    """``cwd`` when it is a Windows path read on another system, else None
    (:func:`ctxmode.paths.foreign_path`)."""
    return paths.foreign_path(cwd)


def worktree_of(cwd: str) -> str:
    """The git work tree a transcript's cwd is in (as the hooks record it), "" when the
    folder is gone, outside git or of another system."""
    if not cwd or foreign_cwd(cwd) is not None or not os.path.isdir(cwd):
        return ""
    return paths.identify_dir(cwd).worktree or ""


def readers(names: Iterable[str] | None = None) -> dict[str, ModuleType]:
    """The history reader of every host that has one (of ``names`` only, when given), in
    registry order."""
    wanted = None if names is None else set(names)
    return {
        name: hosts.part(name, "history")
        for name in hosts.having("history")
        if wanted is None or name in wanted
    }


def reader_for(path: str) -> tuple[str, ModuleType]:
    """``(host, its history reader)`` of a file given by name: the first host whose reader
    claims it, else the default host's."""
    found = readers()
    for name, reader in found.items():
        if reader.claims(path):
            return name, reader
    default = hosts.DEFAULT if hosts.DEFAULT in found else next(iter(found))
    return default, found[default]


def stat(reader: ModuleType, path: str) -> tuple[int, int]:
    """``(size, mtime_ns)`` of a history file: the reader's own ``stat`` when it has one
    (a client whose history is a database hands each session as a virtual file: OpenCode),
    else the file system's."""
    own = getattr(reader, "stat", None)
    if own is not None:
        return own(path)  # type: ignore[no-any-return]
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


def open_file(reader: ModuleType, path: str) -> BinaryIO:
    """A history file's bytes: the reader's own ``open_bytes`` when it has one, else the
    file."""
    own = getattr(reader, "open_bytes", None)
    return own(path) if own is not None else open(path, "rb")


class Transcript:
    """A history file to import: where, how big, whose (the host and its reader), and
    which project and session."""

    __slots__ = (
        "agent_id",
        "agent_type",
        "cwd",
        "host",
        "mtime_ns",
        "path",
        "project",
        "reader",
        "size",
        "store",
    )

    def __init__(
        self, path: str, env: Mapping[str, str], host: tuple[str, ModuleType] | None = None
    ) -> None:
        self.path = os.path.abspath(path)
        self.host, self.reader = host or reader_for(self.path)
        self.size, self.mtime_ns = stat(self.reader, self.path)
        self.cwd, _ = self.reader.head_cwd(self.path)
        self.project, self.store = locate(self.cwd, env) if self.cwd else ("", "")
        self.agent_id, self.agent_type = self.reader.subagent_of(self.path)


class Totals:
    """What a run did, for the summary line and ``--json``."""

    __slots__ = (
        "bytes",
        "compactions",
        "dry_run",
        "events",
        "files",
        "records",
        "replayed",
        "seconds",
        "sessions",
        "skipped",
        "stores",
        "truncated",
        "unchanged",
        "unknown",
        "unknown_types",
        "unplaced",
    )

    def __init__(self, dry_run: bool = False) -> None:
        self.dry_run = dry_run
        self.files = 0  # files read (some of them may have held nothing new)
        self.unchanged = 0  # files not opened: nothing was added since the last import
        self.bytes = 0  # transcript bytes read
        self.records = 0
        self.events = 0  # events added
        self.skipped = 0  # garbled lines
        self.unknown = 0  # records of types this version does not know
        self.unknown_types: dict[str, int] = {}  # which types, how many records each
        self.replayed = 0  # compactions given a replayed snapshot
        self.truncated = 0  # files that ended in an unfinished line (left for later)
        # files given that name no working directory: no project to import them into
        self.unplaced = 0
        self.compactions = 0
        self.sessions: set[str] = set()
        self.stores: set[str] = set()
        self.seconds = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "unchanged": self.unchanged,
            "bytes": self.bytes,
            "records": self.records,
            "events_added": self.events,
            "skipped": self.skipped,
            "unknown": self.unknown,
            "unknown_types": dict(sorted(self.unknown_types.items(), key=lambda kv: -kv[1])),
            # A dry run builds no snapshot (its windows roll back before the last one).
            "replayed": None if self.dry_run else self.replayed,
            "truncated": self.truncated,
            "unplaced": self.unplaced,
            "compactions": self.compactions,
            "sessions": len(self.sessions),
            "stores": len(self.stores),
            "seconds": round(self.seconds, 3),
            "mb_per_second": round(self.bytes / 1e6 / self.seconds, 1) if self.seconds else None,
            "dry_run": self.dry_run,
        }


# -- which files ---------------------------------------------------------------------------


def find(
    env: Mapping[str, str],
    *,
    store: str | None = None,
    files: Sequence[str] = (),
    since: float | None = None,
    clients: Iterable[str] | None = None,
) -> list[Transcript]:
    """The files to import: ``files`` as given, else every history file of every host
    (:func:`readers`; of ``clients`` only, when given) whose records ran in a project with
    the store ``store`` (None: every project). ``since``: only files written to at or
    after this epoch time."""
    if files:
        found = [Transcript(path, env) for path in files]
        if clients is not None:
            found = [t for t in found if t.host in set(clients)]
    else:
        found = []
        for name, reader in readers(clients).items():
            # A reader with its own stat (a session of a database) pays for a file's size:
            # the sessions of other projects are passed over by their cwd first.
            costly = store is not None and hasattr(reader, "stat")
            for path in reader.files(reader.folder(env)):
                if costly and locate(reader.head_cwd(path)[0] or "", env)[1] != store:
                    continue
                if since is not None and _mtime(reader, path) < since:
                    continue
                try:
                    item = Transcript(path, env, (name, reader))
                except OSError:
                    continue  # deleted by the client's clean-up since the listing
                if item.cwd and (store is None or item.store == store):
                    found.append(item)
    if since is not None:
        found = [t for t in found if t.mtime_ns / 1e9 >= since]
    return found


def _mtime(reader: ModuleType, path: str) -> float:
    try:
        return stat(reader, path)[1] / 1e9
    except OSError:
        return 0.0


def pending(store: Store, files: Iterable[Transcript]) -> list[Transcript]:
    """The files whose bytes are not all imported into ``store`` (cheap: sizes only)."""
    done = store_imports.offsets(store)
    return [t for t in files if done.get(t.path, -1) < t.size]


# -- importing -------------------------------------------------------------------------------


def run(
    files: Sequence[Transcript],
    env: Mapping[str, str],
    *,
    dry_run: bool = False,
    on_file: Callable[[Transcript], None] | None = None,
) -> Totals:
    """Import ``files`` into their projects' stores; ``on_file`` is called after each one."""
    totals = Totals(dry_run)
    started = time.perf_counter()
    by_store: dict[str, list[Transcript]] = {}
    for item in files:
        ignored = os.path.isabs(item.project) and os.path.exists(
            os.path.join(item.project, IGNORE_FILE)
        )
        if not item.store or ignored:
            if not item.store:
                totals.unplaced += 1
            if on_file is not None:
                on_file(item)
            continue
        by_store.setdefault(item.store, []).append(item)
    for store_path, items in by_store.items():
        _run_store(store_path, items, env, totals, on_file)
    totals.seconds = time.perf_counter() - started
    return totals


def _run_store(
    store_path: str,
    items: list[Transcript],
    env: Mapping[str, str],
    totals: Totals,
    on_file: Callable[[Transcript], None] | None,
) -> None:
    if totals.dry_run and not os.path.exists(store_path):
        # A dry run creates nothing: a throwaway store counts what a real run would add.
        with tempfile.TemporaryDirectory(prefix="ctxmode-import-") as tmp:
            _run_open(os.path.join(tmp, "dry.db"), items, env, totals, on_file)
        return
    paths.ensure_dir(os.path.dirname(store_path))
    _run_open(store_path, items, env, totals, on_file)


def _run_open(
    store_path: str,
    items: list[Transcript],
    env: Mapping[str, str],
    totals: Totals,
    on_file: Callable[[Transcript], None] | None,
) -> None:
    if not os.path.exists(store_path) and items and os.path.isabs(items[0].project):
        # The repository's first use: its stores of older versions merge in first, as
        # on a hook's (ctxmode.store.merge).
        from ctxmode.store.merge import ensure_store

        identity = paths.identify_dir(items[0].cwd)
        ensure_store(store_path, identity, paths.data_root(env))
    store = Store.open(store_path, busy_timeout_ms=10_000)
    # A dry run remembers no secret: its memory lives in a folder that goes with it.
    scratch = tempfile.TemporaryDirectory(prefix="ctxmode-import-") if totals.dry_run else None
    masking = _masking(store_path, scratch.name if scratch else paths.data_root(env))
    try:
        totals.stores.add(store_path)
        configs: dict[str, dict[str, object]] = {}
        for item in items:
            cfg = configs.get(item.project)
            if cfg is None:
                cfg = configs[item.project] = config_mod.load(env, item.project)
            import_file(store, item, cfg, totals, masking)
            if on_file is not None:
                on_file(item)
    finally:
        store.close()
        if scratch is not None:
            scratch.cleanup()


def _masking(store_path: str, root: str) -> Context:
    """The hooks' context as masking needs it: the data root and the store."""
    return Context({}, root, store_path, deadline=float("inf"))


def head_hash(head: bytes, offset: int) -> str:
    """The hash of a file's first ``min(HEAD_BYTES, offset)`` bytes (``head``: at least those)."""
    return sha256_hex(head[: min(HEAD_BYTES, offset)].decode("latin-1"))


class FileRun:
    """What one import of a file carries from window to window.

    Its progress so far, the compactions before the next window (to number those in it),
    the calls taken (a window re-reads what lies past its offset: those are skipped
    there, and in a dry run, whose windows roll back, too), the prompts and other events
    without a call added (a later window must not add one again that the cap evicted in
    between, nor a dry run's, rolled back), the open failures per session
    (as one read of the whole would track them), and the records' envelope so far (cwd,
    branch, first and last time), which every session's row gets as from one whole read.
    """

    __slots__ = (
        "added",
        "boundaries",
        "branch",
        "counted_seq",
        "cwd",
        "first_at",
        "known_calls",
        "last_at",
        "masking",
        "open_errors",
        "progress",
        "replayed",
        "replayed_counted",
        "seen",
        "session_id",
        "sessions",
        "worktree",
    )

    def __init__(self, progress: store_imports.Progress, boundaries: int, masking: Context) -> None:
        self.progress = progress
        # What the hooks' masking needs beyond the config: the store's memory of the
        # secrets masked before (handlers._masked; ctxmode.secret_memory).
        self.masking = masking
        self.boundaries = boundaries
        self.counted_seq = boundaries  # compactions counted in the totals up to here
        self.added = 0
        self.session_id = ""
        self.cwd = ""
        self.branch = ""
        self.worktree: str | None = None
        self.first_at = ""
        self.last_at = ""
        self.known_calls: dict[str, set[str]] = {}
        self.open_errors: dict[str, set[str]] = {}
        self.seen: dict[str, set[tuple[str, str]]] = {}  # the prompts (and such) added so far
        self.sessions: dict[str, None] = {}  # the sessions given a row, in order
        self.replayed: set[tuple[str, int]] = set()  # compactions given a replayed snapshot
        self.replayed_counted = 0

    def take(self, chunk: Chunk) -> None:
        """Widen the envelope by a window's records."""
        self.session_id = self.session_id or chunk.session_id
        self.cwd = self.cwd or chunk.cwd
        self.branch = self.branch or chunk.branch
        if chunk.first_at and (not self.first_at or chunk.first_at < self.first_at):
            self.first_at = chunk.first_at
        self.last_at = max(self.last_at, chunk.last_at)

    def worktree_of_cwd(self) -> str:
        if self.worktree is None:
            self.worktree = worktree_of(self.cwd)
        return self.worktree


def import_file(
    store: Store,
    item: Transcript,
    cfg: dict[str, object],
    totals: Totals,
    masking: Context | None = None,
) -> int:
    """Import what ``item`` holds past its saved progress, a window at a time; return how
    many events were added. ``masking``: the hooks' context for the store (its memory of
    masked secrets); None: the store's data root, read from its path."""
    if masking is None:
        masking = _masking(store.path, os.path.dirname(os.path.dirname(store.path)))
    before = store_imports.progress(store, item.path)
    if before is not None and before.offset == item.size and before.mtime_ns == item.mtime_ns:
        totals.unchanged += 1
        return 0
    with open_file(item.reader, item.path) as fh:
        size = fh.seek(0, os.SEEK_END)
        fh.seek(0)
        head = fh.read(HEAD_BYTES)
        start = 0
        if before is not None:
            if size >= before.offset and head_hash(head, before.offset) == before.head_hash:
                start = before.offset
            else:
                before = None  # replaced under the same name: start again
        totals.files += 1
        totals.bytes += size - start
        run = FileRun(
            before or store_imports.Progress(item.path),
            _boundaries_before(item.reader, fh, start),
            masking,
        )
        pos = start
        window = WINDOW
        while True:
            data, last = _read_window(fh, pos, size, window)
            if data is None:  # one line longer than the window
                window *= 2
                continue
            chunk = item.reader.read(
                data,
                agent_id=item.agent_id,
                agent_type=item.agent_type,
                path=item.path,
                boundaries_before=run.boundaries,
                at_end=last,
            )
            if chunk.offset == 0 and not last:
                window *= 2  # a call's result (or a summary) lies beyond: look further
                continue
            _import_window(store, item, cfg, totals, run, chunk, pos + chunk.offset, head, last)
            run.boundaries += chunk.boundaries
            pos += chunk.offset
            if last:
                break
            window = WINDOW
    return run.added


def _read_window(fh: BinaryIO, pos: int, size: int, window: int) -> tuple[bytes | None, bool]:
    """``(bytes from pos up to a line end, is it the file's last window?)``; ``None`` for
    the bytes when no line ends within ``window``."""
    fh.seek(pos)
    data = fh.read(max(0, min(window, size - pos)))
    if pos + len(data) >= size or len(data) < window:
        return data, True  # the rest of the file (bytes past its size then are for next time)
    cut = data.rfind(b"\n") + 1
    if cut == 0:
        return None, False
    return (data[:cut] if cut < len(data) else data), False


def _boundaries_before(reader: ModuleType, fh: BinaryIO, end: int) -> int:
    """Compactions in the file's first ``end`` bytes (a resumed import numbers on from
    them), counted a window at a time."""
    mark = reader.BOUNDARY_MARK
    count = pos = 0
    tail = b""
    fh.seek(0)
    while pos < end:
        block = fh.read(min(WINDOW, end - pos))
        if not block:
            break
        pos += len(block)
        data = tail + block
        count += reader.count_boundaries(data)
        tail = data[1 - len(mark) :]  # a mark cut in two is counted with the next block
    return count


def _import_window(
    store: Store,
    item: Transcript,
    cfg: dict[str, object],
    totals: Totals,
    run: FileRun,
    chunk: Chunk,
    offset: int,
    head: bytes,
    last: bool,
) -> None:
    """One window's chunk → the store, in one transaction with the file's progress."""
    run.take(chunk)
    parts, compactions = _convert(store, chunk, item, cfg, run)
    prior = run.progress
    if last:
        # The file's last window: every session given a row learns the whole run's
        # envelope (its last time may lie in a window that held none of its events), and
        # so does the file's session an earlier run gave events to.
        if prior.events and prior.session_id and run.last_at:
            run.sessions.setdefault(prior.session_id, None)
        named = {p.session_id for p in parts}
        parts.extend(_part(run, item, sid) for sid in run.sessions if sid not in named)
    done = store_imports.Progress(
        item.path,
        run.session_id or prior.session_id,
        offset,
        head_hash(head, offset),
        item.mtime_ns,
        prior.records + chunk.records,
        prior.events,
        prior.skipped + chunk.skipped + chunk.unknown,
    )
    cap = int(cfg["max_events_per_session"])  # type: ignore[call-overload]
    added = store_imports.import_chunk(
        store,
        parts,
        compactions,
        done,
        max_events=cap,
        dry_run=totals.dry_run,
        seen=run.seen,
        replay=_replayer(item, cfg, run.replayed) if last and not totals.dry_run else None,
    )
    totals.replayed += len(run.replayed) - run.replayed_counted
    run.replayed_counted = len(run.replayed)
    done.events += added
    run.progress = done
    run.added += added
    totals.records += chunk.records
    totals.skipped += chunk.skipped
    totals.unknown += chunk.unknown
    for name, count in chunk.unknown_types.items():
        totals.unknown_types[name] = totals.unknown_types.get(name, 0) + count
    totals.truncated += int(chunk.truncated)
    totals.events += added
    for _, seq, *_ in compactions:
        if seq > run.counted_seq:  # not one read again past the last window's offset
            run.counted_seq = seq
            totals.compactions += 1
    totals.sessions.update(p.session_id for p in parts)


def _replayer(
    item: Transcript, cfg: dict[str, object], done: set[tuple[str, int]]
) -> Callable[[str, list[tuple[int, int]], list[SessionEvent]], list[str]]:
    """The snapshots the hooks would have built at a session's compactions, each from the
    events before it: the project's budget and lookup command, the hooks' builder (in one
    pass: ``snapshot.build_snapshots``). Kept on the compaction rows
    (``compaction.replayed``), never claimed or injected. ``done``: the ``(session,
    compaction)`` replayed, for the totals."""
    from ctxmode import handlers
    from ctxmode.snapshot import build_snapshots

    budget = cfg.get("snapshot_budget", 4096)
    command = handlers.search_command(item.project)

    def replay(
        session_id: str, points: list[tuple[int, int]], events: list[SessionEvent]
    ) -> list[str]:
        done.update((session_id, seq) for _end, seq in points)
        return build_snapshots(
            events,
            points,
            session_id=session_id,
            budget=budget if isinstance(budget, int) else 4096,
            search_command=command,
        )

    return replay


def _part(run: FileRun, item: Transcript, session_id: str) -> store_imports.SessionPart:
    part = store_imports.SessionPart(session_id, item.project, item.reader.CLIENT)
    part.cwd, part.branch = run.cwd, run.branch
    part.worktree = run.worktree_of_cwd()
    part.first_at, part.last_at = run.first_at, run.last_at
    run.sessions[session_id] = None
    return part


def _convert(
    store: Store, chunk: Chunk, item: Transcript, cfg: dict[str, object], run: FileRun
) -> tuple[list[store_imports.SessionPart], list[tuple[str, int, str, str | None, str]]]:
    """The chunk's items → per-session events (the hooks' extraction) and compaction rows."""
    from ctxmode import handlers

    parts: dict[str, store_imports.SessionPart] = {}
    compactions: list[tuple[str, int, str, str | None, str]] = []
    open_errors = run.open_errors
    known_calls = run.known_calls
    seq = chunk.boundaries_before
    patterns = cfg.get("redact_patterns")
    extras: tuple[Any, ...] = tuple(patterns) if isinstance(patterns, list) else ()

    def part_of(session_id: str) -> store_imports.SessionPart:
        part = parts.get(session_id)
        if part is None:
            part = parts[session_id] = _part(run, item, session_id)
        return part

    for entry in chunk.items:
        if isinstance(entry, Boundary):
            seq += 1
            sid = entry.session_id or chunk.session_id
            if not sid:
                continue
            part_of(sid)
            summary = None
            if entry.summary is not None:
                summary = (
                    item.reader.compact_summary(_mask_text(entry.summary, extras, run.masking))
                    or None
                )
            compactions.append((sid, seq, entry.trigger, summary, entry.at))
            continue
        inp = entry.inp
        if not inp.session_id:
            continue
        if inp.tool_use_id:
            # Captured already (by the hooks, or an earlier run that read past it): not
            # worth extracting again. The store checks once more, inside its transaction.
            known = known_calls.get(inp.session_id)
            if known is None:
                known = known_calls[inp.session_id] = store_imports.known_calls(
                    store, inp.session_id
                )
            if inp.tool_use_id in known:
                continue
            known.add(inp.tool_use_id)  # taken: a window that reads it again skips it
        inp.project_dir = item.project
        inp = handlers._masked(inp, cfg, run.masking)
        events = handlers._extract(inp, cfg)
        errors = open_errors.get(inp.session_id)
        if errors is None:
            errors = open_errors[inp.session_id] = store.open_error_keys(inp.session_id)
        events.extend(_resolution(inp, events, errors))
        if not events:
            continue
        events[0].bytes_avoided = inp.size
        part = part_of(inp.session_id)
        for event in events:
            event.created_at = entry.at or None
            event.source_hook = store_imports.SOURCE
            _track_error(event, errors)
        part.events.extend(events)
    return list(parts.values()), compactions


def _mask_text(text: str, extras: tuple[Any, ...], masking: Context | None = None) -> str:
    """A whole text masked as the hooks mask a payload string (before any cut), with
    the secrets the store remembers (``masking``'s memory, once loaded)."""
    from ctxmode import redact

    text = redact.strip_private(text)
    text = redact.mask(text, extras) if extras else redact.mask(text)
    memory = masking.memory if masking is not None else None
    return redact.mask_known(text, memory) if getattr(memory, "lengths", None) else text


def _resolution(inp: HookInput, events: list[SessionEvent], errors: set[str]) -> list[SessionEvent]:
    """``error_resolved`` when this success reruns an open failure (as the hook handler does)."""
    if inp.event != "PostToolUse" or not inp.outcome_known or not errors:
        return []
    if any(e.type == "output_error" for e in events):
        return []
    from ctxmode.extract.errors import failure_key, resolution

    key = failure_key(inp)
    if not key or key not in errors:
        return []
    return [resolution(inp, key, source_hook=None)]


def _track_error(event: SessionEvent, errors: set[str]) -> None:
    if event.type not in ("tool_error", "output_error", "error_resolved"):
        return
    from ctxmode import fastjson

    try:
        value = fastjson.loads(event.data)
    except fastjson.JSONDecodeError:
        return
    key = value.get("key") if isinstance(value, dict) else None
    if isinstance(key, str) and key:
        if event.type == "error_resolved":
            errors.discard(key)
        else:
            errors.add(key)
