"""The per-project SQLite store: events, sessions, resume snapshots, search.

One class, :class:`Store`, composed of one part per subject, each in its module:

- ``connection`` — :class:`~ctxmode.store.connection.Connection`, the base: opening
  (create, migrate, recover: :func:`quarantine` moves a corrupt file aside), closing,
  ``store_meta``, the transaction ``_Tx``, and
  :func:`~ctxmode.store.connection.guarded`, the one decorator every public method wears
  (SQLite errors become :class:`StoreError`; corruption is healed once).
- ``events`` — recording events: dedup, cap, the spool import, reading them back.
- ``sessions`` — ``session_meta``: counts, flags, the list, purge and prune.
- ``resumes`` — snapshots: save, number, claim (exactly one racing claimer wins), retire.
- ``search`` — the query language, FTS5/LIKE matching, ranking, snippets.
- ``maintenance`` — the integrity check, vacuum, and the figures ``ctxmode stats`` reads.
- ``compactions`` — the client's summary of each compaction, beside its snapshot.
- ``values`` — stamps, bindable text, rows (what the store raises is in ``connection``).

Why mixins: each method is written once, in its subject's module, on the shared
connection (a facade over per-subject objects would repeat every signature). But every
hook process imports this package, and a hook's start-up is its cost, so only the
subjects a hook uses (events, sessions, resumes) are mixins; search and maintenance are
plain modules of functions that the short :class:`Store` methods below import on their
first call. The names of ``search`` exported here (:class:`SearchHit`,
:func:`parse_query`, …) load the same way, through the module's ``__getattr__``;
``tests/test_imports.py`` checks that no hook loads either module.

Errors: everything raised is a :class:`StoreError`; :class:`StoreLocked` when the write
lock stayed taken past the busy timeout, :class:`StoreCorrupt` for a file that is not
(or no longer) a database, :class:`StoreMissing` for a read-only open of no file (:class:`StoreOutdated` of an
older schema),
:class:`StoreTooNew` for a schema newer than this code.
"""

from __future__ import annotations

from ctxmode.migrations import StoreError, StoreTooNew
from ctxmode.store.connection import (
    SYNCHRONOUS_MODES,
    StoreCorrupt,
    StoreLocked,
    StoreMissing,
    StoreOutdated,
    guarded,
    quarantine,
)
from ctxmode.store.events import DEDUP_WINDOW, MAX_EVENTS, Events
from ctxmode.store.resumes import RESUME_KINDS, RETIRE_REASONS, Resume, Resumes
from ctxmode.store.sessions import (
    PRUNE_INTERVAL_SECONDS,
    PRUNE_MAX_EVENTS,
    SEARCH_TALLY_PREFIX,
    Sessions,
)
from ctxmode.store.values import EVENT_FIELDS, as_text, iso_utc, parse_iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ctxmode.events import SessionEvent
    from ctxmode.store.query import (
        SNIPPET_CHARS,
        SNIPPET_MARK,
        analyze,
        make_snippet,
        parse_query,
    )
    from ctxmode.store.search import (
        RECENCY_HALF_LIFE_DAYS,
        RECENCY_WEIGHT,
        SEARCH_CANDIDATES,
        SearchHit,
        SearchHits,
        blend,
    )

__all__ = [
    "DEDUP_WINDOW",
    "MAX_EVENTS",
    "PRUNE_INTERVAL_SECONDS",
    "PRUNE_MAX_EVENTS",
    "RECENCY_HALF_LIFE_DAYS",
    "RECENCY_WEIGHT",
    "RESUME_KINDS",
    "RETIRE_REASONS",
    "SEARCH_CANDIDATES",
    "SEARCH_TALLY_PREFIX",
    "SNIPPET_CHARS",
    "SNIPPET_MARK",
    "SYNCHRONOUS_MODES",
    "Resume",
    "SearchHit",
    "SearchHits",
    "Store",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "StoreMissing",
    "StoreOutdated",
    "StoreTooNew",
    "analyze",
    "blend",
    "iso_utc",
    "make_snippet",
    "parse_iso",
    "parse_query",
    "quarantine",
]


