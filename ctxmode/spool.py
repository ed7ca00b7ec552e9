"""A side file for events that could not be stored in time.

When another process holds the store's write lock past a hook's deadline, the events
it accepted are appended here (one JSON line per hook call, a single ``O_APPEND``
write, so concurrent writers never interleave) and the next hook that gets the lock
moves them into the store in one transaction. The file is claimed by an atomic
rename, so two hooks never import the same lines twice, and each line's marker is
recorded in that transaction, so a file left behind by an importer killed after its
commit is not imported again either.

Files: ``<data root>/spool/<store name>.jsonl``.
"""

from __future__ import annotations

import os

from ctxmode import fastjson, paths
from ctxmode.events import SessionEvent

TYPE_CHECKING = False
if TYPE_CHECKING:
    # (session id, events, marker, call_at or None): what Store.add_batches takes.
    Batch = tuple[str, list[SessionEvent], str, int | None]

# Never let a stuck store turn the spool into an unbounded file.
MAX_SPOOL_BYTES = 8 * 1024 * 1024

_FIELDS = (
    "type",
    "category",
    "priority",
    "data",
    "agent_id",
    "agent_type",
    "tool_use_id",
    "bytes_avoided",
    "source_hook",
    "created_at",
)


def spool_path(root: str, store_path: str) -> str:
    return paths.spool_file(root, store_path)


def put(
    root: str,
    store_path: str,
    session_id: str,
    events: list[SessionEvent],
    call_at: int | None = None,
) -> None:
    from ctxmode.hooklog import utc_now_iso

    path = spool_path(root, store_path)
    paths.ensure_dir(os.path.dirname(path))  # 0700 for every folder it makes
    try:
        if os.stat(path).st_size > MAX_SPOOL_BYTES:
            raise OSError(f"spool {path} is full")
    except FileNotFoundError:
        pass
    now = utc_now_iso()
    record: dict[str, object] = {
        "session_id": session_id,
        "events": [
            {name: getattr(event, name) for name in _FIELDS}
            | {"created_at": event.created_at or now}
            for event in events
        ],
    }
    # The call's place in the session (ctxmode.inflight); without an exact one (null),
    # the store gives the call the next place of the session when the spool is drained.
    record["call_at"] = call_at
    # The leading newline ends a line torn by an earlier partial write (a full disk),
    # so that it cannot swallow this record; take() skips the blank lines.
    line = ("\n" + fastjson.dumps(record) + "\n").encode("utf-8", "surrogatepass")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def take(root: str, store_path: str) -> tuple[str, list[Batch]]:
    """Claim and read the spool: (claimed file, batches); ("", []) when there is none.

    Each batch is ``(session_id, events, marker)``: the marker (``spool:`` + a hash of
    the line) lets ``Store.add_batches`` import each line once, however often a killed
    importer leaves it behind. The caller stores the batches, then calls
    :func:`finish`, or :func:`give_back` if storing failed, so nothing spooled is lost. A claimed file left behind by a hook
    that was killed before it could finish (``<spool>.<dead pid>.taking``) is claimed
    again here: a kill between the claim and the commit must not lose the events.
    """
    path = spool_path(root, store_path)
    folder, live = os.path.split(path)
    try:
        # One directory read, like the single stat it replaces: the folder only
        # exists once something was spooled, which is rare.
        names = os.listdir(folder)
    except OSError:
        return "", []
    claimed = f"{path}.{os.getpid()}.taking"
    sources = [name for name in names if name == live or _orphan(name, live)]
    chunks: list[bytes] = []
    for name in sources:
        source = os.path.join(folder, name)
        if not chunks:
            try:
                os.rename(source, claimed)  # atomic: of racing hooks one wins each file
                with open(claimed, "rb") as handle:
                    chunks.append(handle.read())
            except OSError:
                pass  # another hook took it first
            continue
        # A second file (rare): claim it under a name of ours, then merge it into ours.
        # A kill in between leaves both named after this pid: claimable again later.
        extra = f"{path}.{os.getpid()}-{len(chunks)}.taking"
        try:
            os.rename(source, extra)
            with open(extra, "rb") as handle:
                chunk = b"\n" + handle.read()
            _append(claimed, chunk)
            os.unlink(extra)
        except OSError:
            continue
        chunks.append(chunk)
    if not chunks:
        return "", []
    return claimed, _parse(b"".join(chunks))


def _append(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _orphan(name: str, live: str) -> bool:
    """Whether ``name`` is ``<live>.<pid>[-<n>].taking`` of a process that is gone."""
    if not (name.startswith(live + ".") and name.endswith(".taking")):
        return False
    pid_text = name[len(live) + 1 : -len(".taking")].split("-", 1)[0]
    if not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return True  # a namesake before us died: this process has claimed nothing yet
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive (or not ours to signal): still at work
    return False


def _parse(data: bytes) -> list[Batch]:
    from ctxmode.hashing import sha256_hex

    batches: list[Batch] = []
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            record = fastjson.loads(line)
            session_id = record["session_id"]
            events = [
                SessionEvent(
                    str(item["type"]),
                    str(item["category"]),
                    int(item["priority"]),
                    str(item["data"]),
                    agent_id=item.get("agent_id"),
                    agent_type=item.get("agent_type"),
                    tool_use_id=item.get("tool_use_id"),
                    bytes_avoided=int(item.get("bytes_avoided") or 0),
                    source_hook=item.get("source_hook"),
                    created_at=item.get("created_at"),
                )
                for item in record["events"]
            ]
        except Exception:  # a torn or foreign line: skip it, keep the rest
            # (Exception, not only JSONDecodeError: in a hook process without the json
            # package, _json reports some malformed input as SystemError.)
            continue
        call_at = record.get("call_at")
        marker = "spool:" + sha256_hex(line.decode("latin-1"))
        batches.append((str(session_id), events, marker, call_at if type(call_at) is int else None))
    return batches


def finish(claimed: str) -> None:
    if claimed:
        os.unlink(claimed)


def release(claimed: str, root: str, store_path: str, drop: set[str]) -> tuple[int, int]:
    """Give a claimed spool back without the records of the sessions in ``drop``.

    For ``ctxmode purge``: returns (records dropped, bytes dropped). A torn line that
    names a dropped session goes too: it may hold part of that session's data.
    """
    if not claimed:
        return 0, 0
    with open(claimed, "rb") as handle:
        data = handle.read()
    needles = [sid.encode("utf-8") for sid in drop if sid]
    kept: list[bytes] = []
    dropped = dropped_bytes = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            gone = str(fastjson.loads(line)["session_id"]) in drop
        except Exception:  # torn or foreign (see _parse)
            gone = any(needle in line for needle in needles)
        if gone:
            dropped += 1
            dropped_bytes += len(line) + 1
        else:
            kept.append(line)
    if kept:
        _append(spool_path(root, store_path), b"\n".join(kept) + b"\n")
    os.unlink(claimed)
    return dropped, dropped_bytes


def give_back(claimed: str, root: str, store_path: str) -> None:
    """Append a claimed spool file back to the live spool."""
    if not claimed:
        return
    with open(claimed, "rb") as handle:
        data = handle.read()
    _append(spool_path(root, store_path), data if data.endswith(b"\n") else data + b"\n")
    os.unlink(claimed)
