"""This project's store: whether it opens, its schema and integrity, what it holds, and
what it left behind (corrupt copies moved aside, snapshots never injected, incidents,
events waiting in the spool). The store is read once (:func:`read_store`); each finding
is a small function over what was read."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any

from ctxmode.doctor.core import FAIL, OK, WARN, Check, Context, age
from ctxmode.sizes import file_size, human_size
from ctxmode.wording import plural

# A compaction snapshot still unclaimed after this long was never injected.
STALE_COMPACT_SECONDS = 600


@dataclass(frozen=True)
class StoreFacts:
    """What doctor read from an open store."""

    path: str
    version: int
    sessions: list[dict[str, Any]]
    resumes: list[dict[str, Any]]
    fts: bool
    incidents: list[tuple[str, str]]
    integrity: str  # "ok", or the problems, one per line

    @property
    def unclaimed(self) -> list[dict[str, Any]]:
        return [row for row in self.resumes if not row.get("consumed")]


def check_store(ctx: Context) -> list[Check]:
    path = ctx.store_path
    aside = moved_aside_checks(path) + merged_backup_checks(path)
    if not os.path.exists(path):
        return [
            Check(
                "store",
                "store",
                OK,
                f"no store yet for {ctx.project_dir} (nothing recorded here so far)",
            ),
            *aside,
        ]
    facts = read_store(path)
    if isinstance(facts, Check):  # it cannot be opened or read
        return [facts, *aside]
    return [
        summary_check(facts, ctx),
        *aside,
        *stale_snapshot_checks(facts, ctx),
        *incident_checks(facts),
        *spool_checks(path, ctx),
    ]


def _corrupt_leftovers(store_path: str) -> list[str]:
    folder, name = os.path.split(store_path)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    prefix = name + ".corrupt-"
    return sorted(
        os.path.join(folder, n)
        for n in names
        if n.startswith(prefix) and not n.endswith(("-wal", "-shm"))
    )


def moved_aside_checks(path: str) -> list[Check]:
    """Corrupt copies of this project's store that a recovery moved aside."""
    leftovers = _corrupt_leftovers(path)
    if not leftovers:
        return []
    return [
        Check(
            "store",
            "moved aside",
            WARN,
            f"{plural(len(leftovers), 'corrupt store')} of this project "
            f"{'was' if len(leftovers) == 1 else 'were'} moved aside "
            f"({human_size(sum(file_size(p) for p in leftovers))})",
            "nothing was lost from the current store; delete them once you no longer need "
            "them: rm " + " ".join(shlex.quote(p) + "*" for p in leftovers),
            tuple(leftovers),
        )
    ]


def merged_backup_checks(path: str) -> list[Check]:
    """The stores of older versions (per folder, per worktree, a moved checkout's)
    merged into this repository's store, kept under backup names."""
    from ctxmode.store.merge import backups

    kept = [group[0] for group in backups(path)]
    if not kept:
        return []
    size = sum(file_size(p) for group in backups(path) for p in group)
    return [
        Check(
            "store",
            "merged backups",
            OK,
            f"{plural(len(kept), 'older store')} of this repository "
            f"{'was' if len(kept) == 1 else 'were'} merged into its store and kept as "
            f"{'a backup' if len(kept) == 1 else 'backups'} ({human_size(size)})",
            "everything in them is in the store; ctxmode purge cleans them too; delete them "
            "when you no longer want them: rm " + " ".join(shlex.quote(p) + "*" for p in kept),
            tuple(kept),
        )
    ]


def read_store(path: str) -> StoreFacts | Check:
    """Everything the store checks need, read through one read-only connection; or the
    ``store`` finding that says why it cannot be opened or read."""
    from ctxmode.migrations import SCHEMA_VERSION
    from ctxmode.store import Store, StoreCorrupt, StoreError, StoreTooNew

    try:
        store = Store.open(path, readonly=True)
    except StoreTooNew as exc:
        return Check("store", "store", FAIL, f"{exc}", "upgrade ctxmode: ./install.sh")
    except StoreCorrupt as exc:
        return Check(
            "store",
            "store",
            FAIL,
            f"{path} is corrupt: {exc}",
            "the next hook call moves it aside and starts afresh; or ctxmode purge --project",
        )
    except StoreError as exc:
        if "predates" in str(exc):  # an older schema: harmless, migrated on next use
            return Check("store", "store", WARN, str(exc), "the next hook call migrates it")
        return Check(
            "store",
            "store",
            FAIL,
            f"{path} cannot be opened: {exc}",
            "check the file's owner and permissions (chmod 600, owned by you)",
        )
    try:
        version = store.schema_version()
        return StoreFacts(
            path=path,
            version=version,
            sessions=store.sessions(),
            resumes=store.resumes(),
            fts=store.fts_enabled(),
            incidents=store.incidents(),
            # A read-only connection cannot run FTS5's integrity-check command: a current
            # store is checked through a plain read-write open (which changes nothing).
            integrity=store.integrity_check() if version != SCHEMA_VERSION else _integrity(path),
        )
    except StoreError as exc:
        return Check(
            "store",
            "store",
            FAIL,
            f"{path} cannot be read: {exc}",
            "the next hook call moves a corrupt store aside and starts afresh; "
            "or ctxmode purge --project",
        )
    finally:
        store.close()


