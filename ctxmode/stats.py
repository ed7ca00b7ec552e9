"""What a store holds and what ctxmode put into the model's context: ``ctxmode stats``.

Two byte counts, each counted once (the README defines them for users):

- ``bytes_returned``: bytes ctxmode put into a model's context. The UTF-8 size of every
  snapshot that was *claimed* (handed to a session at SessionStart or UserPromptSubmit;
  snapshots retired unread do not count), plus the bytes printed by every ``ctxmode
  search`` run inside a Claude Code session (``Store.record_search``).
- ``bytes_avoided``: the raw tool traffic the stored events stand for, the sum of the
  events' ``bytes_avoided`` column (the size of the tool_input and tool_response of
  each recorded call, set once per call by the hook handler).

A snapshot's bytes count for the session it was built from (the events it stands for),
whichever session claimed it; a search's bytes count for the session that ran it.

``bytes_avoided`` is no measure of what ctxmode adds to a compacted session. That figure
is per compaction (``compaction_coverage``): the key items the snapshot restored that the
client's own summary of the compaction did not carry (``ctxmode.snapshot.coverage``).

Not on the hot path: only the CLI imports this module.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from ctxmode.events import CATEGORIES
from ctxmode.store import Store
from ctxmode.wording import CLAIMED, RETIRED, snapshot_state

# Per-session (and overall) counters, in display order.
COUNTERS = (
    "events",
    "evicted",
    "compactions",
    "snapshots_stored",
    "snapshots_claimed",
    "snapshots_retired",
    "snapshot_bytes",
    "searches",
    "search_bytes",
    "bytes_returned",
    "bytes_avoided",
    "summaries",
    "key_items",
    "key_items_kept",
    "replayed",
    "replayed_key_items",
    "replayed_key_items_kept",
)


def is_claimed(resume: dict[str, Any]) -> bool:
    """Whether a snapshot row reached a session (claimed), rather than being retired."""
    return snapshot_state(resume) == CLAIMED


def ratio(avoided: int, returned: int) -> float | None:
    """Raw tool bytes per byte put into the context; None when nothing was returned."""
    return round(avoided / returned, 2) if returned > 0 else None


def _by_category(counts: dict[str, int]) -> dict[str, int]:
    """Known categories in contract order, then any others by name."""
    known = [c for c in CATEGORIES if counts.get(c)]
    extra = sorted(c for c in counts if c not in CATEGORIES and counts[c])
    return {c: counts[c] for c in known + extra}


def compaction_coverage(
    snapshots: list[dict[str, Any]], rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Per compaction of one session (its ``compact`` snapshot rows, with their text, and
    its ``compaction`` rows): the summary recorded or not, the snapshot given (``full``,
    ``pointer`` or ``none``; ``replayed``: an imported compaction the hooks never saw,
    with the snapshot they would have built then, ``compaction.replayed``), and what the
    summary kept of the snapshot's key items."""
    from ctxmode.snapshot.coverage import coverage
    from ctxmode.snapshot.repeat import pointer_since

    by_seq = {int(r["compact_seq"]): r for r in snapshots if r.get("kind") == "compact"}
    row_of = {int(r["compact_seq"]): r for r in rows}
    out = []
    for seq in sorted(set(by_seq) | set(row_of)):
        row = row_of.get(seq) or {}
        summary = row.get("summary")
        text = by_seq[seq].get("snapshot") if seq in by_seq else None
        replayed = text is None and bool(row.get("replayed"))
        if replayed:
            text = row["replayed"]
        since = pointer_since(str(text)) if text and not replayed else None
        found = coverage(str(text), summary) if text and since is None else None
        shape = "none" if text is None else ("pointer" if since else "full")
        out.append(
            {
                "compact_seq": seq,
                "trigger": row.get("trigger") or "",
                "origin": row.get("origin"),
                "summary_recorded": summary is not None,
                "summary_bytes": len(str(summary).encode("utf-8")) if summary else 0,
                "snapshot": "replayed" if replayed else shape,
                "unchanged_since": since,
                "key_items": found["total"] if found else 0,
                "summary_kept": found["kept"] if found else None,
                "restored": found["restored"] if found else [],
                "items": found["items"] if found else [],
            }
        )
    return out


