"""A side file for events that could not be stored in time.

When another process holds the store's write lock past a hook's deadline, the events
it accepted are appended here (one JSON line per hook call, a single ``O_APPEND``
write, so concurrent writers never interleave) and the next hook that gets the lock
moves them into the store in its own transaction. The file is claimed by an atomic
rename, so two hooks never import the same lines twice.

Files: ``<data root>/spool/<store name>.jsonl``.
"""

from __future__ import annotations

import os

from ctxmode import fastjson
from ctxmode.events import SessionEvent

# Never let a stuck store turn the spool into an unbounded file.
MAX_SPOOL_BYTES = 8 * 1024 * 1024

_FIELDS = ("type", "category", "priority", "data", "agent_id", "agent_type", "tool_use_id",
           "bytes_avoided", "source_hook", "created_at")


def spool_path(root: str, store_path: str) -> str:
    name = os.path.splitext(os.path.basename(store_path))[0]
    return os.path.join(root, "spool", name + ".jsonl")


def put(root: str, store_path: str, session_id: str, events: list[SessionEvent]) -> None:
    from ctxmode.hooklog import utc_now_iso

    path = spool_path(root, store_path)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    try:
        if os.stat(path).st_size > MAX_SPOOL_BYTES:
            raise OSError(f"spool {path} is full")
    except FileNotFoundError:
        pass
    now = utc_now_iso()
    record = {
        "session_id": session_id,
        "events": [
            {name: getattr(event, name) for name in _FIELDS} | {"created_at": event.created_at or now}
            for event in events
        ],
    }
    line = (fastjson.dumps(record) + "\n").encode("utf-8", "surrogatepass")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def take(root: str, store_path: str) -> tuple[str, list[tuple[str, list[SessionEvent]]]]:
    """Claim and read the spool: (claimed file, batches); ("", []) when there is none.

    The caller stores the batches, then calls :func:`finish`, or :func:`give_back` if
    storing failed, so nothing spooled is lost.
    """
    path = spool_path(root, store_path)
    if not os.path.exists(path):  # the common case: one failed stat
        return "", []
    claimed = f"{path}.{os.getpid()}.taking"
    try:
        os.rename(path, claimed)
        with open(claimed, "rb") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return "", []  # another hook took it first
    batches: list[tuple[str, list[SessionEvent]]] = []
    for line in lines:
        try:
            record = fastjson.loads(line)
            session_id = record["session_id"]
            events = [
                SessionEvent(
                    str(item["type"]), str(item["category"]), int(item["priority"]),
                    str(item["data"]),
                    agent_id=item.get("agent_id"), agent_type=item.get("agent_type"),
                    tool_use_id=item.get("tool_use_id"),
                    bytes_avoided=int(item.get("bytes_avoided") or 0),
                    source_hook=item.get("source_hook"), created_at=item.get("created_at"),
                )
                for item in record["events"]
            ]
        except (fastjson.JSONDecodeError, KeyError, TypeError, ValueError):
            continue  # a torn or foreign line: skip it, keep the rest
        batches.append((str(session_id), events))
    return claimed, batches


def finish(claimed: str) -> None:
    if claimed:
        os.unlink(claimed)


def give_back(claimed: str, root: str, store_path: str) -> None:
    """Append a claimed spool file back to the live spool."""
    if not claimed:
        return
    with open(claimed, "rb") as handle:
        data = handle.read()
    fd = os.open(spool_path(root, store_path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.unlink(claimed)