def _integrity(path: str) -> str:
    from ctxmode.store import Store, StoreError

    try:
        with Store.open(path) as store:
            return store.integrity_check()
    except StoreError as exc:
        return str(exc)


def summary_check(facts: StoreFacts, ctx: Context) -> Check:
    """The ``store`` line: schema, size, sessions, events, integrity."""
    from ctxmode.migrations import SCHEMA_VERSION
    from ctxmode.store import parse_iso

    sessions = facts.sessions
    events = sum(int(row.get("event_count") or 0) for row in sessions)
    last = max((str(row.get("last_event_at") or "") for row in sessions), default="")
    last_text = f"last event {age(ctx.now - parse_iso(last))} ago" if last else "no events"
    summary = (
        f"schema {facts.version}, {human_size(file_size(facts.path))}, "
        f"{plural(len(sessions), 'session')}, {plural(events, 'event')}, {last_text}, "
        f"{plural(len(facts.unclaimed), 'unclaimed snapshot')}"
        + ("" if facts.fts else ", search without FTS5")
    )
    details = [f"path: {facts.path}", f"project: {ctx.project_dir}"]
    if facts.integrity != "ok":
        return Check(
            "store",
            "store",
            FAIL,
            f"integrity check failed: {facts.integrity.splitlines()[0]}",
            "ctxmode purge --project (the next hook call then starts a fresh store)",
            tuple(details + facts.integrity.splitlines()[:10]),
        )
    if facts.version != SCHEMA_VERSION:
        return Check(
            "store",
            "store",
            WARN,
            f"{summary} (this ctxmode writes {SCHEMA_VERSION})",
            "the next hook call migrates it",
            tuple(details),
        )
    return Check("store", "store", OK, summary + "; integrity ok", details=tuple(details))


def stale_snapshot_checks(facts: StoreFacts, ctx: Context) -> list[Check]:
    """Compaction snapshots left unclaimed: SessionStart ``compact`` never injected them."""
    from ctxmode.store import parse_iso

    stale = [
        row
        for row in facts.unclaimed
        if row.get("kind") == "compact"
        and ctx.now - parse_iso(str(row.get("created_at") or "")) > STALE_COMPACT_SECONDS
    ]
    if not stale:
        return []
    return [
        Check(
            "store",
            "snapshots",
            WARN,
            f"{plural(len(stale), 'compaction snapshot')} "
            f"{'was' if len(stale) == 1 else 'were'} never injected (SessionStart compact "
            "did not run, or its output was dropped)",
            "check that SessionStart is registered with the 'compact' matcher; "
            "ctxmode show-snapshot shows them",
            tuple(f"session {row['session_id']} #{row['compact_seq']}" for row in stale),
        )
    ]


def incident_checks(facts: StoreFacts) -> list[Check]:
    """Incidents the store recorded (a corrupt store rebuilt)."""
    incidents = facts.incidents
    if not incidents:
        return []
    return [
        Check(
            "store",
            "incidents",
            WARN,
            f"{plural(len(incidents), 'incident')} recorded, newest: {incidents[-1][1]}",
            "the store was rebuilt; delete the moved-aside files when no longer needed",
            tuple(text for _, text in incidents[-5:]),
        )
    ]


def spool_checks(path: str, ctx: Context) -> list[Check]:
    """Events spooled while the store was locked, not imported yet."""
    spool = os.path.join(ctx.root, "spool", os.path.splitext(os.path.basename(path))[0] + ".jsonl")
    if not os.path.exists(spool):
        return []
    return [
        Check(
            "store",
            "spool",
            WARN,
            f"{human_size(os.path.getsize(spool))} of events wait in {spool} (the store was "
            "locked); the next hook call stores them",
            "nothing to do unless it keeps growing: then look for a process holding the store",
        )
    ]