def session_entry(
    meta: dict[str, Any],
    totals: list[tuple[str, str, int, int]],
    resumes: list[dict[str, Any]],
    tally: tuple[int, int],
    compactions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One session's statistics from its meta row, event totals, snapshot rows, searches
    and (``compaction_coverage``) its compactions."""
    categories: dict[str, int] = {}
    avoided = 0
    for _sid, category, count, nbytes in totals:
        categories[category] = categories.get(category, 0) + count
        avoided += nbytes
    claimed = [r for r in resumes if is_claimed(r)]
    retired = [r for r in resumes if snapshot_state(r) == RETIRED]
    snapshot_bytes = sum(int(r.get("bytes") or 0) for r in claimed)
    searches, search_bytes = tally
    returned = snapshot_bytes + search_bytes
    compactions = compactions or []
    # Key items count where a summary can be held against a full snapshot.
    judged = [c for c in compactions if c["summary_recorded"] and c["snapshot"] == "full"]
    replayed = [c for c in compactions if c["summary_recorded"] and c["snapshot"] == "replayed"]
    return {
        "session_id": meta["session_id"],
        "project_dir": meta.get("project_dir"),
        "started_at": meta.get("started_at"),
        "last_event_at": meta.get("last_event_at"),
        "events": sum(categories.values()),
        "events_by_category": _by_category(categories),
        "evicted": int(meta.get("evicted_count") or 0),
        "compactions": int(meta.get("compact_count") or 0),
        "snapshots_stored": len(resumes),
        "snapshots_claimed": len(claimed),
        "snapshots_retired": len(retired),
        "snapshot_bytes": snapshot_bytes,
        "searches": searches,
        "search_bytes": search_bytes,
        "bytes_returned": returned,
        "bytes_avoided": avoided,
        "ratio": ratio(avoided, returned),
        "summaries": sum(1 for c in compactions if c["summary_recorded"]),
        "key_items": sum(c["key_items"] for c in judged),
        "key_items_kept": sum(int(c["summary_kept"] or 0) for c in judged),
        # Imported compactions, held against the snapshot the hooks would have built.
        "replayed": len(replayed),
        "replayed_key_items": sum(c["key_items"] for c in replayed),
        "replayed_key_items_kept": sum(int(c["summary_kept"] or 0) for c in replayed),
        "compaction_coverage": compactions,
    }


def overall_entry(
    sessions: list[dict[str, Any]], other_searches: tuple[int, int] = (0, 0)
) -> dict[str, Any]:
    """The sum of ``sessions``, plus searches recorded outside any stored session."""
    total: dict[str, Any] = {"sessions": len(sessions)}
    for name in COUNTERS:
        total[name] = sum(int(s[name]) for s in sessions)
    categories: dict[str, int] = {}
    for entry in sessions:
        for category, count in entry["events_by_category"].items():
            categories[category] = categories.get(category, 0) + count
    total["events_by_category"] = _by_category(categories)
    total["other_searches"], total["other_search_bytes"] = other_searches
    total["searches"] += other_searches[0]
    total["search_bytes"] += other_searches[1]
    total["bytes_returned"] += other_searches[1]
    total["ratio"] = ratio(total["bytes_avoided"], total["bytes_returned"])
    return total


def file_bytes(path: str) -> int:
    """Size of the store on disk: the database file and its write-ahead log."""
    size = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):  # no WAL, or the file went away meanwhile
            size += os.path.getsize(path + suffix)
    return size


def collect(store: Store, session_id: str | None = None) -> dict[str, Any]:
    """The ``ctxmode stats --json`` document: ``{"store", "overall", "sessions"}``."""
    metas = store.sessions()
    totals = store.event_totals()
    resumes = store.resume_sizes()
    tallies = store.search_tallies()
    snapshots_of: dict[str, list[dict[str, Any]]] = {}
    for snapshot in store.resumes(session_id):
        if snapshot.get("kind") == "compact":
            snapshots_of.setdefault(snapshot["session_id"], []).append(snapshot)
    compactions_of: dict[str, list[dict[str, Any]]] = {}
    for compaction in store.compactions(session_id):
        compactions_of.setdefault(compaction["session_id"], []).append(compaction)
    known = {m["session_id"] for m in metas}
    totals_of: dict[str, list[tuple[str, str, int, int]]] = {}
    for row in totals:
        totals_of.setdefault(row[0], []).append(row)
    resumes_of: dict[str, list[dict[str, Any]]] = {}
    for resume in resumes:
        resumes_of.setdefault(resume["session_id"], []).append(resume)
    sessions = [
        session_entry(
            meta,
            totals_of.get(meta["session_id"], []),
            resumes_of.get(meta["session_id"], []),
            tallies.get(meta["session_id"], (0, 0)),
            compaction_coverage(
                snapshots_of.get(meta["session_id"], []),
                compactions_of.get(meta["session_id"], []),
            ),
        )
        for meta in metas
        if session_id is None or meta["session_id"] == session_id
    ]
    other = (0, 0)
    if session_id is None:
        # Searches of purged sessions, or run where Claude Code gave no session id.
        orphans = [v for k, v in tallies.items() if k not in known]
        other = (sum(v[0] for v in orphans), sum(v[1] for v in orphans))
    stored_events = sum(t[2] for t in totals)
    size = file_bytes(store.path)
    return {
        "store": {
            "path": store.path,
            "file_bytes": size,
            "events": stored_events,
            "sessions": len(metas),
            "bytes_per_event": round(size / stored_events, 1) if stored_events else None,
            "full_text_search": store.fts_enabled(),
        },
        "overall": overall_entry(sessions, other),
        "sessions": sessions,
    }