class Store(Events, Sessions, Resumes):
    """One open store file. Not shared between processes; cheap to open per hook.

    ``Store.open(path, ...)`` opens it (see ``connection.Connection.open``). The methods
    defined here reach the subjects a hook never needs, importing each on first use.
    """

    @guarded
    def dump(self, session_id: str | None = None) -> dict[str, Any]:
        """``{"sessions": [{…, "events", "resumes"}]}`` with each event's ``data`` as stored
        (text); ``ctxmode dump --json`` (``cli/dump.py``) decodes it and adds ``format``."""
        result = []
        for meta in self.sessions():
            if session_id is not None and meta["session_id"] != session_id:
                continue
            meta["events"] = [
                {name: getattr(event, name) for name in EVENT_FIELDS}
                for event in self.session_events(meta["session_id"])
            ]
            meta["resumes"] = self.resumes(meta["session_id"])
            result.append(meta)
        return {"sessions": result}

    @guarded
    def search(
        self,
        query: str,
        *,
        session_id: str | None = None,
        category: str | Sequence[str] | None = None,
        type: str | Sequence[str] | None = None,
        since: str | None = None,
        limit: int = 20,
        worktree: str | None = None,
        client: Sequence[str | None] | None = None,
    ) -> SearchHits:
        """Events whose data *values* share a word, identifier or phrase with ``query``,
        best first (relevance, recency), each with a ``snippet``; the list's ``total``
        says how many matched. ``category`` and ``type``: one value or several;
        ``worktree``: only sessions that ran in that work tree; ``client``: only sessions
        whose ``session_meta.client`` is one of these values (None: no client recorded).
        How: ``store/search.py``."""
        from ctxmode.store.search import find

        return find(self, query, session_id, category, type, since, limit, worktree, client)

    @guarded
    def neighbours(
        self, hits: Sequence[SessionEvent], span: int = 1
    ) -> dict[int, list[tuple[int, SessionEvent]]]:
        """For each hit (by id): the ``span`` events of its session just before and just
        after it in the calls' order, as ``(offset, event)``. How: ``store/search.py``."""
        from ctxmode.store.search import neighbours

        return neighbours(self, hits, span)

    @guarded
    def integrity_check(self) -> str:
        """``"ok"``, or the problems SQLite (and the FTS index) report, one per line."""
        from ctxmode.store.maintenance import integrity_check

        return integrity_check(self)

    @guarded
    def vacuum(self, *, optimize_fts: bool = False) -> int:
        """Give free pages back to the file system; return how many pages were freed.

        ``optimize_fts`` first merges the FTS index, which also drops the entries of
        deleted events from its segments for good (slow on a large store).
        """
        from ctxmode.store.maintenance import vacuum

        return vacuum(self, optimize_fts)

    @guarded
    def event_totals(self, session_id: str | None = None) -> list[tuple[str, str, int, int]]:
        """``(session_id, category, events, sum of bytes_avoided)`` per session and category."""
        from ctxmode.store.maintenance import event_totals

        return event_totals(self.conn, session_id)

    @guarded
    def resume_sizes(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Snapshot rows without their text: ``bytes`` is the snapshot's UTF-8 length."""
        from ctxmode.store.maintenance import resume_sizes

        return resume_sizes(self.conn, session_id)

    @guarded
    def record_compaction(self, session_id: str, compact_seq: int, trigger: str = "") -> None:
        """The row of the session's compaction ``compact_seq`` (origin ``hook``), made
        when its snapshot is saved; an existing row is kept (see ``store/compactions.py``)."""
        from ctxmode.store.compactions import record_compaction

        record_compaction(self.conn, session_id, compact_seq, trigger)

    @guarded
    def add_compaction_summary(self, session_id: str, summary: str, trigger: str = "") -> int:
        """Put the client's (masked) summary on the session's newest compaction without
        one, or on a new row; never replaces a summary. Returns its ``compact_seq``."""
        from ctxmode.store.compactions import add_summary

        return add_summary(self.conn, session_id, summary, trigger)

    @guarded
    def compactions(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Compaction rows (all columns, the summary included), by session and number."""
        from ctxmode.store.compactions import compactions

        return compactions(self.conn, session_id)

    @guarded
    def record_search(self, session_id: str, output_bytes: int) -> None:
        """Add one search that printed ``output_bytes`` to the session's tally (one
        ``store_meta`` row per session, updated in one transaction)."""
        from ctxmode.store.maintenance import record_search

        record_search(self.conn, as_text(session_id), int(output_bytes))

    @guarded
    def search_tallies(self) -> dict[str, tuple[int, int]]:
        """``{session_id: (searches, output bytes)}`` recorded by :meth:`record_search`."""
        from ctxmode.store.maintenance import search_tallies

        return search_tallies(self.conn)


_SEARCH_NAMES = frozenset(
    {
        "RECENCY_HALF_LIFE_DAYS",
        "RECENCY_WEIGHT",
        "SEARCH_CANDIDATES",
        "SNIPPET_CHARS",
        "SNIPPET_MARK",
        "SearchHit",
        "blend",
        "SearchHits",
        "analyze",
        "make_snippet",
        "parse_query",
    }
)


def __getattr__(name: str) -> object:
    """The names exported from ``search`` and ``query``, which hooks never load, loaded
    on first use."""
    if name not in _SEARCH_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ctxmode.store import query, search

    return getattr(query if hasattr(query, name) else search, name)
